"""Results of `simulate_dynamic`: the integrator state and the sampled trajectory."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from softrod.dynamics._model import LGVIModel

__all__ = ["DynamicResult", "DynamicState"]


@dataclass(frozen=True, eq=False)
class DynamicState:
    """Integrator state at time t (internal layout of `LGVIModel`; SI).

    positions (n, 3) at t and prev_positions (n, 3) at t - dt [m]; frames (n, 3, 3) the node
    frames of the model layout at t; cayley (n, 3) no-half Cayley parameter of the last step's
    relative rotation F = O(t - dt)^T O(t); dt [s].
    """

    t: float
    dt: float
    positions: np.ndarray
    prev_positions: np.ndarray
    frames: np.ndarray
    cayley: np.ndarray


@dataclass(frozen=True, eq=False)
class DynamicResult:
    """A simulated trajectory, sampled every `sample_dt`.

    t : (k,) [s]. positions : (k, n, 3) node positions [m]. rotations : (k, n, 3, 3) section
    frames at the nodes (body z along the backbone). frames : (k, n, 3, 3) the model's own node
    frames (link frames for shear_eval "left"). energy : (k,) total mechanical energy [J]
    (kinetic + elastic + potentials of gravity, constant tip/distributed forces, tendon tension
    times path length and -m.B); conserved when undamped with constant loads. node_s : (n,)
    [m]. dt : step [s]; n_steps : steps taken. stiffness_scale : the E.6 factor applied.
    final_state : state to continue from (`initial=result`). wall_time : [s].
    """

    success: bool
    status: int
    message: str
    t: np.ndarray
    positions: np.ndarray
    rotations: np.ndarray
    frames: np.ndarray
    energy: np.ndarray
    node_s: np.ndarray
    dt: float
    n_steps: int
    stiffness_scale: float
    wall_time: float
    model: LGVIModel
    final_state: DynamicState
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def tip_position(self) -> np.ndarray:
        """(k, 3) [m]"""
        return self.positions[:, -1]

    @property
    def tip_rotation(self) -> np.ndarray:
        """(k, 3, 3)"""
        return self.rotations[:, -1]

    @property
    def real_time_factor(self) -> float:
        """Simulated seconds per wall-clock second."""
        span = float(self.t[-1] - self.t[0]) if self.t.size > 1 else 0.0
        return span / self.wall_time if self.wall_time > 0 else math.inf

    def to_dict(self, trajectory: bool = False) -> dict[str, Any]:
        """JSON-ready summary; `trajectory=True` adds t and the tip trajectory."""
        out: dict[str, Any] = {
            "success": self.success,
            "status": self.status,
            "message": self.message,
            "dt": self.dt,
            "n_steps": self.n_steps,
            "elements": self.model.n_elements,
            "shear_eval": self.model.shear_eval,
            "stiffness_scale": self.stiffness_scale,
            "wall_time": self.wall_time,
            # A run that diverged before its first sample has no tip position to report.
            "final_tip_position": (
                self.tip_position[-1].tolist() if len(self.tip_position) else None
            ),
        }
        if trajectory:
            out["t"] = self.t.tolist()
            out["tip_position"] = self.tip_position.tolist()
            out["energy"] = self.energy.tolist()
        return out
