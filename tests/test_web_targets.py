"""The browser twin's other targets (issue 18 items 3-5): dynamics runs played on the robot
page, live MuJoCo scenes, hardware recordings and sweep results. The state classes are tested
without a browser; each page then loads in one headless Chromium for the module (skipped
without viser, playwright or Chromium, saying how to install them). The robot page's Play
panel is driven in tests/test_web.py, on that module's page.
"""

from __future__ import annotations

import csv
import os
import re
import shutil

import numpy as np
import pytest

from softrod.web import (
    Playback,
    RecordingTwin,
    RobotTwin,
    SceneTwin,
    SweepTwin,
    colormap,
    run_dynamics,
)

INSTALL_HINT = (
    "needs viser, playwright and Chromium: pip install 'softrod[web,dev]' and "
    "apt-get install chromium (or set SOFTROD_CHROMIUM to a Chromium executable)"
)
#: Longest wait for a page or a readout [ms]: the shared test machine is slow.
WAIT_MS = 60_000
CHROMIUM_ARGS = ["--use-gl=angle", "--use-angle=swiftshader", "--enable-unsafe-swiftshader"]
#: Console messages that are not the page's fault (as in tests/test_web.py).
BENIGN_CONSOLE = re.compile(r"deprecated|swiftshader|software|GPU stall|WebGL", re.IGNORECASE)
#: The first frame of a release is the exact static shape it starts from [m]: LGVI takes that
#: shape (its 20-element sampling of it); the chain (10 links) starts from its own equilibrium,
#: O(1/N^2) from the exact one (as tests/test_web_twin.py's CHAIN_MATCH).
RELEASE_START = {"lgvi": 1e-4, "mujoco": 1e-3}
#: LGVI (20 elements) and the MuJoCo chain (10 links) after the same 0.2 s tendon step [m]:
#: different discretisations and damping models; a wrong load, frame or time scale is
#: centimetres off (the tip moves 77 mm).
ENGINES_AGREE = 5e-3
#: A design's shape re-solved on the page vs the tip its sweep row recorded [m].
SWEEP_TIP = 1e-9
#: Rows of the recording replayed on the page (a cheap prefix of ftdcr_v4's val split).
RECORDING_ROWS = 20


# -- state classes ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bent() -> RobotTwin:
    twin = RobotTwin("tdcr3", links=10)
    twin.set_tension(0, 3.0)
    twin.solve()
    return twin


def test_dynamics_runs_start_where_they_should_and_the_engines_agree(bent):
    pytest.importorskip("mujoco")
    static_tip = bent.last.views["exact"].tip_position
    for engine in ("lgvi", "mujoco"):
        release = run_dynamics(bent, engine, "release", duration=0.02)
        assert release.success and release.n_frames >= 2
        start = release.positions[0, -1]
        np.testing.assert_allclose(start, static_tip, atol=RELEASE_START[engine])
    runs = {e: run_dynamics(bent, e, "tendon step", duration=0.2) for e in ("lgvi", "mujoco")}
    L = bent.spec.total_length
    for pb in runs.values():
        assert pb.success
        np.testing.assert_allclose(pb.positions[0, -1], [0.0, 0.0, L], atol=1e-9)  # from rest
        assert pb.positions[-1, -1, 0] > 0.05  # tendon 1 (angle 0) pulls toward +x
    lgvi, chain = runs["lgvi"], runs["mujoco"]
    assert abs(lgvi.t[-1] - chain.t[-1]) < 0.011
    np.testing.assert_allclose(lgvi.positions[-1, -1], chain.positions[-1, -1], atol=ENGINES_AGREE)
    # The timeline: the frame shown at t is the last one at or before t.
    assert chain.index_at(-1.0) == 0 and chain.index_at(1e9) == chain.n_frames - 1
    assert chain.t[chain.index_at(0.1)] <= 0.1 < chain.t[chain.index_at(0.1) + 1]
    with pytest.raises(ValueError, match="no magnets"):
        run_dynamics(bent, "mujoco", "magnet field")
    with pytest.raises(ValueError, match="engine"):
        run_dynamics(bent, "fem", "release")


def test_magnet_field_run_bends_a_magnetic_robot():
    pytest.importorskip("mujoco")
    twin = RobotTwin("magnetic_catheter", links=10)
    pb = run_dynamics(twin, "mujoco", "magnet field", duration=0.05)
    assert isinstance(pb, Playback) and pb.success
    # 20 mT along +x turns the axially magnetised tip toward +x.
    assert pb.positions[-1, -1, 0] > pb.positions[0, -1, 0] + 1e-3


