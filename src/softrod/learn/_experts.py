"""Scripted experts for the seed-002 tasks and PushCube (they stand in for a human teleoperator).

A seed-002 expert is a schedule of key poses: flange pose (position, rotation) and TDCR tendon
displacements at given times, computed from the target object's position at the start of the
episode. Between key poses the flange moves on a straight line (rotation by slerp) and the
tendon displacements change linearly; each step the arm's joint targets come from damped
least-squares inverse kinematics on the arm (warm-started, biased toward the home pose). The
action is seed 002's absolute command: 7 joint targets and 9 tendon displacements.

`PushExpert` (PushCube-v1) is closed-loop instead: each step it moves the neck's tip toward a
goal set by the cube and the target, by damped least squares on the tip's Jacobian with respect
to the commanded curvatures (see the class).

Experts read the environment's internals (privileged information, as a human operator sees the
scene), never its random generator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import mujoco
import numpy as np

from softrod.control import pcc_length_matrix
from softrod.rods import so3

__all__ = [
    "ArmIK",
    "KeyPose",
    "ScheduleExpert",
    "GraspExpert",
    "SwitchExpert",
    "PushExpert",
    "make_expert",
]

#: IK: damping lambda of the damped least squares [m, rad], iterations per step, null-space
#: gain toward the home pose, orientation-error weight [m/rad].
IK_DAMPING = 1e-3
IK_ITERS = 30
IK_NULL_GAIN = 0.05
IK_ROT_WEIGHT = 0.3


def _rot_error(target: np.ndarray, current: np.ndarray) -> np.ndarray:
    """Rotation vector (3,) [rad] taking `current` to `target` (world frame)."""
    # The body-frame error of current -> target, turned into the world frame.
    return current @ so3.log(current.T @ target)


def _slerp(r0: np.ndarray, r1: np.ndarray, w: float) -> np.ndarray:
    """Rotation (3, 3) a fraction w in [0, 1] of the way from r0 to r1 (quaternion slerp)."""
    q0, q1 = so3.matrix_to_quat(r0), so3.matrix_to_quat(r1)
    # The shorter of the two arcs.
    if np.dot(q0, q1) < 0:
        q1 = -q1
    theta = math.acos(min(1.0, abs(float(np.dot(q0, q1)))))
    if theta < 1e-9:
        q = q0
    else:
        q = (math.sin((1 - w) * theta) * q0 + math.sin(w * theta) * q1) / math.sin(theta)
    return so3.quat_to_matrix(q)


def _dls(jac: np.ndarray, err: np.ndarray, damping: float, gain: float = 1.0) -> np.ndarray:
    """Damped-least-squares step (n,) for a task error err (m,) with Jacobian jac (m, n):
    gain J^T (J J^T + damping^2 I)^-1 err (units of err / units of J's rows)."""
    lhs = jac @ jac.T + damping**2 * np.eye(jac.shape[0])
    return gain * jac.T @ np.linalg.solve(lhs, err)


def _null_projector(jac: np.ndarray) -> np.ndarray:
    """Projector (n, n) onto the null space of jac (m, n): I - J^+ J."""
    return np.eye(jac.shape[1]) - np.linalg.pinv(jac) @ jac


class ArmIK:
    """Damped least-squares IK of the flange pose over the arm joints of a TDCR-arm env."""

    def __init__(self, env: Any) -> None:
        self.model = env.model
        self.data = mujoco.MjData(env.model)
        self.q_adr = env._arm_q
        self.dof = env._arm_v
        self.body = env._flange
        self.home = np.asarray(env.arm.home, dtype=float)
        self.limits = env.joint_range
        self._jp = np.zeros((3, self.model.nv))
        self._jr = np.zeros((3, self.model.nv))

    def forward(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Flange (position (3,), rotation (3, 3)) at joint positions q."""
        self.data.qpos[self.q_adr] = q
        mujoco.mj_kinematics(self.model, self.data)
        return self.data.xpos[self.body].copy(), self.data.xmat[self.body].reshape(3, 3).copy()

    def solve(
        self, pos: np.ndarray, rot: np.ndarray, q0: np.ndarray, iters: int = IK_ITERS
    ) -> np.ndarray:
        """Joint positions (7,) [rad] putting the flange at (pos, rot), from q0."""
        q = np.asarray(q0, dtype=float).copy()
        for _ in range(iters):
            p, r = self.forward(q)
            err = np.concatenate([pos - p, IK_ROT_WEIGHT * _rot_error(rot, r)])
            if np.linalg.norm(err) < 1e-6:
                break
            mujoco.mj_comPos(self.model, self.data)
            mujoco.mj_jacBody(self.model, self.data, self._jp, self._jr, self.body)
            jac = np.vstack([self._jp[:, self.dof], IK_ROT_WEIGHT * self._jr[:, self.dof]])
            dq = _dls(jac, err, IK_DAMPING)
            # Null-space pull toward home keeps the elbow in a consistent posture.
            dq += _null_projector(jac) @ (IK_NULL_GAIN * (self.home - q))
            q = np.clip(q + dq, self.limits[:, 0], self.limits[:, 1])
        return q


@dataclass(frozen=True)
class KeyPose:
    """A key pose reached at time `t` [s]: flange position (3,) [m], rotation (3, 3), and
    tendon displacements (9,) [m]; `joint` see below."""

    t: float
    pos: np.ndarray
    rot: np.ndarray
    tendons: np.ndarray
    #: Reach this pose by interpolating joint positions (from the posture seed) instead of
    #: moving the flange on a straight line (for a change of arm configuration).
    joint: bool = False


class ScheduleExpert:
    """Follows a list of key poses (built by `plan` at reset) with IK; see the module."""

    #: Arm posture (7,) [rad] that seeds joint-space key poses and biases the IK's null space;
    #: None: the arm's home pose.
    posture: tuple[float, ...] | None = None
    #: Timing between key poses: "linear" (constant speed: the commanded pose always leads the
    #: arm, so a cloned policy does not stall at slow ends of moves) or "cosine" (smooth ends).
    profile = "linear"

    def __init__(self, env: Any) -> None:
        self.env = env.unwrapped
        self.ik = ArmIK(self.env)
        if self.posture is not None:
            self.ik.home = np.asarray(self.posture, dtype=float)
        self.keys: list[KeyPose] = []
        self._q = self.ik.home.copy()
        self._q_keys: list[np.ndarray] = []
        #: Correction added to the flange position from time `offset_from` on [m] (feedback).
        self.offset = np.zeros(3)
        self.offset_from = math.inf

    def plan(self) -> list[KeyPose]:
        raise NotImplementedError

    def reset(self) -> None:
        """Plan from the current episode (call after `env.reset`)."""
        self._q = self.env.joint_positions()
        self.offset = np.zeros(3)
        p, r = self.ik.forward(self._q)
        self.keys = [KeyPose(0.0, p, r, np.zeros(9)), *self.plan()]
        # Joint-space key poses: solve their IK now, from the posture seed.
        self._q_keys = [self._q.copy()]
        for key in self.keys[1:]:
            seed = self.ik.home if key.joint else self._q_keys[-1]
            self._q_keys.append(self.ik.solve(key.pos, key.rot, seed, iters=4 * IK_ITERS))

    def _segment(self, t: float) -> tuple[int, float]:
        keys = self.keys
        if t >= keys[-1].t:
            return len(keys) - 1, 1.0
        i = max(j for j in range(len(keys)) if keys[j].t <= t)
        w = (t - keys[i].t) / (keys[i + 1].t - keys[i].t)
        return i, (0.5 - 0.5 * math.cos(math.pi * w)) if self.profile == "cosine" else w

    def target(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Interpolated (flange position, rotation, tendons) at time t [s]."""
        keys = self.keys
        shift = self.offset if t >= self.offset_from else 0.0
        if t >= keys[-1].t:
            k = keys[-1]
            return k.pos + shift, k.rot, k.tendons
        i, w = self._segment(t)
        a, b = keys[i], keys[i + 1]
        pos = (1 - w) * a.pos + w * b.pos + shift
        return pos, _slerp(a.rot, b.rot, w), (1 - w) * a.tendons + w * b.tendons

    def act(self, obs: np.ndarray | None = None) -> np.ndarray:
        """The next action (16,): arm joint targets [rad] and tendon displacements [m]."""
        t = (self.env._step_count + 1) * self.env.dt
        pos, rot, tendons = self.target(t)
        i, w = self._segment(t)
        if i + 1 < len(self.keys) and self.keys[i + 1].joint:
            self._q = (1 - w) * self._q_keys[i] + w * self._q_keys[i + 1]
        else:
            self._q = self.ik.solve(pos, rot, self._q)
        a = np.concatenate([self._q, tendons])
        return np.clip(a, self.env.action_space.low, self.env.action_space.high).astype(np.float32)

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        return self.act(obs)


def _tendons_for(env: Any, kappa: Any) -> np.ndarray:
    """Tendon displacements (9,) [m] giving per-segment curvatures kappa (3, 2) [1/m] (toward
    body x, y) by the constant-curvature map (positive pulls in)."""
    c = pcc_length_matrix(env.tdcr)
    return -(c @ np.asarray(kappa, dtype=float).ravel())


#: Grasp geometry [CHOICE, tuned in simulation]: segment 1 bends 90 deg so that segments 2-3
#: lie horizontally; they pass the cylinder at this lateral distance between the axes [m]
#: (cylinder radius 20 mm + disk radius 5 mm + 6 mm clearance), then curl around it with this
#: curvature [1/m] (tighter than the 25 mm wrap radius, so the coil squeezes); the coil sits
#: this far above the cylinder centre [m]; lift [m]; height of the cylinder over the bin [m].
GRASP_OFFSET = 0.031
GRASP_KAPPA = 60.0
GRASP_HEIGHT = 0.02
GRASP_LIFT = 0.15
CARRY_HEIGHT = 0.32


class GraspExpert(ScheduleExpert):
    """WholeBodyGrasp-v0. With the flange pointing down, segment 1 bends forward by 90 deg so
    that segments 2-3 are horizontal; the arm slides them beside the cylinder, they curl around
    it, the arm lifts, carries the coiled cylinder over the bin, and the TDCR uncurls."""

    lateral = GRASP_OFFSET
    kappa = GRASP_KAPPA
    height = GRASP_HEIGHT
    lift = GRASP_LIFT
    carry_height = CARRY_HEIGHT
    #: Key-pose times [s]: above-behind, behind, beside, curled, lifted, over the bin, released.
    times = (1.5, 2.5, 4.0, 5.5, 7.0, 10.0, 11.0)

    def plan(self) -> list[KeyPose]:
        from softrod.envs.whole_body_grasp_v0 import BIN_CENTER

        env = self.env
        c = env.cylinder_position()
        seg1 = env.tdcr.segments[0].length
        r1 = seg1 / (math.pi / 2)  # radius of segment 1's quarter circle
        # Flange z down, x along world +x (so "toward body +x" is forward), y along world -y.
        rot = np.array([[1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, -1.0]])
        # Segment 1 ends (horizontal, heading +x) beside the cylinder centre.
        end1 = np.array([c[0], c[1] - self.lateral, c[2] + self.height])
        flange = end1 + np.array([-r1, 0.0, r1])
        bend = _tendons_for(env, [[1.0 / r1, 0.0], [0.0, 0.0], [0.0, 0.0]])
        # Curl toward world +y, which is body -y (body y is preserved along segment 1's bend).
        wrap = _tendons_for(env, [[1.0 / r1, 0.0], [0.0, -self.kappa], [0.0, -self.kappa]])
        back = flange - np.array([0.10, 0.0, 0.0])
        lifted = flange + np.array([0.0, 0.0, self.lift])
        offset = c - flange
        over_bin = np.array([BIN_CENTER[0], BIN_CENTER[1], self.carry_height]) - offset
        t = self.times
        return [
            KeyPose(t[0], back + np.array([0.0, 0.0, 0.10]), rot, bend),
            KeyPose(t[1], back, rot, bend),
            KeyPose(t[2], flange, rot, bend),
            KeyPose(t[3], flange, rot, wrap),
            KeyPose(t[4], lifted, rot, wrap),
            KeyPose(t[5], over_bin, rot, wrap),
            KeyPose(t[6], over_bin, rot, np.zeros(9)),
        ]


#: Switch [CHOICE, tuned in simulation]: the flange points horizontally at the plate with the
#: TDCR this high above the plate's top edge [m]; segment 1 ends this far from the front face
#: [m] (negative: above the plate); segments 2-3 then curl down by this total angle [rad], a
#: hook around the plate's top edge whose tip hangs over the lever; the arm lowers the flange
#: by `press` [m]: the hook braces on the edge and its tip pushes the lever down.
SWITCH_HEIGHT = 0.045
SWITCH_OVERHANG = -0.04
SWITCH_HOOK = 2.36
SWITCH_PRESS = 0.05
#: Hook angle at the end of the press [rad]: curling further sweeps the tip down the lever.
SWITCH_HOOK_PRESS = 2.6
#: Feed-forward shift of the flange toward the plate after the hook forms [m] (see SwitchExpert).
SWITCH_SHIFT = 0.019
#: The tip is aligned over this fraction of the lever's length from its hinge.
SWITCH_AIM = 0.5
#: Lever length [m] (softrod.envs.flip_switch_v0.LEVER).
LEVER_LENGTH = 0.02
#: Arm posture for the horizontal flange over the switch box (found by a random-restart IK
#: search; >= 5 % joint-range margin over the whole box).
SWITCH_POSTURE = (-1.333, 0.957, 1.911, -1.982, -2.431, 2.376, -1.599)


class SwitchExpert(ScheduleExpert):
    """FlipSwitch-v0. The arm holds the TDCR horizontally behind the plate and slides it over
    the plate's top edge; segments 2-3 curl down into a hook around the edge, in front of the
    face; lowering the flange braces the hook on the edge while its tip pushes the lever down;
    then the arm rises, the TDCR straightens and pulls back until the tip is behind the plate."""

    posture = SWITCH_POSTURE
    height = SWITCH_HEIGHT
    overhang = SWITCH_OVERHANG
    hook = SWITCH_HOOK
    hook_press = SWITCH_HOOK_PRESS
    press = SWITCH_PRESS
    #: Key-pose times [s]: behind, over the plate, hook, shifted, pressed, cleared, raised,
    #: straight, behind.
    times = (2.5, 4.0, 5.0, 5.4, 6.6, 7.2, 8.0, 8.5, 10.0)
    #: Once the hook has formed, the flange moves `shift` [m] toward the plate before pressing
    #: (feed-forward, no pause: a cloned policy learns it easily). The tip then hangs over the
    #: lever; measured: presses succeed for shifts of 13-25 mm (feedback alignment to the
    #: lever's middle converged to 23 mm, the same for every switch pose); 19 mm is the middle.
    shift = SWITCH_SHIFT
    #: Optional feedback: for `align_time` [s] after `hook` the flange also follows the tip's
    #: offset from the lever with this gain per step (0: off).
    align_time = 0.6
    #: Move away from the plate face after pressing [m]; final drop behind the plate [m].
    clear = 0.03
    drop = 0.10
    #: Point of the lever the tip is aligned over, as a fraction of its length from the hinge,
    #: and the feedback gain of the alignment per step.
    aim = SWITCH_AIM
    align_gain = 0.0
    #: The hook forms and aligns this much higher [m], with its tip clear above the lever.
    hover = 0.015

    def act(self, obs: np.ndarray | None = None) -> np.ndarray:
        t = (self.env._step_count + 1) * self.env.dt
        if self.align_gain > 0 and self.times[2] <= t < self.times[2] + self.align_time:
            # Feedback: move the flange so that the tip hangs over the aimed lever point.
            env = self.env
            hinge = env.switch_position()
            ang = env.toggle_angle()
            goal = hinge + np.array([self.aim * LEVER_LENGTH * math.cos(ang), 0.0, 0.0])
            err = goal - env.tip_position()
            self.offset[:2] = np.clip(self.offset[:2] + self.align_gain * err[:2], -0.03, 0.03)
        return super().act(obs)

    def plan(self) -> list[KeyPose]:
        from softrod.envs.flip_switch_v0 import PLATE_HALF

        env = self.env
        s = env.switch_position()
        seg = [sg.length for sg in env.tdcr.segments]
        # Flange z along +x, x down (so "toward body +x" bends down), y along +y.
        rot = np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]])
        top = s[2] + PLATE_HALF[2]
        back = s[0] - 2 * PLATE_HALF[0]
        z = top + self.height
        x_over = s[0] + self.overhang - seg[0]
        x_behind = back - env.tdcr.total_length - 0.06
        zero = np.zeros(9)
        kappa = self.hook / (seg[1] + seg[2])
        hook = _tendons_for(env, [[0.0, 0.0], [kappa, 0.0], [kappa, 0.0]])
        kappa = self.hook_press / (seg[1] + seg[2])
        pressed = _tendons_for(env, [[0.0, 0.0], [kappa, 0.0], [kappa, 0.0]])
        t = self.times
        self.offset_from = t[2]
        over = np.array([x_over, s[1], z])
        return [
            KeyPose(t[0], np.array([x_behind, s[1], z]), rot, zero, joint=True),
            KeyPose(t[1], over, rot, zero),
            KeyPose(t[2], over + np.array([0.0, 0.0, self.hover]), rot, hook),
            KeyPose(t[3], over + np.array([self.shift, 0.0, self.hover]), rot, hook),
            KeyPose(t[4], over + np.array([self.shift, 0.0, -self.press]), rot, pressed),
            # Clear the pressed lever (the tip is under its end) before rising.
            KeyPose(
                t[5], over + np.array([self.shift + self.clear, 0.0, -self.press]), rot, pressed
            ),
            KeyPose(t[6], over + np.array([self.shift + self.clear, 0.0, 0.03]), rot, hook),
            KeyPose(t[7], over + np.array([self.shift + self.clear, 0.0, 0.03]), rot, zero),
            # Back and down: the final pose must differ from the start pose behind the plate,
            # or a cloned policy that cannot see the toggle starts over (measured).
            KeyPose(t[8], np.array([x_behind, s[1], z - self.drop]), rot, zero),
        ]


