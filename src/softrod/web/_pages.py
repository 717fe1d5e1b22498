"""The viser pages of the other targets and the robot page's play panel (docs/web.md).

Thin like `_server.py`: widgets change the state classes (`run_dynamics`/`Playback`,
`SceneTwin`, `RecordingTwin`, `SweepTwin`) and draw what they answer.
"""

from __future__ import annotations

import contextlib
import io
import threading
from pathlib import Path
from typing import Any

import numpy as np
import viser

from softrod.web._data import RecordingTwin, SweepTwin
from softrod.web._playback import (
    RUN_DURATION,
    RUN_ENGINES,
    RUN_KINDS,
    Playback,
    SceneTwin,
    is_magnetic,
    run_dynamics,
)
from softrod.web._twin import ModelView, RobotTwin, tube_mesh

__all__ = [
    "PlayPanel",
    "RecordingServer",
    "SceneServer",
    "SweepServer",
    "serve_recording",
    "serve_scene",
    "serve_sweep",
]

#: Colour of a played run's backbone (RGB 0-255), of the measured and model tip paths.
PLAY_COLOR = (150, 70, 200)
MEASURED_COLOR = (40, 160, 70)
MODEL_COLOR = (70, 130, 230)
#: Labels of the run engines.
ENGINE_LABELS = {"lgvi": "LGVI (softrod.dynamics)", "mujoco": "MuJoCo chain"}
#: Page update rate of playing runs, live scenes and recordings [1/s].
PAGE_FPS = 30.0
#: Drawn radius of a backbone at least [m]; marker spheres and sweep points [m].
MIN_RADIUS = 0.0015
MARKER_RADIUS = 0.003
POINT_SIZE = 0.004
#: Longest wait for the browser's rendered frame of "save PNG" [s] (software WebGL is slow).
RENDER_TIMEOUT = 60.0
#: Size of the saved PNG [px].
PNG_SIZE = (800, 600)


def _radius(spec: Any) -> float:
    return max(float(spec.backbone.radius or 0.0), MIN_RADIUS)


def _camera(server: viser.ViserServer, center: np.ndarray, size: float) -> None:
    c = np.asarray(center, dtype=float)
    server.scene.set_up_direction("+z")
    server.initial_camera.position = tuple(c + size * np.array([0.9, -1.1, 0.6]))
    server.initial_camera.look_at = tuple(c)
    server.initial_camera.near = size / 100


def add_png_button(server: viser.ViserServer) -> Any:
    """The "save PNG" button every page has: the clicking browser renders the current 3-D view
    (PNG_SIZE) and downloads it as softrod_view.png."""
    button = server.gui.add_button("save PNG")
    button.on_click(_save_png)
    return button


def _save_png(event: Any) -> None:
    from PIL import Image

    client = event.client
    if client is None:
        return
    width, height = PNG_SIZE
    try:
        image = client.get_render(
            height=height, width=width, transport_format="png", timeout=RENDER_TIMEOUT
        )
    except TimeoutError:
        client.add_notification("save PNG", "the browser returned no frame in time")
        return
    buf = io.BytesIO()
    Image.fromarray(image).save(buf, format="PNG")
    client.send_file_download("softrod_view.png", buf.getvalue(), save_immediately=True)


class _Ticker:
    """A daemon thread calling `tick()` PAGE_FPS times a second until `close()`."""

    def __init__(self, tick: Any) -> None:
        self._tick = tick
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(1.0 / PAGE_FPS):
            self._tick()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5.0)


class _Tube:
    """One backbone drawn as a tube mesh plus a tip sphere, updated in place."""

    def __init__(self, server: viser.ViserServer, name: str, color: tuple[int, int, int]) -> None:
        self.server, self.name, self.color = server, name, color
        self.mesh: Any = None
        self.tip: Any = None

    def show(self, view: ModelView | None, radius: float) -> None:
        if view is None or len(view.positions) < 2:
            for node in (self.mesh, self.tip):
                if node is not None:
                    node.visible = False
            return
        verts, faces = tube_mesh(view.positions, radius, view.rotations)
        if self.mesh is None or self.mesh.vertices.shape != verts.shape:
            if self.mesh is not None:
                self.mesh.remove()
            self.mesh = self.server.scene.add_mesh_simple(
                f"{self.name}/backbone", verts, faces, color=self.color
            )
        else:
            self.mesh.vertices = verts
            self.mesh.visible = True
        if self.tip is None:
            self.tip = self.server.scene.add_icosphere(
                f"{self.name}/tip", radius=1.6 * radius, color=self.color
            )
        self.tip.position = view.tip_position
        self.tip.visible = True


