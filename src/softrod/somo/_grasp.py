"""A pinch/power grasp trial with a two-finger soft gripper in MuJoCo (SoMo §V-A, ALGORITHMS §B.5).

The scene follows SoMo's released study code (GrauleM/somo, examples/design_studies/
region_of_acquisition: `2seg_finger_def.yaml`, `sweeps/grid_dsr.yaml`, `run_single.py`, the
`cube_60mm` object set), converted from world scale 20 to SI. World z is up; the hand approaches
along +x and the object's centre is at the origin.

* Object: a 20 g box resting on the floor, `object_width` along the approach axis x (10-120 mm),
  `OBJECT_SPAN` = 60 mm across the fingers (y) and 60 mm high (SoMo's `CubeLifeSize_v2_60_<w>`:
  the "20 mm-thick box" of SoMo's Fig. 6 is width 20). Its inertia is the box's own (SoMo's URDF
  gives 1.0 in scaled units, 200-400x a 20 g box's, so that box all but cannot tilt or tip
  within a trial; we keep the physical value).
* Fingers: two `teeple_finger`s (0.1 m, 20 links of 5 mm, 23 mm tall x 17 mm thick links, an
  actuated proximal part and a passive distal part of `distal_ratio` of the length, distal part
  `SOMO_DISTAL_STIFFNESS_SCALE` as stiff), horizontal, bending in the horizontal plane, their
  bases at y = +-`FINGER_HALF_SPACING` (25 mm) and splayed outward by `FINGER_SPLAY` (15 deg), at
  `FINGER_HEIGHT` (35 mm) above the floor: SoMo's finger poses (+-0.5, euler 15 deg) and hand
  height (0.2 + 0.5 units). The fingers collide with each other, the object and the floor.
* Centring: `centering` is the distance along x from the hand origin to the object centre; the
  finger bases are `FINGER_OFFSET` (45 mm) ahead of the hand origin [CHOICE]. SoMo's code sweeps
  the base-to-object distance over 25-130 mm (hand x -1.5..0.6 units plus the 2.0-unit finger
  offset) while the paper reports centring 70-180 mm: the two agree when the centring reference
  sits 45 mm behind the finger bases.
* Actuation: every proximal grasp-axis joint gets the torque equivalent to `pressure` (100 kPa):
  M = F_b L = 0.75 N x 0.1 m = 0.075 N m (eq. 9), with the finger's calibrated stiffness (rule
  "tip"). SoMo's script applies 60 scaled units (0.15 N m) to joints twice as stiff (eq. 8,
  §B Ambiguity 1): the same free curl, twice the squeeze.

* Contact: one sliding friction for fingers, object and floor, 1.5 [CHOICE] (silicone on
  plastic, ~1-2). SoMo sets 2.0 on both bodies and Bullet multiplies them (4.0); with MuJoCo's
  pyramidal cone that high a coefficient softens the normal direction (the box sinks ~7 mm into
  the floor), so it is not used. MuJoCo's default contact softness (solref 20 ms) and a 2 ms
  step: halving the step keeps 403 of 414 classifications (the rest lie on region boundaries).

Trial (`GraspTrialConfig`): the hand starts `approach_distance` (100 mm, as SoMo's) behind the
centring position and moves in (open fingers that overlap the object push it along, as in
SoMo's script); the proximal torque ramps to full; the hand lifts `lift` (75 mm) and holds. The
phases take 1.0 + 0.8 + 0.4 + 1.0 + 0.5 s (SoMo: a 7 s task, 1 s approach); approach and lift
are smoothstep moves (peak 0.15 m/s and 0.11 m/s, peak acceleration 0.6 m/s^2 and 0.45 m/s^2,
< 7 % of g), the finger's first mode (~10 Hz, damping time 10 ms) settles within the 0.4 s
hold before the lift.
Classification [CHOICE, §B.5], from the finger-object contacts at the end of the hold:

* `none`: the object rose less than half the lift (`LIFT_FRACTION`), or nothing touches it;
* `pinch`: lifted, and the grip's centre of pressure (the normal-force-weighted mean arc length
  of the contacts, SoMo's `mean_link` label made force-weighted) lies on the passive distal part,
  s >= (1 - max(distal_ratio, TIP_FRACTION)) L (the fingertip region when there is no passive
  part);
* `power`: lifted, centre of pressure on the proximal part (the object is held along the
  actuated segments).
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from softrod.description import Spec
from softrod.rods import so3
from softrod.somo._empirical import (
    SOMO_DISTAL_STIFFNESS_SCALE,
    EmpiricalChain,
    add_empirical_chain,
    teeple_finger,
)

__all__ = [
    "GraspTrialConfig",
    "GraspOutcome",
    "build_grasp_scene",
    "run_grasp_trial",
    "grasp_trial",
]

#: Distal fraction of the finger that counts as "fingertip" for pinch grasps when the finger has
#: a shorter (or no) passive distal part: the last 3 of 20 links.
TIP_FRACTION = 0.15
#: A trial lifted the object when it rose by more than this fraction of the commanded lift.
LIFT_FRACTION = 0.5
#: Finger bases ahead of the hand origin along x [m] (see the module docstring: SoMo's code sweep
#: of 25-130 mm base-to-object distance vs the paper's 70-180 mm centring).
FINGER_OFFSET = 0.045
#: Finger base half-spacing [m], outward splay [rad] and height above the floor [m] (SoMo:
#: +-0.5 units, 15 deg roll, 0.7 units at world scale 20).
FINGER_HALF_SPACING = 0.025
FINGER_SPLAY = math.radians(15.0)
FINGER_HEIGHT = 0.035
#: Object extent across the fingers (y) and height [m], mass [kg] (SoMo's 60 mm box set, 20 g).
OBJECT_SPAN = 0.06
OBJECT_HEIGHT = 0.06
OBJECT_MASS = 0.02
#: Hand mass [kg] and its servo gains [N/m], [N s/m]: a 0.5 kg hand at 50 Hz, critically damped,
#: follows its path within ~0.1 mm under the grasp loads (< 1 N).
HAND_MASS = 0.5
HAND_KP = HAND_MASS * (2 * math.pi * 50.0) ** 2
HAND_KV = 2.0 * math.sqrt(HAND_KP * HAND_MASS)


class GraspTrialConfig(Spec):
    """Timing and physics of one grasp trial (seconds, SI)."""

    approach_distance: float = Field(
        default=0.1, description="Hand travel before centring [m] (SoMo: 2 units = 100 mm)."
    )
    approach_time: float = Field(default=1.0, description="Time of the approach [s] (SoMo: 1 s).")
    close_time: float = Field(default=0.8, description="Torque ramp to full pressure [s].")
    settle_time: float = Field(default=0.4, description="Hold before lifting [s].")
    lift: float = Field(default=0.075, description="Lift height [m].")
    lift_time: float = Field(default=1.0, description="Time of the lift [s].")
    hold_time: float = Field(default=0.5, description="Hold after the lift [s].")
    pressure: float = Field(default=100e3, description="Actuation pressure [Pa].")
    n_links: int = Field(default=20, description="Links per finger.")
    timestep: float = Field(default=0.002, description="Simulation timestep [s].")
    friction: float = Field(
        default=1.5,
        description=(
            "Sliding friction of fingers, object and floor (MuJoCo takes the larger of a pair's; "
            "silicone on plastic is ~1-2)."
        ),
    )
    distal_stiffness_scale: float = Field(
        default=SOMO_DISTAL_STIFFNESS_SCALE,
        description="EI of the passive distal part / EI of the actuated part (SoMo: 0.744).",
    )
    stiffness_rule: Literal["tip", "somo", "midpoint"] = Field(
        default="tip",
        description=(
            "Joint stiffness rule of the fingers (softrod.somo.joint_stiffness); 'somo' is the "
            "paper's eq. 8, ~2x too stiff at the tip (§B Ambiguity 1)."
        ),
    )

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
    """Result of a grasp trial (module docstring). Lengths [m]: object_rise (vertical), contact
    arc lengths along the finger (min, normal-force-weighted mean), distal_start_s (start of the
    pinch region), object_shift (horizontal displacement of the object); object_tilt_deg [deg]
    (angle of the object's z axis from vertical)."""

    grasp: str
    lifted: bool
    object_rise: float
    n_contacts: int
    min_contact_s: float | None
    mean_contact_s: float | None
    distal_start_s: float
    object_tilt_deg: float
    object_shift: float


def _finger_quat(side: int) -> tuple[float, float, float, float]:
    """Mount orientation: chain +z along the splayed approach axis, closing toward y = 0."""
    a = side * FINGER_SPLAY  # left finger (side +1) splays toward +y
    z = np.array([math.cos(a), math.sin(a), 0.0])
    x = np.array([0.0, 0.0, -1.0]) if side > 0 else np.array([0.0, 0.0, 1.0])
    y = np.cross(z, x)
    mat = np.column_stack([x, y, z])
    q = so3.matrix_to_quat(mat)
    return (float(q[0]), float(q[1]), float(q[2]), float(q[3]))


def build_grasp_scene(
    distal_ratio: float, object_width: float, centering: float, config: GraspTrialConfig
) -> tuple[Any, dict[str, Any]]:
    """(MjSpec, names) of the gripper scene at the start of the approach (module docstring).

    distal_ratio: passive distal length / finger length, in [0, 1). object_width: box extent
    along the approach axis [m]. centering: hand origin to object centre along x [m].
    """
    import mujoco

    from softrod.scene import CONTYPE_OBJECT, add_floor, add_lights, new_spec, soft_collision_bits

    if not 0.0 <= distal_ratio < 1.0:
        raise ValueError(f"distal_ratio must be in [0, 1), got {distal_ratio}")
    if not object_width > 0:
        raise ValueError(f"object_width must be > 0 [m], got {object_width}")
    spec = new_spec("pinch_grasp", timestep=config.timestep, integrator="discrete")
    add_lights(spec, "overhead", height=1.0)
    world = spec.worldbody
    friction = [config.friction, 0.005, 0.0001]
    add_floor(spec, size=1.0, friction=config.friction, grid=None, spacing=0.01)
    obj = world.add_body(name="object", pos=[0, 0, OBJECT_HEIGHT / 2])
    obj.add_freejoint(name="object_free")
    obj.add_geom(
        name="object_geom",
        type=mujoco.mjtGeom.mjGEOM_BOX,
        size=[object_width / 2, OBJECT_SPAN / 2, OBJECT_HEIGHT / 2],
        mass=OBJECT_MASS,
        contype=CONTYPE_OBJECT,
        conaffinity=CONTYPE_OBJECT,
        friction=friction,
        rgba=[0.9, 0.6, 0.2, 1],
    )
    start_x = -(centering + config.approach_distance)
    # The hand is a dynamic body on x and z slides driven by stiff position servos (a mocap
    # body would teleport the fingers, and contacts would see no slip to resist with friction).
    hand = world.add_body(name="hand", pos=[0, 0, FINGER_HEIGHT], gravcomp=1.0)
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
    finger = teeple_finger(
        distal_ratio,
        n_links=config.n_links,
        rule=config.stiffness_rule,
        distal_stiffness_scale=config.distal_stiffness_scale,
    )
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


def _smoothstep(u: float) -> float:
    """3u^2 - 2u^3 on [0, 1] (clipped): a move that starts and ends at rest."""
    u = min(max(u, 0.0), 1.0)
    return u * u * (3.0 - 2.0 * u)


def _hand_target(t: float, start_x: float, cfg: GraspTrialConfig) -> tuple[float, float]:
    """Hand (x [m], z offset [m]) at time t [s]: approach along +x, then, after closing and
    settling, lift; both moves start and end at rest (smoothstep), so the servoed hand is never
    asked for a velocity jump (a ramp's start jerks the hand at ~2 g through the 50 Hz servo)."""
    x = start_x + cfg.approach_distance * _smoothstep(t / cfg.approach_time)
    t_lift = cfg.approach_time + cfg.close_time + cfg.settle_time
    z = cfg.lift * _smoothstep((t - t_lift) / cfg.lift_time)
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

    # Finger-object contacts at the end of the hold: arc length and normal force.
    body_s: dict[int, float] = {}
    for ch in chains:
        for name, (s0, s1) in zip(ch.bodies, ch.link_s, strict=True):
            body_s[model.body(name).id] = 0.5 * (s0 + s1)
    contact_s: list[float] = []
    contact_fn: list[float] = []
    wrench = np.zeros(6)
    for i, c in enumerate(data.contact[: data.ncon]):
        g1, g2 = int(c.geom1), int(c.geom2)
        if obj_geom not in (g1, g2):
            continue
        other = model.geom_bodyid[g2 if g1 == obj_geom else g1]
        if other in body_s:
            mujoco.mj_contactForce(model, data, i, wrench)
            contact_s.append(body_s[other])
            contact_fn.append(max(float(wrench[0]), 0.0))
    pos = data.xpos[obj_body]
    rise = float(pos[2] - z0)
    lifted = rise > LIFT_FRACTION * cfg.lift and bool(contact_s)
    L = finger.length
    distal_start = (1.0 - max(distal_ratio, TIP_FRACTION)) * L
    mean_s = None
    if contact_s:
        weights = np.asarray(contact_fn)
        if weights.sum() <= 0:
            weights = np.ones(len(contact_s))
        mean_s = float(np.average(contact_s, weights=weights))
    if not lifted:
        grasp = "none"
    elif mean_s is not None and mean_s >= distal_start - 1e-9:
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
        mean_contact_s=mean_s,
        distal_start_s=distal_start,
        object_tilt_deg=tilt,
        object_shift=float(np.hypot(pos[0], pos[1])),
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
