"""`softrod/PlanarReach-v0`: a two-segment planar soft arm reaches targets in its plane."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from softrod.envs._base import obs_box
from softrod.envs._reach_core import HangingRobotEnv
from softrod.envs._scene import shipped_robot

__all__ = ["PlanarReachEnv", "pcc_planar_tip"]

#: Targets are tips of random constant-curvature shapes with |kappa| <= this x kappa_max, so
#: that they lie inside the (gravity-loaded) workspace.
TARGET_KAPPA_FRACTION = 0.8


def pcc_planar_tip(kappa: Any, lengths: Any) -> np.ndarray:
    """Tip (x, z) in the base plane of a planar constant-curvature chain [m].

    kappa : (n,) curvature of each segment toward body +x [1/m]; lengths : (n,) [m]. Body z
    is the base tangent; returns body-frame (x, z).
    """
    x = z = theta = 0.0
    for k, length in zip(kappa, lengths, strict=True):
        phi = k * length
        if abs(k) < 1e-9:
            dx, dz = 0.0, length
        else:
            dx, dz = (1.0 - math.cos(phi)) / k, math.sin(phi) / k
        x += math.cos(theta) * dx + math.sin(theta) * dz
        z += -math.sin(theta) * dx + math.cos(theta) * dz
        theta += phi
    return np.array([x, z])


class PlanarReachEnv(HangingRobotEnv):
    """A planar two-segment soft arm (`somo_planar_arm`) hanging from (0, 0, 0.4) m reaches
    random targets in the world x-z plane, the SomoGym planar-reaching task on softrod's
    continuum-informed chain.

    Each segment has one antagonistic tendon pair (pull-only, length-controlled); the action is
    the rate of each segment's commanded curvature, as in `Reach-v0`. Gravity acts in the plane.
    Steps are 0.05 s (10 substeps of 5 ms); episodes last `episode_steps` steps (truncated).

    Observation, shape (12,), float32 (world x and z components; y stays 0 by symmetry):

    | index | component | unit |
    |---|---|---|
    | 0-3 | distal end of segments 1, 2 (x, z) | m |
    | 4-5 | tip velocity (x, z) | m/s |
    | 6-7 | target (x, z) | m |
    | 8-9 | target - tip (x, z) | m |
    | 10-11 | commanded curvature of segments 1, 2 / kappa_max | 1 |

    Action, shape (2,), in [-1, 1]: change of each segment's commanded curvature, in units of
    `kappa_rate` [1/m per step], saturating at +-`kappa_max` [1/m].

    Reward terms: `reach` = exp(-50 d^2) and `distance` = -`distance_weight` d, d = |tip -
    target| [m]. `info`: `success` (d <= `success_radius`), `distance`, `tip`, `target`.
    """

    def __init__(
        self,
        render_mode: str | None = None,
        *,
        episode_steps: int = 40,
        links: int = 8,
        kappa_max: float = 14.0,
        kappa_rate: float = 2.0,
        distance_weight: float = 10.0,
        success_radius: float = 0.01,
        width: int = 320,
        height: int = 240,
    ) -> None:
        if distance_weight < 0 or not success_radius > 0:
            raise ValueError(
                "distance_weight must be >= 0 and success_radius > 0, got "
                f"{distance_weight}, {success_radius}"
            )
        self.distance_weight = float(distance_weight)
        self.success_radius = float(success_radius)
        super().__init__(
            shipped_robot("somo_planar_arm"),
            links=links,
            timestep=0.005,
            damping_ratio=0.5,
            kappa_max=kappa_max,
            kappa_rate=kappa_rate,
            planar=True,
            episode_steps=episode_steps,
            render_mode=render_mode,
            width=width,
            height=height,
            floor_z=-0.05,
        )
        self.observation_space = obs_box(12)
        self._lengths = np.array([s.length for s in self.robot.segments])

    def _reset_task(self) -> None:
        self._reset_robot()
        k = self.np_random.uniform(-1.0, 1.0, self.n_commands) * (
            TARGET_KAPPA_FRACTION * self.kappa_max
        )
        x, z = pcc_planar_tip(k, self._lengths)
        base = np.asarray(self.robot.base.position)
        # Base frame: body x = world x, body z = world -z (the arm hangs).
        self._set_target(np.array([base[0] + x, 0.0, base[2] - z]))

    def _evaluate(self) -> tuple[np.ndarray, dict[str, float], bool, dict[str, Any]]:
        tip = self.tip_position()
        info = self._base_info(tip)
        d = info["distance"]
        info["success"] = bool(d <= self.success_radius)
        xz = [0, 2]
        obs = np.concatenate(
            [
                self.segment_ends()[:, xz].ravel(),
                self.tip_velocity()[xz],
                self.target[xz],
                (self.target - tip)[xz],
                self.kappa / self.kappa_max,
            ]
        ).astype(np.float32)
        terms = {"reach": float(np.exp(-50.0 * d * d)), "distance": -self.distance_weight * d}
        return obs, terms, False, info
