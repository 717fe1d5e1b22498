"""The arrays a batched static solve takes and gives, shared by its CPU and GPU back ends.

`solve_static_batch` (`_batch`) checks and broadcasts the user's inputs into a `BatchLoads`,
hands it to a back end (numba threads on the CPU, NVIDIA Warp on a GPU or Warp's CPU device)
and wraps the `BatchArrays` it returns into the public batched result.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["BatchArrays", "BatchLoads"]


@dataclass(frozen=True, eq=False)
class BatchLoads:
    """Checked inputs of B static solves of one robot, every array C-contiguous float64 (SI, world).

    control : "tension" (tendon tensions given) or "length" (commanded tendon lengths given,
        tensions solved for).
    actuation : (B, n_t) tensions [N] or commanded lengths [m], by `control`.
    tip_force, tip_moment : (B, 3) [N], [N m] at the distal end.
    distributed_force : (B, 3) uniform load per unit reference length [N/m].
    gravity : (B, 3) [m/s^2].
    """

    control: str
    actuation: np.ndarray
    tip_force: np.ndarray
    tip_moment: np.ndarray
    distributed_force: np.ndarray
    gravity: np.ndarray

    @property
    def size(self) -> int:
        """B, the number of solves."""
        return int(self.tip_force.shape[0])


@dataclass(frozen=True, eq=False)
class BatchArrays:
    """What a back end returns for B solves (host numpy arrays, SI, world frame).

    tip_position : (B, 3) [m]. tip_rotation : (B, 3, 3) tip frame (columns = body axes).
    success : (B,) bool, True only where the residual met the tolerance on the full load.
    residual : (B,) final scaled boundary residual (dimensionless, as `StaticResult.residual`).
    iterations : (B,) Newton iterations used.
    unknowns : (B, k) final shooting unknowns (what a warm start from this batch reuses).
    tensions : (B, n_t) tendon tensions [N] (solved for under length control).
    jacobian : (B, 3, n_t) d tip_position / d actuation [m/N or m/m], or None.
    positions : (B, n_nodes, 3) backbone shapes [m], or None when not asked for.
    status : (B,) int item status (0 converged; `_batch.BATCH_STATUS_MESSAGES`), or None
        (then 0 where success, else 1).
    load_scale : (B,) fraction of the load the returned equilibrium balances, or None.
    from_guess : (B,) bool, True where load_scale is the fraction of the way from the guess's
        inputs (not from rest), or None (from rest).
    stable : (B,) bool, True where the equilibrium was checked and is stable, or None when the
        back end did not check (`_stability`; length control is never checked).
    balanced_actuation : (B, n_t), balanced_forces : (B, 4, 3) (tip force, tip moment,
        distributed force, gravity): the inputs each returned equilibrium balances (where a
        warm start from this batch moves from), or None (then the full inputs where success).
    tip_error : (B,) estimated tip error [m] of each converged item (`StaticResult.tip_error`;
        NaN where there is none), or None when the back end does not estimate it (then the
        public result holds NaN for every item; both back ends estimate it, Warp in its final
        kernel since session 13).
    """

    tip_position: np.ndarray
    tip_rotation: np.ndarray
    success: np.ndarray
    residual: np.ndarray
    iterations: np.ndarray
    unknowns: np.ndarray
    tensions: np.ndarray
    jacobian: np.ndarray | None = None
    positions: np.ndarray | None = None
    status: np.ndarray | None = None
    load_scale: np.ndarray | None = None
    from_guess: np.ndarray | None = None
    stable: np.ndarray | None = None
    balanced_actuation: np.ndarray | None = None
    balanced_forces: np.ndarray | None = None
    tip_error: np.ndarray | None = None
