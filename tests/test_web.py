"""The browser twin in a real browser: headless Chromium (Debian's `chromium`) through playwright
against a page served on 127.0.0.1 on a free port (issue 18).

One browser and one page for the module (a launch and a page load cost seconds here); the
tests run in file order on that page.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

INSTALL_HINT = (
    "needs viser, playwright and Chromium: pip install 'softrod[web,dev]' and "
    "apt-get install chromium (or set SOFTROD_CHROMIUM to a Chromium executable)"
)

pytest.importorskip("viser", reason=INSTALL_HINT)
sync_api = pytest.importorskip("playwright.sync_api", reason=INSTALL_HINT)
CHROMIUM = os.environ.get("SOFTROD_CHROMIUM") or shutil.which("chromium")
if CHROMIUM is None:
    pytest.skip(INSTALL_HINT, allow_module_level=True)

from softrod.web import RobotTwin, TwinServer  # noqa: E402

#: Longest wait for the page or the readout [ms]: the shared test machine is slow.
WAIT_MS = 60_000
#: Software WebGL flags (no GPU in CI).
CHROMIUM_ARGS = ["--use-gl=angle", "--use-angle=swiftshader", "--enable-unsafe-swiftshader"]
#: Console messages that are not the page's fault: viser's three.js deprecation notice and
#: swiftshader's note that WebGL runs in software.
BENIGN_CONSOLE = re.compile(r"deprecated|swiftshader|software|GPU stall|WebGL", re.IGNORECASE)
#: Tip agreement of PCC and the exact rod under tendon loads alone [m] (solver tolerance).
TIP_MATCH = 1e-6
#: A non-blank canvas has at least this many distinct colours (grid, tube, shading).
MIN_CANVAS_COLOURS = 20


@pytest.fixture(scope="module")
def twin_server():
    server = TwinServer(RobotTwin("tdcr3", models=("exact",), links=10), port=0)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def page(twin_server):
    console: list[tuple[str, str]] = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        pg = browser.new_page(viewport={"width": 640, "height": 480})
        pg.on("console", lambda m: console.append((m.type, m.text)))
        pg.on("pageerror", lambda e: console.append(("pageerror", str(e))))
        pg.goto(twin_server.url)
        pg.wait_for_selector("text=tip [mm]", timeout=WAIT_MS)
        pg.console_log = console  # type: ignore[attr-defined]
        yield pg
        browser.close()


def _tip_text(pg) -> str:
    return pg.locator("text=/^tip \\[mm\\]/").first.inner_text()


def test_page_loads_without_console_errors(page):
    assert "tip [mm]: 0.00, 0.00, 186.50" in _tip_text(page)
    errors = [
        text
        for kind, text in page.console_log
        if kind in ("error", "pageerror") and not BENIGN_CONSOLE.search(text)
    ]
    assert errors == []


def test_tendon_slider_moves_the_tip(page, twin_server):
    before = _tip_text(page)
    thumb = page.get_by_role("slider").nth(1)  # [0] is the MuJoCo links slider
    thumb.focus()
    thumb.press("End")  # tendon 1 to its maximum
    page.wait_for_function("t => !document.body.innerText.includes(t)", arg=before, timeout=WAIT_MS)
    tip = [float(x) for x in _tip_text(page).split(":")[1].split(",")]
    # Server side: the tension reached the twin and the shape bent toward +x (tendon 1 at 0 deg).
    assert twin_server.twin.tensions[0] == pytest.approx(twin_server.twin.tension_max[0], abs=0.01)
    assert twin_server.frame.views["exact"].success
    assert tip[0] > 20.0
    np.testing.assert_allclose(tip, 1e3 * twin_server.frame.views["exact"].tip_position, atol=0.01)


def test_model_switch(page, twin_server):
    exact_tip = twin_server.frame.views["exact"].tip_position.copy()
    # force: the panel's animations keep playwright's "stable" check waiting under swiftshader.
    page.get_by_label("model", exact=True).click(force=True)
    page.get_by_role("option", name="PCC").click(force=True)
    page.wait_for_selector("text=primary model: PCC", timeout=WAIT_MS)
    assert twin_server.twin.models == ("pcc",)
    view = twin_server.frame.views["pcc"]
    assert view.success
    # Under tendon loads alone the exact rod bends at constant curvature: PCC is exact there.
    np.testing.assert_allclose(view.tip_position, exact_tip, atol=TIP_MATCH)
    # The scene shows PCC's backbone and hides the exact one.
    assert twin_server._nodes["pcc/backbone"].visible
    assert not twin_server._nodes["exact/backbone"].visible
    page.get_by_label("overlay exact (shooting)").check(force=True)  # Mantine hides the input
    page.wait_for_selector("text=/tip distance PCC - exact/", timeout=WAIT_MS)
    assert twin_server.twin.models == ("pcc", "exact")
    assert twin_server.frame.tip_distance[("pcc", "exact")] < TIP_MATCH


def test_canvas_is_not_blank(page):
    from PIL import Image

    png = page.locator("canvas").first.screenshot()
    pixels = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).reshape(-1, 3)
    assert len(np.unique(pixels, axis=0)) >= MIN_CANVAS_COLOURS


def test_save_png_downloads_a_non_blank_view(page):
    from PIL import Image

    # force: the panel's animations keep playwright's "stable" check waiting under swiftshader.
    with page.expect_download(timeout=WAIT_MS) as download:
        page.get_by_role("button", name="save PNG").click(force=True)
    assert download.value.suggested_filename == "softrod_view.png"
    image = Image.open(download.value.path())
    assert image.size == (800, 600)
    pixels = np.asarray(image.convert("RGB")).reshape(-1, 3)
    assert len(np.unique(pixels, axis=0)) >= MIN_CANVAS_COLOURS


def test_play_panel_runs_and_scrubs_a_dynamics_run(page, twin_server):
    play = twin_server.play
    play.duration.value = 0.05
    play.engine.value = "MuJoCo chain"
    # force: the panel's animations keep playwright's "stable" check waiting under swiftshader.
    page.get_by_role("button", name="run").click(force=True)
    page.wait_for_selector("text=/MuJoCo chain, release: \\d+ frames, ok/", timeout=WAIT_MS)
    pb = play.playback
    assert pb is not None and pb.engine == "mujoco" and pb.success and pb.n_frames >= 5
    # Scrubbing the timeline shows that frame.
    play.time.value = float(pb.t[-1])
    assert play.shown == pb.n_frames - 1 and play._tube.mesh.visible
    errors = [
        text
        for kind, text in page.console_log
        if kind in ("error", "pageerror") and not BENIGN_CONSOLE.search(text)
    ]
    assert errors == []


def test_malformed_messages_are_rejected(page, twin_server):
    import msgpack
    import viser
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    tensions = twin_server.twin.tensions.copy()
    ws_url = twin_server.url.replace("http", "ws")
    bad = (
        b"\x00\xffnot msgpack at all",
        msgpack.packb({"type": "NoSuchMessage", "x": 1}),
        msgpack.packb({"type": "GuiUpdateMessage", "uuid": "nope", "updates": {}}),
        "a text frame",
    )
    # One connection per message: the server may drop a client that sent garbage (close code
    # 1011) before the next frame goes out; what matters is that the server survives it.
    for message in bad:
        try:
            with connect(ws_url, subprotocols=[f"viser-v{viser.__version__}"]) as ws:
                ws.send(message)
                time.sleep(0.2)
        except ConnectionClosed:
            pass
    time.sleep(1.0)
    # The server still answers, and the page still drives it.
    np.testing.assert_array_equal(twin_server.twin.tensions, tensions)
    before = _tip_text(page)
    thumb = page.get_by_role("slider").nth(1)
    thumb.focus()
    thumb.press("Home")
    page.wait_for_function("t => !document.body.innerText.includes(t)", arg=before, timeout=WAIT_MS)
    assert twin_server.twin.tensions[0] == 0.0


def test_cli_server_binds_locally_and_stops_cleanly():
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1] / "src")}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from softrod.cli import _entry; _entry()",
            "view",
            "tdcr3",
            "--web",
            "--port",
            "0",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        start_new_session=True,
    )
    try:
        url = None
        deadline = time.monotonic() + WAIT_MS / 1000
        assert proc.stdout is not None
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if match := re.search(r"serving \S+ at (http://\S+)", line):
                url = match.group(1)
                break
        assert url is not None and url.startswith("http://127.0.0.1:")
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    # No process of that session is left behind.
    left = subprocess.run(
        ["pgrep", "-s", str(proc.pid)], capture_output=True, text=True, check=False
    ).stdout
    assert left.strip() == ""


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_bench_splits_chromium_cpu_by_process(page):
    """`softrod bench web` finds this test's Chromium (a descendant of this process) and
    splits its CPU time into the GPU process (software WebGL) and the page's renderer."""
    from softrod.bench._web import CPU_KINDS, _chromium_cpu, _cpu_per_update

    before = _chromium_cpu()
    assert before is not None and set(CPU_KINDS) <= set(before)
    page.evaluate("document.body.offsetHeight")  # some work for the renderer
    per_update = _cpu_per_update(before, _chromium_cpu(), 2)
    assert set(per_update) == set(CPU_KINDS)
    assert all(value >= 0.0 for value in per_update.values())


@pytest.mark.parametrize("gl, renderer", [("swiftshader", "SwiftShader"), ("llvmpipe", "llvmpipe")])
def test_bench_gl_option_selects_the_software_renderer(page, gl, renderer):
    """`softrod bench web --gl` runs WebGL on the renderer it names (its flags reach Chromium)."""
    import ctypes.util

    from softrod.bench._web import GL_ARGS

    if gl == "llvmpipe" and ctypes.util.find_library("EGL_mesa") is None:
        pytest.skip("llvmpipe needs Mesa's libEGL: apt-get install libegl-mesa0")
    # A second browser from the module's playwright (one sync playwright per thread).
    browser = page.context.browser.browser_type.launch(executable_path=CHROMIUM, args=GL_ARGS[gl])
    try:
        pg = browser.new_page(viewport={"width": 64, "height": 64})
        shown = pg.evaluate(
            """() => {
              const g = document.createElement("canvas").getContext("webgl2");
              const info = g.getExtension("WEBGL_debug_renderer_info");
              return g.getParameter(info.UNMASKED_RENDERER_WEBGL);
            }"""
        )
    finally:
        browser.close()
    assert renderer in shown
