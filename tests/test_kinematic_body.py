"""The rod model as a kinematic body in a MuJoCo scene, with contact feedback (issue 4).

Truth: the capsules lie on the solved shape; a rod pushed into a wall feels a force pointing
out of the wall; feeding the contact forces back as point loads moves the rod out of the wall
(a fixed point of solve -> place -> contact)."""

from __future__ import annotations

import numpy as np
import pytest

import softrod
from softrod.bench import example_robot_path

mujoco = pytest.importorskip("mujoco")

from softrod.mujoco import KinematicRod  # noqa: E402  (after the skip: mujoco is an extra)

#: Chord midpoints of 15 pieces of a gently bent 0.19 m rod sit within h^2 kappa / 8 of the
#: arc (~1e-4 m here).
CHORD_TOL_M = 2e-4
WALL_X = 0.04  # [m] face of the wall the tendon pull bends the robot into


def _scene(rod: KinematicRod):
    spec = mujoco.MjSpec()
    wall = spec.worldbody.add_body(name="wall", pos=[WALL_X + 0.02, 0, 0.1])
    wall.add_geom(name="wall_geom", type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.02, 0.1, 0.1])
    rod.add_to(spec)
    model = spec.compile()
    data = mujoco.MjData(model)
    rod.bind(model)
    return model, data


def test_capsules_follow_the_shape_and_feel_the_wall() -> None:
    robot = softrod.compile_model(example_robot_path("tdcr3"))
    tau = [3.0, 0, 0, 0, 0, 0, 0, 0, 0]
    sol = softrod.solve_static(robot, tensions=tau)
    assert sol.tip_position[0] > WALL_X  # the free rod would pass through the wall
    rod = KinematicRod(n_bodies=15, radius=0.003, collide_with=("wall_geom",))
    model, data = _scene(rod)
    rod.place(data, sol)
    mujoco.mj_forward(model, data)
    for i in range(rod.n_bodies):
        s = rod._s_mid[i]
        on_arc = [np.interp(s, sol.s, sol.positions[:, a]) for a in range(3)]
        np.testing.assert_allclose(data.mocap_pos[rod._mocap_ids[i]], on_arc, atol=CHORD_TOL_M)
    loads = rod.contact_point_loads(model, data)
    assert loads, "the bent rod must touch the wall"
    for _, f in loads:
        assert f[0] < 0  # the wall pushes the rod back (-x)


def test_contact_feedback_keeps_the_rod_out_of_the_wall() -> None:
    robot = softrod.compile_model(example_robot_path("tdcr3"))
    tau = [3.0, 0, 0, 0, 0, 0, 0, 0, 0]
    rod = KinematicRod(n_bodies=15, radius=0.003, collide_with=("wall_geom",))
    model, data = _scene(rod)
    sol = softrod.solve_static(robot, tensions=tau)
    free_tip_x = sol.tip_position[0]
    point_loads: list = []
    for _ in range(40):
        sol = softrod.solve_static(robot, tensions=tau, point_loads=point_loads or None, guess=sol)
        assert sol.success, sol.message
        rod.place(data, sol)
        mujoco.mj_forward(model, data)
        new = rod.contact_point_loads(model, data)
        # Relaxed update: average the contact loads over iterations (penalty contact).
        point_loads = [(s, 0.5 * f) for s, f in new] + [(s, 0.5 * f) for s, f in point_loads]
        point_loads = _merge(point_loads)
    assert sol.tip_position[0] < free_tip_x
    assert sol.tip_position[0] < WALL_X + rod.radius + 2e-3


def _merge(loads: list) -> list:
    """Sum loads acting at the same arc length."""
    acc: dict[float, np.ndarray] = {}
    for s, f in loads:
        acc[round(s, 9)] = acc.get(round(s, 9), np.zeros(3)) + np.asarray(f)
    return [(s, f) for s, f in acc.items() if np.linalg.norm(f) > 1e-9]


def test_sim_keeps_kinematic_rod_without_importing_mujoco() -> None:
    """`softrod.sim.KinematicRod` is the `softrod.mujoco` class, and `import softrod.sim` alone
    does not import MuJoCo (sim sits below the mujoco layer)."""
    import subprocess
    import sys

    code = "import sys, softrod.sim; print('mujoco' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    import softrod.sim

    assert softrod.sim.KinematicRod is KinematicRod
