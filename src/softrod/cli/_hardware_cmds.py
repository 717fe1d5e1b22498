"""`softrod hardware fit | replay`: calibrate a physical robot on one recording and replay any
recording through the calibrated description (docs/validation.md, "hardware fit / replay").

Bad input (missing columns, NaN rows, non-monotonic time, another tendon count) is one line
naming the file and the column or row, exit 2; the fitted description is written atomically.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from softrod.cli._app import CliError, app
from softrod.cli._outputs import prepare_output

__all__: list[str] = []

hardware_app = typer.Typer(
    help="Calibrate a physical robot on a recording and replay recordings through it.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(hardware_app, name="hardware")

_MODELS = ("static", "mujoco")


@hardware_app.command("fit")
def fit_cmd(
    robot: Annotated[str, typer.Argument(metavar="ROBOT", help="ftdcr_v4 or ftdcr_v6.")],
    data: Annotated[Path, typer.Option("--data", help="Training recording (CSV).")],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Calibrated robot description (YAML).")
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    stride: Annotated[
        int, typer.Option("--stride", help="Fit on every STRIDE-th row of the recording.")
    ] = 8,
    max_nfev: Annotated[
        int,
        typer.Option(
            "--max-nfev", help="Cap on the trust-region steps; the fit stops when converged."
        ),
    ] = 100,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace an existing output file.")
    ] = False,
    friction: Annotated[
        bool,
        typer.Option(
            "--friction", help="Also fit the tendon friction coefficient mu (solve_sequence)."
        ),
    ] = False,
    hole_wrap: Annotated[
        bool,
        typer.Option(
            "--hole-wrap",
            help="With friction: also fit the holes' own wrap angle (friction where straight).",
        ),
    ] = False,
    tension_backlash: Annotated[
        bool,
        typer.Option(
            "--tension-backlash",
            help="Also fit a play per newton of tendon tension (friction behind a compliance).",
        ),
    ] = False,
    lag: Annotated[
        bool,
        typer.Option(
            "--lag",
            help="Also fit a first-order lag (creep) of the displacements: time constant and "
            "lagging fraction.",
        ),
    ] = False,
    passthrough: Annotated[
        bool,
        typer.Option(
            "--passthrough",
            help="Also fit the coupling between segments: the distal tendons' radius in the "
            "proximal disks, one scale per distal segment (written as `offsets` routing).",
        ),
    ] = False,
) -> None:
    """Fit the 15 calibration parameters on DATA only (tendon friction mu held at 0 unless
    --friction) and write one calibrated robot description that the static solver, the MuJoCo
    chain and LGVI load (with --friction, its `tendon_friction` block)."""
    from softrod.description import json_safe
    from softrod.validate import fit_recording, fit_summary, write_fitted

    if stride < 1 or max_nfev < 1:
        raise CliError(f"--stride and --max-nfev must be >= 1, got {stride} and {max_nfev}")
    out = prepare_output(output, overwrite=overwrite)
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    # A fit takes half a minute to hours (friction): show that it runs, on stderr, gone after.
    bar = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    with bar:
        task = bar.add_task(f"fit {robot}", total=None)

        def progress(evaluations: int, rmse_mm: float) -> None:
            bar.update(
                task,
                description=f"fit {robot}: {evaluations} evaluations, train RMSE {rmse_mm:.2f} mm",
            )

        fit = fit_recording(
            robot,
            data,
            stride=stride,
            max_nfev=max_nfev,
            friction=friction,
            hole_wrap=hole_wrap,
            tension_backlash=tension_backlash,
            lag=lag,
            passthrough=passthrough,
            progress=progress,
        )
    write_fitted(fit, out)
    obj = {**fit_summary(fit), "output": str(out)}
    if as_json:
        typer.echo(json.dumps(json_safe(obj)))
        return
    typer.echo(
        f"{robot}: train RMSE {fit.rmse_before_mm:.2f} -> {fit.rmse_after_mm:.2f} mm on "
        f"{fit.train_rows} rows ({fit.seconds:.1f} s); friction: "
        f"{obj['friction'] if obj['friction'] is not None else 'none (mu = 0)'}"
    )
    if fit.converged is False:
        # The optimum is not reached: say so, since where it stopped is not reproducible.
        typer.echo(
            f"not converged: stopped after {fit.nfev} trust-region step"
            f"{'' if fit.nfev == 1 else 's'} (--max-nfev {max_nfev}); the parameters depend on "
            "where it stopped"
        )
    typer.echo(f"wrote {out}")


@hardware_app.command("replay")
def replay_cmd(
    fitted: Annotated[
        Path, typer.Argument(metavar="FITTED", help="Description from `hardware fit`.")
    ],
    data: Annotated[Path, typer.Option("--data", help="Recording to replay (CSV).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    model: Annotated[str, typer.Option("--model", help="static or mujoco.")] = "static",
    links: Annotated[int, typer.Option("--links", help="mujoco: chain links.")] = 30,
) -> None:
    """Replay DATA row by row in time order; `tip_mm` is one [x, y, z] per row in the
    recording's frame and units (its tip_x/y/z columns)."""
    from softrod.description import json_safe
    from softrod.validate import replay_recording

    if model not in _MODELS:
        raise CliError(f"--model must be one of {', '.join(_MODELS)}, got {model!r}")
    if links < 1:
        raise CliError(f"--links must be >= 1, got {links}")
    rep = replay_recording(fitted, data, model=model, links=links)  # type: ignore[arg-type]
    obj = rep.as_json()
    if as_json:
        typer.echo(json.dumps(json_safe(obj)))
        return
    line = f"{obj['robot']}.{model}: {obj['rows']} rows in {obj['seconds']:.2f} s"
    if "mean_error_mm" in obj:
        line += (
            f", tip error mean {obj['mean_error_mm']:.2f} mm median "
            f"{obj['median_error_mm']:.2f} mm max {obj['max_error_mm']:.2f} mm"
        )
    typer.echo(line)
