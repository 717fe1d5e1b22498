"""`softrod bench NAME`: one subcommand per case of `softrod.bench.CASES`.

Each function below only reads its options and checks them; the case runs through
`softrod.bench.run_case`, which prints `case.metric: value` lines (or one JSON object).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from softrod.bench import CASES, run_case
from softrod.cli._app import CliError, bench_app
from softrod.cli._resolve import parse_vector

__all__: list[str] = []


def bench_mujoco_cmd(
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Folder for report.md, results.json, plots.")
    ] = Path("runs/bench/mujoco"),
    samples: Annotated[
        int | None, typer.Option("--samples", help="Static samples per material (default 500).")
    ] = None,
    quick: Annotated[bool, typer.Option("--quick", help="Small protocol (minutes less).")] = False,
) -> None:
    from dataclasses import replace

    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from softrod.bench import BenchConfig, bench_units

    cfg = BenchConfig.quick() if quick else BenchConfig()
    if samples is not None:
        if samples < 2:
            raise CliError(f"--samples must be >= 2, got {samples}")
        cfg = replace(cfg, samples=samples)
    progress = Progress(
        TextColumn("{task.description:<24}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    with progress:
        task = progress.add_task("bench mujoco", total=bench_units(cfg))
        run = run_case(
            "mujoco",
            emit=lambda text: print(text, flush=True),
            out_dir=out,
            config=cfg,
            advance=lambda desc: progress.update(task, advance=1, description=desc),
        )
    result = run.record
    print(f"report: {result['files']['report']}")
    if not all(result["checks"].values()):
        failed = [k for k, v in result["checks"].items() if not v]
        print(f"softrod: bench mujoco: targets missed: {', '.join(failed)}", file=sys.stderr)
        raise typer.Exit(1)


def bench_static_cmd(
    n: int = typer.Option(300, "--n", help="Warm-started SoftManiSim solves."),
    seed: int = typer.Option(0, help="Random seed."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead."),
) -> None:
    if n < 10:
        raise ValueError(f"--n must be >= 10, got {n}")
    run_case("static", as_json=as_json, n=n, seed=seed)


def bench_static_batch_cmd(
    batch: Annotated[
        str, typer.Option("--batch", metavar="B1,B2", help="Batch sizes to time.")
    ] = "100,1000,10000",
    device: Annotated[
        str, typer.Option("--device", help="cpu (numba threads) or a Warp device, e.g. cuda:0.")
    ] = "cpu",
    threads: Annotated[
        int | None, typer.Option("--threads", help="CPU threads of the 'all threads' runs.")
    ] = None,
    jacobian: Annotated[
        bool, typer.Option("--jacobian", help="Also compute the tip Jacobians.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    sizes = parse_vector("--batch", batch)
    if any(b < 1 or b != int(b) for b in sizes):
        raise CliError(f"--batch must be positive integers, got {batch!r}")
    if threads is not None and threads < 1:
        raise CliError(f"--threads must be >= 1, got {threads}")
    try:
        run_case(
            "static-batch",
            as_json=as_json,
            batches=[int(b) for b in sizes],
            device=device,
            threads=threads,
            jacobian=jacobian,
        )
    except ImportError as exc:
        raise CliError(str(exc)) from None


def bench_observer_cmd(
    n: int = typer.Option(500, "--n", help="Steps of the random input sequence (100 Hz)."),
    n_scipy: int = typer.Option(10, help="Steps solved with the SciPy L-M baseline."),
    seed: int = typer.Option(0),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    if n < 10:
        raise ValueError(f"--n must be >= 10, got {n}")
    run_case("observer", as_json=as_json, n=n, n_scipy=n_scipy, seed=seed)


def bench_dynamics_cmd(
    elements: int = typer.Option(20, "--elements", help="Elements along the rod."),
    pyelastica: bool = typer.Option(
        True, "--pyelastica/--no-pyelastica", help="Also run PyElastica when it is installed."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead."),
) -> None:
    if elements < 2:
        raise CliError(f"--elements must be >= 2, got {elements}")
    run_case("dynamics", as_json=as_json, elements=elements, pyelastica=pyelastica)


def bench_sweep_cmd(
    n: Annotated[int, typer.Option("--n", help="Random static points per run.")] = 2000,
    workers: Annotated[
        str, typer.Option("--workers", metavar="W1,W2", help="Worker counts to time.")
    ] = "1,2",
    ray_backend: Annotated[
        bool, typer.Option("--ray", help="Also time the Ray backend (local instance).")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    if n < 10:
        raise CliError(f"--n must be >= 10, got {n}")
    counts = [int(w) for w in parse_vector("--workers", workers)]
    if any(w < 1 for w in counts):
        raise CliError(f"--workers must be >= 1, got {workers!r}")
    run_case("sweep", as_json=as_json, n=n, workers=counts, ray_backend=ray_backend)


def bench_planning_cmd(
    seed: Annotated[int, typer.Option(help="Seed of the test set and the planner.")] = 0,
    time_budget: Annotated[
        float, typer.Option("--time-budget", help="Planner wall-clock limit per query [s].")
    ] = 30.0,
    cache_dir: Annotated[
        Path, typer.Option("--cache-dir", help="Where datasets and the network are cached.")
    ] = Path("runs/planning"),
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead.")] = False,
) -> None:
    from softrod.cli._plan_cmds import _config, _log
    from softrod.description import json_safe

    cfg = _config(seed, time_budget, None, 1, None)
    run_case(
        "planning", as_json=as_json, json_safe=json_safe, config=cfg, cache_dir=cache_dir, log=_log
    )


def bench_envs_cmd(
    envs: str | None = typer.Option(None, help="Comma-separated environments (default: all)."),
    steps: int = typer.Option(1000, help="Steps per measurement."),
    workers: int = typer.Option(2, help="Workers of the AsyncVectorEnv measurement (0: skip)."),
    seed: int = typer.Option(0, help="Seed."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    from softrod.cli._learn_cmds import resolve_env_id

    if steps < 10:
        raise CliError(f"--steps must be >= 10, got {steps}")
    if workers < 0:
        raise CliError(f"--workers must be >= 0, got {workers}")
    ids = [resolve_env_id(e.strip()) for e in envs.split(",")] if envs else None
    run_case("envs", as_json=as_json, env_ids=ids, steps=steps, workers=workers, seed=seed)


def bench_warp_reach_cmd(
    worlds: str = typer.Option("1024,4096", help="Comma-separated world counts."),
    steps: int = typer.Option(200, help="Batched control steps per measurement."),
    device: str | None = typer.Option(None, help="Warp device, e.g. cuda:0 [Warp's default]."),
    seed: int = typer.Option(0, help="Seed of the targets."),
    cross_check: int = typer.Option(
        0,
        "--cross-check",
        help="Also compare 3 worlds with Reach-v0 (MuJoCo C) for 1 s, for this many seeds.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    try:
        counts = [int(w) for w in worlds.split(",")]
    except ValueError:
        raise CliError(f"--worlds must be comma-separated integers, got {worlds!r}") from None
    if not counts or min(counts) < 1:
        raise CliError(f"--worlds must be positive, got {worlds!r}")
    if steps < 1:
        raise CliError(f"--steps must be >= 1, got {steps}")
    try:
        run_case(
            "warp-reach",
            as_json=as_json,
            worlds=counts,
            steps=steps,
            device=device,
            seed=seed,
            cross_check=cross_check,
        )
    except ImportError as exc:
        raise CliError(str(exc)) from None


def bench_batched_envs_cmd(
    envs: str | None = typer.Option(
        None, "--envs", help="Comma-separated environments [every batched one]."
    ),
    worlds: str = typer.Option("1024,4096", help="Comma-separated world counts."),
    steps: int = typer.Option(300, help="Batched control steps per measurement."),
    device: str | None = typer.Option(None, help="Warp device, e.g. cuda:0 [Warp's default]."),
    seed: int = typer.Option(0, help="Seed of the tasks."),
    configs: str = typer.Option(
        "lean",
        "--configs",
        help="Comma-separated: lean (make_batched's default), no_lean (MuJoCo Warp's "
        "defaults), direct (lean with direct_solve=True).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    from softrod.cli._learn_cmds import resolve_env_id

    try:
        counts = [int(w) for w in worlds.split(",")]
    except ValueError:
        raise CliError(f"--worlds must be comma-separated integers, got {worlds!r}") from None
    if not counts or min(counts) < 1:
        raise CliError(f"--worlds must be positive, got {worlds!r}")
    if steps < 1:
        raise CliError(f"--steps must be >= 1, got {steps}")
    ids = None if envs is None else [resolve_env_id(e.strip()) for e in envs.split(",")]
    config_list = [c.strip() for c in configs.split(",")]
    if not set(config_list) <= {"lean", "no_lean", "direct"}:
        raise CliError(f"--configs must list lean, no_lean or direct, got {configs!r}")
    try:
        from softrod.envs import BATCHED_ENV_IDS, UNBATCHED_ENV_IDS

        for env_id in ids or ():
            if env_id not in BATCHED_ENV_IDS:
                reason = UNBATCHED_ENV_IDS.get(env_id, "not batched")
                raise CliError(f"{env_id} is not batched: {reason}")
        run_case(
            "batched-envs",
            as_json=as_json,
            env_ids=ids,
            worlds=counts,
            steps=steps,
            device=device,
            seed=seed,
            progress=lambda line: print(line, file=sys.stderr, flush=True),
            configs=config_list,
        )
    except ImportError as exc:
        raise CliError(str(exc)) from None


def bench_web_cmd(
    n: Annotated[int, typer.Option("--n", help="Slider updates per model.")] = 200,
    links: Annotated[int, typer.Option("--links", help="MuJoCo chain links N.")] = 20,
    browser: Annotated[
        bool, typer.Option("--browser/--no-browser", help="Also time headless Chromium.")
    ] = True,
    viewport: Annotated[
        str,
        typer.Option(
            "--viewport",
            help="Browser window WIDTHxHEIGHT [px] (software WebGL costs time per pixel).",
        ),
    ] = "1280x800",
    gl: Annotated[
        str,
        typer.Option(
            "--gl",
            help="Chromium's software WebGL: swiftshader (bundled) or llvmpipe (Mesa's, via "
            "ANGLE's GL-EGL backend).",
        ),
    ] = "swiftshader",
    frame_limit: Annotated[
        bool,
        typer.Option(
            "--frame-limit/--no-frame-limit",
            help="Headless Chromium's 60 Hz frame pacing, or frames as fast as the CPU allows.",
        ),
    ] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    if n < 10:
        raise CliError(f"--n must be >= 10, got {n}")
    if not 1 <= links <= 300:
        raise CliError(f"--links must be in [1, 300], got {links}")
    size = viewport.lower().split("x")
    if len(size) != 2 or not all(p.isdigit() and 64 <= int(p) <= 7680 for p in size):
        raise CliError(f"--viewport must be WIDTHxHEIGHT with 64-7680 px each, got {viewport!r}")
    from softrod.bench import GL_ARGS

    if gl not in GL_ARGS:
        raise CliError(f"--gl must be one of {', '.join(GL_ARGS)}, got {gl!r}")
    try:
        run_case(
            "web",
            as_json=as_json,
            n=n,
            links=links,
            browser=browser,
            viewport=(int(size[0]), int(size[1])),
            gl=gl,
            frame_limit=frame_limit,
        )
    except ImportError as exc:
        raise CliError(f"{exc}; the browser twin needs viser: pip install softrod[web]") from None
    except RuntimeError as exc:
        from softrod.bench import BrowserStalled

        if not isinstance(exc, BrowserStalled):
            raise
        # The page stopped answering: one line, exit 1.
        print(f"softrod: bench web: {exc}", file=sys.stderr)
        raise typer.Exit(1) from None


#: The option parsing of each case's subcommand.
_COMMANDS: dict[str, Any] = {
    "mujoco": bench_mujoco_cmd,
    "static": bench_static_cmd,
    "static-batch": bench_static_batch_cmd,
    "observer": bench_observer_cmd,
    "dynamics": bench_dynamics_cmd,
    "sweep": bench_sweep_cmd,
    "planning": bench_planning_cmd,
    "envs": bench_envs_cmd,
    "warp-reach": bench_warp_reach_cmd,
    "batched-envs": bench_batched_envs_cmd,
    "web": bench_web_cmd,
}

# Register every case as `softrod bench NAME`, in the registry's order, its help from the case
# (plain text: the app has no rich markup, so `[points/s]` and `softrod[warp]` stay as written).
for _case in CASES.values():
    bench_app.command(_case.name, help=_case.measures)(_COMMANDS[_case.name])
