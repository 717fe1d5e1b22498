"""Scenes (issue 3): soft + rigid robots + objects in one MjSpec, clear errors, rendering."""

from __future__ import annotations

import math
from pathlib import Path

import mujoco
import numpy as np
import pytest

import softrod
from softrod.cli import main
from softrod.scene import SceneError, build_scene, load_scene_spec, look_at_xyaxes

ROOT = Path(__file__).resolve().parents[1]
SCENES = sorted((ROOT / "examples" / "scenes").glob("*.yaml"))
TDCR3 = str(ROOT / "examples" / "robots" / "tdcr3.yaml")

#: A mounted robot's base is placed by MuJoCo's kinematics from the flange pose: round-off only.
MOUNT_ATOL = 1e-12
#: Keyframe interpolation is exact linear arithmetic.
INTERP_ATOL = 1e-12


def tiny_robot(name: str = "rod") -> dict:
    """A 0.1 m, one-tendon NiTi segment (inline fixture)."""
    return {
        "name": name,
        "backbone": {
            "youngs_modulus": 60e9,
            "poisson_ratio": 0.33,
            "density": 6450.0,
            "radius": 0.0005,
        },
        "segments": [
            {
                "length": 0.1,
                "disks": 5,
                "disk_radius": 0.005,
                "tendons": [{"offset": 0.0045, "angle_deg": 0.0}],
            }
        ],
    }


@pytest.mark.parametrize("path", SCENES, ids=[p.stem for p in SCENES])
def test_example_scenes_build_and_run(path: Path):
    scene = build_scene(path)
    while scene.data.time < 0.2:
        scene.step()
    assert np.all(np.isfinite(scene.data.qpos))
    assert scene.data.warning[mujoco.mjtWarning.mjWARN_BADQACC].number == 0
    assert scene.robots, "every example scene has a soft robot"
    for info in scene.robots.values():
        assert scene.model.site(info.tip_site).id >= 0


def test_soft_robot_hangs_from_the_panda_flange():
    scene = build_scene(
        {
            "rigid_robots": [{"name": "arm", "model": "panda"}],
            "robots": [{"name": "tdcr", "robot": TDCR3, "links": 12, "mount": "arm"}],
        }
    )
    d = scene.data
    flange = d.body("arm/flange")
    base = d.body("tdcr/base")
    np.testing.assert_allclose(base.xpos, flange.xpos, atol=MOUNT_ATOL)
    np.testing.assert_allclose(base.xmat, flange.xmat, atol=MOUNT_ATOL)
    length = softrod.load_robot(TDCR3).total_length
    z_axis = flange.xmat.reshape(3, 3)[:, 2]
    np.testing.assert_allclose(
        d.site("tdcr/tip").xpos, flange.xpos + length * z_axis, atol=MOUNT_ATOL
    )
    # Seed-002 home pose points the flange (and the TDCR) straight down.
    np.testing.assert_allclose(z_axis, [0, 0, -1], atol=1e-9)
    assert list(scene.ctrl_index) == ["tdcr", "arm"]
    assert scene.ctrl_index["tdcr"].size == 9 and scene.ctrl_index["arm"].size == 7


def test_collision_groups():
    """Soft robots touch each other and objects, never themselves or rigid robots."""
    scene = build_scene(
        {
            "floor": False,
            "rigid_robots": [{"name": "arm", "model": "ur5"}],
            "robots": [
                {"name": "a", "robot": tiny_robot("a"), "links": 6, "pos": [0.0, 0.0, 1.0]},
                {"name": "b", "robot": tiny_robot("b"), "links": 6, "pos": [0.0, 0.0, 1.0]},
            ],
            "objects": [
                {"name": "box", "type": "box", "size": [0.01, 0.01, 0.01], "pos": [0.0, 0.0, 1.05]}
            ],
        }
    )
    m = scene.model

    def collide(g1: int, g2: int) -> bool:
        return bool(
            (m.geom_contype[g1] & m.geom_conaffinity[g2])
            or (m.geom_contype[g2] & m.geom_conaffinity[g1])
        )

    a0, a3 = m.geom("a/g0").id, m.geom("a/g3").id
    b2, box, arm = m.geom("b/g2").id, m.geom("box/geom").id, m.geom("arm/g_link2").id
    assert not collide(a0, a3)
    assert collide(a0, b2)
    assert collide(a3, box) and collide(arm, box)
    assert not collide(a3, arm)
    # Overlapping robots a and b (same place) and the box produce contacts.
    mujoco.mj_forward(m, scene.data)
    pairs = {
        (m.geom_bodyid[c.geom1], m.geom_bodyid[c.geom2])
        for c in scene.data.contact[: scene.data.ncon]
    }
    names = {tuple(sorted(m.body(i).name.split("/")[0] for i in p)) for p in pairs}
    assert ("a", "b") in names and ("a", "box") in names


