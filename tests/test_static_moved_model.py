"""A RodModel moved after compiling (base pose, segment extensions) keeps its pose and
extensions on every path that needs another grid: `steps=`, point loads off the grid (contact
forces), and the Jacobian plant's finite differences (issue 19: a zero point load once moved the
tip by ~0.2 m, and the plant's base columns were 0)."""

from __future__ import annotations

import numpy as np
import pytest

import softrod
from softrod.control import TendonRobotPlant
from softrod.description import find_robot
from softrod.rods import compile_model, so3, with_pose_and_lengths

#: Same robot and loads, only the grid differs (RK4 O(h^4), default vs `steps` or one added
#: node): tip differences are discretisation error, ~1e-9 m on these 0.1-0.2 m robots.
GRID_TOL = 1e-7  # [m]
#: A rigid motion of the base moves an internally loaded robot rigidly: exact to round-off.
RIGID_TOL = 1e-12  # [m]

TENSIONS = [1.0, 0.0, 0.4, 0.0, 0.0, 0.7, 0.0, 0.2]


@pytest.fixture(scope="module")
def extensible():
    return softrod.load_robot(find_robot("softmanisim_2seg_extensible"))


def _moved(spec, ext=None):
    model = compile_model(spec)
    R = so3.exp([0.3, -0.5, 0.9])
    return with_pose_and_lengths(model, [0.1, -0.2, 0.3], R, ext), R


def test_steps_keeps_the_pose_of_a_moved_robot(extensible):
    moved, R = _moved(extensible)
    # Tensions are internal: the moved robot's shape is the unmoved one, rigidly moved.
    ref = softrod.solve_static(extensible, tensions=TENSIONS, steps=64)
    sol = softrod.solve_static(moved, tensions=TENSIONS, steps=64)
    assert sol.success and ref.success
    base0 = np.asarray(extensible.base.position)
    R0 = so3.quat_to_matrix(extensible.base.quaternion)
    expect = np.array([0.1, -0.2, 0.3]) + R @ R0.T @ (ref.tip_position - base0)
    np.testing.assert_allclose(sol.tip_position, expect, atol=RIGID_TOL)


def test_steps_and_point_loads_keep_the_extensions(extensible):
    ext = np.array([0.02, 0.01])
    moved, _ = _moved(extensible, ext)
    plain = softrod.solve_static(moved, tensions=TENSIONS)
    with_steps = softrod.solve_static(moved, tensions=TENSIONS, steps=80)
    # A zero point load off the grid (as contact feedback adds) changes nothing.
    s_off = 0.1234567
    zero_load = softrod.solve_static(
        moved, tensions=TENSIONS, point_loads=[(s_off, [0.0, 0.0, 0.0])]
    )
    for sol in (plain, with_steps, zero_load):
        assert sol.success, sol.message
        np.testing.assert_allclose(sol.tip_position, plain.tip_position, atol=GRID_TOL)
    # The extended robot is longer: its arc length reaches L + extensions.
    assert zero_load.s[-1] == pytest.approx(0.2 + ext.sum(), abs=1e-12)
    assert np.any(np.abs(zero_load.s - s_off) < 1e-12)


def test_point_load_acts_at_the_arc_length_of_the_extended_robot(extensible):
    """A point force at s on the extended robot equals a tip force when s is its tip, and
    differs from the same force applied on the unextended robot."""
    ext = np.array([0.03, 0.0])
    moved, _ = _moved(extensible, ext)
    L = 0.2 + ext.sum()
    force = [0.0, 0.05, 0.0]
    at_tip = softrod.solve_static(moved, tensions=TENSIONS, tip_force=force)
    as_point = softrod.solve_static(moved, tensions=TENSIONS, point_loads=[(L, force)])
    np.testing.assert_allclose(as_point.tip_position, at_tip.tip_position, atol=GRID_TOL)


def test_jacobian_plant_sees_a_base_move_with_steps(extensible):
    plant = TendonRobotPlant(extensible, loads={"steps": 48}, mobile_base=True)
    q = np.concatenate([[0.5, 0.0, 0.2, 0.0, 0.0, 0.3, 0.0, 0.1], [0.01, 0.02], [0.05, 0, 0]])
    J = plant.jacobian(q, mode="fd")
    # Translating the base translates the tip (loads are internal here): identity columns.
    np.testing.assert_allclose(J[:, -3:], np.eye(3), atol=1e-6)


def test_contact_loads_on_an_arm_mounted_robot_keep_its_pose():
    """A robot moved by an arm (base pose set after compiling) pushed into a wall fixed to the
    arm's flange: the contact forces come back as off-grid point loads (`KinematicRod`), and
    every solve keeps the arm's pose, so the loop settles against the wall as the unmoved
    robot does (a recompile from the spec once reset the pose: the contact went astray)."""
    mujoco = pytest.importorskip("mujoco")
    from softrod.bench import example_robot_path
    from softrod.mujoco import KinematicRod

    wall_x = 0.04  # [m] face of the wall in the flange frame
    robot = compile_model(example_robot_path("tdcr3"))
    base0 = robot.base_position
    R = so3.exp([0.0, np.pi / 2, 0.0]) @ so3.exp([0.0, 0.0, 0.4])
    p = np.array([0.3, 0.1, 0.5])
    moved = with_pose_and_lengths(robot, p, R)
    tau = [3.0, 0, 0, 0, 0, 0, 0, 0, 0]

    def to_flange(x):
        # World -> frame of the robot's own (unmoved) base description.
        return robot.base_rotation @ R.T @ (np.asarray(x) - p) + base0

    spec = mujoco.MjSpec()
    wall_local = np.array([wall_x + 0.02, 0.0, 0.1])
    quat = np.empty(4)
    R_wall = R @ robot.base_rotation.T
    mujoco.mju_mat2Quat(quat, R_wall.reshape(-1))
    wall = spec.worldbody.add_body(name="wall", pos=p + R_wall @ (wall_local - base0), quat=quat)
    wall.add_geom(name="wall_geom", type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.02, 0.1, 0.1])
    rod = KinematicRod(n_bodies=15, radius=0.003, collide_with=("wall_geom",))
    rod.add_to(spec)
    model = spec.compile()
    data = mujoco.MjData(model)
    rod.bind(model)

    sol = softrod.solve_static(moved, tensions=tau)
    assert to_flange(sol.tip_position)[0] > wall_x  # the free rod would pass through the wall
    point_loads: list = []
    touched = False
    for _ in range(40):
        sol = softrod.solve_static(moved, tensions=tau, point_loads=point_loads or None, guess=sol)
        assert sol.success, sol.message
        np.testing.assert_allclose(sol.positions[0], p, atol=RIGID_TOL)
        rod.place(data, sol)
        mujoco.mj_forward(model, data)
        new = rod.contact_point_loads(model, data)
        touched = touched or bool(new)
        acc: dict[float, np.ndarray] = {}
        for s, f in [(s, 0.5 * f) for s, f in new] + [(s, 0.5 * f) for s, f in point_loads]:
            acc[round(s, 9)] = acc.get(round(s, 9), np.zeros(3)) + np.asarray(f)
        point_loads = [(s, f) for s, f in acc.items() if np.linalg.norm(f) > 1e-9]
    assert touched
    assert to_flange(sol.tip_position)[0] < wall_x + rod.radius + 2e-3