def test_scene_twin_steps_with_its_slider_controls():
    pytest.importorskip("mujoco")
    twin = SceneTwin("examples/scenes/tdcr_box_press.yaml")
    meshes = twin.geom_meshes()
    assert len(meshes) > 10 and all(m.faces.max() < len(m.vertices) for m in meshes)
    moving = [m.geom for m in meshes if m.moving]
    assert 0 < len(moving) < len(meshes)  # the box and the base stay put
    before = twin.geom_poses(moving)[0].copy()
    twin.set_control(0, 1e9)  # clipped to the slider range
    assert twin.ctrl[0] == twin.ctrl_range[0, 1]
    twin.step(0.05)
    # The control ramps toward the slider (a step diverged), and the run stays stable.
    assert 0.0 < twin.applied[0] < twin.ctrl[0] and twin.resets == 0
    assert twin.time == pytest.approx(0.05, abs=2 * twin.model.opt.timestep)
    pos, quat = twin.geom_poses(moving)
    assert np.linalg.norm(pos - before, axis=1).max() > 1e-4  # the pulled tendon moved it
    np.testing.assert_allclose(np.linalg.norm(quat, axis=1), 1.0, atol=1e-9)
    with pytest.raises(ValueError, match="finite"):
        twin.set_control(0, float("nan"))
    twin.reset()
    assert twin.time == 0.0


def test_scene_slider_ranges_come_from_the_actuators_limits():
    mujoco = pytest.importorskip("mujoco")
    from softrod.web._playback import DEFAULT_CTRL_MAX, _ctrl_ranges

    # One body on a limited hinge: a ctrlranged motor, a position servo, a force-limited motor
    # (gain 2) and an unlimited one.
    spec = mujoco.MjSpec()
    spec.compiler.degree = False
    body = spec.worldbody.add_body(name="b")
    body.add_geom(size=[0.05, 0, 0])
    body.add_joint(name="hinge", range=[-0.5, 1.0], limited=mujoco.mjtLimited.mjLIMITED_TRUE)
    acts = [spec.add_actuator(name=f"a{i}", target="hinge") for i in range(4)]
    for a in acts:
        a.trntype = mujoco.mjtTrn.mjTRN_JOINT
    acts[0].ctrllimited, acts[0].ctrlrange = mujoco.mjtLimited.mjLIMITED_TRUE, [-2.0, 3.0]
    acts[1].set_to_position(kp=50.0)
    acts[2].gainprm[0], acts[2].forcelimited = 2.0, mujoco.mjtLimited.mjLIMITED_TRUE
    acts[2].forcerange = [-4.0, 6.0]
    rng = _ctrl_ranges(spec.compile())
    expected = [[-2.0, 3.0], [-0.5, 1.0], [-2.0, 3.0], [0.0, DEFAULT_CTRL_MAX]]
    np.testing.assert_array_equal(rng, expected)


@pytest.fixture(scope="module")
def sweep_file(tmp_path_factory):
    pytest.importorskip("pyarrow")
    from softrod.sweep import run_sweep

    spec = {
        "name": "web_grid",
        "robot": "tdcr3",
        "task": "static_tip",
        "inputs": {"tensions": [0] * 9},
        "design": {
            "kind": "grid",
            "parameters": {
                "backbone.youngs_modulus": {"values": [4.0e10, 8.0e10]},
                "inputs.tensions.0": {"values": [0.0, 2.0]},
            },
        },
    }
    out = tmp_path_factory.mktemp("sweep") / "grid.parquet"
    run_sweep(spec, out, workers=1, progress=False)
    return out


def test_sweep_twin_points_colours_picking_and_shapes(sweep_file):
    twin = SweepTwin(sweep_file)
    assert twin.axes == ("tip_x", "tip_y", "tip_z") and twin.points.shape == (4, 3)
    assert twin.parameters == ["backbone.youngs_modulus", "inputs.tensions.0"]
    colors = twin.colors("backbone.youngs_modulus")
    assert colors.shape == (4, 3) and colors.dtype == np.uint8
    assert len({tuple(c) for c in colors}) == 2
    np.testing.assert_array_equal(colormap(np.array([0.0, np.nan, 1.0]))[1], [128, 128, 128])
    # A click: the ray from a camera through point i picks point i.
    i = int(np.argmax(twin.points[:, 0]))
    origin = twin.points[i] + np.array([0.0, -0.5, 0.0])
    assert twin.pick(origin, [0.0, 1.0, 0.0]) == i
    assert twin.pick(origin, [1.0, 0.0, 0.0]) is None
    # The design's shape on the page is the one its row recorded.
    view = twin.shape(i)
    assert view.success
    np.testing.assert_allclose(view.tip_position, twin.points[i], atol=SWEEP_TIP)
    # The colour picker offers numbers only: no flags (success), ids or bookkeeping.
    assert twin.task == "static_tip"
    assert twin.columns == [
        "backbone.youngs_modulus", "inputs.tensions.0", "tip_x", "tip_y", "tip_z", "residual", "nit"
    ]  # fmt: skip


