"""Closed-loop execution of a pressure-space plan on the ground truth (issue 17, item 7).

Open loop, a plan's set-points are played as planned and the arm ends wherever the model's
error puts it. Closed loop uses what a real rig measures, the plate poses B_t (the same
measurement the network is fed), in three feedback layers:

1. **Waypoint tracking** (optional, `track_waypoints`). At the end of every edge the
   measured tip is compared with the tip the planning model predicted there; a resolved-rate
   step dq = J^+ (tip_pred - tip_meas) (damped least squares, J the planning model's tip
   Jacobian with respect to the set-points) is added to a running set-point offset that
   shifts every later waypoint.
2. **Goal servoing by re-approach.** Unless the tip already ends in the goal region, the arm
   retreats to the last waypoint and re-approaches a corrected end set-point (the same
   resolved-rate law on goal - tip_meas, the Jacobian corrected by Broyden's secant update,
   a trust region), until the tip is within `tolerance_m` or `max_corrections` are spent.
3. **Re-planning.** When the model, run from the measured state, predicts that the next edge
   collides, the optional `replan` callback plans again from the measured state (the
   benchmark uses the same RRT*) and the arm follows the new plan.

Every corrected motion is first simulated with the planning model from the measured backbone
and checked against the obstacles with a clearance `collision_margin`; a step that would
collide is halved (at most `max_halvings` times) and otherwise skipped. Static friction can hold
the arm through a small set-point change; the resolved-rate law then keeps the error and
accumulates the set-point change until the arm slips (integral action).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from softrod.planning._env import EnvironmentSpec, Obstacles
from softrod.planning._forward import ForwardModel, edge_commands
from softrod.planning._rrtstar import PlanResult
from softrod.pneumatic import GroundTruthArm

__all__ = ["ClosedLoopConfig", "ClosedLoopExecution", "execute_closed_loop"]


@dataclass(frozen=True)
class ClosedLoopConfig:
    """Feedback of `execute_closed_loop` ([CHOICE]s of issue 17, item 7)."""

    track_waypoints: bool = False
    """Correct the set-points at every waypoint from the measured tip (layer 1). Off by
    default: on the benchmark it lost more goals than it won (docs/planning.md), and without
    it the plan is played exactly as open loop, so a plan that arrives is never touched."""
    waypoint_gain: float = 0.5
    """Fraction of the resolved-rate step applied at a waypoint (the model error varies
    along the path, so the offset follows it only partly)."""
    max_corrections: int = 15
    """Goal-servoing corrections after the last edge (layer 2)."""
    gain: float = 0.8
    """Fraction of the resolved-rate step applied per goal correction."""
    tolerance_m: float = 0.015
    """Goal servoing stops when the tip is this close to the goal centre [m]; it does not
    start when the executed plan already ends in the goal region."""
    max_step_fraction: float = 0.15
    """Largest set-point change of one correction per segment, as a fraction of p_max."""
    max_offset_fraction: float = 0.4
    """Largest waypoint offset per segment, as a fraction of p_max."""
    hold_frames: int = 8
    """Frames held at the last waypoint when the arm retreats there for a re-approach."""
    damping: float = 0.02
    """Damped-least-squares damping [m] (per unit of set-point / p_max)."""
    jacobian_step_fraction: float = 0.03
    """Central-difference step of the model Jacobian, as a fraction of p_max."""
    theta_weight: float = 0.1
    """Length scale weighting a goal-orientation error against position [m/rad]."""
    collision_margin: float = 0.02
    """Clearance of the predicted corrected motion from the obstacles [m]."""
    max_halvings: int = 3
    """Times a colliding correction is halved before it is skipped."""
    max_replans: int = 2
    """Plans made again from the measured state during one execution (needs `replan`)."""
    secant_update: bool = True
    """Correct the model's Jacobian after every re-approach by Broyden's secant update with
    the measured tip change (the model can be far off where its plan ends far off)."""

    def __post_init__(self) -> None:
        if (
            self.max_corrections < 0
            or self.hold_frames < 1
            or min(self.max_halvings, self.max_replans) < 0
        ):
            raise ValueError(
                "max_corrections, max_halvings and max_replans must be >= 0 and hold_frames "
                f">= 1, got {self.max_corrections}, {self.max_halvings}, {self.max_replans}, "
                f"{self.hold_frames}"
            )
        for name in ("gain", "max_step_fraction", "jacobian_step_fraction"):
            if not 0 < getattr(self, name) <= 1:
                raise ValueError(f"{name} must be in (0, 1], got {getattr(self, name)}")
        if not 0 <= self.waypoint_gain <= 1 or self.max_offset_fraction < 0:
            raise ValueError(
                "waypoint_gain must be in [0, 1] and max_offset_fraction >= 0, got "
                f"{self.waypoint_gain}, {self.max_offset_fraction}"
            )
        if not self.tolerance_m > 0 or self.damping < 0 or self.collision_margin < 0:
            raise ValueError(
                "tolerance_m must be > 0, damping and collision_margin >= 0, got "
                f"{self.tolerance_m}, {self.damping}, {self.collision_margin}"
            )


@dataclass(frozen=True)
class ClosedLoopExecution:
    """A plan executed closed loop on the ground truth.

    backbones : (n, m, 3) measured plates per frame; nodes : (n, K+1, 2) the full backbone;
    commands : (n, n_seg) set-points sent [Pa]; distance_m / orientation_error_rad : final tip
    to the goal; collision / collision_frame / in_goal : as for the open-loop `Execution`;
    corrections : goal corrections made; distances_m : tip distance to the goal after the
    last edge and after every correction [m]; waypoint_offsets : (k+1, n_seg) set-point
    offset applied at every executed waypoint, the start first [Pa]; replans : plans made
    again from the measured state.
    """

    backbones: np.ndarray
    nodes: np.ndarray
    commands: np.ndarray
    distance_m: float
    orientation_error_rad: float
    collision: bool
    collision_frame: int
    in_goal: bool
    corrections: int
    distances_m: np.ndarray
    waypoint_offsets: np.ndarray
    replans: int


class _Rig:
    """The ground truth as a rig: sends set-points, keeps every measured frame."""

    def __init__(self, truth: GroundTruthArm, start: np.ndarray) -> None:
        self.truth = truth
        self.backbone = truth.reset(start)
        self.q = np.asarray(start, dtype=float).copy()
        self.q_prev = self.q.copy()
        self.frames: list[np.ndarray] = []
        self.nodes: list[np.ndarray] = []
        self.commands: list[np.ndarray] = []

    def play(self, cmds: np.ndarray) -> None:
        if cmds.shape[0] == 0:
            return
        bb = self.truth.run(cmds)
        self.frames.append(bb)
        self.nodes.append(self.truth.last_nodes.copy())
        self.commands.append(cmds)
        self.backbone = bb[-1]
        self.q_prev = cmds[-2] if cmds.shape[0] > 1 else self.q
        self.q = cmds[-1].copy()


def _edge(q_from: np.ndarray, q_to: np.ndarray, step_per_frame: float, hold: int) -> np.ndarray:
    """Frame set-points (F, n_seg) of one edge: the planner's ramp at the pump rate + hold."""
    cmd, nf = edge_commands(q_from[None], q_to[None], step_per_frame, hold)
    return cmd[0, : int(nf[0])]


