"""Magnetic catheter scene (rotating field, contact) and `softrod/MagneticNavigate-v0`."""

from __future__ import annotations

import math
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import softrod.envs  # noqa: F401  (registers the ids)
from softrod.scene import SceneError, build_scene, load_scene

ROOT = Path(__file__).resolve().parents[1]
SCENE = ROOT / "examples" / "scenes" / "magnetic_catheter.yaml"
#: Success radius of the env [m]; the scripted closed-form steering must land inside it.
SUCCESS_RADIUS = 0.005


def test_catheter_scene_follows_the_rotating_field_and_touches_the_post():
    sc = load_scene(SCENE)
    assert sc.magnetic is not None and sc.magnetic.n_dipoles == 1
    post = sc.model.geom("post_right/geom").id
    touched = False
    dt = sc.model.opt.timestep
    for i in range(int(4.0 / dt)):
        sc.step()
        if i == int(1.0 / dt):
            tip = sc.data.site("catheter/tip").xpos
            assert tip[0] > 0.01 and abs(tip[1]) < 1e-9
        geoms = {int(g) for c in sc.data.contact[: sc.data.ncon] for g in (c.geom1, c.geom2)}
        touched |= post in geoms
    assert touched
    # The field is the rotation of B0 about y: at t it makes the angle 0.6 t with z.
    b = sc.field_at(1.0)
    assert math.atan2(b[0], b[2]) == pytest.approx(0.6)
    assert np.linalg.norm(b) == pytest.approx(0.02)


def test_scene_field_from_keyframes_and_bad_field():
    scene = {
        "floor": False,
        "options": {"gravity": [0, 0, 0]},
        "robots": [{"name": "c", "robot": "magnetic_catheter", "links": 10}],
        "magnetic_field": {},
        "keyframes": [{"time": 0.0, "field": [0, 0, 0]}, {"time": 1.0, "field": [0.02, 0, 0]}],
    }
    sc = build_scene(scene)
    np.testing.assert_allclose(sc.field_at(0.5), [0.01, 0, 0])
    bad = {**scene, "magnetic_field": {"field": [0, float("inf"), 0]}}
    with pytest.raises(SceneError, match=r"magnetic_field\.field"):
        build_scene(bad)


def test_magnetic_navigate_check_env_and_scripted_controller():
    env = gym.make("softrod/MagneticNavigate-v0")
    check_env(env.unwrapped, skip_render_check=True)
    u = env.unwrapped
    for seed in range(3):
        _, info = env.reset(seed=seed)
        assert not info["success"]
        for _ in range(40):
            _, _, terminated, _, info = env.step(u.scripted_action())
            assert not terminated
        assert info["success"] and info["distance"] < SUCCESS_RADIUS
        assert set(info["reward_terms"]) == {"distance", "reach"}
    # A zero action switches the field off: the rod springs back straight.
    env.reset(seed=0)
    for _ in range(40):
        _, _, _, _, info = env.step(np.zeros(3, dtype=np.float32))
    np.testing.assert_allclose(info["tip"], [0.0, 0.0, 0.12], atol=1e-6)
    assert not info["field"].any()


def test_demo_lists_the_magnetic_catheter_clip():
    """`softrod demo` renders the magnetic catheter (`magnetic_demo`, not run here: the demo's
    own tests do not render); its scene is examples/scenes/magnetic_catheter.yaml with the
    field turning faster, and it compiles with the field hook on."""
    import yaml

    from softrod.cli import _demo

    assert dict(_demo.MUJOCO_CLIPS)["magnetic_catheter"] is _demo.magnetic_demo
    assert "mujoco" in dict(_demo.OPTIONAL_DEMOS)
    scene_dict = _demo.magnetic_scene()
    example = yaml.safe_load((ROOT / "examples/scenes/magnetic_catheter.yaml").read_text())
    assert scene_dict["objects"] == example["objects"]
    assert scene_dict["magnetic_field"]["field"] == example["magnetic_field"]["field"]
    assert scene_dict["magnetic_field"]["rotation_rate"] == 2 * 0.6
    scene = build_scene(scene_dict)
    assert scene.magnetic is not None
    scene.step(5)
