"""`softrod bench web`: slider-to-shape latency of the browser twin (issue 18).

Server side: from a tendon input change to the solved shape and readout sent to the page
(`TwinServer.request_update`). Browser side, timed inside the page (`PAGE_TIMESTAMPS`): from a
key press on the tendon slider in headless Chromium (playwright) to the end of the frame that
draws the answer (`browser_*`), and to the readout showing it (`readout_*`); None without
playwright or Chromium. Target: browser median <= 30 ms for tdcr3 with the exact solver.
"""

from __future__ import annotations

import shutil
import time
from typing import Any

import numpy as np

from softrod.web import RobotTwin, TwinServer

__all__ = ["BROWSER_TARGET_MS", "run_web_bench"]

#: Issue-18 target: median slider-to-shape latency in the browser, exact solver, tdcr3 [ms].
BROWSER_TARGET_MS = 30.0
#: Software WebGL flags for headless Chromium without a GPU.
CHROMIUM_ARGS = ["--use-gl=angle", "--use-angle=swiftshader", "--enable-unsafe-swiftshader"]
#: In-page timestamps (performance.now() [ms]): the key press on the slider, the readout
#: showing the frame that answers it (the message batch applied), and the end of the next
#: rendered frame, which draws that batch's shape. Measured in the page, so the harness's
#: polling neither adds to them nor loads the page (a 1 ms innerText poll did both).
PAGE_TIMESTAMPS = r"""
(() => {
  const t = (window.__softrodLatency = {key: [], readout: [], drawn: [], frame: 0});
  document.addEventListener("keydown", () => t.key.push(performance.now()), true);
  new MutationObserver(() => {
    let last = 0;
    const text = document.body.textContent;
    for (const m of text.matchAll(/frame (\d+)/g)) last = Math.max(last, +m[1]);
    if (last <= t.frame) return;
    t.frame = last;
    t.readout.push(performance.now());
    requestAnimationFrame(() => setTimeout(() => t.drawn.push(performance.now()), 0));
  }).observe(document, {subtree: true, childList: true, characterData: true});
})();
"""
#: Browser window [px]. Software WebGL (no GPU) spends time per pixel: a smaller window
#: separates the twin's own latency from the rasteriser's (`softrod bench web --viewport`).
DEFAULT_VIEWPORT = (1280, 800)
#: Longest wait for one browser update [ms]; the harness polls the page this often [ms].
WAIT_MS = 120_000
POLL_MS = 20


def _stats(prefix: str, times: list[float]) -> dict[str, float | None]:
    ms = 1e3 * np.asarray(times)
    return {
        f"{prefix}_median_ms": float(np.median(ms)),
        f"{prefix}_p95_ms": float(np.percentile(ms, 95)),
    }


def _server_side(server: TwinServer, n: int) -> list[float]:
    """n updates with tendon 1 swept up and down in small steps (a dragged slider)."""
    twin = server.twin
    values = 0.3 * twin.tension_max[0] * np.abs(np.sin(np.linspace(0.0, 2 * np.pi, n)))
    times = []
    for value in values:
        t0 = time.perf_counter()
        twin.set_tension(0, float(value))
        server.request_update()
        times.append(time.perf_counter() - t0)
    return times


def _browser_side(
    server: TwinServer, n: int, viewport: tuple[int, int] = DEFAULT_VIEWPORT
) -> dict[str, list[float]] | None:
    """Key press on the tendon slider in headless Chromium -> the page showing the answer:
    "browser" to the shape drawn (the frame after the readout), "readout" to the readout,
    in-page timestamps [s]; None without playwright or Chromium."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    chromium = shutil.which("chromium")
    if chromium is None:
        return None
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
        page.add_init_script(PAGE_TIMESTAMPS)
        page.goto(server.url)
        page.wait_for_selector("text=/^frame \\d+/", timeout=WAIT_MS)
        thumb = page.get_by_role("slider").nth(1)  # tendon 1 ([0]: MuJoCo links)
        thumb.focus()
        page.evaluate("window.__softrodLatency.key.length = 0")
        for i in range(n):
            drawn = page.evaluate("window.__softrodLatency.drawn.length")
            # Up one slider step, or down in the second half (the tension stays in range).
            thumb.press("ArrowRight" if i < n // 2 else "ArrowLeft")
            page.wait_for_function(
                "k => window.__softrodLatency.drawn.length > k",
                arg=drawn,
                polling=POLL_MS,
                timeout=WAIT_MS,
            )
        t = page.evaluate("window.__softrodLatency")
        browser.close()
    key = np.asarray(t["key"][:n])
    # Each press answered: the last readout / drawn frame (the page folds nothing here: one
    # press waits for its answer).
    readout = np.asarray(t["readout"][-n:])
    drawn = np.asarray(t["drawn"][-n:])
    return {"browser": list(1e-3 * (drawn - key)), "readout": list(1e-3 * (readout - key))}


def run_web_bench(
    n: int = 200,
    links: int = 20,
    browser: bool = True,
    viewport: tuple[int, int] = DEFAULT_VIEWPORT,
) -> dict[str, Any]:
    """Latency metrics `web.<model>.{server,browser}_{median,p95}_ms` for the exact solver and
    the MuJoCo chain (N = `links`) on tdcr3, n updates each; the browser window is
    `viewport` (width, height) [px]."""
    out: dict[str, Any] = {"web.updates": n, "web.viewport_px": f"{viewport[0]}x{viewport[1]}"}
    for model in ("exact", "mujoco"):
        server = TwinServer(RobotTwin("tdcr3", models=(model,), links=links), port=0)
        try:
            out.update(_stats(f"web.{model}.server", _server_side(server, n)))
            twin = server.twin
            twin.tensions[:] = 0.0
            server.request_update()
            times = _browser_side(server, n, viewport) if browser else None
            for kind in ("browser", "readout"):
                if times is None:
                    out[f"web.{model}.{kind}_median_ms"] = None
                    out[f"web.{model}.{kind}_p95_ms"] = None
                else:
                    out.update(_stats(f"web.{model}.{kind}", times[kind]))
        finally:
            server.stop()
    exact = out.get("web.exact.browser_median_ms")
    out["web.exact.browser_target_met"] = (
        None if exact is None else float(exact <= BROWSER_TARGET_MS)
    )
    return out
