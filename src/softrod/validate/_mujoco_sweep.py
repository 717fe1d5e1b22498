"""MuJoCo rigid-link chain vs SoRoSim's static equilibria (issue 9, statics, N-sweep).

The same 500 shapes per rod as `static_solver_study`, solved as MuJoCo equilibria (Newton on
MuJoCo's own generalized forces, `softrod.mujoco.static_equilibrium`) for a chain of N links.
The mid wrench and tip wrench are point loads that follow their bodies (SoRoSim's loads are
follower-free world-frame vectors applied at material points, as are these). Backbone stations
are read at their arc length on the chain (`ChainInfo.body_point`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from softrod.datasets import SorosimStatics, load_sorosim_statics
from softrod.validate._records import RecordCache, cached
from softrod.validate._sorosim import StaticStudy, sorosim_robot

__all__ = ["LINKS", "mujoco_static_study", "mujoco_sweep"]

#: The discretizations the issue asks for (number of rigid links N).
LINKS: tuple[int, ...] = (10, 25, 50, 100)


def mujoco_static_study(
    material: str,
    links: int,
    data: SorosimStatics | None = None,
    root: str | Path | None = None,
    limit: int | None = None,
    cache: RecordCache | None = None,
) -> StaticStudy:
    """Solve SoRoSim's shapes as MuJoCo equilibria of an N-link chain; errors in % of length.

    A failed equilibrium is kept (its error counts) and flagged in `converged`. cache : per-shape
    results already computed (a resumed validation) and where new ones go.
    """
    from softrod.mujoco import PointLoad, static_equilibrium
    from softrod.validate._chain import make_model

    data = data or load_sorosim_statics(material, frame="mujoco", root=root)
    robot = sorosim_robot(material)
    L = data.length
    model, mjd, info = make_model(robot, links)
    tip_body, tip_point = info.body_point(model, L)
    mid_body, mid_point = info.body_point(model, 0.5 * L)
    stations = [info.body_point(model, float(s)) for s in data.station_s]
    k = data.n_shapes if limit is None else min(limit, data.n_shapes)
    tip = np.empty(k)
    st_err = np.empty((k, len(stations)))
    ok = np.empty(k, dtype=bool)

    def shape(i: int) -> dict[str, Any]:
        model.opt.gravity[:] = data.gravity[i]
        loads = [
            PointLoad(tip_body, tip_point, data.tip_force[i], data.tip_moment[i]),
            PointLoad(mid_body, mid_point, data.mid_force[i], data.mid_moment[i]),
        ]
        res = static_equilibrium(model, mjd, loads)
        pts = np.array([mjd.xpos[b] + mjd.xmat[b].reshape(3, 3) @ p for b, p in stations])
        tip_pos = mjd.xpos[tip_body] + mjd.xmat[tip_body].reshape(3, 3) @ tip_point
        return {
            "ok": bool(res.success),
            "stations": (np.linalg.norm(pts - data.positions[i], axis=1) / L * 100).tolist(),
            "tip": float(np.linalg.norm(tip_pos - data.positions[i, -1])) / L * 100,
        }

    for i in range(k):
        rec = cached(cache, f"{material}/mujoco-N{links}/{i}", shape, i)
        ok[i], st_err[i], tip[i] = rec["ok"], rec["stations"], rec["tip"]
    return StaticStudy(material, f"mujoco-N{links}", tip, st_err, ok)


def mujoco_sweep(
    material: str,
    links: Sequence[int] = LINKS,
    root: str | Path | None = None,
    limit: int | None = None,
) -> dict[int, StaticStudy]:
    """`mujoco_static_study` for every N in `links`."""
    data = load_sorosim_statics(material, frame="mujoco", root=root)
    return {int(n): mujoco_static_study(material, int(n), data=data, limit=limit) for n in links}