class PlayPanel:
    """The robot page's "Play" folder: run LGVI or the MuJoCo chain from the twin's state
    (`run_dynamics`) and play the run with a timeline (play/pause, scrub)."""

    def __init__(self, server: viser.ViserServer, twin: RobotTwin) -> None:
        self.server, self.twin = server, twin
        self.playback: Playback | None = None
        self.shown = 0
        self._radius = _radius(twin.spec)
        self._tube = _Tube(server, "/playback", PLAY_COLOR)
        self._lock = threading.Lock()
        gui = server.gui
        kinds = [k for k in RUN_KINDS if k != "magnet field" or is_magnetic(twin)]
        with gui.add_folder("Play"):
            self.engine = gui.add_dropdown(
                "engine", options=[ENGINE_LABELS[e] for e in RUN_ENGINES]
            )
            self.kind = gui.add_dropdown("run", options=kinds)
            self.duration = gui.add_number(
                "duration [s]", RUN_DURATION, min=0.01, max=10.0, step=0.01
            )
            self.run_button = gui.add_button("run")
            self.time: Any = gui.add_slider("time [s]", 0.0, RUN_DURATION, 0.001, 0.0)
            self.playing = gui.add_checkbox("play", False)
            self.status = gui.add_markdown("no run yet")
        self.run_button.on_click(lambda _: self._run_clicked())
        self.time.on_update(lambda _: self.show_time(float(self.time.value)))
        self._ticker = _Ticker(self._tick)

    def _run_clicked(self) -> None:
        self.run()

    def run(self) -> Playback | None:
        """Run the chosen engine and kind; the timeline then plays it (None if refused)."""
        names = {v: k for k, v in ENGINE_LABELS.items()}
        engine, kind = names[self.engine.value], str(self.kind.value)
        self.status.content = f"running {ENGINE_LABELS[engine]}: {kind} ..."
        try:
            pb = run_dynamics(self.twin, engine, kind, float(self.duration.value))
        except (ValueError, RuntimeError) as exc:
            self.status.content = f"**run refused**: {exc}"
            return None
        with self._lock:
            self.playback = pb
        self.time.max = float(max(pb.t[-1], 1e-3)) if pb.n_frames else 1e-3
        self.status.content = (
            f"{ENGINE_LABELS[engine]}, {kind}: {pb.n_frames} frames, "
            f"{'ok' if pb.success else '**FAILED**'} ({pb.message}), run took {pb.wall_time:.2f} s"
        )
        self.time.value = 0.0
        self.show_time(0.0)
        return pb

    def show_time(self, t: float) -> None:
        """Draw the run's frame at time t [s]."""
        with self._lock:
            pb = self.playback
        if pb is None or not pb.n_frames:
            return
        self.shown = pb.index_at(t)
        with self.server.atomic():
            self._tube.show(pb.view(self.shown), self._radius)
        self.server.flush()

    def _tick(self) -> None:
        pb = self.playback
        if pb is None or not self.playing.value or not pb.n_frames:
            return
        # Real time; the timeline wraps around at the end of the run.
        t = float(self.time.value) + 1.0 / PAGE_FPS
        self.time.value = t if t <= pb.t[-1] else 0.0

    def close(self) -> None:
        self._ticker.close()


def viser_quiet() -> contextlib.AbstractContextManager[Any]:
    """viser prints its address panel and "Server stopped" to stdout even with verbose=False;
    discarded, so that stdout stays one JSON object where a command says so (softrod prints
    the page's address itself)."""
    return contextlib.redirect_stdout(io.StringIO())


class _Page:
    """A viser server with a grid and a readout that counts its frames."""

    def __init__(self, host: str, port: int, center: np.ndarray, size: float) -> None:
        with viser_quiet():
            self.server = viser.ViserServer(host=host, port=port, verbose=False)
        self.update_count = 0
        _camera(self.server, center, size)
        self.server.scene.add_grid(
            "/grid",
            width=2 * size,
            height=2 * size,
            cell_size=size / 10,
            section_size=size / 2,
        )
        self._ticker: _Ticker | None = None

    @property
    def url(self) -> str:
        return f"http://{self.server.get_host()}:{self.server.get_port()}"

    def _count(self, readout: Any, text: str) -> None:
        # The frame counter lets a browser (the tests) see each update.
        self.update_count += 1
        readout.content = f"{text}\n\nframe {self.update_count}"

    def stop(self) -> None:
        """Stop the page's thread and the server (the port is released)."""
        if self._ticker is not None:
            self._ticker.close()
        with viser_quiet():
            self.server.stop()


