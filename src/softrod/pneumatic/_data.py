"""Data-collection protocol of ALGORITHMS.md D.2 on the ground-truth arm.

* Training: every segment left-full, right-full or vented gives 27 configurations and 729
  ordered transitions (self-transitions included). The complete directed graph with loops has
  in-degree = out-degree = 27 at every vertex, so one Eulerian circuit executes every
  transition exactly once in a single continuous recording, as on hardware.
* Test: 100 configurations drawn uniformly from the pressure box, executed one after another.

Each transition ramps every segment's set-point linearly at `pressure_rate` (the pumps' limit)
and then holds the target for `hold_frames` frames. Frames are 20 Hz.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from softrod._jobs import load_npz, save_npz
from softrod.pneumatic._model import PneumaticArm
from softrod.pneumatic._truth import GroundTruthArm

__all__ = [
    "Recording",
    "DEFAULT_PRESSURE_RATE",
    "DEFAULT_HOLD_FRAMES",
    "extreme_configurations",
    "eulerian_transition_order",
    "ramp_frames",
    "record_transitions",
    "record_test_set",
]

#: Set-point slew rate [Pa/s] [CHOICE]: a full left-to-right swing (2 x 20 psi) in 1 s.
DEFAULT_PRESSURE_RATE = 275790.0
#: Frames a transition holds its target before the next one starts [CHOICE] (0.5 s at 20 Hz).
DEFAULT_HOLD_FRAMES = 10


@dataclass(frozen=True)
class Recording:
    """A continuous recording of set-points and measured backbones.

    commands : (n+1, n_seg) set-points [Pa]; row 0 is the state before the first frame.
    backbones : (n+1, m, 3) plate poses (x [m], y [m], theta [rad]); row 0 is the initial
        (known) backbone.
    ends : (k,) row of the last frame of each transition (the settled configurations).
    frame_dt : frame period [s].
    """

    commands: np.ndarray
    backbones: np.ndarray
    ends: np.ndarray
    frame_dt: float

    @property
    def n_frames(self) -> int:
        return int(self.commands.shape[0] - 1)

    def save(self, path: str | Path) -> Path:
        """Write a compressed `.npz` (atomically: a kill leaves the old file or none)."""
        arrays = {
            "commands": self.commands,
            "backbones": self.backbones,
            "ends": self.ends,
            "frame_dt": np.array(self.frame_dt),
        }
        return save_npz(path, arrays, compressed=True)

    @classmethod
    def load(cls, path: str | Path) -> Recording:
        """Read a recording; a truncated or corrupt file is a ValueError naming it."""
        z = load_npz(path, "recording", ("commands", "backbones", "ends", "frame_dt"))
        return cls(
            commands=z["commands"],
            backbones=z["backbones"],
            ends=z["ends"],
            frame_dt=float(z["frame_dt"]),
        )


def extreme_configurations(arm: PneumaticArm) -> np.ndarray:
    """(3^n_seg, n_seg) configurations with every segment at its lower bound, 0 or upper bound
    [Pa] (left full, vented, right full), in lexicographic order."""
    levels = [(arm.pressure_lower[j], 0.0, arm.pressure_upper[j]) for j in range(arm.n_segments)]
    return np.array(list(itertools.product(*levels)), dtype=float)


def eulerian_transition_order(n_vertices: int, start: int = 0) -> list[int]:
    """Vertices of an Eulerian circuit of the complete digraph with self-loops on n vertices.

    Consecutive pairs are the n^2 ordered transitions, each exactly once (Hierholzer).
    """
    if n_vertices < 1:
        raise ValueError(f"n_vertices must be >= 1, got {n_vertices}")
    if not 0 <= start < n_vertices:
        raise ValueError(f"start must be in [0, {n_vertices}), got {start}")
    # Unused out-edges per vertex, taken from the back (deterministic order).
    remaining = [list(range(n_vertices - 1, -1, -1)) for _ in range(n_vertices)]
    stack = [start]
    circuit: list[int] = []
    while stack:
        v = stack[-1]
        if remaining[v]:
            stack.append(remaining[v].pop())
        else:
            circuit.append(stack.pop())
    circuit.reverse()
    return circuit


def ramp_frames(
    q_from: np.ndarray,
    q_to: np.ndarray,
    pressure_rate: float,
    frame_dt: float,
    hold_frames: int,
) -> np.ndarray:
    """Set-points (n, n_seg) that ramp q_from -> q_to at `pressure_rate` [Pa/s] (every segment
    reaching its target together) and then hold q_to for `hold_frames` frames."""
    q0 = np.asarray(q_from, dtype=float)
    q1 = np.asarray(q_to, dtype=float)
    step = pressure_rate * frame_dt
    n_ramp = int(math.ceil(float(np.max(np.abs(q1 - q0))) / step - 1e-9))
    frac = np.arange(1, n_ramp + 1)[:, None] / max(n_ramp, 1)
    ramp = q0 + frac * (q1 - q0)
    hold = np.repeat(q1[None], hold_frames, axis=0)
    return np.concatenate([ramp, hold], axis=0)


def _record(
    truth: GroundTruthArm, targets: np.ndarray, pressure_rate: float, hold: int
) -> Recording:
    dt = truth.config.frame_dt
    q = np.zeros(truth.arm.n_segments)
    b0 = truth.reset(q)
    chunks = []
    ends = []
    n = 0
    for target in targets:
        frames = ramp_frames(q, target, pressure_rate, dt, hold)
        chunks.append(frames)
        n += frames.shape[0]
        ends.append(n)
        q = target
    commands = np.concatenate([q[None] * 0.0] + chunks, axis=0)
    backbones = np.concatenate([b0[None], truth.run(commands[1:])], axis=0)
    return Recording(commands, backbones, np.asarray(ends, dtype=np.int64), dt)


def record_transitions(
    truth: GroundTruthArm,
    pressure_rate: float = DEFAULT_PRESSURE_RATE,
    hold_frames: int = DEFAULT_HOLD_FRAMES,
) -> Recording:
    """Training set of D.2: all 729 transitions among the 27 extreme configurations, as one
    Eulerian circuit from the vented arm (settled at q = 0)."""
    configs = extreme_configurations(truth.arm)
    zero = int(np.flatnonzero(np.all(configs == 0.0, axis=1))[0])
    order = eulerian_transition_order(configs.shape[0], start=zero)
    return _record(truth, configs[order[1:]], pressure_rate, hold_frames)


def record_test_set(
    truth: GroundTruthArm,
    rng: np.random.Generator,
    n_configs: int = 100,
    pressure_rate: float = DEFAULT_PRESSURE_RATE,
    hold_frames: int = DEFAULT_HOLD_FRAMES,
) -> Recording:
    """Test set of D.2: `n_configs` uniformly random configurations executed sequentially."""
    if n_configs < 1:
        raise ValueError(f"n_configs must be >= 1, got {n_configs}")
    a = truth.arm
    targets = rng.uniform(a.pressure_lower, a.pressure_upper, size=(n_configs, a.n_segments))
    return _record(truth, targets, pressure_rate, hold_frames)
