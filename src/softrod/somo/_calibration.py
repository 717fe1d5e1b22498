"""SoMo's calibration of a rigid-link chain from two measurements (ALGORITHMS.md §B.2-§B.4).

An actuator of length L becomes N equal rigid links with a revolute spring joint per bending
axis. SoMo places joint i (i = 1..N) at x_i = (i - 1) L / N and gives every joint the same
stiffness kappa. From the measured tip bending stiffness K_b = F_tip / delta_L:

* `"somo"` (the paper's eq. 8): kappa = 2 N^2 L^2 K_b / (3 N - 1). It matches the first link's
  chord angle; the chain's tip compliance is then (N+1)(2N+1)(3N-1) / (12 N^3) of the beam's
  (0.529 at N = 20, tending to 1/2): the chain is about twice too stiff at the tip (§B
  Ambiguity 1).
* `"tip"` (the fix, the default here): kappa = L^2 K_b (N+1)(2N+1) / (6 N) makes the chain's
  small-deflection tip compliance sum_i (L - x_i)^2 / kappa equal the beam's 1 / K_b.
* `"midpoint"`: seed 002's construction, joints at element midpoints with kappa = EI / h,
  h = L / N, EI = K_b L^3 / 3 (tip compliance converges to the beam's as O(1/N^2)).

The actuation moment from a blocked-force test is M_act = F_b L (eq. 9), applied as the joint
torque on the actuated axis of every joint.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np

__all__ = [
    "STIFFNESS_RULES",
    "StiffnessRule",
    "actuation_torque",
    "bending_stiffness_from_joint",
    "chain_compliance_ratio",
    "chain_joint_positions",
    "chain_tip_compliance",
    "joint_stiffness",
    "pressure_torques",
    "torsion_stiffness",
    "world_scale_factors",
]

StiffnessRule = Literal["somo", "tip", "midpoint"]
STIFFNESS_RULES: tuple[str, ...] = ("somo", "tip", "midpoint")

#: The reconstructed weights of SoMo's eq. (10) for the two-DOF finger (§B.3, Ambiguity 4).
SOMO_PRESSURE_WEIGHTS = (1.0, 3.25)


def _check(length: float, n_links: int) -> None:
    if not length > 0:
        raise ValueError(f"length must be > 0 [m], got {length!r}")
    if int(n_links) != n_links or n_links < 1:
        raise ValueError(f"n_links must be an integer >= 1, got {n_links!r}")


def _check_rule(rule: str) -> None:
    if rule not in STIFFNESS_RULES:
        raise ValueError(f"rule must be one of {', '.join(STIFFNESS_RULES)}, got {rule!r}")


def joint_stiffness(
    length: float,
    n_links: int,
    *,
    tip_stiffness: float | None = None,
    EI: float | None = None,
    rule: StiffnessRule = "tip",
) -> float:
    """Joint stiffness kappa [N m/rad] of an N-link chain (module docstring).

    Give the measured tip bending stiffness K_b = F_tip / delta_L [N/m], or the bending
    stiffness EI [N m^2] (then K_b = 3 EI / L^3).
    """
    _check(length, n_links)
    _check_rule(rule)
    if (tip_stiffness is None) == (EI is None):
        raise ValueError("give exactly one of tip_stiffness (K_b [N/m]) and EI [N m^2]")
    K_b = tip_stiffness if tip_stiffness is not None else 3.0 * EI / length**3  # type: ignore[operator]
    if not K_b > 0:
        raise ValueError(f"bending stiffness must be > 0, got {K_b!r}")
    N, L = int(n_links), float(length)
    if rule == "somo":
        return 2.0 * N**2 * L**2 * K_b / (3.0 * N - 1.0)
    if rule == "tip":
        return L**2 * K_b * (N + 1) * (2 * N + 1) / (6.0 * N)
    return (K_b * L**3 / 3.0) / (L / N)


def bending_stiffness_from_joint(
    kappa: float, length: float, n_links: int, rule: StiffnessRule | Literal["chain"] = "somo"
) -> float:
    """EI [N m^2] of the beam behind a joint stiffness kappa [N m/rad].

    rule "somo" / "tip" / "midpoint" invert `joint_stiffness` (the beam the calibration was
    made from); "chain" gives the beam with the same small-deflection tip compliance as a
    SoMo-geometry chain with that kappa (what the SoMo simulation actually does).
    """
    _check(length, n_links)
    if not kappa > 0:
        raise ValueError(f"joint stiffness must be > 0, got {kappa!r}")
    N, L = int(n_links), float(length)
    if rule == "chain":
        return L**3 / (3.0 * chain_tip_compliance(kappa, L, N, rule="somo"))
    _check_rule(rule)
    K_b = kappa / joint_stiffness(L, N, tip_stiffness=1.0, rule=rule)
    return K_b * L**3 / 3.0


def torsion_stiffness(GJ: float, length: float, n_links: int) -> float:
    """Joint torsion stiffness [N m/rad] of N springs in series with the rod's twist GJ / L."""
    _check(length, n_links)
    return GJ * n_links / length