def _edge_ends(waypoints: np.ndarray, forward: ForwardModel) -> np.ndarray:
    """Index (in the plan's frame sequence, start = 0) of the last frame of every edge."""
    _, n_frames = edge_commands(
        waypoints[:-1], waypoints[1:], forward.step_per_frame, forward.hold_frames
    )
    return np.cumsum(n_frames)


def _target(env: EnvironmentSpec, tip: np.ndarray, theta_weight: float) -> np.ndarray:
    """Task-space error goal - tip: (x, y) [m], plus theta_weight * angle error if oriented."""
    g = env.goal
    err = [g.position[0] - tip[0], g.position[1] - tip[1]]
    if g.orientation is not None:
        d = (g.orientation - tip[2] + np.pi) % (2.0 * np.pi) - np.pi
        err.append(theta_weight * d)
    return np.asarray(err)


def _task(env: EnvironmentSpec, tip: np.ndarray, theta_weight: float) -> np.ndarray:
    """Task coordinates of a tip pose: (x, y) [m], plus theta_weight * angle if oriented."""
    if env.goal.orientation is None:
        return np.asarray(tip[:2], dtype=float)
    return np.array([tip[0], tip[1], theta_weight * tip[2]])


def _tip_jacobian(
    forward: ForwardModel,
    q_prev: np.ndarray,
    q: np.ndarray,
    backbone: np.ndarray,
    q_center: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    h: np.ndarray,
    oriented: bool,
    theta_weight: float,
) -> np.ndarray:
    """Model tip Jacobian d(x, y[, w theta]) / dq_to (2 or 3, n_seg) [m/Pa] of the end of an
    edge from the measured state (q_prev, q, backbone) to q_to = q_center, by central
    differences q_center +- h e_i (one-sided at the pressure bounds)."""
    n = q.shape[0]
    eye = np.eye(n) * h
    q_hi = np.minimum(q_center + eye, upper)
    q_lo = np.maximum(q_center - eye, lower)
    q_to = np.concatenate([q_hi, q_lo])
    k = 2 * n
    batch = forward.simulate(
        np.repeat(q_prev[None], k, 0),
        np.repeat(q[None], k, 0),
        np.repeat(backbone[None], k, 0),
        q_to,
    )
    tips = batch.final_backbones()[:, -1]
    rows = 3 if oriented else 2
    d_tip = tips[:n, :rows] - tips[n:, :rows]
    if oriented:
        d_tip[:, 2] = theta_weight * ((d_tip[:, 2] + np.pi) % (2.0 * np.pi) - np.pi)
    dq = np.diag(q_hi - q_lo)
    dq = np.where(dq > 0, dq, 1.0)
    return (d_tip / dq[:, None]).T


