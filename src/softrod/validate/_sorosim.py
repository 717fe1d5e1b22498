"""Validation against SoRoSim's static equilibria (issue 9, statics).

Each of the 500 shapes per rod is re-solved with softrod's static solver (cosserat model, what
SoRoSim solves) under the same gravity, mid-point wrench and tip wrench, and compared at the
tip and at the 14 stations along the backbone. Errors are in % of the rod length.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from softrod.datasets import MATERIALS, SorosimStatics, load_sorosim_statics
from softrod.description import find_robot, load_robot
from softrod.rods import compile_model, solve_static
from softrod.validate._records import RecordCache, cached

__all__ = ["StaticStudy", "static_solver_study", "sorosim_robot"]


def sorosim_robot(material: str, model: str = "cosserat") -> Any:
    """The shipped validation rod (MuJoCo frame: clamped at the origin along +z)."""
    spec = load_robot(find_robot(MATERIALS[material][1])).model_dump()
    spec["model"] = model
    return load_robot(spec)


@dataclass(frozen=True)
class StaticStudy:
    """Per-shape errors of one model against SoRoSim. tip_error_pct : (k,);
    station_error_pct : (k, 14) [% of length]; converged : (k,) bool."""

    material: str
    model: str
    tip_error_pct: np.ndarray
    station_error_pct: np.ndarray
    converged: np.ndarray

    def summary(self) -> dict[str, float]:
        e = self.tip_error_pct
        return {
            "mean_pct": float(e.mean()),
            "p95_pct": float(np.percentile(e, 95)),
            "max_pct": float(e.max()),
            "backbone_mean_pct": float(self.station_error_pct.mean()),
            "backbone_max_pct": float(self.station_error_pct.max()),
            "converged_fraction": float(self.converged.mean()),
        }


def static_solver_study(
    material: str,
    model: str = "cosserat",
    data: SorosimStatics | None = None,
    root: str | Path | None = None,
    limit: int | None = None,
    cache: RecordCache | None = None,
) -> StaticStudy:
    """Re-solve SoRoSim's static shapes with softrod's shooting solver.

    cache : per-shape results already computed (a resumed validation) and where new ones go.
    """
    data = data or load_sorosim_statics(material, frame="mujoco", root=root)
    # Every station is a grid node, so the comparison needs no interpolation.
    inner = tuple(float(x) for x in np.unique(data.station_s) if 0.0 < x < data.length)
    rod = compile_model(sorosim_robot(material, model), extra_nodes=inner)
    k = data.n_shapes if limit is None else min(limit, data.n_shapes)
    tip = np.empty(k)
    stations = np.empty((k, data.station_s.shape[0]))
    ok = np.empty(k, dtype=bool)

    def shape(i: int) -> dict[str, Any]:
        sol = solve_static(
            rod,
            gravity=data.gravity[i],
            tip_force=data.tip_force[i],
            tip_moment=data.tip_moment[i],
            point_loads=[(0.5 * data.length, data.mid_force[i], data.mid_moment[i])],
        )
        pts = np.column_stack(
            [np.interp(data.station_s, sol.s, sol.positions[:, a]) for a in range(3)]
        )
        return {
            "ok": bool(sol.success),
            "stations": (
                np.linalg.norm(pts - data.positions[i], axis=1) / data.length * 100
            ).tolist(),
            "tip": float(np.linalg.norm(sol.tip_position - data.tip_position[i]))
            / data.length
            * 100,
        }

    for i in range(k):
        rec = cached(cache, f"{material}/static-{model}/{i}", shape, i)
        ok[i], stations[i], tip[i] = rec["ok"], rec["stations"], rec["tip"]
    return StaticStudy(material, model, tip, stations, ok)