def test_switch_flips_above_its_force_only():
    def run(force: float) -> float:
        scene = build_scene(
            {
                "floor": False,
                "options": {"gravity": [0, 0, 0]},
                "robots": [{"name": "r", "robot": tiny_robot(), "links": 4, "pos": [1, 1, 0]}],
                "objects": [{"name": "sw", "type": "switch", "pos": [0, 0, 0], "force": 0.9}],
            }
        )
        m, d = scene.model, scene.data
        hinge = m.joint("sw/hinge")
        d.qpos[hinge.qposadr[0]] = -0.3  # toggle up
        toggle = m.body("sw/toggle").id
        lever = 0.02
        while d.time < 0.3:
            # Press down on the toggle's tip (a 0.02 m lever about the hinge).
            tip = d.xpos[toggle] + d.xmat[toggle].reshape(3, 3) @ np.array([lever, 0, 0])
            d.xfrc_applied[toggle, :3] = [0, 0, -force]
            d.xfrc_applied[toggle, 3:] = np.cross(tip - d.xipos[toggle], [0, 0, -force])
            mujoco.mj_step(m, d)
        return float(d.qpos[hinge.qposadr[0]])

    assert run(0.5) < -0.29  # below the 0.9 N threshold: it stays up
    assert run(1.5) > 0.3  # above: it flips down to its stop


def test_tip_camera_rides_on_the_tip_and_keyframes_interpolate():
    scene = build_scene(
        {
            "floor": False,
            "robots": [{"name": "r", "robot": tiny_robot(), "links": 6}],
            "cameras": [
                {"name": "tipcam", "attach": "r"},
                {"name": "look", "pos": [0.3, 0, 0.05], "target": [0, 0, 0.05]},
            ],
            "keyframes": [
                {"time": 0.0, "controls": {"r": [0.0]}},
                {"time": 1.0, "controls": {"r": [2.0]}},
            ],
        }
    )
    scene.apply_keyframes(0.25)
    assert abs(scene.data.ctrl[scene.ctrl_index["r"][0]] - 0.5) < INTERP_ATOL
    scene.apply_keyframes(5.0)
    assert abs(scene.data.ctrl[scene.ctrl_index["r"][0]] - 2.0) < INTERP_ATOL
    while scene.data.time < 0.5:
        scene.step()
    cam = scene.data.cam("tipcam")
    tip = scene.data.site("r/tip").xpos
    assert np.linalg.norm(cam.xpos - tip) < 2e-3
    # It looks along the backbone: camera -z = tip body +z.
    body = scene.data.body("r/link5")
    np.testing.assert_allclose(
        -cam.xmat.reshape(3, 3)[:, 2], body.xmat.reshape(3, 3)[:, 2], atol=1e-12
    )
    xy = np.array(look_at_xyaxes((0.3, 0, 0.05), (0, 0, 0.05))).reshape(2, 3)
    np.testing.assert_allclose(np.cross(xy[0], xy[1]), [1, 0, 0], atol=1e-12)