#: A user task without a robot: numbers, a flag and a text column (no shape to draw).
USER_TASK = """
def trial(point):
    w = point.inputs["width"]
    return {"score": 2.0 * w, "count": 3, "lifted": w > 0.05, "grasp": "pinch"}
"""


@pytest.fixture(scope="module")
def user_sweep_file(tmp_path_factory):
    pytest.importorskip("pyarrow")
    from softrod.sweep import run_sweep

    folder = tmp_path_factory.mktemp("user_sweep")
    (folder / "tasks.py").write_text(USER_TASK)
    spec = {
        "name": "user_grid",
        "task": f"{folder / 'tasks.py'}:trial",
        "inputs": {"width": 0.0},
        "design": {"kind": "grid", "parameters": {"inputs.width": {"values": [0.02, 0.08]}}},
    }
    out = folder / "user.parquet"
    run_sweep(spec, out, workers=1, progress=False)
    return out


def test_sweep_twin_without_a_robot_says_there_is_no_shape(user_sweep_file):
    twin = SweepTwin(user_sweep_file)
    assert twin.columns == ["inputs.width", "score", "count"]
    assert twin.axes == ("inputs.width", "score", "count") and twin.points.shape == (2, 3)
    with pytest.raises(ValueError, match="no shape for task .*trial'?: the sweep has no robot"):
        twin.shape(0)


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    from softrod.cli import main
    from softrod.validate import recording_path

    try:
        train, val = recording_path("ftdcr_v4", "train"), recording_path("ftdcr_v4", "val")
    except FileNotFoundError as exc:
        pytest.skip(f"the seed-002 recordings are not here: {exc}")
    folder = tmp_path_factory.mktemp("recording")
    fitted = folder / "fitted.yaml"
    # A coarse fit is enough: the page shows whatever the calibration predicts.
    args = ["hardware", "fit", "ftdcr_v4", "--data", str(train), "-o", str(fitted)]
    assert main([*args, "--stride", "400", "--max-nfev", "1", "--json"]) == 0
    with val.open(newline="") as fh:
        rows = list(csv.reader(fh))[: RECORDING_ROWS + 1]
    data = folder / "val_head.csv"
    with data.open("w", newline="") as fh:
        csv.writer(fh).writerows(rows)
    return fitted, data


def test_recording_twin_matches_hardware_replay(recording):
    from softrod.validate import replay_recording

    fitted, data = recording
    ref = replay_recording(fitted, data)
    twin = RecordingTwin(ref)
    assert twin.rows == RECORDING_ROWS
    np.testing.assert_array_equal(twin.predicted, ref.tip)
    e = np.linalg.norm(twin.predicted - twin.measured, axis=1) * 1e3
    np.testing.assert_allclose(twin.error_mm, e)
    assert twin.error_mm.mean() == pytest.approx(ref.as_json()["mean_error_mm"])
    assert twin.summary()["mean_mm"] == pytest.approx(e.mean())
    row = twin.row(3)
    assert row["error_mm"] == pytest.approx(e[3]) and row["ok"]
    with pytest.raises(ValueError, match="row"):
        twin.row(RECORDING_ROWS)


# -- every target in a real browser -------------------------------------------------------------


@pytest.fixture(scope="module")
def browser():
    pytest.importorskip("viser", reason=INSTALL_HINT)
    sync_api = pytest.importorskip("playwright.sync_api", reason=INSTALL_HINT)
    chromium = os.environ.get("SOFTROD_CHROMIUM") or shutil.which("chromium")
    if chromium is None:
        pytest.skip(INSTALL_HINT)
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        yield b
        b.close()


