"""`softrod bench web`: slider-to-shape latency of the browser twin (issue 18).

Server side: from a tendon input change to the solved shape and readout queued for the page
(`TwinServer.request_update`). Browser side: from a key press on the tendon slider in headless
Chromium (playwright) to the page showing the new frame's readout; skipped (nan) without
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
#: True once the page's readout ends with "frame c" (the readout's last line).
SHOWS_FRAME = "c => /frame (\\d+)\\s*$/.exec(document.body.innerText)?.[1] >= c"
#: Longest wait for one browser update [ms].
WAIT_MS = 120_000


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


def _browser_side(server: TwinServer, n: int) -> list[float] | None:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    chromium = shutil.which("chromium")
    if chromium is None:
        return None
    times = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(server.url)
        page.wait_for_selector("text=/^frame \\d+/", timeout=WAIT_MS)
        thumb = page.get_by_role("slider").nth(1)  # tendon 1 ([0]: MuJoCo links)
        thumb.focus()
        for i in range(n):
            count = server.update_count
            # Up one slider step, or down in the second half (the tension stays in range).
            t0 = time.perf_counter()
            thumb.press("ArrowRight" if i < n // 2 else "ArrowLeft")
            page.wait_for_function(
                SHOWS_FRAME,
                arg=count + 1,
                polling=1,
                timeout=WAIT_MS,
            )
            times.append(time.perf_counter() - t0)
        browser.close()
    return times


def run_web_bench(n: int = 200, links: int = 20, browser: bool = True) -> dict[str, Any]:
    """Latency metrics `web.<model>.{server,browser}_{median,p95}_ms` for the exact solver and
    the MuJoCo chain (N = `links`) on tdcr3, n updates each."""
    out: dict[str, Any] = {"web.updates": n}
    for model in ("exact", "mujoco"):
        server = TwinServer(RobotTwin("tdcr3", models=(model,), links=links), port=0)
        try:
            out.update(_stats(f"web.{model}.server", _server_side(server, n)))
            twin = server.twin
            twin.tensions[:] = 0.0
            server.request_update()
            times = _browser_side(server, n) if browser else None
            if times is None:
                out[f"web.{model}.browser_median_ms"] = None
                out[f"web.{model}.browser_p95_ms"] = None
            else:
                out.update(_stats(f"web.{model}.browser", times))
        finally:
            server.stop()
    exact = out.get("web.exact.browser_median_ms")
    out["web.exact.browser_target_met"] = (
        None if exact is None else float(exact <= BROWSER_TARGET_MS)
    )
    return out
