"""`softrod workspace ROBOT -o cloud.png`: the reachable tip cloud for tension limits, from one
batched static solve (`softrod.rods.solve_static_batch`) of uniform random tensions."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import numpy as np
import typer

from softrod.cli._app import CliError, app
from softrod.cli._outputs import atomic_path, prepare_output
from softrod.cli._resolve import parse_vector
from softrod.cli._static_cmds import RobotArg, _check_image_path, load_spec

__all__: list[str] = []

#: Tension limit when none is given, in units of the robot's tension scale (the tension that
#: bends its softest segment by about 1 rad at the largest tendon offset).
DEFAULT_TENSION_SCALES = 2.0


@app.command("workspace")
def workspace_cmd(
    robot: RobotArg,
    output: Annotated[
        Path, typer.Option("-o", "--output", help="Image file (.png, .pdf, .svg).")
    ] = Path("workspace.png"),
    samples: Annotated[
        int, typer.Option("--samples", help="Random tension vectors solved in one batch.")
    ] = 2000,
    max_tension: Annotated[
        float | None,
        typer.Option(
            "--max-tension",
            help="Tension limit T [N]: each tendon's tension is uniform in [0, T] "
            "(default: twice the robot's tension scale).",
        ),
    ] = None,
    gravity: Annotated[
        str | None, typer.Option("--gravity", metavar="GX,GY,GZ", help="Gravity [m/s^2].")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the random tensions.")] = 0,
    threads: Annotated[
        int | None, typer.Option("--threads", help="CPU threads (default: all cores).")
    ] = None,
    dpi: Annotated[int, typer.Option("--dpi", help="Resolution [dots/inch], 10-2400.")] = 150,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace an existing output file.")
    ] = False,
) -> None:
    """Reachable tip positions for tensions within [0, T] (3-D scatter, mm)."""
    from softrod.rods import compile_model, solve_static_batch

    path, spec = load_spec(robot)
    if samples < 1:
        raise CliError(f"--samples must be >= 1, got {samples}")
    if max_tension is not None and not (np.isfinite(max_tension) and max_tension > 0):
        raise CliError(f"--max-tension must be a positive number [N], got {max_tension}")
    if threads is not None and threads < 1:
        raise CliError(f"--threads must be >= 1, got {threads}")
    if not 10 <= dpi <= 2400:
        raise CliError(f"--dpi must be within 10..2400, got {dpi}")
    g = parse_vector("--gravity", gravity, 3, "gx,gy,gz") if gravity is not None else None
    model = compile_model(spec)
    if model.n_tendons == 0:
        raise CliError(f"ROBOT: {spec.name!r} has no tendons; the workspace needs tensions")
    _check_image_path(output)
    out = prepare_output(output, overwrite=overwrite)
    limit = max_tension if max_tension is not None else DEFAULT_TENSION_SCALES * model.tension_scale
    # One batched solve of uniform random tensions in [0, T] (seeded).
    rng = np.random.default_rng(seed)
    tensions = rng.uniform(0.0, limit, (samples, model.n_tendons))
    result = solve_static_batch(model, tensions=tensions, gravity=g, threads=threads)
    tips = result.tip_position[result.success]
    if tips.shape[0] == 0:
        raise CliError(f"no sample converged ({result.message}); lower --max-tension")

    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 5.6))
    ax = fig.add_subplot(projection="3d")
    mm = 1e3 * tips
    ax.scatter(mm[:, 0], mm[:, 1], mm[:, 2], c=mm[:, 2], s=4, cmap="viridis", depthshade=False)
    base = 1e3 * model.base_position
    ax.scatter([base[0]], [base[1]], [base[2]], c="k", marker="s", s=30, label="base")
    ax.set_xlabel("x [mm]")
    ax.set_ylabel("y [mm]")
    ax.set_zlabel("z [mm]")
    ax.legend(loc="upper left")
    # Equal axis scaling: the cloud's true shape.
    span = np.vstack([mm, base[None]])
    lo, hi = span.min(0), span.max(0)
    half = 0.5 * max(float((hi - lo).max()), 1e-9)
    mid = 0.5 * (lo + hi)
    ax.set_xlim(mid[0] - half, mid[0] + half)
    ax.set_ylim(mid[1] - half, mid[1] + half)
    ax.set_zlim(mid[2] - half, mid[2] + half)
    ax.set_title(
        f"{spec.name}: {tips.shape[0]} tips, tensions uniform in [0, {limit:.3g}] N"
        + (f" ({result.n_failed} not converged)" if result.n_failed else ""),
        fontsize=9,
    )
    with atomic_path(out) as tmp:
        fig.savefig(tmp, dpi=dpi)
    print(
        f"wrote {out} ({tips.shape[0]} of {samples} tips converged; "
        f"tensions in [0, {limit:.4g}] N; robot {path})"
    )
