"""`softrod calibrate`, `softrod import-somo` and `softrod sweep`.

Heavy imports (scipy.optimize, optuna, pyarrow, ray, mujoco) happen inside the commands.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from softrod.cli._app import CliError, app
from softrod.cli._outputs import atomic_path, prepare_output
from softrod.cli._resolve import find_robot, parse_vector
from softrod.description import json_safe

__all__ = ["parse_bounds"]


#: [m] An imported SoMo robot longer than this at --world-scale 1 is most likely in SoMo's scaled
#: units (its example fingers are ~0.1 m real, 2 m at world scale 20): warn.
SOMO_SCALE_WARN_LENGTH = 1.0


def parse_bounds(text: str | None) -> dict[str, tuple[float, float]]:
    """`--bounds youngs_modulus=1e9:1e12,pretension=0:5` -> {name: (lower, upper)}."""
    out: dict[str, tuple[float, float]] = {}
    if not text:
        return out
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        name, sep, rng = part.partition("=")
        lo_text, sep2, hi_text = rng.partition(":")
        if not sep or not sep2 or not name.strip():
            raise CliError(f"--bounds entries must read NAME=LOWER:UPPER, got {part!r}")
        try:
            lo, hi = float(lo_text), float(hi_text)
        except ValueError:
            raise CliError(
                f"--bounds {name.strip()}: LOWER and UPPER must be numbers, got {rng!r}"
            ) from None
        if not lo < hi:
            raise CliError(f"--bounds {name.strip()}: need LOWER < UPPER, got {rng!r}")
        out[name.strip()] = (lo, hi)
    return out


# ---------------------------------------------------------------------------------------------
# calibrate


@app.command("calibrate")
def calibrate_cmd(
    robot: Annotated[
        str, typer.Argument(metavar="ROBOT", help="Robot description or shipped name.")
    ],
    data: Annotated[
        str,
        typer.Option(
            "--data",
            metavar="FILE.csv",
            help="Measurements: tension_0.. [N] or length_0.. [m], optional tip_force_x/y/z [N], "
            "measured tip x, y, z [m] (and time, trajectory for rollouts).",
        ),
    ],
    fit: Annotated[
        str,
        typer.Option(
            "--fit",
            metavar="NAME[,NAME...]",
            help="Fields to fit: dotted paths (backbone.youngs_modulus), bare names "
            "(youngs_modulus, offset, stiffness), pretension, mujoco.damping_ratio.",
        ),
    ],
    bounds: Annotated[
        str | None,
        typer.Option("--bounds", metavar="NAME=LO:HI[,...]", help="Bounds per fitted name."),
    ] = None,
    method: Annotated[
        str, typer.Option("--method", help="least_squares (SciPy TRF) or bayes (optuna TPE).")
    ] = "least_squares",
    model: Annotated[
        str, typer.Option("--model", help="static (Cosserat/Kirchhoff solver) or mujoco (chain).")
    ] = "static",
    links: Annotated[
        int | None, typer.Option("--links", help="MuJoCo links N (--model mujoco).")
    ] = None,
    trials: Annotated[int, typer.Option("--trials", help="Bayesian trials (--method bayes).")] = 40,
    no_refine: Annotated[
        bool, typer.Option("--no-refine", help="Skip the least-squares polish after bayes.")
    ] = False,
    pretension: Annotated[
        float, typer.Option("--pretension", help="Initial tendon pretension [N].")
    ] = 0.0,
    gravity: Annotated[
        str | None, typer.Option("--gravity", metavar="GX,GY,GZ", help="Gravity [m/s^2].")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the Bayesian search.")] = 0,
    output: Annotated[
        str | None,
        typer.Option(
            "--output",
            "-o",
            metavar="FILE.yaml",
            help="Calibrated description (default <name>_calibrated.yaml); a record of the run "
            "is written beside it as <stem>.calibration.json, and while it runs a checkpoint "
            "<stem>.calibration.ckpt.jsonl (removed when done).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace existing output files.")
    ] = False,
    resume: Annotated[
        bool,
        typer.Option(
            "--resume",
            help="Continue a killed calibration from its checkpoint (same arguments); the "
            "result equals an uninterrupted run's.",
        ),
    ] = False,
) -> None:
    """Fit description fields to measured tip positions (least squares or Bayesian)."""
    import numpy as np

    from softrod._jobs import sigterm_as_interrupt
    from softrod.description import load_robot
    from softrod.sysid import calibrate, read_measurements

    if method not in ("least_squares", "bayes"):
        raise CliError(f"--method must be least_squares or bayes, got {method!r}")
    if model not in ("static", "mujoco"):
        raise CliError(f"--model must be static or mujoco, got {model!r}")
    if trials < 1:
        raise CliError(f"--trials must be >= 1, got {trials}")
    if links is not None and links < 1:
        raise CliError(f"--links must be >= 1, got {links}")
    if not math.isfinite(pretension) or pretension < 0:
        raise CliError(f"--pretension must be >= 0 [N], got {pretension}")
    names = [f.strip() for f in fit.split(",") if f.strip()]
    if not names:
        raise CliError("--fit needs at least one field name, got an empty value")
    spec = load_robot(find_robot(robot))
    try:
        meas = read_measurements(data, n_tendons=spec.n_tendons)
    except ValueError as exc:
        raise CliError(f"--data: {exc}") from None
    g = parse_vector("--gravity", gravity, 3, "gx,gy,gz") if gravity else None
    # Outputs are checked before the fit, so a long fit never ends in an error that loses it.
    out_path = prepare_output(
        Path(output) if output else Path(f"{spec.name}_calibrated.yaml"), overwrite=overwrite
    )
    record_path = prepare_output(
        out_path.with_name(out_path.stem + ".calibration.json"), overwrite=overwrite
    )
    ckpt_path = out_path.with_name(out_path.stem + ".calibration.ckpt.jsonl")
    if ckpt_path.exists() and not (resume or overwrite):
        raise CliError(
            f"{ckpt_path} holds an interrupted calibration; pass --resume to continue it or "
            "--overwrite to start over"
        )
    if resume and not ckpt_path.exists():
        print(f"note: no checkpoint {ckpt_path}; starting from the beginning", file=sys.stderr)
    mj: dict[str, Any] = {}
    if links is not None:
        mj["links"] = links
    if model == "mujoco" and g is not None:
        mj["gravity"] = tuple(g)
    try:
        with sigterm_as_interrupt():
            res = calibrate(
                spec,
                meas,
                names,
                method=method,  # type: ignore[arg-type]
                model=model,  # type: ignore[arg-type]
                bounds=parse_bounds(bounds),
                pretension=pretension,
                mujoco=mj,
                gravity=g if model == "static" else None,
                n_trials=trials,
                refine=not no_refine,
                rng=np.random.default_rng(seed),
                checkpoint=ckpt_path,
                resume=resume,
            )
    except KeyboardInterrupt:
        print(
            f"interrupted: the fit so far is in {ckpt_path}; continue it with the same command "
            "and --resume",
            file=sys.stderr,
        )
        raise typer.Exit(130) from None
    with atomic_path(out_path) as part:
        res.robot.to_yaml(part)
    summary = res.to_dict()
    fitted = summary.pop("fitted")
    payload = {
        **fitted,
        "fitted": fitted,
        **summary,
        "robot": str(find_robot(robot)),
        "data": str(data),
        "output": str(out_path),
        "record": str(record_path),
    }
    payload = json_safe(payload)
    with atomic_path(record_path) as part:
        part.write_text(json.dumps(payload, indent=2))
    # Both results are complete on disk: the checkpoint has served its purpose.
    ckpt_path.unlink(missing_ok=True)
    if as_json:
        print(json.dumps(payload))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"calibration of {spec.name} ({res.method}, {res.model} model)")
    for col in ("parameter", "initial", "fitted", "std. error", "bounds"):
        table.add_column(col)
    for p in res.parameters:
        se = "n/a" if not math.isfinite(p.stderr) else f"{p.stderr:.4g}"
        flag = " (at bound)" if p.at_bound else ""
        table.add_row(
            p.name,
            f"{p.initial:.6g}",
            f"{p.value:.6g}{flag}",
            se,
            f"[{p.lower:.3g}, {p.upper:.3g}]",
        )
    console = Console()
    console.print(table)
    console.print(
        f"tip RMSE {res.rmse_before * 1e3:.4g} mm -> {res.rmse_after * 1e3:.4g} mm over "
        f"{res.n_samples} rows, {res.nfev} model evaluations, {res.elapsed:.2f} s"
    )
    if not res.success:
        console.print(f"[yellow]warning:[/] {res.message}")
    console.print(f"wrote {out_path} and {record_path}")


# ---------------------------------------------------------------------------------------------
# import-somo


@app.command("import-somo")
def import_somo_cmd(
    manipulator: Annotated[
        str, typer.Argument(metavar="MANIPULATOR.yaml", help="SoMo manipulator definition.")
    ],
    world_scale: Annotated[
        float, typer.Option("--world-scale", help="SoMo world scale Y of the file (often 20).")
    ] = 1.0,
    rule: Annotated[
        str,
        typer.Option(
            "--rule",
            help="spring_stiffness -> EI: somo (eq. 8 inverted), tip, midpoint, or chain "
            "(match SoMo's chain tip compliance).",
        ),
    ] = "somo",
    actuation: Annotated[
        str,
        typer.Option(
            "--actuation",
            help="SoMo's torques as moments (moment actuators, any bend; default) or chambers "
            "(pressures, small bends only).",
        ),
    ] = "moments",
    name: Annotated[
        str | None, typer.Option("--name", help="Robot name (default from file).")
    ] = None,
    output: Annotated[
        str | None,
        typer.Option("--output", "-o", metavar="FILE.yaml", help="Description to write."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace an existing output file.")
    ] = False,
) -> None:
    """Convert a SoMo manipulator definition into a softrod description (notes what is unmapped)."""
    from softrod.somo import import_somo

    if not math.isfinite(world_scale) or world_scale <= 0:
        raise CliError(f"--world-scale must be > 0, got {world_scale}")
    src = Path(manipulator)
    if not src.is_file():
        raise CliError(f"MANIPULATOR: file not found: {manipulator}")
    if output is not None:
        prepare_output(output, overwrite=overwrite)
    res = import_somo(src, world_scale=world_scale, rule=rule, name=name, actuation=actuation)
    # The default file name comes from the definition's name: keep it a plain name in this
    # folder (a name such as "../x" must not write elsewhere).
    stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in res.robot.name).strip(".")
    out_path = prepare_output(
        Path(output) if output else Path(f"{stem or 'somo_manipulator'}.yaml"), overwrite=overwrite
    )
    length = sum(seg.length for seg in res.robot.segments)
    if world_scale == 1.0 and length > SOMO_SCALE_WARN_LENGTH:
        print(
            f"warning: the imported robot is {length:.3g} m long at --world-scale 1; SoMo files "
            "are usually written in scaled units (its examples use a world scale of 20): "
            "pass the file's --world-scale",
            file=sys.stderr,
        )
    header = (
        f"# Imported from the SoMo definition {src.name} (softrod import-somo, rule {rule}, "
        f"world scale {world_scale:g}, actuation {actuation}).\n# Not mapped or approximated:\n"
        + "".join(f"#  - {n}\n" for n in res.notes)
    )
    out_path.write_text(header + res.robot.to_yaml())
    if as_json:
        print(
            json.dumps(
                {
                    "output": str(out_path),
                    "robot": res.robot.to_dict(),
                    "notes": list(res.notes),
                    "n_links": list(res.n_links),
                }
            )
        )
        return
    print(f"wrote {out_path}")
    print("not mapped or approximated:")
    for n in res.notes:
        print(f"  - {n}")


# ---------------------------------------------------------------------------------------------
# sweep


@app.command("sweep")
def sweep_cmd(
    spec: Annotated[str, typer.Argument(metavar="SPEC.yaml", help="Sweep file.")],
    output: Annotated[
        str | None,
        typer.Option("--output", "-o", metavar="FILE.parquet", help="Result file (appended)."),
    ] = None,
    resume: Annotated[
        bool, typer.Option("--resume", help="Continue an existing output; skips finished points.")
    ] = False,
    retry_errors: Annotated[
        bool, typer.Option("--retry-errors", help="With --resume: run failed points again.")
    ] = False,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace an existing output (not with --resume).")
    ] = False,
    backend: Annotated[
        str, typer.Option("--backend", help="process (default) or ray.")
    ] = "process",
    address: Annotated[
        str | None, typer.Option("--address", help="Ray cluster address (--backend ray).")
    ] = None,
    workers: Annotated[
        int | None, typer.Option("--workers", help="Parallel workers (default: CPU count).")
    ] = None,
    count: Annotated[
        bool, typer.Option("--count", help="Print the number of points and exit.")
    ] = False,
    no_progress: Annotated[bool, typer.Option("--no-progress", help="No progress bar.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary.")] = False,
) -> None:
    """Run a design sweep; results are appended to Parquet as points finish (resumable)."""
    from softrod.sweep import count_points, run_sweep

    if count:
        n = count_points(spec)
        print(json.dumps({"n_points": n}) if as_json else n)
        return
    if output is None:
        raise CliError("--output FILE.parquet is required")
    if address is not None and backend != "ray":
        raise CliError(f"--address needs --backend ray, got --backend {backend}")
    if retry_errors and not resume:
        raise CliError("--retry-errors needs --resume")
    summary = run_sweep(
        spec,
        output,
        resume=resume,
        backend=backend,  # type: ignore[arg-type]
        workers=workers,
        address=address,
        retry_errors=retry_errors,
        progress=not no_progress and not as_json,
        overwrite=overwrite,
    )
    if as_json:
        print(json.dumps(summary.to_dict()))
    else:
        print(
            f"{summary.n_run} points run ({summary.n_errors} failed), {summary.n_skipped} already "
            f"in {summary.output}; {summary.rate:.1f} points/s with {summary.workers} "
            f"{summary.backend} workers"
        )
    if summary.interrupted:
        print(
            f"interrupted: resume with  softrod sweep {spec} -o {output} --resume", file=sys.stderr
        )
        raise typer.Exit(130)
    # A sweep whose every point failed is a failed command (the rows say why, per point).
    if summary.n_run > 0 and summary.n_errors == summary.n_run:
        print(
            f"error: all {summary.n_run} points failed; see the 'error' column of {output}",
            file=sys.stderr,
        )
        raise typer.Exit(1)
