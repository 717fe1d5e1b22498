"""Dynamics commands: `softrod simulate` (issue 5); `softrod bench dynamics` is in `_bench_cmds`."""

from __future__ import annotations

import json

import typer

from softrod.cli._app import CliError, app


@app.command("simulate")
def simulate(
    robot: str = typer.Argument(..., help="Robot description file or shipped robot name."),
    duration: float = typer.Option(1.0, "--duration", help="Simulated time [s]."),
    dt: float = typer.Option(0.0, "--dt", help="Time step [s]; 0 = automatic."),
    tensions: str = typer.Option("", "--tensions", help="Tendon tensions [N], comma-separated."),
    tip_force: str = typer.Option("", "--tip-force", help="Tip force fx,fy,fz [N]."),
    gravity: str = typer.Option("", "--gravity", help="Gravity gx,gy,gz [m/s^2]."),
    damping: float = typer.Option(0.0, "--damping", help="Viscous damping [N s/m^2]."),
    elements: int = typer.Option(20, "--elements", help="Elements along the robot."),
    integrator: str = typer.Option(
        "auto",
        "--integrator",
        help="auto (implicit where its step is >= 1000x the explicit one: steel and NiTi "
        "backbones; explicit for soft rods), explicit (step limited by the stiffest wave) or "
        "implicit (step set by the bending modes, docs/dynamics.md).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Simulate a robot from rest with the Lie-group variational integrator (seed 004)."""
    from softrod.cli._resolve import find_robot, parse_vector
    from softrod.dynamics import INTEGRATORS, simulate_dynamic

    if integrator not in INTEGRATORS:
        raise CliError(f"--integrator must be one of {', '.join(INTEGRATORS)}, got {integrator!r}")
    path = find_robot(robot)
    kw: dict = {}
    if tensions:
        kw["tensions"] = parse_vector("--tensions", tensions)
    if tip_force:
        kw["tip_force"] = parse_vector("--tip-force", tip_force, 3, "fx,fy,fz")
    if gravity:
        kw["gravity"] = parse_vector("--gravity", gravity, 3, "gx,gy,gz")
    res = simulate_dynamic(str(path), duration, dt=dt or None, damping=damping or None,
                           elements=elements, integrator=integrator, **kw)  # fmt: skip
    if as_json:
        print(json.dumps(res.to_dict()))
    else:
        for key, value in res.to_dict().items():
            print(f"{key}: {value}")
    # A diverged run printed its samples up to the failure; the exit code says it failed.
    if not res.success:
        raise typer.Exit(1)
