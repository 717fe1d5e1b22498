"""A pinch/power grasp trial with a two-finger soft gripper in MuJoCo (SoMo §V-A, ALGORITHMS §B.5).

Scene (world z up): a box object of `object_width` (along y, between the fingers) x 20 mm (along
the approach axis x) x 60 mm high stands on the floor at the origin. A kinematic hand (a mocap
body) carries two antipodal empirical fingers (`teeple_finger`: 0.1 m, 20 links, an actuated
proximal part and a passive distal part of `distal_ratio` of the length), mounted 0.1 m ahead of
the hand's origin at y = +-25 mm, pointing along +x and splayed outward by 20 deg so that the
widest object (120 mm) fits between the open fingertips.

Trial (`GraspTrialConfig`): the hand comes in along +x to `centering` (hand origin to object
centre, as in SoMo's design study), the proximal joints are driven with the torque equivalent
to `pressure` (100 kPa), the hand lifts `lift` (75 mm) and holds. Classification [CHOICE, §B.5]:

* `none`: the object rose less than half the lift;
* `pinch`: lifted, and every finger-object contact is on the distal part of the finger
  (arc length >= (1 - max(distal_ratio, TIP_FRACTION)) L, the fingertip region when there is no
  passive part);
* `power`: lifted with a contact on the proximal part.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from softrod.somo._empirical import EmpiricalChain, add_empirical_chain, teeple_finger

__all__ = [
    "GraspTrialConfig",
    "GraspOutcome",
    "build_grasp_scene",
    "run_grasp_trial",
    "grasp_trial",
]

#: Distal fraction of the finger that counts as "fingertip" for pinch grasps when the finger has
#: no passive distal part (the last 3 of 20 links).
TIP_FRACTION = 0.15
#: Fingers are mounted this far ahead of the hand origin along x [m] (SoMo's study: 2.0 units at
#: world scale 20).
FINGER_OFFSET = 0.1
#: Finger base half-spacing [m] and outward splay [rad].
FINGER_HALF_SPACING = 0.025
FINGER_SPLAY = math.radians(20.0)
#: Object thickness along the approach axis and height [m], mass [kg] (SoMo: a 20 mm thick box).
OBJECT_THICKNESS = 0.02
OBJECT_HEIGHT = 0.06
OBJECT_MASS = 0.02
#: Hand mass [kg] and its servo gains [N/m], [N s/m]: a 0.5 kg hand at 50 Hz, critically damped,
#: follows its path within ~0.1 mm under the grasp loads (< 1 N).
HAND_MASS = 0.5
HAND_KP = HAND_MASS * (2 * math.pi * 50.0) ** 2
HAND_KV = 2.0 * math.sqrt(HAND_KP * HAND_MASS)


class GraspTrialConfig(BaseModel):
    """Timing and physics of one grasp trial (seconds, SI)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    approach_distance: float = Field(default=0.05, description="Hand travel before centring [m].")
    approach_time: float = Field(default=0.5, description="Time of the approach [s].")
    close_time: float = Field(default=0.8, description="Torque ramp to full pressure [s].")
    settle_time: float = Field(default=0.4, description="Hold before lifting [s].")
    lift: float = Field(default=0.075, description="Lift height [m].")
    lift_time: float = Field(default=1.0, description="Time of the lift [s].")
    hold_time: float = Field(default=0.5, description="Hold after the lift [s].")
    pressure: float = Field(default=100e3, description="Actuation pressure [Pa].")
    n_links: int = Field(default=20, description="Links per finger.")
    timestep: float = Field(default=0.002, description="Simulation timestep [s].")
    friction: float = Field(default=1.5, description="Sliding friction of fingers and object.")

    @property
    def total_time(self) -> float:
        return (
            self.approach_time
            + self.close_time
            + self.settle_time
            + self.lift_time
            + self.hold_time
        )


class GraspOutcome(BaseModel):
    """Result of a grasp trial: grasp type, object rise [m], finger-object contacts."""

    grasp: str
    lifted: bool
    object_rise: float
    n_contacts: int
    min_contact_s: float | None
    distal_start_s: float
    object_tilt_deg: float


