"""`softrod bench static`."""

from __future__ import annotations

import json

import typer

from softrod.cli._app import bench_app


@bench_app.command("static")
def bench_static(
    n: int = typer.Option(300, "--n", help="Warm-started SoftManiSim solves."),
    seed: int = typer.Option(0, help="Random seed."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead."),
) -> None:
    """Static solver speed and accuracy (SoftManiSim robot, 3-segment TDCR, SciPy L-M)."""
    from softrod.bench import run_static_bench

    if n < 10:
        raise ValueError(f"--n must be >= 10, got {n}")
    out = run_static_bench(n_softmanisim=n, seed=seed)
    if as_json:
        print(json.dumps(out))
        return
    for key, value in out.items():
        print(f"{key}: {value:.6g}")
