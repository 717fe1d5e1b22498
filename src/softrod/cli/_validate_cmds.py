"""`softrod validate sorosim|hardware [--json]`: the issue-9 validation studies.

Each writes a Markdown report with figures (default folder `runs/validation/`, git-ignored)
and prints a summary line per result, or one JSON object with `--json`. Every record's result
(a shape, a release, a robot's calibration) is journaled in `<out>/<study>.records.jsonl` as it
finishes; `--resume` computes only the records missing there.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from softrod.cli._app import CliError, app

if TYPE_CHECKING:
    from softrod.validate import RecordCache

__all__: list[str] = []

_STUDIES = ("sorosim", "hardware")


def _csv_ints(text: str) -> tuple[int, ...]:
    try:
        vals = tuple(int(v) for v in text.split(",") if v.strip())
    except ValueError as exc:
        raise CliError(f"--links must be comma-separated integers, got {text!r}") from exc
    if not vals or min(vals) < 1:
        raise CliError(f"--links needs positive integers, got {text!r}")
    return vals


@app.command("validate")
def validate_cmd(
    study: Annotated[str, typer.Argument(metavar="STUDY", help="sorosim or hardware.")],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Folder for the report and figures.")
    ] = Path("runs/validation"),
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    links: Annotated[
        str | None,
        typer.Option(
            "--links",
            help="sorosim: MuJoCo N values (default 10,25,50,100); hardware: chain links (30).",
        ),
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", help="sorosim: shapes per study (default all 500).")
    ] = None,
    limit_large: Annotated[
        int | None,
        typer.Option("--limit-large", help="sorosim: shapes for N >= 100 only (default all)."),
    ] = None,
    material: Annotated[
        str | None, typer.Option("--material", help="sorosim: only this rod (steel or tpu).")
    ] = None,
    releases: Annotated[
        int,
        typer.Option("--releases", help="sorosim: SoRoSim release records per rod (0 skips)."),
    ] = 10,
    lgvi_releases: Annotated[
        int,
        typer.Option("--lgvi-releases", help="sorosim: releases per rod through the LGVI."),
    ] = 10,
    lgvi_fine: Annotated[
        bool,
        typer.Option(
            "--lgvi-fine",
            help="sorosim: steel LGVI at 40 elements, x100 rotary inertia (~100 s a release).",
        ),
    ] = False,
    integrator: Annotated[
        str,
        typer.Option(
            "--integrator",
            help="sorosim: the LGVI releases' step: auto (implicit for steel at 40 elements, "
            "explicit for TPU), explicit (steel x1000 rotary inertia, 20 elements) or implicit "
            "(physical rotary inertia; docs/dynamics.md).",
        ),
    ] = "auto",
    robot: Annotated[
        str | None, typer.Option("--robot", help="hardware: only ftdcr_v4 or ftdcr_v6.")
    ] = None,
    stride: Annotated[
        int, typer.Option("--stride", help="hardware: calibrate on every STRIDE-th train row.")
    ] = 8,
    max_nfev: Annotated[
        int,
        typer.Option(
            "--max-nfev",
            help="hardware: cap on the least-squares steps (the fit stops when converged).",
        ),
    ] = 100,
    no_mujoco: Annotated[
        bool, typer.Option("--no-mujoco", help="hardware: static rod model only.")
    ] = False,
    resume: Annotated[
        bool,
        typer.Option(
            "--resume",
            help="Reuse the per-record results in OUT/STUDY.records.jsonl of an interrupted "
            "run; only missing records are computed.",
        ),
    ] = False,
) -> None:
    """Validate against SoRoSim (statics) or the physical seed-002 TDCRs (hardware)."""
    from softrod._jobs import sigterm_as_interrupt
    from softrod.validate import RecordCache

    if study not in _STUDIES:
        raise CliError(f"STUDY must be one of {', '.join(_STUDIES)}, got {study!r}")
    # Arguments are checked before the journal is opened (a typo must not reset it).
    _check_args(study, material, robot, stride, max_nfev, integrator)
    journal = out / f"{study}.records.jsonl"
    cache = RecordCache(journal, {"study": study}, resume=resume)
    try:
        with sigterm_as_interrupt():
            _run_study(
                study, out, as_json, links, limit, limit_large, material, releases,
                lgvi_releases, lgvi_fine, robot, stride, max_nfev, no_mujoco, cache,
                integrator,
            )  # fmt: skip
    except KeyboardInterrupt:
        print(
            f"interrupted: {cache.n_cached + cache.n_computed} records are kept in {journal}; "
            "continue with the same command and --resume",
            file=sys.stderr,
        )
        raise typer.Exit(130) from None
    finally:
        cache.close()


def _check_args(
    study: str, material: str | None, robot: str | None, stride: int, max_nfev: int,
    integrator: str = "explicit",
) -> None:  # fmt: skip
    from softrod.datasets import MATERIALS
    from softrod.dynamics import INTEGRATORS
    from softrod.validate import ROBOTS

    if integrator not in INTEGRATORS:
        raise CliError(f"--integrator must be one of {', '.join(INTEGRATORS)}, got {integrator!r}")
    if study == "sorosim" and material is not None and material not in MATERIALS:
        raise CliError(f"--material must be one of {', '.join(MATERIALS)}, got {material!r}")
    if study == "hardware":
        if robot is not None and robot not in ROBOTS:
            raise CliError(f"--robot must be one of {', '.join(ROBOTS)}, got {robot!r}")
        if stride < 1 or max_nfev < 1:
            raise CliError("--stride and --max-nfev must be >= 1")


def _run_study(
    study: str,
    out: Path,
    as_json: bool,
    links: str | None,
    limit: int | None,
    limit_large: int | None,
    material: str | None,
    releases: int,
    lgvi_releases: int,
    lgvi_fine: bool,
    robot: str | None,
    stride: int,
    max_nfev: int,
    no_mujoco: bool,
    cache: RecordCache,
    integrator: str = "auto",
) -> None:
    from softrod.validate import hardware_study, sorosim_study

    if study == "sorosim":
        from softrod.datasets import MATERIALS
        from softrod.validate import LINKS

        if material is not None and material not in MATERIALS:
            raise CliError(f"--material must be one of {', '.join(MATERIALS)}, got {material!r}")
        mats = (material,) if material else tuple(MATERIALS)
        ns = _csv_ints(links) if links else LINKS
        obj = sorosim_study(
            out, materials=mats, links=ns, limit=limit, limit_large=limit_large, cache=cache
        )
        if releases > 0 or lgvi_releases > 0:
            from softrod.validate import (
                LGVI_FINE_ELEMENTS,
                LGVI_FINE_ROTARY_INERTIA_SCALE,
                release_study,
            )

            dyn = release_study(
                out,
                materials=mats,
                releases=tuple(range(1, min(max(releases, 0), 10) + 1)),
                lgvi_releases=tuple(range(1, min(max(lgvi_releases, 0), 10) + 1)),
                lgvi_elements=LGVI_FINE_ELEMENTS if lgvi_fine else None,
                # The implicit step keeps the physical rotary inertia (its step does not need x100).
                lgvi_rotary_inertia_scale=(
                    LGVI_FINE_ROTARY_INERTIA_SCALE
                    if lgvi_fine and integrator == "explicit"
                    else None
                ),
                cache=cache,
                lgvi_integrator=integrator,
            )
            obj["dynamics"] = dyn["summary"]
            obj["dynamics_effective_over_stated_damping"] = dyn["effective_over_stated"]
            obj["mujoco_release_mean_error_pct"] = {
                m: v["mujoco"]["mean_error_pct"] for m, v in dyn["summary"].items() if "mujoco" in v
            }
            obj["lgvi_release_mean_error_pct"] = {
                m: v["lgvi"]["mean_error_pct"] for m, v in dyn["summary"].items() if "lgvi" in v
            }
        if as_json:
            typer.echo(json.dumps(obj))
            return
        for mat, rows in obj["summary"].items():
            for key, s in rows.items():
                typer.echo(
                    f"{mat}.{key}: mean {s['mean_pct']:.4f}% p95 {s['p95_pct']:.4f}% "
                    f"max {s['max_pct']:.4f}% of L ({s['shapes']} shapes)"
                )
        for mat, models in obj.get("dynamics", {}).items():
            for name, d in models.items():
                typer.echo(
                    f"{mat}.release.{name}: mean {d['mean_error_pct']:.3f}% (worst release "
                    f"{d['worst_mean_error_pct']:.3f}%) max {d['max_error_pct']:.3f}% of L "
                    f"({d['releases']} releases)"
                )
    else:
        from softrod.validate import ROBOTS

        if robot is not None and robot not in ROBOTS:
            raise CliError(f"--robot must be one of {', '.join(ROBOTS)}, got {robot!r}")
        if stride < 1 or max_nfev < 1:
            raise CliError("--stride and --max-nfev must be >= 1")
        n = _csv_ints(links)[0] if links else 30
        obj = hardware_study(
            out,
            robots=(robot,) if robot else ROBOTS,
            stride=stride,
            max_nfev=max_nfev,
            mujoco=not no_mujoco,
            links=n,
            cache=cache,
        )
        if as_json:
            typer.echo(json.dumps(obj))
            return
        for rob, e in obj["robots"].items():
            for name, m in e["models"].items():
                typer.echo(
                    f"{rob}.{name}: val mean {m['mean_mm']:.2f} mm median {m['median_mm']:.2f} "
                    f"mm max {m['max_mm']:.2f} mm"
                )
    typer.echo(f"report: {obj['report']}")