def _finger_quat(side: int) -> tuple[float, float, float, float]:
    """Mount orientation: chain +z along the splayed approach axis, closing toward y = 0."""
    import mujoco

    a = side * FINGER_SPLAY  # left finger (side +1) splays toward +y
    z = np.array([math.cos(a), math.sin(a), 0.0])
    x = np.array([0.0, 0.0, -1.0]) if side > 0 else np.array([0.0, 0.0, 1.0])
    y = np.cross(z, x)
    mat = np.column_stack([x, y, z])
    q = np.zeros(4)
    mujoco.mju_mat2Quat(q, mat.reshape(-1))
    return (float(q[0]), float(q[1]), float(q[2]), float(q[3]))


def build_grasp_scene(
    distal_ratio: float, object_width: float, centering: float, config: GraspTrialConfig
) -> tuple[Any, dict[str, Any]]:
    """(MjSpec, names) of the gripper scene at the start of the approach."""
    import mujoco

    from softrod.mujoco import MujocoOptions
    from softrod.mujoco._builder import CONTYPE_OBJECT, configure_spec, soft_collision_bits

    if not 0.0 <= distal_ratio < 1.0:
        raise ValueError(f"distal_ratio must be in [0, 1), got {distal_ratio}")
    if not object_width > 0:
        raise ValueError(f"object_width must be > 0 [m], got {object_width}")
    spec = mujoco.MjSpec()
    spec.modelname = "pinch_grasp"
    configure_spec(spec, MujocoOptions(timestep=config.timestep, integrator="discrete"))
    world = spec.worldbody
    world.add_light(pos=[0, 0, 1.0], dir=[0, 0, -1])
    world.add_geom(
        name="floor",
        type=mujoco.mjtGeom.mjGEOM_PLANE,
        size=[1, 1, 0.01],
        contype=CONTYPE_OBJECT,
        conaffinity=CONTYPE_OBJECT,
        friction=[config.friction, 0.005, 0.0001],
    )
    obj = world.add_body(name="object", pos=[0, 0, OBJECT_HEIGHT / 2])
    obj.add_freejoint(name="object_free")
    obj.add_geom(
        name="object_geom",
        type=mujoco.mjtGeom.mjGEOM_BOX,
        size=[OBJECT_THICKNESS / 2, object_width / 2, OBJECT_HEIGHT / 2],
        mass=OBJECT_MASS,
        contype=CONTYPE_OBJECT,
        conaffinity=CONTYPE_OBJECT,
        friction=[config.friction, 0.005, 0.0001],
        rgba=[0.9, 0.6, 0.2, 1],
    )
    start_x = -(centering + config.approach_distance)
    # The hand is a dynamic body on x and z slides driven by stiff position servos (a mocap
    # body would teleport the fingers, and contacts would see no slip to resist with friction).
    hand = world.add_body(name="hand", pos=[0, 0, OBJECT_HEIGHT / 2], gravcomp=1.0)
    hand.add_geom(
        type=mujoco.mjtGeom.mjGEOM_BOX,
        size=[0.01, 0.04, 0.015],
        pos=[FINGER_OFFSET - 0.01, 0, 0],
        contype=0,
        conaffinity=0,
        rgba=[0.3, 0.3, 0.3, 1],
        mass=HAND_MASS,
    )
    for axis, name in (([1.0, 0.0, 0.0], "hand_x"), ([0.0, 0.0, 1.0], "hand_z")):
        hand.add_joint(name=name, type=mujoco.mjtJoint.mjJNT_SLIDE, axis=axis)
        servo = spec.add_actuator(name=name, target=name)
        servo.trntype = mujoco.mjtTrn.mjTRN_JOINT
        servo.set_to_position(kp=HAND_KP, kv=HAND_KV)
    finger = teeple_finger(distal_ratio, n_links=config.n_links)
    finger = finger.model_copy(update={"friction": config.friction})
    chains: list[EmpiricalChain] = []
    for i, side in enumerate((1, -1)):
        contype, conaffinity = soft_collision_bits(i)
        chains.append(
            add_empirical_chain(
                spec,
                hand,
                finger,
                prefix=f"f{i}_",
                pos=(FINGER_OFFSET, side * FINGER_HALF_SPACING, 0.0),
                quat=_finger_quat(side),
                contype=contype,
                conaffinity=conaffinity,
            )
        )
    return spec, {"chains": chains, "finger": finger, "start_x": start_x}


