"""`softrod bench web`: slider-to-shape latency of the browser twin (issue 18).

Server side: from a tendon input change to the solved shape and readout sent to the page
(`TwinServer.request_update`). Browser side, timed inside the page (`PAGE_TIMESTAMPS`): from a
key press on the tendon slider in headless Chromium (playwright) to the end of the frame that
draws the answer (`browser_*`), and to the readout showing it (`readout_*`); None without
playwright or Chromium. Target: browser median <= 30 ms for tdcr3 with the exact solver.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np

from softrod.web import RobotTwin, TwinServer

__all__ = ["BROWSER_TARGET_MS", "BrowserStalled", "run_web_bench"]

#: Issue-18 target: median slider-to-shape latency in the browser, exact solver, tdcr3 [ms].
BROWSER_TARGET_MS = 30.0
#: Software WebGL flags for headless Chromium without a GPU.
CHROMIUM_ARGS = ["--use-gl=angle", "--use-angle=swiftshader", "--enable-unsafe-swiftshader"]
#: `--gl`: Chromium's software WebGL: Google's swiftshader (bundled, the default), or Mesa's
#: llvmpipe through ANGLE's GL-EGL backend (needs Mesa's libEGL, e.g. Debian's libegl-mesa0).
GL_ARGS = {
    "swiftshader": CHROMIUM_ARGS,
    "llvmpipe": ["--use-gl=angle", "--use-angle=gl-egl", "--ignore-gpu-blocklist"],
}
#: `--no-frame-limit`: render frames as fast as the CPU allows instead of headless Chromium's
#: 60 Hz pacing; the latency of the page and the twin without a display's frame clock.
NO_FRAME_LIMIT_ARGS = ["--disable-frame-rate-limit"]
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
#: Chromium's processes whose CPU time the bench splits an update into: "gpu-process"
#: (software WebGL: swiftshader, and the compositor) and "renderer" (the page's JavaScript).
CPU_KINDS = ("gpu-process", "renderer")
#: Longest wait for one browser update [ms]; the harness polls the page this often [ms].
WAIT_MS = 120_000
POLL_MS = 20


class BrowserStalled(RuntimeError):
    """The page in headless Chromium stopped answering key presses (WAIT_MS)."""


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


def _chromium_cpu() -> dict[str, float] | None:
    """CPU time [s] (user + system) of this process's Chromium descendants by process type
    ("browser", "gpu-process", "renderer", ...); None where /proc is missing (not Linux)."""
    proc = Path("/proc")
    if not (proc / "self" / "stat").exists():
        return None
    tick = os.sysconf("SC_CLK_TCK")
    stats = {}
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            # Fields after the command name: state, ppid, ..., utime (12th), stime (13th).
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue  # the process ended meanwhile
        stats[int(entry.name)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / tick, cmd)
    # Descendants of this process (playwright's driver, then Chromium and its children).
    mine, grew = {os.getpid()}, True
    while grew:
        new = {pid for pid, (ppid, _, _) in stats.items() if ppid in mine} - mine
        mine |= new
        grew = bool(new)
    out: dict[str, float] = {}
    for pid in mine - {os.getpid()}:
        _, cpu, cmd = stats[pid]
        words = cmd.split()
        if not words or "chrom" not in Path(words[0]).name:
            continue
        kind = next((w[len("--type=") :] for w in words if w.startswith("--type=")), "browser")
        out[kind] = out.get(kind, 0.0) + cpu
    return out


def _cpu_per_update(
    before: dict[str, float] | None, after: dict[str, float] | None, n: int
) -> dict[str, float]:
    """CPU time per update [s] of each kind in CPU_KINDS between two `_chromium_cpu` calls."""
    if before is None or after is None:
        return {}
    return {k: (after.get(k, 0.0) - before.get(k, 0.0)) / n for k in CPU_KINDS if k in after}


def _browser_side(
    server: TwinServer,
    n: int,
    viewport: tuple[int, int] = DEFAULT_VIEWPORT,
    chromium_args: list[str] | None = None,
) -> dict[str, list[float]] | None:
    """Key press on the tendon slider in headless Chromium -> the page showing the answer:
    "browser" to the shape drawn (the frame after the readout), "readout" to the readout,
    in-page timestamps [s], and "cpu_<kind>": Chromium's CPU time per update [s] by process
    (CPU_KINDS; Linux only: CPU time does not grow with the machine's load, wall time does);
    None without playwright or Chromium. `chromium_args`: Chromium's flags [CHROMIUM_ARGS]."""
    try:
        from playwright.sync_api import TimeoutError as PlaywrightTimeout
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    chromium = shutil.which("chromium")
    if chromium is None:
        return None
    # A page that stops answering (software WebGL starving the CPU: `--no-frame-limit` on a
    # small machine) is reported as such, not as a traceback.
    try:
        with sync_playwright() as pw:
            args = CHROMIUM_ARGS if chromium_args is None else chromium_args
            browser = pw.chromium.launch(executable_path=chromium, args=args)
            page = browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
            page.add_init_script(PAGE_TIMESTAMPS)
            page.goto(server.url)
            page.wait_for_selector("text=/^frame \\d+/", timeout=WAIT_MS)
            thumb = page.get_by_role("slider").nth(1)  # tendon 1 ([0]: MuJoCo links)
            thumb.focus()
            page.evaluate("window.__softrodLatency.key.length = 0")
            cpu0 = _chromium_cpu()
            for i in range(n):
                drawn = page.evaluate("window.__softrodLatency.drawn.length")
                # Up one slider step, or down in the second half (the tension stays in range).
                thumb.press("ArrowRight" if i < n // 2 else "ArrowLeft", timeout=WAIT_MS)
                page.wait_for_function(
                    "k => window.__softrodLatency.drawn.length > k",
                    arg=drawn,
                    polling=POLL_MS,
                    timeout=WAIT_MS,
                )
            t = page.evaluate("window.__softrodLatency")
            cpu = _cpu_per_update(cpu0, _chromium_cpu(), n)
            browser.close()
    except PlaywrightTimeout as exc:
        raise BrowserStalled(
            f"the page did not answer within {WAIT_MS // 1000} s ({str(exc).splitlines()[0]})"
        ) from None
    key = np.asarray(t["key"][:n])
    # Each press answered: the last readout / drawn frame (the page folds nothing here: one
    # press waits for its answer).
    readout = np.asarray(t["readout"][-n:])
    drawn = np.asarray(t["drawn"][-n:])
    out = {"browser": list(1e-3 * (drawn - key)), "readout": list(1e-3 * (readout - key))}
    out.update({f"cpu_{kind}": [value] for kind, value in cpu.items()})
    return out


def run_web_bench(
    n: int = 200,
    links: int = 20,
    browser: bool = True,
    viewport: tuple[int, int] = DEFAULT_VIEWPORT,
    gl: str = "swiftshader",
    frame_limit: bool = True,
) -> dict[str, Any]:
    """Latency metrics `web.<model>.{server,readout,browser}_{median,p95}_ms` for the exact
    solver and the MuJoCo chain (N = `links`) on tdcr3, n updates each, and Chromium's CPU time
    per browser update `web.<model>.browser_cpu_{gpu,page}_ms` (its GPU process: software
    WebGL and compositing; the page's renderer: viser's client); the browser window is
    `viewport` (width, height) [px], its software WebGL `gl` (a GL_ARGS key), and with
    `frame_limit` False it renders unpaced (NO_FRAME_LIMIT_ARGS)."""
    if gl not in GL_ARGS:
        raise ValueError(f"gl must be one of {sorted(GL_ARGS)}, got {gl!r}")
    args = GL_ARGS[gl] + ([] if frame_limit else NO_FRAME_LIMIT_ARGS)
    out: dict[str, Any] = {
        "web.updates": n,
        "web.viewport_px": f"{viewport[0]}x{viewport[1]}",
        "web.gl": gl,
        "web.frame_limit": frame_limit,
    }
    for model in ("exact", "mujoco"):
        server = TwinServer(RobotTwin("tdcr3", models=(model,), links=links), port=0)
        try:
            out.update(_stats(f"web.{model}.server", _server_side(server, n)))
            twin = server.twin
            twin.tensions[:] = 0.0
            server.request_update()
            times = _browser_side(server, n, viewport, args) if browser else None
            for kind in ("browser", "readout"):
                if times is None:
                    out[f"web.{model}.{kind}_median_ms"] = None
                    out[f"web.{model}.{kind}_p95_ms"] = None
                else:
                    out.update(_stats(f"web.{model}.{kind}", times[kind]))
            for kind, label in zip(CPU_KINDS, ("gpu", "page"), strict=True):
                cpu = times.get(f"cpu_{kind}") if times is not None else None
                out[f"web.{model}.browser_cpu_{label}_ms"] = None if not cpu else 1e3 * cpu[0]
        finally:
            server.stop()
    exact = out.get("web.exact.browser_median_ms")
    out["web.exact.browser_target_met"] = (
        None if exact is None else float(exact <= BROWSER_TARGET_MS)
    )
    return out
