"""Forward models a planner queries: B' = F(q_prev, q, B, q_to) over one edge (D.3).

An edge is a set-point ramp from q to q_to at the pumps' rate limit followed by a short hold
([CHOICE] of D.3: the network was trained at 20 Hz, so it is applied once per frame). Both
models simulate many edges at once (the candidates of one RRT* step) in lockstep.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from softrod.planning._network import CompensationNetwork
from softrod.pneumatic import NoLoadModel

__all__ = ["EdgeBatch", "ForwardModel", "NoLoadForward", "NetworkForward", "edge_commands"]


@dataclass(frozen=True)
class EdgeBatch:
    """Simulated edges. commands : (n, F, n_seg) set-points [Pa] of each frame; backbones :
    (n, F, m, 3) predicted plate poses; n_frames : (n,) valid frames of each edge (the rest
    repeat the final set-point and are ignored)."""

    commands: np.ndarray
    backbones: np.ndarray
    n_frames: np.ndarray

    def final_backbones(self) -> np.ndarray:
        """(n, m, 3) backbone at the end of every edge."""
        idx = self.n_frames - 1
        return self.backbones[np.arange(idx.shape[0]), idx]


def edge_commands(
    q_from: np.ndarray,
    q_to: np.ndarray,
    step_per_frame: float,
    hold_frames: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Frame set-points of edges q_from -> q_to (n, n_seg): (n, F, n_seg) and (n,) lengths.

    Each edge ramps linearly, every segment arriving together, in
    ceil(max|dq| / step_per_frame) frames, then holds q_to for hold_frames frames.
    """
    dq = q_to - q_from
    n_ramp = np.ceil(np.max(np.abs(dq), axis=1) / step_per_frame - 1e-9).astype(np.int64)
    n_ramp = np.maximum(n_ramp, 0)
    n_frames = np.maximum(n_ramp + hold_frames, 1)
    f_max = int(n_frames.max())
    k = np.arange(1, f_max + 1)[None, :]
    frac = np.minimum(k / np.maximum(n_ramp, 1)[:, None], 1.0)
    frac[n_ramp == 0] = 1.0
    cmd = q_from[:, None, :] + frac[:, :, None] * dq[:, None, :]
    return cmd, n_frames


class ForwardModel:
    """Base: edge ramps at `pressure_rate` [Pa/s], `hold_frames` per edge, 20 Hz frames."""

    name = "model"
    stateful = True

    def __init__(
        self,
        noload: NoLoadModel,
        pressure_rate: float,
        hold_frames: int,
        frame_dt: float = 0.05,
    ) -> None:
        if not pressure_rate > 0 or hold_frames < 0 or not frame_dt > 0:
            raise ValueError(
                "pressure_rate and frame_dt must be > 0 and hold_frames >= 0, got "
                f"{pressure_rate}, {frame_dt}, {hold_frames}"
            )
        self.noload = noload
        self.pressure_rate = float(pressure_rate)
        self.hold_frames = int(hold_frames)
        self.frame_dt = float(frame_dt)
        self.step_per_frame = self.pressure_rate * self.frame_dt

    def simulate(
        self,
        q_prev: np.ndarray,
        q_from: np.ndarray,
        backbone_from: np.ndarray,
        q_to: np.ndarray,
    ) -> EdgeBatch:
        """Simulate edges from states (q_prev (n, n_seg) set-point of the frame before,
        q_from (n, n_seg), backbone_from (n, m, 3)) to q_to (n, n_seg)."""
        raise NotImplementedError

    def initial_backbone(self, q0: np.ndarray, measured: np.ndarray | None) -> np.ndarray:
        """The model's backbone at the start: the measured one when the model has memory."""
        raise NotImplementedError

    def rollout(self, commands: np.ndarray, backbone0: np.ndarray) -> np.ndarray:
        """Predicted backbones (n+1, m, 3) along set-points (n+1, n_seg) from backbone0."""
        raise NotImplementedError


class NoLoadForward(ForwardModel):
    """The no-load PCC model as a simulator: memoryless, B = B~(q) at every frame."""

    name = "noload"
    stateful = False

    def simulate(
        self,
        q_prev: np.ndarray,
        q_from: np.ndarray,
        backbone_from: np.ndarray,
        q_to: np.ndarray,
    ) -> EdgeBatch:
        cmd, n_frames = edge_commands(q_from, q_to, self.step_per_frame, self.hold_frames)
        n, f, s = cmd.shape
        bb = self.noload.backbone_unchecked(np.ascontiguousarray(cmd.reshape(n * f, s)))
        return EdgeBatch(cmd, bb.reshape(n, f, -1, 3), n_frames)

    def initial_backbone(self, q0: np.ndarray, measured: np.ndarray | None) -> np.ndarray:
        return self.noload.backbone(q0)

    def rollout(self, commands: np.ndarray, backbone0: np.ndarray) -> np.ndarray:
        out = self.noload.backbone_unchecked(np.ascontiguousarray(commands))
        out[0] = backbone0
        return out


class NetworkForward(ForwardModel):
    """No-load model + compensation network, applied once per frame (D.2 recurrence)."""

    name = "nn"
    stateful = True

    def __init__(
        self,
        noload: NoLoadModel,
        network: CompensationNetwork,
        pressure_rate: float,
        hold_frames: int,
        frame_dt: float = 0.05,
    ) -> None:
        super().__init__(noload, pressure_rate, hold_frames, frame_dt)
        arm = noload.arm
        if (network.n_segments, network.n_plates) != (arm.n_segments, arm.n_plates):
            raise ValueError(
                f"network was trained for {network.n_segments} segments and "
                f"{network.n_plates} plates, the arm has {arm.n_segments} and {arm.n_plates}"
            )
        self.network = network

    def simulate(
        self,
        q_prev: np.ndarray,
        q_from: np.ndarray,
        backbone_from: np.ndarray,
        q_to: np.ndarray,
    ) -> EdgeBatch:
        cmd, n_frames = edge_commands(q_from, q_to, self.step_per_frame, self.hold_frames)
        n, f, s = cmd.shape
        m = backbone_from.shape[1]
        bnl = self.noload.backbone_unchecked(np.ascontiguousarray(cmd.reshape(n * f, s)))
        bnl = bnl.reshape(n, f, m, 3)
        out = np.empty((n, f, m, 3))
        b = backbone_from
        qp = q_prev
        for k in range(f):
            b = self.network.step(qp, cmd[:, k], b, bnl[:, k])
            out[:, k] = b
            qp = cmd[:, k]
        return EdgeBatch(cmd, out, n_frames)

    def initial_backbone(self, q0: np.ndarray, measured: np.ndarray | None) -> np.ndarray:
        if measured is None:
            raise ValueError("the network model needs the measured initial backbone")
        return measured

    def rollout(self, commands: np.ndarray, backbone0: np.ndarray) -> np.ndarray:
        return self.network.rollout(self.noload, commands, backbone0)


def frames_for_change(dq_inf: float, step_per_frame: float) -> int:
    """Ramp frames for a largest set-point change dq_inf [Pa]."""
    return int(math.ceil(dq_inf / step_per_frame - 1e-9))