def _dls_step(jac: np.ndarray, err: np.ndarray, scale: np.ndarray, damping: float) -> np.ndarray:
    """Damped-least-squares set-point step [Pa] for a task error err, in units of scale."""
    js = jac * scale[None, :]
    lhs = js @ js.T + damping**2 * np.eye(js.shape[0])
    return scale * (js.T @ np.linalg.solve(lhs, err))


def _safe_move(
    rig: _Rig,
    forward: ForwardModel,
    obstacles: Obstacles,
    radius: np.ndarray,
    q_to: np.ndarray,
    max_halvings: int,
) -> np.ndarray | None:
    """The set-point to move to: q_to, or q_to pulled halfway back toward the current set-point
    until the model predicts a collision-free motion; None when no such step is found."""
    dq = q_to - rig.q
    for _ in range(max_halvings + 1):
        target = rig.q + dq
        batch = forward.simulate(rig.q_prev[None], rig.q[None], rig.backbone[None], target[None])
        nf = int(batch.n_frames[0])
        if obstacles.first_hit(batch.backbones[0, :nf], radius) < 0:
            return target
        dq = 0.5 * dq
    return None


def execute_closed_loop(
    truth: GroundTruthArm,
    env: EnvironmentSpec,
    plan: PlanResult,
    start: np.ndarray,
    forward: ForwardModel,
    config: ClosedLoopConfig | None = None,
    settle_frames: int = 10,
    replan: Callable[[np.ndarray, np.ndarray], PlanResult | None] | None = None,
) -> ClosedLoopExecution:
    """Execute `plan` on `truth` from `start` with feedback from the measured plates.

    Parameters
    ----------
    truth : the ground-truth arm (reset here); env : the planning problem; plan : a successful
    plan; start : (n_seg,) start set-points [Pa]; forward : the planning model (its edges give
    the Jacobian and the collision prediction of corrections); config : feedback settings;
    settle_frames : hold after the last edge before goal servoing starts [frames].
    replan : optional planner called as replan(q (n_seg,) [Pa], measured backbone (m, 3)) when
    the model, run from the measured state, predicts that the next edge collides; its plan
    replaces the rest of the current one (at most `config.max_replans` times).
    """
    cfg = config if config is not None else ClosedLoopConfig()
    if not plan.success:
        raise ValueError(f"only a successful plan can be executed, got status {plan.status!r}")
    arm = truth.arm
    lower, upper = arm.pressure_lower, arm.pressure_upper
    scale = arm.pressure_max
    h = cfg.jacobian_step_fraction * scale
    oriented = env.goal.orientation is not None
    obstacles = Obstacles(env, margin=cfg.collision_margin)
    plate_radius = arm.half_width[arm.plate_seg[1:]]
    truth_obstacles = Obstacles(env)
    rig = _Rig(truth, start)
    q_retreat = rig.q.copy()
    wps, predicted = plan.waypoints, plan.predicted
    ends = _edge_ends(wps, forward)
    offset = np.zeros(arm.n_segments)
    offsets = [np.zeros(arm.n_segments)]
    max_offset = cfg.max_offset_fraction * scale
    max_step = cfg.max_step_fraction * scale
    replans = 0

    # Layer 1: play the edges, shifting every later waypoint by the running offset.
    k = 1
    while k < wps.shape[0]:
        q_to = np.clip(wps[k] + offset, lower, upper)
        if cfg.track_waypoints and np.any(offset != 0):
            safe = _safe_move(rig, forward, obstacles, plate_radius, q_to, 0)
            if safe is None:
                # The shifted edge would collide in the model: play the planned one.
                q_to = wps[k]
        if (
            replan is not None
            and replans < cfg.max_replans
            and _safe_move(rig, forward, obstacles, plate_radius, q_to, 0) is None
        ):
            # From where the arm really is, the model sees the next edge collide: plan again
            # from the measured state and follow the new plan.
            replans += 1
            fresh = replan(rig.q.copy(), rig.backbone.copy())
            if fresh is not None and fresh.success:
                wps, predicted = fresh.waypoints, fresh.predicted
                ends = _edge_ends(wps, forward)
                offset = np.zeros(arm.n_segments)
                k = 1
                continue
        offsets.append(q_to - wps[k])
        q_retreat = rig.q.copy()
        rig.play(_edge(rig.q, q_to, forward.step_per_frame, forward.hold_frames))
        if cfg.track_waypoints and k < wps.shape[0] - 1:
            err = predicted[ends[k - 1], -1, :2] - rig.backbone[-1, :2]
            jac_wp = _tip_jacobian(
                forward, rig.q_prev, rig.q, rig.backbone, rig.q, lower, upper, h, False, 1.0
            )
            step = _dls_step(jac_wp, err, scale, cfg.damping)
            step = np.clip(cfg.waypoint_gain * step, -max_step, max_step)
            offset = np.clip(offset + step, -max_offset, max_offset)
        k += 1
    rig.play(np.repeat(rig.q[None], settle_frames, 0))

    # Layer 2: retreat to the last waypoint and re-approach a corrected goal set-point. Static
    # friction holds the arm through small set-point changes made in place (the tip moves a
    # fraction of what any model predicts, in no consistent direction), but the end of a
    # whole approach responds to a change of its end set-point about as the model's edge does.
    # A trust region keeps stick-slip surprises from compounding: a re-approach that does not
    # bring the tip closer is not kept (the next try starts from the best set-point again, with
    # half the step), and the arm ends at the best set-point found.
    approach_hold = forward.hold_frames + settle_frames
    w = cfg.theta_weight
    best_q, best_tip = rig.q.copy(), rig.backbone[-1].copy()
    distances = [float(env.goal.distance(best_tip))]
    radius = max_step
    jac: np.ndarray | None = None
    corrections = 0
    at_best = True
    for _ in range(cfg.max_corrections):
        err = _target(env, best_tip, w)
        # A tip already in the goal region stays: a re-approach never returns exactly to the
        # open-loop end (hysteresis), so servoing there could only lose the goal.
        if np.linalg.norm(err) <= cfg.tolerance_m or (
            corrections == 0 and env.goal.contains(best_tip)
        ):
            break
        if _safe_move(rig, forward, obstacles, plate_radius, q_retreat, 0) is None:
            break
        rig.play(_edge(rig.q, q_retreat, forward.step_per_frame, cfg.hold_frames))
        at_best = False
        if jac is None:
            jac = _tip_jacobian(
                forward, rig.q_prev, rig.q, rig.backbone, best_q, lower, upper, h, oriented, w
            )
        step = np.clip(cfg.gain * _dls_step(jac, err, scale, cfg.damping), -radius, radius)
        q_new = np.clip(best_q + step, lower, upper)
        safe = _safe_move(rig, forward, obstacles, plate_radius, q_new, cfg.max_halvings)
        if safe is None or np.array_equal(safe, best_q):
            break
        rig.play(_edge(rig.q, safe, forward.step_per_frame, approach_hold))
        tip = rig.backbone[-1].copy()
        corrections += 1
        distances.append(float(env.goal.distance(tip)))
        # Broyden's secant update: the model's Jacobian, corrected by what the arm did.
        dq = (safe - best_q) / scale
        if cfg.secant_update:
            dy = _task(env, tip, w) - _task(env, best_tip, w)
            js = jac * scale[None, :]
            js += np.outer(dy - js @ dq, dq) / float(dq @ dq)
            jac = js / scale[None, :]
        if np.linalg.norm(_target(env, tip, w)) < np.linalg.norm(err):
            best_q, best_tip, at_best = safe, tip, True
            radius = np.minimum(2.0 * radius, max_step)
        else:
            radius *= 0.5
    if not at_best and _safe_move(rig, forward, obstacles, plate_radius, q_retreat, 0) is None:
        # Stay where the retreat check stopped us: the arm is at the retreat point or at a try.
        pass
    elif not at_best:
        rig.play(_edge(rig.q, q_retreat, forward.step_per_frame, cfg.hold_frames))
        rig.play(_edge(rig.q, best_q, forward.step_per_frame, approach_hold))
        distances.append(float(env.goal.distance(rig.backbone[-1])))

    bb = np.concatenate(rig.frames)
    nodes = np.concatenate(rig.nodes)
    hit = truth_obstacles.first_hit(nodes, truth.node_half_width[1:])
    tip = bb[-1, -1]
    return ClosedLoopExecution(
        backbones=bb,
        nodes=nodes,
        commands=np.concatenate(rig.commands),
        distance_m=float(env.goal.distance(tip)),
        orientation_error_rad=float(env.goal.orientation_error(tip)),
        collision=hit >= 0,
        collision_frame=hit,
        in_goal=bool(env.goal.contains(tip)),
        corrections=corrections,
        distances_m=np.asarray(distances),
        waypoint_offsets=np.asarray(offsets),
        replans=replans,
    )
