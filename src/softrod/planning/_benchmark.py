"""The planning benchmark of ALGORITHMS.md D (what `softrod plan --benchmark` runs).

1. Record the training set (729 transitions) and the test set (100 random configurations) on
   the ground-truth arm, train the compensation network (both cached under runs/).
2. Held-out accuracy of the no-load model and of no-load + network (end effector), and query
   speed (batched and one at a time).
3. In every environment, plan with RRT* using each model from the measured start, execute
   both plans open loop on the ground-truth arm and record success, planning time, cost,
   final distance to the goal and collisions.
4. A Table-I-style Markdown report and a figure of the final backbones per environment.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from softrod._version import __version__
from softrod.description import find_robot, load_robot
from softrod.planning._closed_loop import (
    ClosedLoopConfig,
    ClosedLoopExecution,
    execute_closed_loop,
)
from softrod.planning._env import EnvironmentSpec, Obstacles, load_environment
from softrod.planning._forward import ForwardModel, NetworkForward, NoLoadForward
from softrod.planning._network import (
    CompensationNetwork,
    TrainConfig,
    rollout_error,
    train_compensation,
)
from softrod.planning._rrtstar import PlanResult, PressureRRTStar, RRTStarConfig
from softrod.pneumatic import (
    DEFAULT_HOLD_FRAMES,
    DEFAULT_PRESSURE_RATE,
    GroundTruthArm,
    GroundTruthConfig,
    NoLoadModel,
    PneumaticArm,
    Recording,
    compile_pneumatic,
    record_test_set,
    record_transitions,
)

__all__ = [
    "BenchmarkConfig",
    "PSI",
    "prepare_models",
    "execute_plan",
    "execute_plan_closed_loop",
    "plan_environment",
    "query_speed",
    "run_benchmark",
    "write_report",
    "shipped_environments",
]

#: One psi in pascals (the paper reports costs in psi).
PSI = 6894.757293168361
#: The eight benchmark environments live in the repository's examples/planning.
ENV_DIR = Path(__file__).resolve().parents[3] / "examples" / "planning"


def shipped_environments() -> list[Path]:
    """The eight environment files of the benchmark (examples/planning/env*.yaml), sorted."""
    files = sorted(ENV_DIR.glob("env*.yaml"))
    if not files:
        raise ValueError(
            f"no environment files found in {ENV_DIR}; run from a softrod checkout or pass "
            "environment files explicitly"
        )
    return files


@dataclass(frozen=True)
class BenchmarkConfig:
    """Everything the benchmark depends on (the cache key hashes it)."""

    robot: str = "pneumatic_arm3"
    """Shipped robot name or path."""
    truth: GroundTruthConfig = field(default_factory=GroundTruthConfig)
    """Ground-truth physics."""
    train: TrainConfig = field(default_factory=TrainConfig)
    """Network training."""
    planner: RRTStarConfig = field(default_factory=RRTStarConfig)
    """Planner parameters."""
    pressure_rate: float = DEFAULT_PRESSURE_RATE
    """Set-point slew rate of data collection and plan edges [Pa/s]."""
    data_hold_frames: int = DEFAULT_HOLD_FRAMES
    """Hold after every recorded transition [frames]."""
    edge_hold_frames: int = 4
    """Hold after every plan edge [frames] [CHOICE]."""
    settle_frames: int = 10
    """Frames held at the final set-point when a plan is executed, before measuring."""
    n_test: int = 100
    """Random test configurations (D.2)."""
    seed: int = 0
    """Seed of test configurations and planners."""
    trials: int = 1
    """Planning trials per environment and model (seeds seed, seed+1, ...)."""
    closed_loop: ClosedLoopConfig = field(default_factory=ClosedLoopConfig)
    """Feedback of the closed-loop execution on the ground truth (not part of the cache key)."""

    def cache_key(self, arm: PneumaticArm) -> str:
        payload = {
            "robot": arm.spec.to_dict(),
            "truth": dataclasses.asdict(self.truth),
            "train": dataclasses.asdict(self.train),
            "rate": self.pressure_rate,
            "hold": self.data_hold_frames,
            "n_test": self.n_test,
            "seed": self.seed,
            "version": 1,
            # The recordings and the network depend on the code too (ground truth, training).
            "softrod": __version__,
        }
        text = json.dumps(payload, sort_keys=True, default=str)
        return hashlib.sha1(text.encode()).hexdigest()[:12]


def _resolve_robot(robot: str) -> PneumaticArm:
    """A robot given as a file path or the name of a shipped robot (DescriptionError if neither)."""
    return compile_pneumatic(load_robot(find_robot(robot)))


@dataclass
class Models:
    """The arm, its no-load model, the ground truth, the trained network and the datasets."""

    arm: PneumaticArm
    noload: NoLoadModel
    truth: GroundTruthArm
    network: CompensationNetwork | None
    train: Recording | None
    test: Recording | None
    cache_dir: Path | None
    trained_now: bool


def prepare_models(
    config: BenchmarkConfig,
    cache_root: str | Path = "runs/planning",
    retrain: bool = False,
    log: Callable[[str], None] | None = None,
    need_network: bool = True,
) -> Models:
    """Record (or load) the datasets and train (or load) the network, cached by config.

    With need_network=False only the arm, its no-load model and the ground truth are built
    (enough to plan with the no-load model and execute on the ground truth)."""
    say = log or (lambda _msg: None)
    arm = _resolve_robot(config.robot)
    noload = NoLoadModel(arm)
    truth = GroundTruthArm(arm, config.truth)
    if not need_network:
        return Models(arm, noload, truth, None, None, None, None, False)
    cache = Path(cache_root) / f"{arm.name}-{config.cache_key(arm)}"
    cache.mkdir(parents=True, exist_ok=True)
    f_train, f_test, f_net = cache / "train.npz", cache / "test.npz", cache / "network.npz"
    if f_train.is_file() and f_test.is_file():
        train, test = Recording.load(f_train), Recording.load(f_test)
        say(f"loaded datasets from {cache}")
    else:
        t0 = time.perf_counter()
        train = record_transitions(truth, config.pressure_rate, config.data_hold_frames)
        test = record_test_set(
            truth,
            np.random.default_rng(config.seed),
            config.n_test,
            config.pressure_rate,
            config.data_hold_frames,
        )
        train.save(f_train)
        test.save(f_test)
        say(
            f"recorded {train.n_frames} training and {test.n_frames} test frames on the "
            f"ground truth in {time.perf_counter() - t0:.1f} s"
        )
    trained_now = False
    if f_net.is_file() and not retrain:
        net = CompensationNetwork.load(f_net)
        say(f"loaded network from {f_net}")
    else:
        say(f"training the compensation network ({config.train.epochs} epochs)")

        def progress(epoch: int, loss: float, test_err: float | None) -> None:
            if test_err is not None:
                say(f"  epoch {epoch}: loss {loss:.4f}, test EE error {test_err * 100:.2f} cm")

        net = train_compensation(train, noload, config.train, test=test, progress=progress)
        net.save(f_net)
        trained_now = True
    return Models(arm, noload, truth, net, train, test, cache, trained_now)


def query_speed(
    models: Models, n_batched: int = 100_000, batch: int = 10_000, n_single: int = 5_000
) -> dict[str, float]:
    """Forward-model queries per second: one query maps (q_{t-1}, q_t, B_{t-1}) to B_t
    (no-load backbone + network), batched and one at a time; no-load alone for reference."""
    rec, net = models.train, models.network
    if rec is None or net is None:
        raise ValueError("query_speed needs the trained network and its training recording")
    rng = np.random.default_rng(0)
    idx = rng.integers(1, rec.n_frames + 1, size=max(batch, n_single))
    qp, q, bp = rec.commands[idx - 1], rec.commands[idx], rec.backbones[idx - 1]
    nl = models.noload

    def nn_batch(k: slice) -> np.ndarray:
        return net.step(qp[k], q[k], bp[k], nl.backbone_unchecked(q[k]))

    nn_batch(slice(0, 8))
    t0 = time.perf_counter()
    done = 0
    while done < n_batched:
        nn_batch(slice(0, batch))
        done += batch
    batched = done / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    for i in range(n_single):
        k = slice(i, i + 1)
        net.step(qp[k], q[k], bp[k], nl.backbone_unchecked(q[i]).reshape(1, -1, 3))
    single = n_single / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    nl.backbone_unchecked(q[:batch])
    nl_batched = batch / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    for i in range(n_single):
        nl.backbone_unchecked(q[i])
    nl_single = n_single / (time.perf_counter() - t0)
    return {
        "queries_per_s_batched": batched,
        "queries_per_s_single": single,
        "noload_queries_per_s_batched": nl_batched,
        "noload_queries_per_s_single": nl_single,
        "batch_size": float(batch),
    }


@dataclass(frozen=True)
class Execution:
    """A plan executed open loop on the ground truth.

    backbones : (n, m, 3) measured plates per frame; nodes : (n, K+1, 2) the full backbone;
    distance_m / orientation_error_rad : final tip to the goal; collision : whether any frame
    touched an obstacle (the arm's true width, no margin); collision_frame : first such
    frame or -1; in_goal : whether the final tip is in the goal region.
    """

    backbones: np.ndarray
    nodes: np.ndarray
    distance_m: float
    orientation_error_rad: float
    collision: bool
    collision_frame: int
    in_goal: bool


def execute_plan(
    truth: GroundTruthArm,
    env: EnvironmentSpec,
    plan: PlanResult,
    start: np.ndarray,
    settle_frames: int,
) -> Execution:
    """Reset the ground truth at `start`, play the plan's set-points, hold the last one for
    `settle_frames` frames, and measure."""
    truth.reset(start)
    cmds = plan.commands[1:]
    if settle_frames > 0:
        cmds = np.concatenate([cmds, np.repeat(plan.commands[-1:], settle_frames, axis=0)])
    bb = truth.run(cmds)
    nodes = truth.last_nodes
    hit = Obstacles(env).first_hit(nodes, truth.node_half_width[1:])
    tip = bb[-1, -1]
    return Execution(
        backbones=bb,
        nodes=nodes,
        distance_m=float(env.goal.distance(tip)),
        orientation_error_rad=float(env.goal.orientation_error(tip)),
        collision=hit >= 0,
        collision_frame=hit,
        in_goal=bool(env.goal.contains(tip)),
    )


def _forward(models: Models, kind: str, config: BenchmarkConfig) -> ForwardModel:
    dt = config.truth.frame_dt
    if kind == "nn":
        if models.network is None:
            raise ValueError("planning with model 'nn' needs the trained network")
        return NetworkForward(
            models.noload, models.network, config.pressure_rate, config.edge_hold_frames, dt
        )
    if kind == "noload":
        return NoLoadForward(models.noload, config.pressure_rate, config.edge_hold_frames, dt)
    raise ValueError(f"model must be 'nn' or 'noload', got {kind!r}")


def _start(models: Models, env: EnvironmentSpec) -> np.ndarray:
    """The environment's start set-points (all vented by default) [Pa]."""
    arm = models.arm
    if env.start is None:
        return np.zeros(arm.n_segments)
    return arm.check_pressures(np.asarray(env.start, dtype=float), "start")


def execute_plan_closed_loop(
    models: Models, env: EnvironmentSpec, plan: PlanResult, kind: str, config: BenchmarkConfig
) -> ClosedLoopExecution:
    """Execute a successful plan of model `kind` on the ground truth with feedback from the
    measured plates (`softrod.planning.execute_closed_loop`, `config.closed_loop`); the
    planning model gives the Jacobian and the collision prediction of the corrections."""
    forward = _forward(models, kind, config)
    tries = [0]

    def replan(q: np.ndarray, backbone: np.ndarray) -> PlanResult | None:
        tries[0] += 1
        rng = np.random.default_rng([config.seed, tries[0]])
        base = config.planner.collision_margin
        step = config.closed_loop.replan_margin_step
        # A wider margin after the model was wrong near an obstacle; where the arm already
        # stands inside it, the planner's own margin, then just the step.
        result: PlanResult | None = None
        for margin in (base + step * tries[0], base, step):
            planner = dataclasses.replace(config.planner, collision_margin=margin)
            result = PressureRRTStar(forward, env, planner).plan(q, backbone, rng)
            if result.status != "start_in_collision":
                break
        return result

    return execute_closed_loop(
        models.truth,
        env,
        plan,
        _start(models, env),
        forward,
        config.closed_loop,
        config.settle_frames,
        replan,
    )


def plan_environment(
    models: Models,
    env: EnvironmentSpec,
    kind: str,
    config: BenchmarkConfig,
    seed: int | None = None,
) -> tuple[PlanResult, Execution | None]:
    """Plan in one environment with model `kind` ('nn' | 'noload') and execute the plan."""
    start = _start(models, env)
    measured = models.truth.reset(start)
    planner = PressureRRTStar(_forward(models, kind, config), env, config.planner)
    rng = np.random.default_rng(config.seed if seed is None else seed)
    plan = planner.plan(start, measured, rng)
    if not plan.success:
        return plan, None
    return plan, execute_plan(models.truth, env, plan, start, config.settle_frames)


def _finite(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def run_benchmark(
    config: BenchmarkConfig,
    environments: list[Path] | None = None,
    cache_root: str | Path = "runs/planning",
    retrain: bool = False,
    log: Callable[[str], None] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run the whole protocol. Returns (summary JSON-able dict, artefacts for the report)."""
    say = log or (lambda _msg: None)
    t_start = time.perf_counter()
    models = prepare_models(config, cache_root, retrain, say)
    if models.test is None or models.network is None or models.train is None:
        raise ValueError("the benchmark needs the recorded test set and the trained network")
    err_nl = rollout_error(None, models.noload, models.test)
    err_nn = rollout_error(models.network, models.noload, models.test)
    say(
        f"held-out EE error: no-load {err_nl['position_mean_m'] * 100:.1f} cm, "
        f"network {err_nn['position_mean_m'] * 100:.1f} cm"
    )
    speed = query_speed(models)
    say(
        f"queries/s: batched {speed['queries_per_s_batched']:.3g}, single "
        f"{speed['queries_per_s_single']:.3g}"
    )
    files = environments if environments is not None else shipped_environments()
    rows: list[dict[str, Any]] = []
    finals: list[dict[str, Any]] = []
    for path in files:
        env = load_environment(path)
        row: dict[str, Any] = {"name": env.name, "file": str(path)}
        art: dict[str, Any] = {"env": env}
        for kind in ("nn", "noload"):
            trials = []
            for k in range(config.trials):
                plan, exe = plan_environment(models, env, kind, config, seed=config.seed + k)
                trials.append((plan, exe))
            ok = [(p, e) for p, e in trials if p.success]
            first = ok[0] if ok else trials[0]
            plan, exe = first
            closed = execute_plan_closed_loop(models, env, plan, kind, config) if exe else None
            stats = {
                "success": plan.success,
                "successes": len(ok),
                "trials": len(trials),
                "plan_time_s": plan.plan_time_s,
                "plan_time_mean_s": float(np.mean([p.plan_time_s for p, _ in ok])) if ok else None,
                "first_solution_s": plan.first_solution_s,
                "cost_pa": _finite(plan.cost),
                "cost_psi": _finite(plan.cost / PSI) if plan.success else None,
                "iterations": plan.iterations,
                "nodes": plan.n_nodes,
                "distance_to_goal_m": exe.distance_m if exe else None,
                "orientation_to_goal_rad": _finite(exe.orientation_error_rad) if exe else None,
                "collision": exe.collision if exe else None,
                "in_goal": exe.in_goal if exe else None,
                "collisions_all_trials": sum(bool(e is not None and e.collision) for _, e in ok),
                "distance_to_goal_mean_m": float(
                    np.mean([e.distance_m for _, e in ok if e is not None])
                )
                if ok
                else None,
                "predicted_distance_to_goal_m": float(env.goal.distance(plan.predicted[-1, -1]))
                if plan.success
                else None,
                "closed_loop": None
                if closed is None
                else {
                    "distance_to_goal_m": closed.distance_m,
                    "orientation_to_goal_rad": _finite(closed.orientation_error_rad),
                    "in_goal": closed.in_goal,
                    "collision": closed.collision,
                    "corrections": closed.corrections,
                    "replans": closed.replans,
                    "guard_stops": closed.guard_stops,
                    "distances_m": [float(d) for d in closed.distances_m],
                },
            }
            row[kind] = stats
            art[kind] = (plan, exe)
            art[f"{kind}_closed_loop"] = closed
            say(
                f"{env.name} [{kind}]: "
                + (
                    f"plan in {plan.plan_time_s:.1f} s, cost {plan.cost / PSI:.1f} psi, "
                    f"executed {exe.distance_m * 100:.1f} cm from goal"
                    + (", COLLISION" if exe.collision else "")
                    + (
                        f"; closed loop {closed.distance_m * 100:.1f} cm"
                        + (", COLLISION" if closed.collision else "")
                        if closed
                        else ""
                    )
                    if exe
                    else plan.message
                )
            )
        nn, nl = row["nn"], row["noload"]
        row.update(
            success=nn["success"],
            plan_time_s=nn["plan_time_s"],
            cost=nn["cost_pa"],
            cost_psi=nn["cost_psi"],
            nn_distance_to_goal_m=nn["distance_to_goal_m"],
            noload_distance_to_goal_m=nl["distance_to_goal_m"],
            collision=nn["collision"],
            noload_collision=nl["collision"],
            noload_success=nl["success"],
            noload_plan_time_s=nl["plan_time_s"],
            noload_cost=nl["cost_pa"],
        )
        rows.append(row)
        finals.append(art)
    pos_red = 1.0 - err_nn["position_mean_m"] / err_nl["position_mean_m"]
    ori_red = 1.0 - err_nn["orientation_mean_rad"] / err_nl["orientation_mean_rad"]
    nn_times = [r["plan_time_s"] for r in rows if r["success"]]
    both = [
        r
        for r in rows
        if r["nn_distance_to_goal_m"] is not None and r["noload_distance_to_goal_m"] is not None
    ]
    summary: dict[str, Any] = {
        "error_reduction": pos_red,
        "orientation_error_reduction": ori_red,
        "noload_test_error": err_nl,
        "nn_test_error": err_nn,
        **speed,
        "environments": [
            {k: v for k, v in r.items() if k not in ("nn", "noload", "file")}
            | {"nn": r["nn"], "noload": r["noload"]}
            for r in rows
        ],
        "plans_found": sum(bool(r["success"]) for r in rows),
        "median_plan_time_s": float(np.median(nn_times)) if nn_times else None,
        "nn_closer_count": sum(
            r["nn_distance_to_goal_m"] < r["noload_distance_to_goal_m"] for r in both
        ),
        "mean_distance_improvement_m": float(
            np.mean([r["noload_distance_to_goal_m"] - r["nn_distance_to_goal_m"] for r in both])
        )
        if both
        else None,
        # Within the goal region on the ground truth and without touching an obstacle.
        "truth_goal_reached_open_loop": _reached(rows, "nn", closed=False),
        "truth_goal_reached_closed_loop": _reached(rows, "nn", closed=True),
        "noload_truth_goal_reached_open_loop": _reached(rows, "noload", closed=False),
        "noload_truth_goal_reached_closed_loop": _reached(rows, "noload", closed=True),
        "nn_closed_loop_collisions": _closed_collisions(rows, "nn"),
        "noload_closed_loop_collisions": _closed_collisions(rows, "noload"),
        "nn_collisions": sum(bool(r["collision"]) for r in rows),
        "noload_collisions": sum(bool(r["noload_collision"]) for r in rows),
        "network": {
            "cache": str(models.cache_dir),
            "trained_now": models.trained_now,
            "train_frames": models.train.n_frames,
            "test_frames": models.test.n_frames,
            "train_time_s": models.network.meta.get("train_time_s"),
            "epochs": models.network.meta.get("config", {}).get("epochs"),
        },
        "config": json.loads(json.dumps(dataclasses.asdict(config), default=str)),
        "wall_time_s": time.perf_counter() - t_start,
    }
    return summary, {"models": models, "environments": finals}


def _reached(rows: list[dict[str, Any]], kind: str, closed: bool) -> int:
    """Environments whose `kind` plan ends in the goal region on the truth, collision-free."""
    n = 0
    for r in rows:
        s = r[kind]["closed_loop"] if closed else r[kind]
        n += bool(s is not None and s["in_goal"] and not s["collision"])
    return n


def _closed_collisions(rows: list[dict[str, Any]], kind: str) -> int:
    return sum(bool(r[kind]["closed_loop"] and r[kind]["closed_loop"]["collision"]) for r in rows)


def write_report(
    summary: dict[str, Any], artefacts: dict[str, Any], out_dir: str | Path
) -> tuple[Path, Path]:
    """Write report.md (Table I style) and final_backbones.png into out_dir."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    fig_path = out / "final_backbones.png"
    _figure(artefacts, fig_path)
    nl_e, nn_e = summary["noload_test_error"], summary["nn_test_error"]
    lines = [
        "# Planning with a learned residual model (ALGORITHMS.md D)",
        "",
        "## Model accuracy (held-out test sequence, end effector at the settled frames)",
        "",
        "| model | position error [cm] | orientation error [rad] |",
        "|---|---|---|",
        f"| no load | {nl_e['position_mean_m'] * 100:.1f} ± {nl_e['position_std_m'] * 100:.1f} "
        f"| {nl_e['orientation_mean_rad']:.2f} ± {nl_e['orientation_std_rad']:.2f} |",
        f"| no load + network | {nn_e['position_mean_m'] * 100:.1f} ± "
        f"{nn_e['position_std_m'] * 100:.1f} | {nn_e['orientation_mean_rad']:.2f} ± "
        f"{nn_e['orientation_std_rad']:.2f} |",
        "",
        f"Position error reduction: **{summary['error_reduction'] * 100:.1f} %** "
        f"(orientation {summary['orientation_error_reduction'] * 100:.1f} %; paper: 62 % and "
        "73 %).",
        "",
        f"Queries/s (no-load backbone + network): batched "
        f"{summary['queries_per_s_batched']:.3g}, one at a time "
        f"{summary['queries_per_s_single']:.3g} (no-load alone: "
        f"{summary['noload_queries_per_s_batched']:.3g} / "
        f"{summary['noload_queries_per_s_single']:.3g}; paper: 510 network, 978 no-load).",
        "",
        "## Table I: planning in simulation, execution on the ground truth",
        "",
        "| env | model | plans | time [s] | cost [psi] | collision | distance to goal [cm] "
        "| orientation to goal [rad] |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in summary["environments"]:
        for kind, label in (("noload", "No Load"), ("nn", "Neural Network")):
            s = r[kind]
            dist = (
                "N/A" if s["distance_to_goal_m"] is None else f"{s['distance_to_goal_m'] * 100:.2f}"
            )
            ori = s["orientation_to_goal_rad"]
            lines.append(
                f"| {r['name']} | {label} | {s['successes']}/{s['trials']} | "
                f"{s['plan_time_s']:.1f} | "
                + ("—" if s["cost_psi"] is None else f"{s['cost_psi']:.1f}")
                + " | "
                + ("—" if s["collision"] is None else ("Yes" if s["collision"] else "No"))
                + f" | {dist} | "
                + ("—" if ori is None else f"{ori:.2f}")
                + " |"
            )
    imp = summary["mean_distance_improvement_m"]
    lines += [
        "",
        f"Plans found (network): {summary['plans_found']}/{len(summary['environments'])}; "
        f"median planning time {summary['median_plan_time_s']:.1f} s.",
        f"Network plans end closer to the goal than no-load plans in "
        f"{summary['nn_closer_count']}/{len(summary['environments'])} environments"
        + (f", by {imp * 100:.1f} cm on average" if imp is not None else "")
        + f"; collisions: network {summary['nn_collisions']}, no load "
        f"{summary['noload_collisions']}.",
        "",
        "## Closed loop on the ground truth (feedback from the measured plates)",
        "",
        "| env | model | open loop [cm] | closed loop [cm] | corrections | collision |",
        "|---|---|---|---|---|---|",
    ]
    for r in summary["environments"]:
        for kind, label in (("noload", "No Load"), ("nn", "Neural Network")):
            s, c = r[kind], r[kind]["closed_loop"]
            if c is None:
                continue
            lines.append(
                f"| {r['name']} | {label} | {s['distance_to_goal_m'] * 100:.2f} | "
                f"{c['distance_to_goal_m'] * 100:.2f} | {c['corrections']} | "
                + ("Yes" if c["collision"] else "No")
                + " |"
            )
    n_env = len(summary["environments"])
    lines += [
        "",
        f"In the goal region without collision (network plans): open loop "
        f"{summary['truth_goal_reached_open_loop']}/{n_env}, closed loop "
        f"{summary['truth_goal_reached_closed_loop']}/{n_env} (no-load plans: "
        f"{summary['noload_truth_goal_reached_open_loop']}/{n_env} and "
        f"{summary['noload_truth_goal_reached_closed_loop']}/{n_env}).",
        "",
        f"![final backbones]({fig_path.name})",
        "",
    ]
    md = out / "report.md"
    md.write_text("\n".join(lines))
    return md, fig_path


def _figure(artefacts: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Circle, Polygon

    envs = artefacts["environments"]
    n = len(envs)
    cols = min(4, n)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 3.6 * rows), squeeze=False)
    for ax in axes.flat[n:]:
        ax.axis("off")
    for ax, art in zip(axes.flat, envs, strict=False):
        env: EnvironmentSpec = art["env"]
        for ob in env.obstacles:
            if ob.type == "circle":
                ax.add_patch(Circle(ob.center, ob.radius, color="0.55"))
            else:
                ax.add_patch(Polygon(ob.vertices(), closed=True, color="0.55"))
        g = env.goal
        ax.add_patch(Circle(g.position, g.radius, fill=False, ec="green", ls="--"))
        ax.plot(*g.position, marker="*", color="green", ms=12, zorder=5)
        for kind, color, label in (("noload", "red", "no load"), ("nn", "blue", "network")):
            plan, exe = art[kind]
            if exe is None:
                continue
            nodes = exe.nodes[-1]
            ax.plot(nodes[:, 0], nodes[:, 1], color=color, lw=2.5, alpha=0.8, label=label)
            ax.plot(exe.backbones[-1, :, 0], exe.backbones[-1, :, 1], "o", color=color, ms=2.5)
        closed = art.get("nn_closed_loop")
        if closed is not None:
            nodes = closed.nodes[-1]
            ax.plot(nodes[:, 0], nodes[:, 1], "--", color="C2", lw=2.0, label="network, closed")
        ax.set_title(env.name, fontsize=10)
        ax.set_aspect("equal")
        ax.set_xlim(-0.15, 0.8)
        ax.set_ylim(-0.6, 0.6)
        ax.grid(alpha=0.3)
        ax.plot(0, 0, "ks", ms=6)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="lower center", ncol=3)
    fig.suptitle(
        "Final backbones on the ground truth (blue: network plan, red: no-load plan, "
        "green: network plan closed loop)"
    )
    fig.tight_layout(rect=(0, 0.04, 1, 0.97))
    fig.savefig(path, dpi=110)
    plt.close(fig)
