"""Closed-loop execution of a pressure-space plan on the ground truth (issue 17, item 7).

Open loop, a plan's set-points are played as planned and the arm ends wherever the model's
error puts it. Closed loop uses what a real rig measures, the plate poses B_t (the same
measurement the network is fed) and the backbone between them (motion capture), in four
feedback layers:

0. **Clearance guard.** Every edge is played frame by frame; when the measured backbone comes
   within `guard_margin` of an obstacle, the edge stops, the arm backs off to the edge's start
   and, with a `replan` callback, plans again from there (otherwise it stays, short of the goal
   but clear of the obstacle).
1. **Waypoint tracking** (optional, `track_waypoints`). At the end of every edge the
   measured tip is compared with the tip the planning model predicted there; a resolved-rate
   step dq = J^+ (tip_pred - tip_meas) (damped least squares, J the planning model's tip
   Jacobian with respect to the set-points) is added to a running set-point offset that
   shifts every later waypoint.
2. **Goal servoing by cycles.** Unless the tip already ends in the goal region, the arm
   retreats along the executed waypoints to the start and plays them forward again to a
   corrected end set-point (the same resolved-rate law on goal - tip_meas, the Jacobian
   corrected by Broyden's secant update, a trust region), until the tip is within
   `tolerance_m` or `max_corrections` are spent; it ends at the best end set-point found.
   Why whole cycles: the ground truth's table friction holds the arm when a motion reverses
   (a correction against the last motion moves the tip 0-20 % of what the model predicts),
   and a shallow retreat to the last waypoint leaves a friction memory that shifts the
   re-approached end by 1-6 cm and ratchets with every retry; a retreat to the start erases it,
   so consecutive cycles to the same end set-point end within a fraction of a millimetre
   (dev/plan_truth_response.py).
3. **Re-planning.** When the model, run from the measured state, predicts that the next edge
   collides (or the guard stops an edge), the optional `replan` callback plans again from the
   measured state (the benchmark uses the same RRT*) and the arm follows the new plan.

Every corrected motion is first simulated with the planning model from the measured backbone
and checked against the obstacles with a clearance `collision_margin`; a step that would
collide is halved (at most `max_halvings` times) and otherwise skipped.
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
    tolerance_m: float = 0.01
    """Goal servoing stops when the tip is this close to the goal centre [m]; it does not
    start when the executed plan already ends in the goal region."""
    max_step_fraction: float = 0.15
    """Largest set-point change of one correction per segment, as a fraction of p_max."""
    max_offset_fraction: float = 0.4
    """Largest waypoint offset per segment, as a fraction of p_max."""
    hold_frames: int = 8
    """Frames held where a retreat turns (the start of a cycle)."""
    retreat_to_start: bool = True
    """A goal correction retreats along the executed waypoints to the start before it plays
    them forward again (a cycle that erases the friction memory); False retreats only to
    the last waypoint (a shallow retreat, whose end the friction memory shifts)."""
    pace: float = 1.0 / 3.0
    """Ramp rate of the executed edges, as a fraction of the planner's pump rate: at full
    rate a plate moves up to 8 cm per 20 Hz frame, too far for the guard to stop it in time
    (the friction is rate independent, so the end of a slower edge is nearly the same)."""
    guard_margin: float | None = 0.01
    """Clearance of the measured backbone from the obstacles below which an edge stops (layer
    0) [m]; None plays every edge to its end."""
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
    max_replans: int = 3
    """Plans made again from the measured state during one execution (needs `replan`)."""
    replan_margin_step: float = 0.01
    """The benchmark's re-plans add this much clearance per re-plan to the planner's margin
    [m] (the model has just been wrong near an obstacle)."""
    measured_jacobian: bool = True
    """Goal servoing measures the arm's Jacobian with one probe cycle per segment (ends
    `probe_fraction` p_max apart) instead of trusting the model's, when the tip is within
    `probe_below_m` of the goal (near the goal the model's Jacobian can be far off; far from
    it, the model's larger-scale Jacobian, Broyden-corrected, makes bigger progress)."""
    probe_below_m: float = 0.1
    """Largest goal distance at which the Jacobian is measured [m]."""
    probe_fraction: float = 0.05
    """Probe step of the measured Jacobian, as a fraction of p_max."""
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
        for name in ("gain", "max_step_fraction", "jacobian_step_fraction", "pace"):
            if not 0 < getattr(self, name) <= 1:
                raise ValueError(f"{name} must be in (0, 1], got {getattr(self, name)}")
        if not 0 <= self.waypoint_gain <= 1 or self.max_offset_fraction < 0:
            raise ValueError(
                "waypoint_gain must be in [0, 1] and max_offset_fraction >= 0, got "
                f"{self.waypoint_gain}, {self.max_offset_fraction}"
            )
        if self.guard_margin is not None and self.guard_margin < 0:
            raise ValueError(f"guard_margin must be >= 0 or None, got {self.guard_margin}")
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
    again from the measured state; guard_stops : edges the clearance guard stopped.
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
    guard_stops: int = 0


class _Rig:
    """The ground truth as a rig: sends set-points, keeps every measured frame.

    With a `guard` (obstacles inflated by the guard margin), `play` sends one frame at a time
    and stops as soon as the measured backbone, or its extrapolation one frame ahead at the
    measured speed, comes within the margin of an obstacle."""

    def __init__(
        self, truth: GroundTruthArm, start: np.ndarray, guard: Obstacles | None = None
    ) -> None:
        self.truth = truth
        self.backbone = truth.reset(start)
        self.q = np.asarray(start, dtype=float).copy()
        self.q_prev = self.q.copy()
        self.frames: list[np.ndarray] = []
        self.nodes: list[np.ndarray] = []
        self.commands: list[np.ndarray] = []
        self.guard = guard
        self.node_radius = truth.node_half_width[1:]

    def play(self, cmds: np.ndarray, guarded: bool = True) -> bool:
        """Send the frames' set-points (F, n_seg); False when the guard stopped them."""
        if cmds.shape[0] == 0:
            return True
        if self.guard is None or not guarded:
            self._send(cmds)
            return True
        for f in range(cmds.shape[0]):
            before = self.truth.last_nodes[-1]
            self._send(cmds[f : f + 1])
            now = self.truth.last_nodes[-1]
            # The measured backbone and where it will be a frame later at its measured speed.
            ahead = np.stack([now, 2.0 * now - before])
            if self.guard.first_hit(ahead, self.node_radius) >= 0:
                return False
        return True

    def _send(self, cmds: np.ndarray) -> None:
        prev = self.q
        bb = self.truth.run(cmds)
        self.frames.append(bb)
        self.nodes.append(self.truth.last_nodes.copy())
        self.commands.append(cmds)
        self.backbone = bb[-1]
        self.q_prev = cmds[-2] if cmds.shape[0] > 1 else prev
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
    the model, run from the measured state, predicts that the next edge collides or the
    clearance guard stops an edge; its plan replaces the rest of the current one (at most
    `config.max_replans` times).
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
    guard = None if cfg.guard_margin is None else Obstacles(env, margin=cfg.guard_margin)
    rig = _Rig(truth, start, guard)
    step_pf, hold = cfg.pace * forward.step_per_frame, forward.hold_frames
    wps, predicted = plan.waypoints, plan.predicted
    ends = _edge_ends(wps, forward)
    offset = np.zeros(arm.n_segments)
    offsets = [np.zeros(arm.n_segments)]
    max_offset = cfg.max_offset_fraction * scale
    max_step = cfg.max_step_fraction * scale
    replans = 0
    guard_stops = 0
    # Set-points of the waypoints the arm has reached, the start first: the path of a cycle.
    sent = [rig.q.copy()]

    def try_replan() -> bool:
        nonlocal wps, predicted, ends, offset, replans
        if replan is None or replans >= cfg.max_replans:
            return False
        replans += 1
        fresh = replan(rig.q.copy(), rig.backbone.copy())
        if fresh is None or not fresh.success:
            return False
        wps, predicted = fresh.waypoints, fresh.predicted
        ends = _edge_ends(wps, forward)
        offset = np.zeros(arm.n_segments)
        return True

    # Layers 0, 1 and 3: play the edges, shifting every later waypoint by the running offset.
    k = 1
    stopped = False
    while k < wps.shape[0]:
        q_to = np.clip(wps[k] + offset, lower, upper)
        if cfg.track_waypoints and np.any(offset != 0):
            safe = _safe_move(rig, forward, obstacles, plate_radius, q_to, 0)
            if safe is None:
                # The shifted edge would collide in the model: play the planned one.
                q_to = wps[k]
        if _safe_move(rig, forward, obstacles, plate_radius, q_to, 0) is None and try_replan():
            # From where the arm really is, the model sees the next edge collide: plan again
            # from the measured state and follow the new plan.
            k = 1
            continue
        offsets.append(q_to - wps[k])
        if not rig.play(_edge(rig.q, q_to, step_pf, hold)):
            # The measured backbone came too close to an obstacle: back off along the reached
            # waypoints to the start (friction can hold the arm near the obstacle at the
            # edge's start, and a plan from the start has the most room) and plan again from
            # there, or stay.
            guard_stops += 1
            for q_back in sent[::-1]:
                rig.play(_edge(rig.q, q_back, step_pf, hold), guarded=False)
            sent = sent[:1]
            if try_replan():
                k = 1
                continue
            stopped = True
            break
        sent.append(rig.q.copy())
        if cfg.track_waypoints and k < wps.shape[0] - 1:
            err = predicted[ends[k - 1], -1, :2] - rig.backbone[-1, :2]
            jac_wp = _tip_jacobian(
                forward, rig.q_prev, rig.q, rig.backbone, rig.q, lower, upper, h, False, 1.0
            )
            step = _dls_step(jac_wp, err, scale, cfg.damping)
            step = np.clip(cfg.waypoint_gain * step, -max_step, max_step)
            offset = np.clip(offset + step, -max_offset, max_offset)
        k += 1
    rig.play(np.repeat(rig.q[None], settle_frames, 0), guarded=False)

    # Layer 2: goal servoing by cycles. Table friction holds the arm through a correction that
    # reverses its last motion, and a shallow retreat leaves a friction memory that shifts the
    # re-approached end; a retreat along the executed waypoints to the start erases it, so the
    # end of a cycle is a nearly repeatable function of its end set-point, which the
    # resolved-rate law servos (the model's Jacobian, or near the goal the arm's own, measured
    # by probe cycles; Broyden-corrected). A trust region keeps stick-slip
    # surprises from compounding: a try that does not bring the tip closer is not kept (the
    # next one starts from the best set-point again, with half the step), and the arm ends at
    # the best end set-point found (a last cycle returns there).
    approach_hold = hold + settle_frames
    w = cfg.theta_weight
    best_q, best_tip = rig.q.copy(), rig.backbone[-1].copy()
    distances = [float(env.goal.distance(best_tip))]
    radius = max_step
    jac: np.ndarray | None = None
    corrections = 0
    at_best = True
    path = sent[:-1] if cfg.retreat_to_start else sent[-2:-1]

    def move(q: np.ndarray, frames: int) -> bool:
        """One edge to q if the model predicts it clear; on a guard stop, back off."""
        nonlocal guard_stops
        if _safe_move(rig, forward, obstacles, plate_radius, q, 0) is None:
            return False
        q_from = rig.q.copy()
        if rig.play(_edge(rig.q, q, step_pf, frames)):
            return True
        guard_stops += 1
        rig.play(_edge(rig.q, q_from, step_pf, hold))
        return False

    def cycle() -> bool:
        """Retreat along `path` reversed (as deep as is clear), then play it forward to its
        last point, where the corrected end edge starts; False where that is not clear."""
        reached = len(path)
        for j in range(len(path) - 1, -1, -1):
            if not move(path[j], cfg.hold_frames if j == 0 else hold):
                break
            reached = j
        if reached == len(path):
            return False
        return all(move(q, hold) for q in path[reached + 1 :])

    def attempt(base: np.ndarray, step: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """One cycle to the end set-point base + step, the step halved (at most `max_halvings`
        times) until the model predicts the end edge clear; (set-point, measured tip pose
        (3,)), None where no such cycle is clear."""
        nonlocal corrections, at_best, jac
        if not cycle():
            return None
        at_best = False
        if jac is None:
            # The model's Jacobian of the end edge, from the measured state where it starts.
            jac = _tip_jacobian(
                forward, rig.q_prev, rig.q, rig.backbone, base, lower, upper, h, oriented, w
            )
        for _ in range(cfg.max_halvings + 1):
            q_end = np.clip(base + step, lower, upper)
            if _safe_move(rig, forward, obstacles, plate_radius, q_end, 0) is not None:
                break
            step = 0.5 * step
        else:
            return None
        if not move(q_end, approach_hold):
            return None
        corrections += 1
        tip = rig.backbone[-1].copy()
        distances.append(float(env.goal.distance(tip)))
        return q_end, tip

    def servo_done(tip: np.ndarray) -> bool:
        return bool(np.linalg.norm(_target(env, tip, w)) <= cfg.tolerance_m)

    budget = cfg.max_corrections if not stopped and path else 0
    # A tip already in the goal region stays: a cycle never returns exactly to the open-loop
    # end (hysteresis), so servoing there could only lose the goal.
    if budget and not env.goal.contains(best_tip) and not servo_done(best_tip):
        # The arm's own response: one cycle back to the open-loop end set-point (where cycles
        # start from, it ends a little elsewhere), then, with `measured_jacobian`, one probe
        # cycle per segment (the model's Jacobian is a poor guide where the model is far off).
        first = attempt(best_q, np.zeros_like(best_q))
        tip0 = None if first is None else first[1]
        if tip0 is not None:
            best_tip, at_best = tip0, True
        if (
            tip0 is not None
            and jac is not None
            and cfg.measured_jacobian
            and np.linalg.norm(_target(env, tip0, w)) <= cfg.probe_below_m
        ):
            step0 = _dls_step(jac, _target(env, tip0, w), scale, cfg.damping)
            hp = cfg.probe_fraction * scale
            for i in range(arm.n_segments):
                if corrections >= budget or servo_done(best_tip):
                    break
                sign = 1.0 if step0[i] >= 0 else -1.0
                if not lower[i] <= best_q[i] + sign * hp[i] <= upper[i]:
                    sign = -sign
                dq_probe = np.zeros_like(best_q)
                dq_probe[i] = sign * hp[i]
                probe = attempt(best_q, dq_probe)
                if probe is None:
                    continue
                q_probe, tip = probe
                if q_probe[i] == best_q[i]:
                    continue
                col = (_task(env, tip, w) - _task(env, tip0, w)) / (q_probe[i] - best_q[i])
                jac[:, i] = col
                if np.linalg.norm(_target(env, tip, w)) < np.linalg.norm(_target(env, best_tip, w)):
                    # Linearise about the better point from now on.
                    best_q, best_tip, tip0, at_best = q_probe, tip, tip, True
        while jac is not None and corrections < budget and not servo_done(best_tip):
            err = _target(env, best_tip, w)
            step = np.clip(cfg.gain * _dls_step(jac, err, scale, cfg.damping), -radius, radius)
            if np.all(np.abs(step) <= 1e-6 * scale):
                break
            tried = attempt(best_q, step)
            if tried is None:
                break
            q_new, tip = tried
            if np.array_equal(q_new, best_q):
                break
            # Broyden's secant update about the best point: the Jacobian, corrected by what
            # the arm did.
            dq = (q_new - best_q) / scale
            if cfg.secant_update:
                dy = _task(env, tip, w) - _task(env, best_tip, w)
                js = jac * scale[None, :]
                js += np.outer(dy - js @ dq, dq) / float(dq @ dq)
                jac = js / scale[None, :]
            if np.linalg.norm(_target(env, tip, w)) < np.linalg.norm(err):
                best_q, best_tip, at_best = q_new, tip, True
                radius = np.minimum(2.0 * radius, max_step)
            else:
                radius *= 0.5
    if not at_best:
        # Return to the best end set-point through a whole cycle (it ends where that try did).
        cycle()
        if move(best_q, approach_hold):
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
        guard_stops=guard_stops,
    )