def _open(browser, url: str, text: str):
    """A page at url once `text` shows; its console errors collected in page.errors."""
    pg = browser.new_page(viewport={"width": 640, "height": 480})
    errors: list[str] = []
    pg.on("console", lambda m: m.type == "error" and errors.append(m.text))
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(url)
    pg.wait_for_selector(f"text={text}", timeout=WAIT_MS)
    pg.errors = errors  # type: ignore[attr-defined]
    return pg


#: A non-blank view has at least this many distinct colours (as tests/test_web.py's canvas).
MIN_PNG_COLOURS = 20


def _saves_a_png(pg) -> None:
    """The page's "save PNG" button downloads a non-blank 3-D view."""
    from PIL import Image

    # force: the panel's animations keep playwright's "stable" check waiting under swiftshader.
    with pg.expect_download(timeout=WAIT_MS) as download:
        pg.get_by_role("button", name="save PNG").click(force=True)
    pixels = np.asarray(Image.open(download.value.path()).convert("RGB")).reshape(-1, 3)
    assert len(np.unique(pixels, axis=0)) >= MIN_PNG_COLOURS


def _no_console_errors(pg) -> None:
    assert [e for e in pg.errors if not BENIGN_CONSOLE.search(e)] == []
    pg.close()


def test_scene_page_runs_live(browser):
    pytest.importorskip("mujoco")
    from softrod.web import serve_scene

    page = serve_scene("examples/scenes/tdcr_box_press.yaml", port=0)
    try:
        pg = _open(browser, page.url, "scene tdcr_box_press")
        pg.wait_for_selector("text=/frame ([3-9]|\\d\\d+)/", timeout=WAIT_MS)  # it runs
        assert page.twin.time > 0.0 and len(page.sliders) == page.twin.model.nu
        _saves_a_png(pg)
        _no_console_errors(pg)
    finally:
        page.stop()


def test_sweep_page_shows_a_design(browser, sweep_file, user_sweep_file):
    from softrod.web import serve_sweep

    page = serve_sweep(sweep_file, port=0)
    try:
        assert list(page.color_by.options) == page.twin.columns  # numbers only
        pg = _open(browser, page.url, "sweep web_grid: point 0 of 4 (solved)")
        page.point.value = 3
        pg.wait_for_selector("text=sweep web_grid: point 3 of 4 (solved)", timeout=WAIT_MS)
        assert page.selected == 3
        _saves_a_png(pg)
        _no_console_errors(pg)
    finally:
        page.stop()
    # A sweep without a robot lists its point and says why no shape is drawn (server side).
    page = serve_sweep(user_sweep_file, port=0)
    try:
        assert "point 0 of 2 (no shape for task" in page.readout.content
        assert "the sweep has no robot" in page.readout.content
        assert page._shape.mesh is None
    finally:
        page.stop()


def test_recording_page_shows_paths_plot_and_scrubber(browser, recording):
    from softrod.validate import replay_recording
    from softrod.web import serve_recording

    page = serve_recording(replay_recording(*recording), port=0)
    try:
        pg = _open(browser, page.url, f"row 1 of {RECORDING_ROWS}")
        assert pg.locator(".uplot").count() == 1  # the error-per-row plot
        page.row.value = 5
        pg.wait_for_selector(f"text=/row 6 of {RECORDING_ROWS}/", timeout=WAIT_MS)
        _saves_a_png(pg)
        _no_console_errors(pg)
    finally:
        page.stop()


def test_export_of_a_played_run_is_self_contained(tmp_path):
    pytest.importorskip("viser")
    pytest.importorskip("mujoco")
    from softrod.cli import main
    from softrod.web import export_page

    out = export_page(
        "tdcr3", tmp_path / "run.html", links=5, frames=3, run=("mujoco", "release"), duration=0.02
    )
    html = out.read_text()
    assert "window.__VISER_EMBED_DATA__=" in html
    assert not re.search(r"<(script|link)[^>]+(src|href)=\"(https?:)?//", html)
    bad = ["view", "tdcr3", "--export", str(tmp_path / "x.html"), "--run", "fem:release"]
    assert main(bad) == 2


def test_view_web_tells_the_targets_apart(sweep_file, tmp_path):
    from softrod.cli._mujoco_cmds import _web_target

    assert _web_target("tdcr3", None)[0] == "robot"
    assert _web_target("examples/scenes/tdcr_box_press.yaml", None)[0] == "scene"
    assert _web_target(str(sweep_file), None) == ("sweep", sweep_file)
    data = tmp_path / "rec.csv"
    data.write_text("t\n0\n")
    assert _web_target("ftdcr_v4", data)[0] == "recording"
