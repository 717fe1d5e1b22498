"""Planning environments: obstacles and goal regions in the arm's plane (YAML files).

Coordinates are those of the planar arm (softrod.pneumatic): base at the origin, base tangent
along +x, angles counter-clockwise [rad]; lengths in metres, pressures in pascals.

```yaml
name: env1
description: a box above the arm; reach up and over it.
robot: pneumatic_arm3          # shipped robot name or a path (relative to this file)
start: [0.0, 0.0, 0.0]         # initial set-points [Pa]
goal: {position: [0.40, 0.35], radius: 0.03}        # optional orientation [rad] + tolerance
obstacles:
  - {type: box, center: [0.45, 0.10], size: [0.10, 0.06], angle_deg: 0}
  - {type: circle, center: [0.3, -0.3], radius: 0.05}
  - {type: polygon, points: [[0.1, 0.5], [0.2, 0.5], [0.15, 0.6]]}
```
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, ClassVar, Literal

import numba
import numpy as np
from pydantic import Field, model_validator

from softrod.description import Spec

__all__ = [
    "BoxObstacle",
    "CircleObstacle",
    "PolygonObstacle",
    "GoalRegion",
    "EnvironmentSpec",
    "Obstacles",
    "load_environment",
]


class BoxObstacle(Spec):
    """A rectangle."""

    type: Literal["box"] = "box"
    center: tuple[float, float] = Field(description="Centre (x, y) [m].")
    size: tuple[float, float] = Field(description="Side lengths (along its x, along its y) [m].")
    angle_deg: float = Field(default=0.0, description="Rotation about the plane normal [deg].")

    @model_validator(mode="after")
    def _check(self) -> BoxObstacle:
        if not (self.size[0] > 0 and self.size[1] > 0):
            raise ValueError(f"size must be > 0, got {list(self.size)}")
        return self

    def vertices(self) -> np.ndarray:
        """(4, 2) corners, counter-clockwise [m]."""
        hx, hy = 0.5 * self.size[0], 0.5 * self.size[1]
        local = np.array([[-hx, -hy], [hx, -hy], [hx, hy], [-hx, hy]])
        a = math.radians(self.angle_deg)
        rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
        return local @ rot.T + np.asarray(self.center)


class CircleObstacle(Spec):
    """A disc."""

    type: Literal["circle"] = "circle"
    center: tuple[float, float] = Field(description="Centre (x, y) [m].")
    radius: float = Field(description="Radius [m].")

    @model_validator(mode="after")
    def _check(self) -> CircleObstacle:
        if not self.radius > 0:
            raise ValueError(f"radius must be > 0, got {self.radius}")
        return self


class PolygonObstacle(Spec):
    """A simple polygon (vertices in order, not repeated)."""

    type: Literal["polygon"] = "polygon"
    points: list[tuple[float, float]] = Field(min_length=3, description="Vertices (x, y) [m].")

    def vertices(self) -> np.ndarray:
        return np.asarray(self.points, dtype=float)


Obstacle = Annotated[BoxObstacle | CircleObstacle | PolygonObstacle, Field(discriminator="type")]


class GoalRegion(Spec):
    """End-effector goal: a disc in position, optionally an orientation window."""

    position: tuple[float, float] = Field(description="Goal centre (x, y) [m].")
    radius: float = Field(default=0.03, description="Accepted distance from the centre [m].")
    orientation: float | None = Field(
        default=None, description="Goal tip angle [rad] (None: any orientation)."
    )
    orientation_tolerance: float = Field(
        default=0.5, description="Accepted |angle error| when orientation is given [rad]."
    )

    @model_validator(mode="after")
    def _check(self) -> GoalRegion:
        if not self.radius > 0:
            raise ValueError(f"radius must be > 0, got {self.radius}")
        if not self.orientation_tolerance > 0:
            raise ValueError(f"orientation_tolerance must be > 0, got {self.orientation_tolerance}")
        return self

    def contains(self, tip: np.ndarray) -> np.ndarray:
        """Whether tip poses (..., 3) lie in the region; (...,) bool."""
        d = np.hypot(tip[..., 0] - self.position[0], tip[..., 1] - self.position[1])
        ok = d <= self.radius
        if self.orientation is not None:
            err = np.abs(_wrap(tip[..., 2] - self.orientation))
            ok &= err <= self.orientation_tolerance
        return ok

    def distance(self, tip: np.ndarray) -> np.ndarray:
        """Distance of tip positions (..., >=2) from the goal centre [m]."""
        return np.hypot(tip[..., 0] - self.position[0], tip[..., 1] - self.position[1])

    def orientation_error(self, tip: np.ndarray) -> np.ndarray:
        """|tip angle - goal angle| wrapped to [0, pi] [rad]; NaN without a goal angle."""
        if self.orientation is None:
            return np.full(np.shape(tip)[:-1], np.nan)
        return np.abs(_wrap(tip[..., 2] - self.orientation))


def _wrap(a: np.ndarray) -> np.ndarray:
    return (np.asarray(a) + np.pi) % (2.0 * np.pi) - np.pi


class EnvironmentSpec(Spec):
    """A planning problem: robot, start set-points, goal region, obstacles."""

    spec_what: ClassVar[str] = "environment"

    name: str = Field(description="Short name.")
    description: str = Field(default="", description="Free text.")
    robot: str = Field(
        default="pneumatic_arm3", description="Shipped robot name or path to its description."
    )
    start: list[float] | None = Field(
        default=None, description="Initial set-points [Pa] (default: all vented)."
    )
    goal: GoalRegion
    obstacles: list[Obstacle] = Field(default_factory=list)
    source: str | None = Field(default=None, exclude=True, description="File it came from.")


def load_environment(source: str | Path | dict) -> EnvironmentSpec:
    """Load and validate an environment (YAML path or dict); ValueError naming the field."""
    env = EnvironmentSpec.load(source)
    if not isinstance(source, dict):
        env.source = str(Path(source).resolve())
    return env


# --------------------------------------------------------------------------------------------
# Collision checking: a polyline inflated by per-edge radii against polygons and discs
# --------------------------------------------------------------------------------------------


@numba.njit(cache=True)
def _seg_seg_dist2(
    ax: float, ay: float, bx: float, by: float, cx: float, cy: float, dx: float, dy: float
) -> float:
    """Squared distance between segments ab and cd in the plane."""
    # Proper intersection -> 0.
    d1 = (dx - cx) * (ay - cy) - (dy - cy) * (ax - cx)
    d2 = (dx - cx) * (by - cy) - (dy - cy) * (bx - cx)
    d3 = (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)
    d4 = (bx - ax) * (dy - ay) - (by - ay) * (dx - ax)
    if ((d1 > 0 and d2 < 0) or (d1 < 0 and d2 > 0)) and (
        (d3 > 0 and d4 < 0) or (d3 < 0 and d4 > 0)
    ):
        return 0.0
    best = _pt_seg_dist2(ax, ay, cx, cy, dx, dy)
    best = min(best, _pt_seg_dist2(bx, by, cx, cy, dx, dy))
    best = min(best, _pt_seg_dist2(cx, cy, ax, ay, bx, by))
    best = min(best, _pt_seg_dist2(dx, dy, ax, ay, bx, by))
    return best


@numba.njit(cache=True)
def _pt_seg_dist2(px: float, py: float, ax: float, ay: float, bx: float, by: float) -> float:
    ex = bx - ax
    ey = by - ay
    den = ex * ex + ey * ey
    t = 0.0
    if den > 0.0:
        t = ((px - ax) * ex + (py - ay) * ey) / den
        t = min(max(t, 0.0), 1.0)
    qx = ax + t * ex - px
    qy = ay + t * ey - py
    return qx * qx + qy * qy


@numba.njit(cache=True)
def _inside(px: float, py: float, verts: np.ndarray, i0: int, i1: int) -> bool:
    """Even-odd point-in-polygon test for vertices verts[i0:i1]."""
    inside = False
    j = i1 - 1
    for i in range(i0, i1):
        xi, yi = verts[i, 0], verts[i, 1]
        xj, yj = verts[j, 0], verts[j, 1]
        if (yi > py) != (yj > py):
            x_cross = xi + (py - yi) * (xj - xi) / (yj - yi)
            if px < x_cross:
                inside = not inside
        j = i
    return inside


@numba.njit(cache=True)
def _polyline_hits(
    points: np.ndarray,
    radius: np.ndarray,
    verts: np.ndarray,
    starts: np.ndarray,
    circles: np.ndarray,
) -> bool:
    """Whether the polyline points (n, 2), each edge inflated by radius[i], touches any
    polygon (verts[starts[k]:starts[k+1]]) or disc circles (c, 3) = (x, y, r)."""
    n = points.shape[0]
    for i in range(n - 1):
        ax, ay = points[i, 0], points[i, 1]
        bx, by = points[i + 1, 0], points[i + 1, 1]
        r = radius[i]
        for c in range(circles.shape[0]):
            rr = r + circles[c, 2]
            if _pt_seg_dist2(circles[c, 0], circles[c, 1], ax, ay, bx, by) < rr * rr:
                return True
        for k in range(starts.shape[0] - 1):
            i0 = starts[k]
            i1 = starts[k + 1]
            jprev = i1 - 1
            for jv in range(i0, i1):
                d2 = _seg_seg_dist2(
                    ax, ay, bx, by, verts[jprev, 0], verts[jprev, 1], verts[jv, 0], verts[jv, 1]
                )
                if d2 < r * r:
                    return True
                jprev = jv
    # A polyline wholly inside a polygon touches no edge: test one point per polygon.
    for k in range(starts.shape[0] - 1):
        if _inside(points[0, 0], points[0, 1], verts, starts[k], starts[k + 1]):
            return True
    return False


@numba.njit(cache=True)
def _first_hit(
    frames: np.ndarray,
    n_valid: int,
    radius: np.ndarray,
    verts: np.ndarray,
    starts: np.ndarray,
    circles: np.ndarray,
) -> int:
    """Index of the first colliding frame among frames[:n_valid] (F, n, 2), or -1."""
    for f in range(n_valid):
        if _polyline_hits(frames[f], radius, verts, starts, circles):
            return f
    return -1


class Obstacles:
    """Obstacles of an environment packed for the collision kernels.

    Parameters
    ----------
    env : the environment; margin : extra clearance added to every radius [m].
    """

    def __init__(self, env: EnvironmentSpec, margin: float = 0.0) -> None:
        polys = [o.vertices() for o in env.obstacles if not isinstance(o, CircleObstacle)]
        circles = [
            (o.center[0], o.center[1], o.radius)
            for o in env.obstacles
            if isinstance(o, CircleObstacle)
        ]
        self.verts = np.concatenate(polys, axis=0) if polys else np.zeros((0, 2))
        self.starts = np.cumsum([0] + [p.shape[0] for p in polys]).astype(np.int64)
        self.circles = np.asarray(circles, dtype=float).reshape(-1, 3)
        self.margin = float(margin)

    def first_hit(
        self, frames: np.ndarray, edge_radius: np.ndarray, n_valid: int | None = None
    ) -> int:
        """First frame (of (F, n, >=2) polylines) whose inflated polyline (edge radii (n-1,)
        plus the margin) touches an obstacle; -1 when none does."""
        pts = np.ascontiguousarray(frames[..., :2], dtype=float)
        if pts.ndim == 2:
            pts = pts[None]
        nv = pts.shape[0] if n_valid is None else int(n_valid)
        rad = np.ascontiguousarray(edge_radius, dtype=float) + self.margin
        return int(_first_hit(pts, nv, rad, self.verts, self.starts, self.circles))

    def collides(self, polyline: np.ndarray, edge_radius: np.ndarray) -> bool:
        """Whether one polyline (n, >=2) touches an obstacle."""
        return self.first_hit(np.asarray(polyline)[None], edge_radius) >= 0
