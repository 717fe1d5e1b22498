"""`softrod track` (issue 4); `softrod bench observer` is in `_bench_cmds`."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import typer

from softrod.cli._app import app

#: SoftManiSim Table 5 average MSE [m^2] per trajectory (ALGORITHMS.md A.3).
PAPER_MSE_MEAN = {
    "square": 3.51e-4,
    "circle": 1.95e-4,
    "figure8": 4.09e-4,
    "helix": 1.53e-4,
    "square_helix": 2.68e-4,
}


@app.command("track")
def track_cmd(
    name: str = typer.Argument(..., help="square | circle | figure8 | helix | square_helix"),
    robot: str = typer.Option("softmanisim_2seg_extensible", help="Robot file or example name."),
    controller: str = typer.Option("analytic", help="Tip Jacobian: analytic | fd."),
    dt: float = typer.Option(0.01, help="Control period [s]."),
    loops: float = typer.Option(1.0, help="Number of loops of the trajectory."),
    period: float = typer.Option(20.0, help="Seconds per loop."),
    scale: float = typer.Option(1.0, help="Scale of the paper's trajectory sizes."),
    kp: float = typer.Option(10.0, help="Proportional gain [1/s]."),
    no_base: bool = typer.Option(False, "--no-base", help="No 3-DoF translating base."),
    controls: str = typer.Option(
        "tensions",
        help="Inputs steered, comma-separated: tensions, pressures, field, moments.",
    ),
    b_max: float = typer.Option(0.02, help="Field bound |B| <= b_max [T] (controls field)."),
    pressure_range: str = typer.Option(
        None, help="MIN,MAX [Pa] for every chamber (default: the description's ranges)."
    ),
    moment_max: float = typer.Option(None, help="Bound |tau| on moment inputs (controls moments)."),
    gravity: bool = typer.Option(True, help="Include gravity (-z)."),
    out: Path = typer.Option(None, "-o", "--out", help="Output folder (runs/track/NAME)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Track one SoftManiSim reference trajectory with the resolved-rate Jacobian controller."""
    from softrod.cli._resolve import find_robot
    from softrod.control import (
        TRAJECTORIES,
        ResolvedRateController,
        TendonRobotPlant,
        make_trajectory,
        track,
    )
    from softrod.description import load_robot

    if name not in TRAJECTORIES:
        raise ValueError(f"trajectory must be one of {sorted(TRAJECTORIES)}, got {name!r}")
    if controller not in ("analytic", "fd"):
        raise ValueError(f"--controller must be 'analytic' or 'fd', got {controller!r}")
    path = find_robot(robot)
    loads = {"gravity": [0.0, 0.0, -9.81]} if gravity else {}
    kinds = tuple(c.strip() for c in controls.split(",") if c.strip())
    p_range = None
    if pressure_range is not None:
        try:
            lo, hi = (float(v) for v in pressure_range.split(","))
        except ValueError:
            raise ValueError(
                f"--pressure-range must be MIN,MAX in Pa, got {pressure_range!r}"
            ) from None
        p_range = (lo, hi)
    try:
        plant = TendonRobotPlant(
            load_robot(path), mobile_base=not no_base, loads=loads, controls=kinds,
            pressure_range=p_range, b_max=b_max, moment_max=moment_max,
        )  # fmt: skip
    except ValueError as exc:
        raise ValueError(f"--controls {controls}: {exc}") from None
    ctl = ResolvedRateController(plant, kp=kp, jacobian_mode=controller)  # type: ignore[arg-type]
    x0 = plant.solve(np.zeros(plant.n_q)).tip_position
    t, x_d, xdot_d = make_trajectory(name, x0, dt=dt, loops=loops, scale=scale, period=period)
    res = track(ctl, t, x_d, xdot_d, progress=not as_json)
    out = out or Path("runs") / "track" / name
    out.mkdir(parents=True, exist_ok=True)
    plot = res.plot(out / f"{name}.png", title=f"{plant.model.spec.name}: {name} ({controller})")
    np.savez_compressed(
        out / f"{name}.npz", t=res.t, desired=res.desired, actual=res.actual, q=res.q
    )
    summary = {
        "trajectory": name,
        "robot": plant.model.spec.name,
        "controller": f"resolved-rate, {controller} Jacobian, kp={kp}",
        "controls": list(plant.controls),
        "mse": res.mse.tolist(),
        "mse_mean": res.mse_mean,
        "rmse_mm": float(np.sqrt(res.mse_mean) * 1e3),
        "paper_mse_mean": PAPER_MSE_MEAN[name],
        "ratio_to_paper": res.mse_mean / PAPER_MSE_MEAN[name],
        "steps": int(t.shape[0]),
        "wall_time_s": res.wall_time_s,
        "plot": str(plot),
    }
    (out / f"{name}.json").write_text(json.dumps(summary, indent=2))
    if as_json:
        print(json.dumps(summary))
    else:
        print(
            f"{name}: MSE per axis {np.array2string(res.mse, precision=2)} m^2, "
            f"mean {res.mse_mean:.3g} m^2 (paper {PAPER_MSE_MEAN[name]:.3g}); plot {plot}"
        )