@pytest.mark.parametrize(
    ("scene", "message"),
    [
        (
            {"robots": [{"name": "r", "robot": "x", "mount": "arm"}]},
            "robots[0].mount 'arm' is not a rigid robot",
        ),
        (
            {
                "objects": [
                    {"name": "a", "type": "box", "size": [1, 1, 1]},
                    {"name": "a", "type": "sphere", "radius": 1},
                ]
            },
            "objects[1].name 'a' is already used by objects[0]",
        ),
        ({"objects": [{"name": "a", "type": "box", "size": [1, -1, 1]}]}, "size must be > 0"),
        ({"objects": [{"name": "a", "type": "cone", "size": [1, 1, 1]}]}, "objects[0]"),
        ({"options": {"links": 5}}, "options may only set"),
        ({"keyframes": [{"time": 0, "controls": {"ghost": [1]}}]}, "'ghost' is not a robot"),
        ({"cameras": [{"name": "c", "pos": [0, 0, 1]}]}, "give either attach"),
        (
            {"robots": [{"name": "r", "robot": "no_such_robot"}]},
            "robots[0].robot: 'no_such_robot' is neither a file",
        ),
        (
            {"robots": [{"name": "r", "robot": tiny_robot(), "tensions": [1, 2]}]},
            "robots[0].tensions",
        ),
        ({"robots": [{"name": "r", "robot": tiny_robot(), "links": 0}]}, "links must be >= 1"),
        (
            {"rigid_robots": [{"name": "q", "model": "panda", "qpos": [0, 0]}]},
            "rigid_robots[0].qpos needs 7 values",
        ),
    ],
)
def test_bad_scenes_have_clear_errors(scene: dict, message: str):
    with pytest.raises(SceneError) as err:
        build_scene(scene)
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_bad_scene_file_errors(tmp_path: Path):
    with pytest.raises(SceneError, match="scene file not found"):
        load_scene_spec(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("robots: [\n")
    with pytest.raises(SceneError, match="cannot parse"):
        load_scene_spec(bad)
    bad.write_text("- 1\n- 2\n")
    with pytest.raises(SceneError, match="expected a mapping"):
        load_scene_spec(bad)


# ------------------------------------------------------------------------------------------
# Rendering through the CLI (headless EGL; skipped where no OpenGL is available)


def _can_render() -> bool:
    try:
        model = mujoco.MjModel.from_xml_string("<mujoco><worldbody/></mujoco>")
        mujoco.Renderer(model, 16, 16).close()
        return True
    except Exception:  # noqa: BLE001 - any GL failure means: no rendering here
        return False


needs_gl = pytest.mark.skipif(not _can_render(), reason="no headless OpenGL (MUJOCO_GL=egl)")


@needs_gl
def test_cli_render_png_and_mp4(tmp_path: Path, capsys):
    scene = str(ROOT / "examples" / "scenes" / "tdcr_box_press.yaml")
    png = tmp_path / "out.png"
    assert (
        main(
            [
                "render",
                scene,
                "-o",
                str(png),
                "--width",
                "160",
                "--height",
                "120",
                "--settle",
                "0.1",
            ]
        )
        == 0
    )
    import imageio.v2 as imageio

    image = imageio.imread(png)
    assert image.shape[:2] == (120, 160) and image.std() > 1.0
    mp4 = tmp_path / "out.mp4"
    assert (
        main(
            [
                "render",
                TDCR3,
                "-o",
                str(mp4),
                "--width",
                "160",
                "--height",
                "128",
                "--duration",
                "0.2",
                "--fps",
                "10",
                "--links",
                "9",
            ]
        )
        == 0
    )
    reader = imageio.get_reader(mp4)
    assert reader.count_frames() == 2
    reader.close()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["render", TDCR3, "-o", "out.gif"], "--output must end in .png or .mp4"),
        (["render", "no_such_scene.yaml", "-o", "x.png"], "not found"),
        (["render", TDCR3, "-o", "x.png", "--camera", "nope"], "camera 'nope' not in the model"),
    ],
)
def test_cli_render_bad_input_is_one_line(tmp_path: Path, capsys, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    if "--camera" in args and not _can_render():
        pytest.skip("no headless OpenGL")
    rc = main(args)
    err = capsys.readouterr().err
    assert rc == 2
    assert message in err and len(err.strip().splitlines()) == 1


def test_quadruped_stands():
    scene = build_scene(ROOT / "examples" / "scenes" / "softmanisim_quadruped_push.yaml")
    while scene.data.time < 1.0:
        scene.step()
    height = scene.data.body("dog/trunk").xpos[2]
    assert 0.2 < height < 0.4, height
    up = scene.data.body("dog/trunk").xmat.reshape(3, 3)[:, 2]
    assert up[2] > math.cos(math.radians(10))


def test_tensions_toward_points_the_tendon_moment():
    from softrod.cli._demo import tensions_toward

    robot = softrod.load_robot(TDCR3)
    for segment in range(3):
        for angle in (0.0, 33.0, 150.0, 275.0):
            d = np.array([math.cos(math.radians(angle)), math.sin(math.radians(angle))])
            t = np.array(tensions_toward(robot, segment, d, 2.0))
            assert np.all(t >= 0) and math.isclose(t.sum(), 2.0)
            tendons = robot.tendon_list()
            assert all(t[i] == 0 for i, (j, _) in enumerate(tendons) if j != segment)
            r = sum(
                t[i]
                * np.array(
                    [math.cos(math.radians(tt.angle_deg)), math.sin(math.radians(tt.angle_deg))]
                )
                for i, (_, tt) in enumerate(tendons)
            )
            np.testing.assert_allclose(r / np.linalg.norm(r), d, atol=1e-12)


@needs_gl
def test_run_demo_writes_video_image_and_plot(tmp_path: Path, monkeypatch):
    from softrod.cli import _demo as demo

    # The real demo is 4 s of video and 20 samples per material; the pipeline is the same.
    monkeypatch.setattr(demo, "_DURATION", 0.3)
    monkeypatch.setattr(demo, "_MAGNETIC_DURATION", 0.3)
    monkeypatch.setattr(demo, "_DEMO_SAMPLES", 2)
    monkeypatch.setattr(demo, "_DEMO_SLIDES_SAMPLES", 2)
    monkeypatch.setattr(demo, "_DEMO_LINKS", (10, 20))
    summary = demo.mujoco_demo(tmp_path)
    for key in ("video", "image", "static_plot"):
        assert Path(summary[key]).stat().st_size > 1000
    assert Path(summary["magnetic_catheter"]["video"]).stat().st_size > 1000
    import json

    json.dumps(summary)  # JSON-able
    assert set(summary["static"]) == {"spring_steel", "tpu"}


# ---------------------------------------------------------------------------------------------
# The composition kit (issue 14): one home for spec, lights, floor, cameras, markers, robots and
# the collision-bit convention.

#: A camera's image axes are unit vectors built from one cross product: round-off only.
CAMERA_AXIS_ATOL = 1e-12


def _collide(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """MuJoCo's contact filter for two geoms given as (contype, conaffinity)."""
    return bool((a[0] & b[1]) or (b[0] & a[1]))


def test_collision_convention_matches_its_table() -> None:
    """Soft robots touch objects and each other but never themselves or rigid robots; rigid
    robots touch objects only; objects touch everything (softrod.mujoco._collision's table)."""
    from softrod.scene import (
        CONTYPE_OBJECT,
        CONTYPE_RIGID,
        OBJECT_AFFINITY,
        RIGID_AFFINITY,
        soft_collision_bits,
    )

    objects = [(CONTYPE_OBJECT, CONTYPE_OBJECT), (CONTYPE_OBJECT, OBJECT_AFFINITY)]
    rigid = (CONTYPE_RIGID, RIGID_AFFINITY)
    soft = [soft_collision_bits(k) for k in range(29)]
    for obj in objects:
        assert _collide(obj, obj) and _collide(obj, rigid)
        assert all(_collide(obj, s) for s in soft)
    assert not _collide(rigid, rigid)
    for i, s in enumerate(soft):
        assert not _collide(s, s) and not _collide(s, rigid)
        assert all(_collide(s, t) for j, t in enumerate(soft) if j != i)
    with pytest.raises(ValueError, match="at most 29 soft robots"):
        soft_collision_bits(29)


def test_kit_composes_a_scene() -> None:
    """new_spec + lights + floor + marker + camera + soft robot compile, with the names the
    kit's table promises and a camera that looks at its target."""
    from softrod.scene import (
        add_camera,
        add_floor,
        add_lights,
        add_marker,
        add_robot,
        add_tip_camera,
        new_spec,
    )

    spec = new_spec("kit", {"timestep": 0.002}, gravity=(0.0, 0.0, -9.81))
    add_lights(spec, "studio", shadows=False)
    add_floor(spec, size=1.0, z=-0.2, friction=0.7, grid="dark")
    chain = add_robot(spec, spec.worldbody, tiny_robot(), {"links": 6}, prefix="r/")
    add_marker(spec, "target", radius=0.01, pos=(0.05, 0.0, 0.0))
    pos, target = np.array([0.3, -0.4, 0.2]), np.array([0.0, 0.0, 0.05])
    add_camera(spec, "main", pos, target, fovy=50.0)
    add_tip_camera(spec, chain, "tipcam")
    model = spec.compile()
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    assert model.opt.timestep == 0.002
    assert [model.light(i).name for i in range(model.nlight)] == ["key", "fill"]
    floor = model.geom("floor")
    assert floor.pos[2] == -0.2 and floor.friction[0] == 0.7
    assert model.body("target").mocapid[0] == 0 and model.geom("target_geom").contype == 0
    cam = model.camera("main").id
    look = -data.cam_xmat[cam].reshape(3, 3)[:, 2]  # a MuJoCo camera looks along its -z
    want = (target - pos) / np.linalg.norm(target - pos)
    np.testing.assert_allclose(look, want, atol=CAMERA_AXIS_ATOL)
    assert model.cam_fovy[cam] == 50.0
    assert model.camera("tipcam").bodyid[0] == model.body(chain.link_bodies[-1]).id
    with pytest.raises(ValueError, match="style"):
        add_lights(spec, "disco")  # type: ignore[arg-type]


def test_only_the_mujoco_package_imports_its_builder() -> None:
    """Scenes, envs and SoMo build through the public kit, never `softrod.mujoco._builder`."""
    src = ROOT / "src" / "softrod"
    imports = ("from softrod.mujoco._builder import", "import softrod.mujoco._builder")
    offenders = [
        str(p.relative_to(src))
        for p in src.rglob("*.py")
        if p.parent.name != "mujoco" and any(i in p.read_text() for i in imports)
    ]
    assert offenders == []
