"""Magnets and magnetic fields for the rod dynamics (ALGORITHMS.md E.4), SI units."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = ["MU0", "Magnet", "MagneticField", "FieldLike"]

#: Vacuum permeability [T m / A].
MU0 = 4e-7 * math.pi


def _vec3(name: str, value: Sequence[float] | np.ndarray) -> np.ndarray:
    arr = np.asarray(value, dtype=float).reshape(-1)
    if arr.shape != (3,) or not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be 3 finite numbers [x, y, z], got {value!r}")
    return arr


@dataclass(frozen=True)
class Magnet:
    """A permanent magnet (point dipole) embedded in the rod.

    s : arc length of its centre [m], in [0, L]; at s = L it rides the tip frame.
    moment : (3,) dipole moment in the rod's body frame [A m^2] (body z is the tangent).
    mass : [kg], lumped onto the two nearest nodes by the lever rule (Remark 1 of seed 004 puts
        it on the element's end nodes; a tip magnet goes to the tip node in both).
    """

    s: float
    moment: np.ndarray
    mass: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "moment", _vec3("Magnet.moment", self.moment))
        if not (math.isfinite(self.s) and self.s >= 0):
            raise ValueError(f"Magnet.s must be >= 0 [m], got {self.s!r}")
        if not (math.isfinite(self.mass) and self.mass >= 0):
            raise ValueError(f"Magnet.mass must be >= 0 [kg], got {self.mass!r}")

    @classmethod
    def cylinder(
        cls,
        s: float,
        diameter: float,
        height: float,
        remanence: float,
        direction: Sequence[float] = (0.0, 0.0, 1.0),
        mass: float | None = None,
        density: float = 7500.0,
    ) -> Magnet:
        """A cylindrical magnet: |m| = B_r V / mu0 (E.4; B_r in tesla, e.g. 1.32-1.37 for N45).

        diameter, height [m]; direction : body-frame axis of magnetisation (normalised);
        mass [kg] (default: density [kg/m^3] times volume; NdFeB is about 7500).
        """
        if diameter <= 0 or height <= 0 or remanence <= 0:
            raise ValueError(
                "Magnet.cylinder needs diameter, height and remanence > 0, got "
                f"{diameter!r}, {height!r}, {remanence!r}"
            )
        d = _vec3("direction", direction)
        norm = float(np.linalg.norm(d))
        if norm == 0:
            raise ValueError("Magnet.cylinder direction must be non-zero")
        volume = math.pi * diameter**2 / 4 * height
        m = remanence * volume / MU0
        return cls(s=s, moment=m * d / norm, mass=density * volume if mass is None else mass)


@dataclass(frozen=True)
class MagneticField:
    """B(x, t) = uniform + rotating(t) + gradient (x - origin) [T], world frame.

    uniform : (3,) constant part [T] (e.g. a gravity-compensating field).
    rotating_amplitude : [T]; rotating_frequency : [Hz]; rotating_axes : two orthonormal world
        directions (u, v) of the plane; rotating part B1 (cos(2 pi f t + phase) u + sin(...) v).
    gradient : (3, 3) constant dB_i/dx_j [T/m] (Helmholtz coils: zero); origin : (3,) [m].
    """

    uniform: np.ndarray = field(default_factory=lambda: np.zeros(3))
    rotating_amplitude: float = 0.0
    rotating_frequency: float = 0.0
    rotating_axes: tuple[np.ndarray, np.ndarray] = (
        np.array([0.0, 1.0, 0.0]),
        np.array([0.0, 0.0, 1.0]),
    )
    rotating_phase: float = 0.0
    gradient: np.ndarray = field(default_factory=lambda: np.zeros((3, 3)))
    origin: np.ndarray = field(default_factory=lambda: np.zeros(3))

    def __post_init__(self) -> None:
        object.__setattr__(self, "uniform", _vec3("MagneticField.uniform", self.uniform))
        u = _vec3("rotating_axes[0]", self.rotating_axes[0])
        v = _vec3("rotating_axes[1]", self.rotating_axes[1])
        unit = abs(np.linalg.norm(u) - 1) < 1e-9 and abs(np.linalg.norm(v) - 1) < 1e-9
        if not unit or abs(u @ v) > 1e-9:
            raise ValueError("MagneticField.rotating_axes must be two orthonormal vectors")
        object.__setattr__(self, "rotating_axes", (u, v))
        g = np.asarray(self.gradient, dtype=float)
        if g.shape != (3, 3) or not np.all(np.isfinite(g)):
            raise ValueError("MagneticField.gradient must be a finite (3, 3) array [T/m]")
        object.__setattr__(self, "gradient", g)
        object.__setattr__(self, "origin", _vec3("MagneticField.origin", self.origin))

    @property
    def time_varying(self) -> bool:
        return self.rotating_amplitude != 0.0 and self.rotating_frequency != 0.0

    def series(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Kernel form at times t (k,): B0 (k, 3) and G (k, 3, 3) with B(x) = B0 + G x."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        ph = 2 * math.pi * self.rotating_frequency * t + self.rotating_phase
        u, v = self.rotating_axes
        B = (
            self.uniform[None, :]
            + self.rotating_amplitude * (np.cos(ph)[:, None] * u + np.sin(ph)[:, None] * v)
            - (self.gradient @ self.origin)[None, :]
        )
        G = np.broadcast_to(self.gradient, (t.shape[0], 3, 3))
        # A writeable copy (ascontiguousarray keeps a one-sample broadcast read-only, and numba
        # would compile the LGVI kernels again for a read-only array).
        return B, np.array(G)

    def at(self, x: Sequence[float], t: float = 0.0) -> np.ndarray:
        """B at world point x [m] and time t [s], (3,) [T]."""
        B, G = self.series(np.array([t]))
        return B[0] + G[0] @ np.asarray(x, dtype=float)


#: A field is a MagneticField or a callable t -> B (3,) [T] or t -> (B (3,), G (3, 3)).
FieldLike = MagneticField | Callable[[float], object]
