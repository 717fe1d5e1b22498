"""`softrod plan`: pressure-space RRT* with learned residuals.

Progress goes to stderr so that `--json` prints exactly one JSON object on stdout.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from softrod.cli._app import CliError, app
from softrod.description import json_safe

__all__ = ["plan_cmd"]

EnvArg = Annotated[
    Path | None,
    typer.Argument(
        metavar="[ENV.yaml]",
        help="Environment file (obstacles, goal); see examples/planning. Omit with --benchmark.",
        show_default=False,
    ),
]


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _config(
    seed: int,
    time_budget: float,
    epochs: int | None,
    trials: int,
    robot: str | None,
) -> Any:
    from softrod.planning import BenchmarkConfig

    if not time_budget > 0:
        raise CliError(f"--time-budget must be > 0 s, got {time_budget}")
    if trials < 1:
        raise CliError(f"--trials must be >= 1, got {trials}")
    cfg = BenchmarkConfig(seed=seed, trials=trials)
    cfg = dataclasses.replace(
        cfg, planner=dataclasses.replace(cfg.planner, time_budget_s=time_budget)
    )
    if epochs is not None:
        if epochs < 1:
            raise CliError(f"--epochs must be >= 1, got {epochs}")
        cfg = dataclasses.replace(cfg, train=dataclasses.replace(cfg.train, epochs=epochs))
    if robot is not None:
        cfg = dataclasses.replace(cfg, robot=robot)
    return cfg


@app.command("plan")
def plan_cmd(
    env_file: EnvArg = None,
    model: Annotated[
        str, typer.Option("--model", help="Forward model of the planner: nn or noload.")
    ] = "nn",
    benchmark: Annotated[
        bool,
        typer.Option(
            "--benchmark",
            help="Run the whole protocol: train or load the network, plan in all 8 shipped "
            "environments with both models, execute the plans on the ground truth.",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    seed: Annotated[int, typer.Option(help="Seed of the test set and the planner.")] = 0,
    time_budget: Annotated[
        float, typer.Option("--time-budget", help="Planner wall-clock limit per query [s].")
    ] = 30.0,
    trials: Annotated[
        int, typer.Option(help="Planning trials per environment and model (--benchmark).")
    ] = 1,
    epochs: Annotated[
        int | None, typer.Option(help="Training epochs (default: TrainConfig's).")
    ] = None,
    cache_dir: Annotated[
        Path, typer.Option("--cache-dir", help="Where datasets and the network are cached.")
    ] = Path("runs/planning"),
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Folder for report.md and final_backbones.png (--benchmark)."),
    ] = None,
    retrain: Annotated[bool, typer.Option(help="Train the network even if cached.")] = False,
) -> None:
    """Plan in pressure space with RRT* (ALGORITHMS.md D.3) and execute on the ground truth."""
    if model not in ("nn", "noload"):
        raise CliError(f"--model must be 'nn' or 'noload', got {model!r}")
    if benchmark and env_file is not None:
        raise CliError("give either ENV.yaml or --benchmark, not both")
    if not benchmark and env_file is None:
        raise CliError("missing ENV.yaml (or pass --benchmark)")
    _config(seed, time_budget, epochs, trials, None)  # option errors before any file access
    from softrod.planning import (
        PSI,
        load_environment,
        plan_environment,
        prepare_models,
        run_benchmark,
        write_report,
    )

    if benchmark:
        cfg = _config(seed, time_budget, epochs, trials, None)
        summary, art = run_benchmark(cfg, cache_root=cache_dir, retrain=retrain, log=_log)
        out_dir = out if out is not None else cache_dir / "report"
        md, fig = write_report(summary, art, out_dir)
        summary["report"] = str(md)
        summary["figure"] = str(fig)
        _log(f"report: {md}\nfigure: {fig}")
        if as_json:
            print(json.dumps(json_safe(summary)))
        else:
            print(md.read_text())
        return

    if env_file is None:
        raise CliError("missing ENV.yaml (or pass --benchmark)")
    env = load_environment(env_file)
    robot = env.robot
    rp = Path(robot)
    if rp.suffix and not rp.is_absolute() and env.source is not None:
        rp = Path(env.source).parent / rp
        robot = str(rp)
    cfg = _config(seed, time_budget, epochs, 1, robot)
    models = prepare_models(cfg, cache_dir, retrain, _log, need_network=model == "nn")
    plan, exe = plan_environment(models, env, model, cfg)
    result: dict[str, Any] = {
        "environment": env.name,
        "model": model,
        "success": plan.success,
        "status": plan.status,
        "message": plan.message,
        "plan_time_s": plan.plan_time_s,
        "first_solution_s": plan.first_solution_s,
        "cost": plan.cost,
        "cost_psi": plan.cost / PSI if plan.success else None,
        "iterations": plan.iterations,
        "nodes": plan.n_nodes,
        "waypoints": plan.waypoints,
        "predicted_tip": plan.predicted[-1, -1],
        "executed_tip": exe.backbones[-1, -1] if exe else None,
        "distance_to_goal_m": exe.distance_m if exe else None,
        "orientation_to_goal_rad": exe.orientation_error_rad if exe else None,
        "collision": exe.collision if exe else None,
        "in_goal": exe.in_goal if exe else None,
    }
    if as_json:
        print(json.dumps(json_safe(result)))
        return
    if not plan.success:
        print(f"{env.name} [{model}]: no plan ({plan.message})")
        raise typer.Exit(1)
    if exe is None:
        raise CliError("internal error: a successful plan was not executed")
    n_edges = plan.waypoints.shape[0] - 1
    print(
        f"{env.name} [{model}]: plan of {n_edges} edge{'' if n_edges == 1 else 's'} in "
        f"{plan.plan_time_s:.2f} s, cost {plan.cost / PSI:.1f} psi; executed on the ground "
        f"truth: {exe.distance_m * 100:.2f} cm from the goal, "
        + ("COLLISION" if exe.collision else "no collision")
    )
    for i, q in enumerate(plan.waypoints):
        print(f"  waypoint {i}: " + ", ".join(f"{p / PSI:+.2f}" for p in q) + " psi")