class SceneServer(_Page):
    """A MuJoCo scene live: every geom drawn, one slider per actuator, run/pause and reset."""

    def __init__(self, twin: SceneTwin, host: str = "127.0.0.1", port: int = 8080) -> None:
        self.twin = twin
        size = twin.extent()
        super().__init__(host, port, np.array(twin.model.stat.center), size)
        scene = self.server.scene
        self._nodes: dict[int, Any] = {}
        meshes = twin.geom_meshes()
        for g in meshes:
            self._nodes[g.geom] = scene.add_mesh_simple(
                f"/scene/geom_{g.geom}",
                g.vertices,
                g.faces,
                color=g.color,
                opacity=None if g.opacity >= 1.0 else g.opacity,
            )
        self._moving = [g.geom for g in meshes if g.moving]
        self._lock = threading.Lock()
        gui = self.server.gui
        with gui.add_folder("Simulation"):
            self.running = gui.add_checkbox("run", True)
            reset = gui.add_button("reset")
        reset.on_click(lambda _: self._reset())
        self.sliders = []
        with gui.add_folder("Actuators"):
            for i, name in enumerate(twin.actuator_names):
                lo, hi = (float(x) for x in twin.ctrl_range[i])
                step = (hi - lo) / 200 if hi > lo else 0.01
                slider = gui.add_slider(name, lo, hi, step, float(twin.ctrl[i]))
                slider.on_update(self._control_callback(i, slider))
                self.sliders.append(slider)
        add_png_button(self.server)
        self.readout = gui.add_markdown("starting ...")
        self.draw()
        self._ticker = _Ticker(self._tick)

    def _control_callback(self, i: int, slider: Any) -> Any:
        def callback(_: Any) -> None:
            try:
                self.twin.set_control(i, float(slider.value))
            except (TypeError, ValueError):
                return  # a malformed value leaves the control as it was

        return callback

    def _reset(self) -> None:
        with self._lock:
            self.twin.reset()
        self.draw()

    def _tick(self) -> None:
        if not self.running.value:
            return
        with self._lock:
            self.twin.step(1.0 / PAGE_FPS)
        self.draw()

    def draw(self) -> None:
        """Send every moving geom's pose and the readout."""
        with self._lock:
            pos, quat = self.twin.geom_poses(self._moving)
            t = self.twin.time
        with self.server.atomic():
            for k, g in enumerate(self._moving):
                node = self._nodes[g]
                node.position = pos[k]
                node.wxyz = quat[k]
            text = f"scene {self.twin.name}: t = {t:.3f} s"
            if self.twin.resets:
                text += f" (**diverged and reset {self.twin.resets} times**)"
            self._count(self.readout, text)
        self.server.flush()


class RecordingServer(_Page):
    """A replayed recording: measured and model tip paths, the current row's markers, the
    error per row as a plot, and a row scrubber."""

    def __init__(self, twin: RecordingTwin, host: str = "127.0.0.1", port: int = 8080) -> None:
        self.twin = twin
        pts = twin.predicted
        if twin.measured is not None:
            pts = np.vstack([pts, twin.measured])
        center = pts.mean(axis=0)
        size = max(float(np.ptp(pts, axis=0).max()), 0.05) * 1.5
        super().__init__(host, port, center, size)
        scene = self.server.scene
        paths = [("model", twin.predicted, MODEL_COLOR)]
        if twin.measured is not None:
            paths.append(("measured", twin.measured, MEASURED_COLOR))
        self._markers = {}
        for name, path, color in paths:
            segs = np.stack([path[:-1], path[1:]], axis=1)
            scene.add_line_segments(
                f"/paths/{name}", segs, color, thickness=2.0, thickness_units="screen"
            )
            self._markers[name] = scene.add_icosphere(
                f"/markers/{name}", radius=MARKER_RADIUS, color=color
            )
        gui = self.server.gui
        with gui.add_folder("Recording"):
            self.row: Any = gui.add_slider("row", 0, max(twin.rows - 1, 1), 1, 0)
            self.playing = gui.add_checkbox("play", False)
        if twin.error_mm is not None:
            gui.add_uplot(
                data=(twin.t, twin.error_mm),
                series=({"label": "t [s]"}, {"label": "tip error [mm]", "stroke": "red"}),
                title="tip error per row [mm]",
                aspect=2.0,
            )
        add_png_button(self.server)
        self.readout = gui.add_markdown("...")
        self.row.on_update(lambda _: self.show_row(int(self.row.value)))
        self.show_row(0)
        self._ticker = _Ticker(self._tick)

    def show_row(self, i: int) -> None:
        """Move the markers to row i and list it in the readout."""
        i = int(np.clip(i, 0, self.twin.rows - 1))
        row = self.twin.row(i)
        s = self.twin.summary()
        lines = [
            f"{self.twin.name} ({self.twin.model}) on {self.twin.path.name}: "
            f"row {i + 1} of {self.twin.rows}, t = {row['t']:.3f} s",
            f"model tip [mm]: {_mm(row['predicted'])}",
        ]
        if row["measured"] is not None:
            lines.append(f"measured tip [mm]: {_mm(row['measured'])}")
            lines.append(f"error [mm]: {row['error_mm']:.2f}")
            lines.append(
                f"tip error mean / median / max [mm]: {s['mean_mm']:.2f} / "
                f"{s['median_mm']:.2f} / {s['max_mm']:.2f}"
            )
        lines.append(f"converged: {row['ok']} ({100 * s['converged_fraction']:.0f} % of rows)")
        with self.server.atomic():
            self._markers["model"].position = row["predicted"]
            if row["measured"] is not None:
                self._markers["measured"].position = row["measured"]
            self._count(self.readout, "\n\n".join(lines))
        self.server.flush()

    def _tick(self) -> None:
        if self.playing.value:
            self.row.value = (int(self.row.value) + 1) % self.twin.rows