def chain_joint_positions(length: float, n_links: int, rule: StiffnessRule = "tip") -> np.ndarray:
    """Joint arc lengths x_i [m]: link bases (somo, tip) or element midpoints (midpoint)."""
    _check(length, n_links)
    _check_rule(rule)
    h = length / n_links
    if rule == "midpoint":
        return (np.arange(n_links) + 0.5) * h
    return np.arange(n_links) * h


def chain_tip_compliance(
    kappa: float | Sequence[float] | np.ndarray,
    length: float,
    n_links: int,
    rule: StiffnessRule = "tip",
) -> float:
    """Small-deflection tip compliance [m/N] of the chain: sum_i (L - x_i)^2 / kappa_i."""
    x = chain_joint_positions(length, n_links, rule)
    k = np.broadcast_to(np.asarray(kappa, dtype=float), x.shape)
    return float(np.sum((length - x) ** 2 / k))


def chain_compliance_ratio(n_links: int) -> float:
    """(N+1)(2N+1)(3N-1) / (12 N^3): SoMo chain over beam tip compliance with eq. 8's kappa."""
    N = int(n_links)
    if N < 1:
        raise ValueError(f"n_links must be >= 1, got {n_links!r}")
    return (N + 1) * (2 * N + 1) * (3 * N - 1) / (12.0 * N**3)


def actuation_torque(blocked_force: float, length: float) -> float:
    """Actuation moment M_act = F_b L [N m] from a blocked tip force F_b [N] (§B.3 eq. 9)."""
    if not length > 0:
        raise ValueError(f"length must be > 0 [m], got {length!r}")
    return float(blocked_force) * float(length)


def pressure_torques(
    p_diff1: float, p_diff2: float, weights: tuple[float, float] = SOMO_PRESSURE_WEIGHTS
) -> tuple[float, float]:
    """SoMo's eq. (10) as reconstructed: (tau_grasp, tau_side) = (w1 (p1 + p2), w2 (p1 - p2))."""
    w1, w2 = weights
    return w1 * (p_diff1 + p_diff2), w2 * (p_diff1 - p_diff2)


def world_scale_factors(scale: float, inertia_exponent: float = 2.0) -> dict[str, float]:
    """Multipliers of SoMo's world scaling by Y (§B.4): lengths, velocities and gravity by Y,
    torques and joint stiffnesses by Y^2, inertias by Y^inertia_exponent (masses unscaled)."""
    if not scale > 0 or not math.isfinite(scale):
        raise ValueError(f"world scale must be > 0, got {scale!r}")
    return {
        "length": scale,
        "linear_velocity": scale,
        "gravity": scale,
        "torque": scale**2,
        "joint_stiffness": scale**2,
        "inertia": scale**inertia_exponent,
        "mass": 1.0,
        "angular_velocity": 1.0,
        "damping": 1.0,
    }