def _hand_target(t: float, start_x: float, cfg: GraspTrialConfig) -> tuple[float, float]:
    """Hand (x, z offset) at time t: approach along +x, then, after closing and settling, lift."""
    x = start_x + cfg.approach_distance * min(t / cfg.approach_time, 1.0)
    t_lift = cfg.approach_time + cfg.close_time + cfg.settle_time
    z = cfg.lift * float(np.clip((t - t_lift) / cfg.lift_time, 0.0, 1.0))
    return x, z


def run_grasp_trial(
    distal_ratio: float,
    object_width: float,
    centering: float,
    config: GraspTrialConfig | None = None,
) -> GraspOutcome:
    """Simulate one trial (module docstring) and classify the grasp."""
    import mujoco

    cfg = config or GraspTrialConfig()
    spec, names = build_grasp_scene(distal_ratio, object_width, centering, cfg)
    model = spec.compile()
    data = mujoco.MjData(model)
    chains: list[EmpiricalChain] = names["chains"]
    finger = names["finger"]
    act_ids = [model.actuator(n).id for ch in chains for n in ch.actuators]
    torque = finger.actuators[0].torque(cfg.pressure)
    obj_body = model.body("object").id
    obj_geom = model.geom("object_geom").id
    hand_x, hand_z = model.actuator("hand_x").id, model.actuator("hand_z").id
    start_x = names["start_x"]
    data.qpos[model.jnt_qposadr[model.joint("hand_x").id]] = start_x
    mujoco.mj_forward(model, data)
    z0 = float(data.xpos[obj_body][2])
    n_steps = int(round(cfg.total_time / cfg.timestep))
    for _ in range(n_steps):
        t = data.time
        data.ctrl[hand_x], data.ctrl[hand_z] = _hand_target(t, start_x, cfg)
        ramp = float(np.clip((t - cfg.approach_time) / cfg.close_time, 0.0, 1.0))
        data.ctrl[act_ids] = torque * ramp
        mujoco.mj_step(model, data)
    if not np.all(np.isfinite(data.qpos)):
        raise RuntimeError("grasp trial diverged (non-finite state)")

    # Contacts between finger links and the object.
    body_s: dict[int, float] = {}
    for ch in chains:
        for name, (s0, s1) in zip(ch.bodies, ch.link_s, strict=True):
            body_s[model.body(name).id] = 0.5 * (s0 + s1)
    contact_s: list[float] = []
    for c in data.contact[: data.ncon]:
        g1, g2 = int(c.geom1), int(c.geom2)
        if obj_geom not in (g1, g2):
            continue
        other = model.geom_bodyid[g2 if g1 == obj_geom else g1]
        if other in body_s:
            contact_s.append(body_s[other])
    rise = float(data.xpos[obj_body][2] - z0)
    lifted = rise > 0.5 * cfg.lift
    L = finger.length
    distal_start = (1.0 - max(distal_ratio, TIP_FRACTION)) * L
    if not lifted:
        grasp = "none"
    elif contact_s and min(contact_s) >= distal_start - 1e-9:
        grasp = "pinch"
    else:
        grasp = "power"
    zaxis = data.xmat[obj_body].reshape(3, 3)[:, 2]
    tilt = math.degrees(math.acos(float(np.clip(zaxis[2], -1.0, 1.0))))
    return GraspOutcome(
        grasp=grasp,
        lifted=lifted,
        object_rise=rise,
        n_contacts=len(contact_s),
        min_contact_s=min(contact_s) if contact_s else None,
        distal_start_s=distal_start,
        object_tilt_deg=tilt,
    )


def grasp_trial(point: Any) -> dict[str, Any]:
    """Sweep task `grasp_trial`: inputs `distal_ratio`, `object_width` [m], `centering` [m];
    options: `GraspTrialConfig` fields."""
    inputs = dict(point.inputs)
    missing = [k for k in ("distal_ratio", "object_width", "centering") if k not in inputs]
    if missing:
        raise ValueError(f"grasp_trial: input {missing[0]!r} is required")
    cfg = GraspTrialConfig.model_validate(point.options)
    out = run_grasp_trial(
        float(inputs["distal_ratio"]),
        float(inputs["object_width"]),
        float(inputs["centering"]),
        cfg,
    )
    return out.model_dump()
