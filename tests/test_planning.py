"""Planning with learned residual models (ALGORITHMS.md D.2-D.4): environments, collision
checks against a sampling oracle, forward models, the two RRT* modifications, the
compensation network (tiny, trained for a few hundred steps) and `softrod plan`."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest

import softrod.cli._plan_cmds  # noqa: F401  (registers `softrod plan` on the app)
from softrod.cli import main
from softrod.planning import (
    CompensationNetwork,
    ForwardModel,
    NetworkForward,
    NoLoadForward,
    Obstacles,
    PressureRRTStar,
    RRTStarConfig,
    TrainConfig,
    edge_commands,
    load_environment,
    plan_commands,
    rollout_error,
)
from softrod.planning._forward import EdgeBatch
from softrod.planning._rrtstar import _Tree
from softrod.pneumatic import (
    GroundTruthArm,
    GroundTruthConfig,
    NoLoadModel,
    compile_pneumatic,
    record_test_set,
)

ROOT = Path(__file__).resolve().parents[1]
ENV_DIR = ROOT / "examples" / "planning"
ARM_FILE = ROOT / "examples" / "robots" / "pneumatic_arm3.yaml"
P_MAX = 137895.0
RATE = 275790.0
HOLD = 4

#: The oracle samples polylines and obstacle outlines every 0.5 mm, so it can misjudge a
#: clearance only within that distance of the threshold; cases closer than this are skipped.
ORACLE_RESOLUTION = 1e-3
#: Stateful-model node backbones are the simulated edge ends, bit for bit (same arithmetic).
SAME_ARITHMETIC_ATOL = 1e-12
#: The network infers in float32 (relative round-off ~6e-8); BLAS sums in a different order
#: for different batch sizes, and outputs of ~0.5 m recur over ~20 frames: 1e-5 m bounds it.
FLOAT32_ATOL = 1e-5


@pytest.fixture(scope="module")
def arm():
    return compile_pneumatic(ARM_FILE)


@pytest.fixture(scope="module")
def noload(arm):
    return NoLoadModel(arm)


def easy_env(noload, **goal) -> dict:
    """A goal at a no-load-reachable tip, one box away from the direct path."""
    tip = noload.backbone(np.array([-0.6 * P_MAX, 0.3 * P_MAX, 0.0]))[-1]
    g = {"position": [float(tip[0]), float(tip[1])], "radius": 0.03, **goal}
    return {
        "name": "easy",
        "goal": g,
        "obstacles": [{"type": "box", "center": [0.35, -0.35], "size": [0.1, 0.1]}],
    }


# --------------------------------------------------------------------------------------------
# Environments and collision checks
# --------------------------------------------------------------------------------------------


def test_shipped_environments_are_valid(noload, arm):
    files = sorted(ENV_DIR.glob("env*.yaml"))
    assert len(files) == 8
    truth = GroundTruthArm(arm)
    measured = truth.reset(np.zeros(3))
    radius = arm.half_width[arm.plate_seg[1:]]
    for f in files:
        env = load_environment(f)
        assert env.obstacles and env.goal.radius > 0
        # Neither model's start (straight no-load arm, sagging measured arm) collides.
        obs = Obstacles(env, margin=RRTStarConfig().collision_margin)
        assert not obs.collides(noload.backbone(np.zeros(3)), radius), f.name
        assert not obs.collides(measured, radius), f.name
        assert not env.goal.contains(measured[-1]), f.name


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        ({"name": "x"}, "goal"),
        ({"name": "x", "goal": {"position": [0, 0], "radius": -1}}, "radius must be > 0"),
        (
            {"name": "x", "goal": {"position": [0, 0]}, "obstacles": [{"type": "cone"}]},
            "obstacles",
        ),
        ({"name": "x", "goal": {"position": [0, 0]}, "extra": 1}, "extra"),
    ],
)
def test_bad_environment_is_one_clear_error(data, needle):
    with pytest.raises(ValueError) as exc:
        load_environment(data)
    assert needle in str(exc.value) and "\n" not in str(exc.value)


def test_missing_environment_file(tmp_path):
    with pytest.raises(ValueError, match="not found"):
        load_environment(tmp_path / "nope.yaml")


def _sample_segment(a: np.ndarray, b: np.ndarray, step: float) -> np.ndarray:
    n = max(2, int(np.linalg.norm(b - a) / step) + 1)
    return a + np.linspace(0, 1, n)[:, None] * (b - a)


def oracle_clearance(points: np.ndarray, radius: np.ndarray, env) -> float:
    """min over edges of (distance to obstacle - edge radius), by dense sampling; negative
    when inside a polygon."""
    from matplotlib.path import Path as MplPath

    step = ORACLE_RESOLUTION / 2
    best = math.inf
    outlines = []
    for ob in env.obstacles:
        if ob.type == "circle":
            t = np.linspace(0, 2 * np.pi, 4000)
            outlines.append((np.c_[np.cos(t), np.sin(t)] * ob.radius + ob.center, None))
        else:
            v = ob.vertices()
            ring = np.concatenate(
                [_sample_segment(v[i], v[(i + 1) % len(v)], step) for i in range(len(v))]
            )
            outlines.append((ring, MplPath(v)))
    for i in range(points.shape[0] - 1):
        samples = _sample_segment(points[i], points[i + 1], step)
        for ring, poly in outlines:
            d = np.min(np.linalg.norm(samples[:, None] - ring[None], axis=2))
            if poly is not None and poly.contains_points(samples).any():
                d = -1.0
            best = min(best, d - radius[i])
    return best


def test_collision_kernel_against_sampling_oracle(noload, arm):
    env = load_environment(
        {
            "name": "oracle",
            "goal": {"position": [0, 0]},
            "obstacles": [
                {"type": "box", "center": [0.45, 0.2], "size": [0.1, 0.05], "angle_deg": 30},
                {"type": "circle", "center": [0.3, -0.25], "radius": 0.04},
                {"type": "polygon", "points": [[0.6, -0.1], [0.7, -0.05], [0.62, 0.02]]},
            ],
        }
    )
    obs = Obstacles(env)
    radius = arm.half_width[arm.plate_seg[1:]]
    rng = np.random.default_rng(0)
    checked = 0
    for q in rng.uniform(-P_MAX, P_MAX, (60, 3)):
        b = noload.backbone(q)[:, :2]
        clearance = oracle_clearance(b, radius, env)
        if abs(clearance) < ORACLE_RESOLUTION:
            continue
        assert obs.collides(b, radius) == (clearance < 0), q
        checked += 1
    assert checked > 40


def test_collision_simple_cases():
    env = load_environment(
        {
            "name": "simple",
            "goal": {"position": [0, 0]},
            "obstacles": [
                {"type": "box", "center": [1.0, 0.0], "size": [0.2, 0.2]},
                {"type": "circle", "center": [0.0, 1.0], "radius": 0.1},
            ],
        }
    )
    obs = Obstacles(env)
    r = np.array([0.05])
    assert obs.collides(np.array([[0.5, 0.0], [1.5, 0.0]]), r)  # crosses the box
    assert obs.collides(np.array([[0.5, 0.14], [1.5, 0.14]]), r)  # 4 cm above, r = 5 cm
    assert not obs.collides(np.array([[0.5, 0.16], [1.5, 0.16]]), r)  # 6 cm above
    assert obs.collides(np.array([[-1.0, 0.86], [1.0, 0.86]]), r)  # 14 cm from the centre
    assert not obs.collides(np.array([[-1.0, 0.84], [1.0, 0.84]]), r)
    inside = np.array([[0.98, 0.0], [1.0, 0.01], [1.02, 0.0]])
    assert obs.collides(inside, np.zeros(2))
    far = np.zeros((3, 2))
    assert Obstacles(env, margin=0.0).first_hit(np.stack([far, inside]), np.zeros(2)) == 1


# --------------------------------------------------------------------------------------------
# Forward models and edges
# --------------------------------------------------------------------------------------------


def test_edge_commands_ramp_and_hold():
    q0 = np.array([[0.0, 0.0, 0.0], [P_MAX, 0.0, 0.0], [0.0, 0.0, 0.0]])
    q1 = np.array([[P_MAX, -P_MAX, 0.0], [P_MAX, 0.0, 0.0], [1.0, 0.0, 0.0]])
    cmd, n = edge_commands(q0, q1, RATE * 0.05, HOLD)
    np.testing.assert_array_equal(n, [10 + HOLD, HOLD, 1 + HOLD])
    for i in range(3):
        path = np.vstack([q0[i], cmd[i, : n[i]]])
        assert np.abs(np.diff(path, axis=0)).max() <= RATE * 0.05 + 1e-6
        np.testing.assert_array_equal(cmd[i, n[i] - 1], q1[i])
        np.testing.assert_array_equal(
            cmd[i, n[i] :], np.repeat(q1[i][None], cmd.shape[1] - n[i], 0)
        )


def test_noload_forward_is_memoryless(noload):
    fm = NoLoadForward(noload, RATE, HOLD)
    q0 = np.zeros((2, 3))
    q1 = np.array([[5e4, -5e4, 1e5], [-1e5, 0.0, 2e4]])
    junk = np.full((2, 16, 3), 7.0)
    e = fm.simulate(q0, q0, junk, q1)
    np.testing.assert_array_equal(
        e.backbones, noload.backbone(e.commands.reshape(-1, 3)).reshape(e.backbones.shape)
    )
    np.testing.assert_allclose(e.final_backbones(), noload.backbone(q1))


class MemoryModel(ForwardModel):
    """A cheap stateful model: each frame keeps half of the previous deviation from no-load,
    so where an edge starts matters (like friction and lag on the real arm)."""

    name = "memory"

    def simulate(self, q_prev, q_from, backbone_from, q_to):
        cmd, n_frames = edge_commands(q_from, q_to, self.step_per_frame, self.hold_frames)
        n, f, s = cmd.shape
        bnl = self.noload.backbone_unchecked(cmd.reshape(n * f, s)).reshape(n, f, -1, 3)
        out = np.empty_like(bnl)
        dev = backbone_from - self.noload.backbone_unchecked(q_from)
        for k in range(f):
            dev = 0.5 * dev + 0.02 * np.sign(q_to - q_from).sum(axis=1)[:, None, None]
            out[:, k] = bnl[:, k] + dev
        return EdgeBatch(cmd, out, n_frames)

    def initial_backbone(self, q0, measured):
        return measured

    def rollout(self, commands, backbone0):
        out = [backbone0]
        for i in range(1, commands.shape[0]):
            e = self.simulate(
                commands[i - 1 : i], commands[i - 1 : i], out[-1][None], commands[i : i + 1]
            )
            out.append(e.backbones[0, 0])
        return np.array(out)


# --------------------------------------------------------------------------------------------
# RRT*
# --------------------------------------------------------------------------------------------


def planner_config(**over) -> RRTStarConfig:
    base = {"time_budget_s": 60.0, "max_iterations": 600, "refine_iterations": 150, "seed": 0}
    base.update(over)
    return RRTStarConfig(**base)


def test_rrtstar_noload_plans_in_an_easy_environment(noload, arm):
    env = load_environment(easy_env(noload))
    fm = NoLoadForward(noload, RATE, HOLD)
    planner = PressureRRTStar(fm, env, planner_config())
    res = planner.plan(np.zeros(3), None, np.random.default_rng(0))
    assert res.success, res.message
    assert env.goal.contains(res.predicted[-1, -1])
    np.testing.assert_array_equal(res.commands[0], 0.0)
    np.testing.assert_array_equal(res.waypoints[0], 0.0)
    assert res.cost == pytest.approx(np.abs(np.diff(res.waypoints, axis=0)).sum())
    assert np.abs(np.diff(res.commands, axis=0)).max() <= RATE * 0.05 + 1e-6
    steer = planner.config.steer_fraction * arm.pressure_max
    assert np.all(np.abs(np.diff(res.waypoints, axis=0)) <= steer + 1e-6)
    # The whole predicted motion keeps the planning clearance.
    obs = Obstacles(env, margin=planner.config.collision_margin)
    assert obs.first_hit(res.predicted, arm.half_width[arm.plate_seg[1:]]) == -1
    assert res.stats["rewires"] > 0  # memoryless: every rewire reproduces the backbone
    # Same seed, same iterations -> same plan.
    again = PressureRRTStar(fm, env, planner_config()).plan(
        np.zeros(3), None, np.random.default_rng(0)
    )
    np.testing.assert_array_equal(again.waypoints, res.waypoints)


def test_rrtstar_nodes_carry_the_backbone_of_their_edge(noload, arm):
    env = load_environment(easy_env(noload))
    fm = MemoryModel(noload, RATE, HOLD)
    start_b = noload.backbone(np.zeros(3)) + 0.01
    rewires = {}
    for tol in (1e-12, 0.05):
        planner = PressureRRTStar(fm, env, planner_config(backbone_match_tol=tol))
        res = planner.plan(np.zeros(3), start_b, np.random.default_rng(1))
        tree = planner.last_tree
        assert tree is not None and tree.n > 50
        rewires[tol] = res.stats["rewires"]
        gaps = []
        for i in range(1, tree.n):
            p = int(tree.parent[i])
            e = fm.simulate(
                tree.q_prev[p : p + 1], tree.q[p : p + 1], tree.b[p : p + 1], tree.q[i : i + 1]
            )
            gaps.append(np.abs(e.final_backbones()[0] - tree.b[i]).max())
        # Every node holds the backbone its parent's edge produces: exactly, or within the
        # match tolerance after a rewire (modification 2 of D.3).
        assert max(gaps) <= max(tol, SAME_ARITHMETIC_ATOL)
    # A history-dependent model rarely reproduces a backbone exactly: the tolerance gates
    # rewiring.
    assert rewires[0.05] > 5 * max(rewires[1e-12], 1)


def test_tree_rewire_moves_the_subtree_cost():
    tree = _Tree(1, 2, capacity=2)
    z = np.zeros(1)
    b = np.zeros((2, 3))
    tree.add(z, z, b, 0.0, -1)
    tree.add(z, z, b, 5.0, 0)  # 1
    tree.add(z, z, b, 2.0, 0)  # 2
    tree.add(z, z, b, 7.0, 1)  # 3 (grows the arrays)
    tree.add(z, z, b, 9.0, 3)  # 4
    tree.rewire(1, 2, 3.0)
    np.testing.assert_allclose(tree.cost[:5], [0.0, 3.0, 2.0, 5.0, 7.0])
    assert tree.path(4) == [0, 2, 1, 3, 4]
    assert tree.children[0] == [2] and tree.children[2] == [1]


def test_start_in_collision_is_reported(noload):
    env = load_environment(
        {
            "name": "blocked",
            "goal": {"position": [0.3, 0.3]},
            "obstacles": [{"type": "box", "center": [0.5, 0.0], "size": [0.1, 0.1]}],
        }
    )
    res = PressureRRTStar(NoLoadForward(noload, RATE, HOLD), env, planner_config()).plan()
    assert not res.success and res.status == "start_in_collision"


def test_plan_commands_concatenate_edges():
    wp = np.array([[0.0, 0.0, 0.0], [3e4, 0.0, 0.0], [3e4, -6e4, 1e4]])
    cmd = plan_commands(wp, RATE * 0.05, HOLD)
    assert cmd.shape[0] == 1 + (3 + HOLD) + (5 + HOLD)
    np.testing.assert_array_equal(cmd[-1], wp[-1])


# --------------------------------------------------------------------------------------------
# Compensation network (tiny; torch)
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny(arm, noload):
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    from softrod.planning import train_compensation

    cfg = dataclasses.replace(GroundTruthConfig(), links_per_plate=1)
    rec = record_test_set(GroundTruthArm(arm, cfg), np.random.default_rng(3), n_configs=8)
    losses: list[float] = []
    tc = TrainConfig(hidden=(48, 48), window=8, window_stride=4, batch_size=16, epochs=60, seed=0)
    net = train_compensation(rec, noload, tc, progress=lambda e, loss, t: losses.append(loss))
    return rec, net, losses


def test_tiny_network_learns_the_residual(tiny, noload):
    rec, net, losses = tiny
    assert losses[-1] < 0.5 * losses[0]
    # Rolled out recurrently on the recording it saw, it beats the no-load model clearly.
    nn = rollout_error(net, noload, rec)["position_mean_m"]
    nl = rollout_error(None, noload, rec)["position_mean_m"]
    assert nn < 0.6 * nl


def test_network_inference_matches_the_formula(tiny, noload, tmp_path):
    rec, net, _ = tiny
    rng = np.random.default_rng(0)
    idx = rng.integers(1, rec.n_frames + 1, 5)
    qp, q, bp = rec.commands[idx - 1], rec.commands[idx], rec.backbones[idx - 1]
    bnl = noload.backbone(q)
    out = net.step(qp, q, bp, bnl)
    # Independent: explicit min-max normalisation and ReLU layers in float64.
    x = np.concatenate([qp, q, bp.reshape(5, -1), bnl.reshape(5, -1)], axis=1)
    h = (x - net.in_min) / net.in_scale
    for k, (w, b) in enumerate(zip(net.weights, net.biases, strict=True)):
        h = h @ w.T + b
        if k < len(net.weights) - 1:
            h = np.maximum(h, 0.0)
    ref = bnl + (h * net.out_scale + net.out_min).reshape(5, 16, 3)
    np.testing.assert_allclose(out, ref, atol=FLOAT32_ATOL)
    # One at a time equals batched; save/load keeps the outputs.
    for i in range(5):
        np.testing.assert_allclose(
            net.step(qp[i : i + 1], q[i : i + 1], bp[i : i + 1], bnl[i : i + 1])[0],
            out[i],
            atol=FLOAT32_ATOL,
        )
    loaded = CompensationNetwork.load(net.save(tmp_path / "net.npz"))
    np.testing.assert_array_equal(loaded.step(qp, q, bp, bnl), out)


def test_network_edges_in_lockstep_equal_single_edges(tiny, noload):
    _, net, _ = tiny
    fm = NetworkForward(noload, net, RATE, HOLD)
    q_from = np.array([[0.0, 0.0, 0.0], [5e4, -5e4, 0.0], [1e5, 1e5, -1e5]])
    q_to = np.array([[1e5, 0.0, 0.0], [6e4, -5e4, 0.0], [-1e5, 1e5, 0.0]])
    b_from = noload.backbone(q_from) + 0.01
    batch = fm.simulate(q_from, q_from, b_from, q_to)
    for i in range(3):
        one = fm.simulate(q_from[i : i + 1], q_from[i : i + 1], b_from[i : i + 1], q_to[i : i + 1])
        nf = int(one.n_frames[0])
        assert nf == batch.n_frames[i]
        np.testing.assert_allclose(
            batch.backbones[i, :nf], one.backbones[0, :nf], atol=FLOAT32_ATOL
        )
        # The planner's edge is the network's own recurrence along the edge's set-points.
        cmds = np.vstack([q_from[i], one.commands[0, :nf]])
        np.testing.assert_allclose(
            fm.rollout(cmds, b_from[i])[1:], one.backbones[0, :nf], atol=FLOAT32_ATOL
        )


def test_network_planner_runs(tiny, noload, arm):
    _, net, _ = tiny
    env = load_environment(easy_env(noload))
    truth = GroundTruthArm(arm)
    start_b = truth.reset(np.zeros(3))
    fm = NetworkForward(noload, net, RATE, HOLD)
    res = PressureRRTStar(fm, env, planner_config(max_iterations=150, refine_iterations=20)).plan(
        np.zeros(3), start_b, np.random.default_rng(0)
    )
    assert res.n_nodes > 5 and res.iterations >= res.n_nodes - 1
    if res.success:
        assert env.goal.contains(res.predicted[-1, -1])
    with pytest.raises(ValueError, match="measured initial backbone"):
        fm.initial_backbone(np.zeros(3), None)


# --------------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------------


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ((), "missing ENV.yaml"),
        (("x.yaml", "--model", "foo"), "--model must be"),
        (("nope.yaml",), "not found"),
        (("x.yaml", "--benchmark"), "not both"),
        (("x.yaml", "--time-budget", "0"), "--time-budget"),
    ],
)
def test_plan_cli_bad_input_is_one_line(capsys, args, needle):
    code, out, err = run(capsys, "plan", *args)
    assert code == 2
    assert needle in err and err.count("\n") == 1 and out == ""


def test_plan_cli_noload_json(capsys, tmp_path, noload):
    import yaml

    path = tmp_path / "easy.yaml"
    data = easy_env(noload)
    path.write_text(yaml.safe_dump(data))
    code, out, _ = run(
        capsys, "plan", path, "--model", "noload", "--json", "--time-budget", "20",
        "--cache-dir", tmp_path,
    )  # fmt: skip
    assert code == 0
    res = json.loads(out)
    assert res["success"] is True and res["model"] == "noload"
    assert res["cost"] > 0 and res["plan_time_s"] > 0
    assert isinstance(res["collision"], bool) and res["distance_to_goal_m"] >= 0
    assert not (tmp_path / "pneumatic_arm3").exists()  # no network was trained