#: Push [CHOICE, tuned in simulation on seeds 0-39]: tip-centre height while pushing [m] (the
#: cube's half height 25 mm + 5 mm); the tip passes over the cube this high [m]; the pre-push
#: point lies this far behind the cube's back face [m]; while pushing, the tip's goal is this
#: far inside the cube [m] (the push force grows with it); the tip may stray this far from the
#: line through the cube to the target before the expert lifts it and comes down again [m];
#: it reaches a waypoint within this distance [m]; it stops pushing once the cube is this close
#: to the target [m] and resumes if the cube is pushed beyond `PUSH_RESUME` [m]; the descent
#: ends this close above `PUSH_HEIGHT` [m] (the tip settles the rest while pushing); the tip
#: counts as beside the cube (not behind it) once it is this close to the back face's plane [m].
PUSH_HEIGHT = 0.03
PUSH_CLEAR_HEIGHT = 0.12
PUSH_BACKOFF = 0.03
PUSH_LEAD = 0.05
PUSH_LATERAL = 0.045
PUSH_ARRIVE = 0.03
PUSH_STOP = 0.015
PUSH_RESUME = 0.03
PUSH_DESCENT_TOL = 0.015
PUSH_BESIDE = 0.01
#: Tip control: damping lambda of the least squares [m], gain per step (the fraction of the
#: error corrected: 1 overshoots, the tip lags the commanded shape), null-space pull of the
#: curvatures toward straight per step, and the tip-velocity damping [s].
PUSH_DAMPING = 0.02
PUSH_GAIN = 0.8
PUSH_NULL_GAIN = 0.05
PUSH_VELOCITY_GAIN = 0.05