class SweepServer(_Page):
    """A sweep's points as a cloud coloured by a chosen column; a click (or the point index)
    shows that design's shape and its row."""

    def __init__(self, twin: SweepTwin, host: str = "127.0.0.1", port: int = 8080) -> None:
        self.twin = twin
        pts = twin.points if len(twin.points) else np.zeros((1, 3))
        size = max(float(np.ptp(pts, axis=0).max()), 0.1) * 1.5
        super().__init__(host, port, pts.mean(axis=0), size)
        self.selected: int | None = None
        self._shape = _Tube(self.server, "/design", MODEL_COLOR)
        gui = self.server.gui
        default = next((c for c in twin.parameters if c in twin.columns), None)
        default = default or (twin.columns[0] if twin.columns else None)
        with gui.add_folder("Sweep"):
            self.color_by = gui.add_dropdown(
                "colour by", options=twin.columns or ["-"], initial_value=default or "-"
            )
            self.point: Any = gui.add_number(
                "point", 0, min=0, max=max(len(twin.rows) - 1, 0), step=1
            )
        add_png_button(self.server)
        self.readout = gui.add_markdown("...")
        self.cloud = self.server.scene.add_point_cloud(
            "/sweep/points",
            points=twin.points.astype(np.float32),
            colors=self._colors(),
            point_size=POINT_SIZE,
            point_shape="circle",
            precision="float32",
        )
        self.color_by.on_update(lambda _: self._recolor())
        self.point.on_update(lambda _: self.select(int(self.point.value)))

        @self.server.scene.on_click()
        def _(event: Any) -> None:
            i = twin.pick(event.ray_origin, event.ray_direction)
            if i is not None:
                self.point.value = i  # its callback selects

        if twin.rows:
            self.select(0)
        else:
            self._count(self.readout, f"sweep {twin.name}: no successful points")

    def _colors(self) -> np.ndarray:
        col = str(self.color_by.value)
        if col not in self.twin.columns:
            return np.full((len(self.twin.points), 3), 128, dtype=np.uint8)
        return self.twin.colors(col)

    def _recolor(self) -> None:
        self.cloud.colors = self._colors()
        self.server.flush()

    def select(self, i: int) -> None:
        """Show point i's design shape and row."""
        if not 0 <= i < len(self.twin.rows):
            return
        self.selected = i
        try:
            view: ModelView | None = self.twin.shape(i)
            shape = "solved" if view and view.success else f"**FAILED**: {view and view.message}"
        except (ValueError, RuntimeError) as exc:
            # "no shape for task X: why" (a sweep without a robot) reads as it is.
            text = str(exc)
            view, shape = None, text if text.startswith("no shape") else f"no shape ({text})"
        row = self.twin.describe(i)
        lines = [f"sweep {self.twin.name}: point {i} of {len(self.twin.rows)} ({shape})"]
        lines += [f"{k}: {_fmt(v)}" for k, v in row.items()]
        if self.twin.n_failed:
            lines.append(f"failed points (not drawn): {self.twin.n_failed}")
        with self.server.atomic():
            self._shape.show(view, MIN_RADIUS)
            self._count(self.readout, "\n\n".join(lines))
        self.server.flush()


def _mm(x: np.ndarray) -> str:
    return ", ".join(f"{1e3 * v:.2f}" for v in x)


def _fmt(v: Any) -> str:
    return f"{v:.6g}" if isinstance(v, float) else str(v)


def serve_scene(
    path: str | Path, host: str = "127.0.0.1", port: int = 8080, links: int | None = None
) -> SceneServer:
    """Start the live page of a scene YAML (or a robot alone); returns the running server."""
    return SceneServer(SceneTwin(path, links=links), host=host, port=port)


def serve_recording(replay: Any, host: str = "127.0.0.1", port: int = 8080) -> RecordingServer:
    """Start the page of a replayed recording (a `softrod.validate.replay_recording` result)."""
    return RecordingServer(RecordingTwin(replay), host, port)


def serve_sweep(path: str | Path, host: str = "127.0.0.1", port: int = 8080) -> SweepServer:
    """Start the page of a sweep's Parquet result."""
    return SweepServer(SweepTwin(path), host=host, port=port)