class PushExpert:
    """PushCube-v1, closed loop. Let u be the unit vector from the cube to the target (ground
    plane). The tip goes to a point above the pre-push point, `PUSH_BACKOFF` behind the cube's
    back face on the line through u, comes down to `PUSH_HEIGHT`, then pushes: its goal is the
    cube's back face moved `PUSH_LEAD` along u, re-aimed every step as the cube moves. If the
    tip strays from the line (more than `PUSH_LATERAL`) or ends up beside the cube, it starts
    over from above; once the cube is within `PUSH_STOP` of the target it lifts back and holds.

    The tip follows its goal by damped least squares on J = dtip/dkappa, the tip site's
    Jacobian over the chain's joints (MuJoCo, at the current, sagging shape) times the map
    from segment curvature to joint angle (each joint of a segment turns by the curvature times
    the joint spacing); the curvature change is the action (in units of `kappa_rate`).
    """

    approach, descend, push, hold = range(4)

    def __init__(self, env: Any) -> None:
        self.env = env.unwrapped
        e, m = self.env, self.env.model
        n_links = len(e.chain.link_bodies)
        per_segment = n_links // len(e.robot.segments)
        spacing = e.robot.total_length / n_links
        dofs, rows = [], []
        for i, name in enumerate(e.chain.link_bodies):
            seg = i // per_segment
            body = m.body(name).id
            for j in range(m.body_jntadr[body], m.body_jntadr[body] + m.body_jntnum[body]):
                row = np.zeros(e.n_commands)
                axis = m.jnt_axis[j]
                # Bending toward body +x turns about +y; toward body +y turns about -x.
                if axis[1] == 1.0:
                    row[2 * seg] = spacing
                elif axis[0] == 1.0:
                    row[2 * seg + 1] = -spacing
                dofs.append(m.jnt_dofadr[j])
                rows.append(row)
        #: Joint angle per commanded curvature, (n_joints, 6) [rad m].
        self.joint_map = np.array(rows)
        self._dofs = np.array(dofs)
        self._jp = np.zeros((3, m.nv))
        self.phase = self.approach
        self._u = np.array([1.0, 0.0])

    def reset(self) -> None:
        """Start a new episode (call after `env.reset`)."""
        self.phase = self.approach

    def tip_step(self, goal: np.ndarray) -> np.ndarray:
        """Action (6,) moving the tip toward `goal` (3,) [m] (see the class)."""
        e = self.env
        mujoco.mj_jacSite(e.model, e.data, self._jp, None, e._tip_site)
        jac = self._jp[:, self._dofs] @ self.joint_map
        err = goal - e.tip_position() - PUSH_VELOCITY_GAIN * e.tip_velocity()
        dk = _dls(jac, err, PUSH_DAMPING, PUSH_GAIN)
        dk -= _null_projector(jac) @ (PUSH_NULL_GAIN * e.kappa)
        return np.clip(dk / e.kappa_rate, -1.0, 1.0).astype(np.float32)

    def act(self, obs: np.ndarray | None = None) -> np.ndarray:
        """The next action (6,): curvature-rate commands in [-1, 1]."""
        from softrod.envs.push_cube_v1 import CUBE_HALF

        e = self.env
        cube = e.data.xpos[e._cube][:2].copy()
        to_target = e.cube_target - cube
        dist = float(np.linalg.norm(to_target))
        if self.phase != self.hold and dist > 1e-9:
            self._u = to_target / dist
        u = self._u
        tip = e.tip_position()
        # Tip relative to the cube: along the push line and across it [m].
        rel = tip[:2] - cube
        along, across = rel @ u, rel @ np.array([-u[1], u[0]])
        reach = CUBE_HALF + float(e.robot.segments[-1].disk_radius or 0.0)
        pre = cube - u * (reach + PUSH_BACKOFF)
        if self.phase == self.hold and dist > PUSH_RESUME:
            self.phase = self.approach
        if self.phase == self.push and dist < PUSH_STOP:
            self.phase = self.hold
        if self.phase == self.push and (abs(across) > PUSH_LATERAL or along > -reach + PUSH_BESIDE):
            self.phase = self.approach
        if self.phase == self.approach and np.linalg.norm(tip[:2] - pre) < PUSH_ARRIVE:
            self.phase = self.descend
        if self.phase == self.descend and tip[2] < PUSH_HEIGHT + PUSH_DESCENT_TOL:
            self.phase = self.push
        if self.phase == self.approach:
            goal = np.array([*pre, PUSH_CLEAR_HEIGHT])
        elif self.phase == self.descend:
            goal = np.array([*pre, PUSH_HEIGHT])
        elif self.phase == self.push:
            goal = np.array([*(cube - u * (reach - PUSH_LEAD)), PUSH_HEIGHT])
        else:
            goal = np.array([*(cube - u * (reach + PUSH_BACKOFF)), PUSH_CLEAR_HEIGHT])
        return self.tip_step(goal)

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        return self.act(obs)


EXPERTS: dict[str, Any] = {
    "softrod/WholeBodyGrasp-v0": GraspExpert,
    "softrod/FlipSwitch-v0": SwitchExpert,
    "softrod/PushCube-v1": PushExpert,
}


def make_expert(env: Any) -> ScheduleExpert | PushExpert:
    """The scripted expert of an environment (by its registered id)."""
    env_id = env.spec.id if getattr(env, "spec", None) is not None else None
    if env_id not in EXPERTS:
        raise ValueError(f"no scripted expert for {env_id!r}; experts: {sorted(EXPERTS)}")
    return EXPERTS[env_id](env)
