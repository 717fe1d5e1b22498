"""The viser layer of the browser twin: a thin page over `RobotTwin` (docs/web.md).

Every widget callback only changes the twin's inputs and asks for a redraw; the redraw solves
and draws the newest inputs once, however many slider events arrived meanwhile (a dragged
slider never queues stale solves).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import viser

from softrod.web._pages import PlayPanel, add_png_button, viser_quiet
from softrod.web._playback import RUN_DURATION, run_dynamics
from softrod.web._twin import (
    MODEL_NAMES,
    ModelView,
    RobotTwin,
    TwinFrame,
    disk_circles,
    tendon_paths,
    tube_mesh,
)

__all__ = ["TwinServer", "export_page", "serve_robot"]

#: Colour of each model's backbone, of a failed solve, of the disks and tendons (RGB 0-255).
COLORS = {"exact": (70, 130, 230), "pcc": (60, 180, 90), "mujoco": (240, 150, 40)}
FAILED_COLOR = (220, 30, 30)
DISK_COLOR = (120, 120, 120)
TENDON_COLOR = (200, 60, 160)
#: Labels of the model picker.
MODEL_LABELS = {"exact": "exact (shooting)", "pcc": "PCC", "mujoco": "MuJoCo chain"}
#: Drawn backbone radius: the true one, but at least this much so a thin rod stays visible [m].
MIN_TUBE_RADIUS = 0.0015
#: Frames of the exported playback and their spacing [s].
EXPORT_FRAMES = 60
EXPORT_DT = 1.0 / 30.0


def _tube_radius(twin: RobotTwin) -> float:
    radius = twin.spec.backbone.radius or 0.0
    return max(float(radius), MIN_TUBE_RADIUS)


class TwinServer:
    """A viser page showing `twin`: the scene, the sliders, the readout and the drag handle.

    host : address to bind (127.0.0.1 by default: the page has no authentication).
    port : TCP port (0: any free one; a busy port moves to the next free one).
    with_gui : False builds the scene only (used by `export_page`).
    """

    def __init__(
        self,
        twin: RobotTwin,
        host: str = "127.0.0.1",
        port: int = 8080,
        with_gui: bool = True,
        verbose: bool = False,
    ) -> None:
        self.twin = twin
        if verbose:
            self.server = viser.ViserServer(host=host, port=port, verbose=True)
        else:
            with viser_quiet():
                self.server = viser.ViserServer(host=host, port=port, verbose=False)
        self.frame: TwinFrame | None = None
        self.update_count = 0
        self.last_update_time = 0.0
        self._lock = threading.Lock()
        self._next_lock = threading.Lock()
        self._next: Callable[[], TwinFrame] | None = None
        self._tendon_sliders: list[Any] = []
        self._readout: Any = None
        self._handle: Any = None
        self._drag: Any = None
        self._syncing = False
        self._nodes: dict[str, Any] = {}
        self._length = twin.spec.total_length
        self.play: PlayPanel | None = None
        self._setup_scene()
        if with_gui:
            self._setup_gui()
        self.refresh()

    @property
    def url(self) -> str:
        return f"http://{self.server.get_host()}:{self.server.get_port()}"

    def stop(self) -> None:
        """Stop the server thread (the port is released)."""
        if self.play is not None:
            self.play.close()
        with viser_quiet():
            self.server.stop()

    # -- setup ----------------------------------------------------------------------------------
    def _setup_scene(self) -> None:
        scene = self.server.scene
        L = self._length
        scene.set_up_direction("+z")
        scene.add_grid("/grid", width=2 * L, height=2 * L, cell_size=L / 10, section_size=L / 2)
        self.server.initial_camera.position = (0.9 * L, -1.1 * L, 0.8 * L)
        self.server.initial_camera.look_at = (0.0, 0.0, 0.45 * L)
        self.server.initial_camera.near = L / 100

    def _setup_gui(self) -> None:
        gui = self.server.gui
        twin = self.twin
        with gui.add_folder("Model"):
            primary = gui.add_dropdown(
                "model",
                options=[MODEL_LABELS[m] for m in MODEL_NAMES],
                initial_value=MODEL_LABELS[twin.models[0]],
            )
            overlays = {
                m: gui.add_checkbox(f"overlay {MODEL_LABELS[m]}", m in twin.models[1:])
                for m in MODEL_NAMES
            }
            links = gui.add_slider("MuJoCo links", 2, 100, 1, twin.links)

        def on_models(_: Any) -> None:
            label_to_name = {v: k for k, v in MODEL_LABELS.items()}
            first = label_to_name[primary.value]
            rest = [m for m, box in overlays.items() if box.value and m != first]
            twin.set_models([first, *rest])
            self.request_update()

        primary.on_update(on_models)
        for box in overlays.values():
            box.on_update(on_models)

        def on_links(_: Any) -> None:
            twin.set_links(int(links.value))
            self.request_update()

        links.on_update(on_links)

        with gui.add_folder("Tendons"):
            for k in range(twin.n_tendons):
                if twin.control == "length":
                    lo, hi = twin.length_min[k] * 1e3, twin.length_max[k] * 1e3
                    slider = gui.add_slider(
                        f"L{k + 1} [mm]", round(lo, 2), round(hi, 2), 0.01, round(hi, 2)
                    )
                else:
                    hi = float(np.round(twin.tension_max[k], 2))
                    slider = gui.add_slider(f"T{k + 1} [N]", 0.0, hi, 0.01, 0.0)
                slider.on_update(self._tendon_callback(k, slider))
                self._tendon_sliders.append(slider)

        with gui.add_folder("Loads"):
            force = gui.add_vector3("tip force [N]", (0.0, 0.0, 0.0), step=0.01)
            moment = gui.add_vector3("tip moment [N m]", (0.0, 0.0, 0.0), step=0.001)
            gravity = gui.add_checkbox("gravity", twin.gravity)

        def on_loads(_: Any) -> None:
            try:
                twin.set_tip_load(force.value, moment.value)
            except (TypeError, ValueError):
                return  # a malformed vector leaves the loads as they were
            twin.gravity = bool(gravity.value)
            self.request_update()

        for widget in (force, moment, gravity):
            widget.on_update(on_loads)

        if twin.control == "tension":
            # The Jacobian controller moves tensions: no drag under length control.
            with gui.add_folder("Tip drag"):
                drag = gui.add_checkbox("drag the tip (Jacobian control)", False)
            drag.on_update(lambda _: self._toggle_drag(bool(drag.value)))
            self._drag = drag

        # Dynamics: LGVI / MuJoCo runs from the current state, played with a timeline.
        self.play = PlayPanel(self.server, twin)

        add_png_button(self.server)
        self._readout = gui.add_markdown("solving ...")

    def _tendon_callback(self, k: int, slider: Any) -> Callable[[Any], None]:
        def callback(_: Any) -> None:
            if self._syncing:
                return
            # A malformed value (not a number) is ignored: the inputs stay as they were.
            try:
                value = float(slider.value)
                if self.twin.control == "length":
                    self.twin.set_length(k, value * 1e-3)
                else:
                    self.twin.set_tension(k, value)
            except (TypeError, ValueError):
                return
            self.request_update()

        return callback

    def _toggle_drag(self, on: bool) -> None:
        if not on:
            if self._handle is not None:
                self._handle.remove()
                self._handle = None
            return
        view = self.frame.views.get("exact") if self.frame else None
        start = view.tip_position if view is not None and view.success else np.zeros(3)
        self._handle = self.server.scene.add_transform_controls(
            "/drag", scale=0.3 * self._length, disable_rotations=True, position=start
        )

        def on_move(_: Any) -> None:
            target = np.asarray(self._handle.position, dtype=float)
            self._run_locked(lambda: self.twin.drag_tip(target))

        self._handle.on_update(on_move)

    # -- updating -------------------------------------------------------------------------------
    def request_update(self) -> None:
        """Solve and draw the newest inputs; callers arriving during a solve are folded into
        the next one (the newest slider value wins)."""
        self._run_locked(self.twin.solve)

    def _run_locked(self, action: Callable[[], TwinFrame]) -> None:
        # The newest action replaces any waiting one; whoever holds the lock runs it.
        with self._next_lock:
            self._next = action
        while self._next is not None:
            if not self._lock.acquire(blocking=False):
                return  # the thread holding the lock finds the action and runs it
            try:
                while (todo := self._take()) is not None:
                    self._show(todo())
            finally:
                self._lock.release()

    def _take(self) -> Callable[[], TwinFrame] | None:
        with self._next_lock:
            todo, self._next = self._next, None
        return todo

    def refresh(self) -> None:
        """Solve and draw synchronously (the first frame, tests)."""
        with self._lock:
            self._show(self.twin.solve())

    def _show(self, frame: TwinFrame) -> None:
        with self.server.atomic():
            self._draw(frame)
            if self._readout is not None:
                # The frame counter lets a browser (tests, `softrod bench web`) see each update.
                text = readout_markdown(self.twin, frame)
                self._readout.content = f"{text}\n\nframe {self.update_count + 1}"
            if self.twin.control == "tension" and self._tendon_sliders:
                self._sync_sliders()
        # Send now: the message buffer would otherwise hold the last update of a burst.
        self.server.flush()
        self.frame = frame
        self.update_count += 1
        self.last_update_time = time.perf_counter()

    def _sync_sliders(self) -> None:
        # Inputs set from Python or by the tip drag show on the sliders (whose callbacks skip).
        syncing, self._syncing = self._syncing, True
        try:
            for slider, value in zip(self._tendon_sliders, self.twin.tensions, strict=True):
                if abs(float(slider.value) - value) > 5e-3:
                    slider.value = round(float(value), 2)
        finally:
            self._syncing = syncing

    def _draw(self, frame: TwinFrame) -> None:
        # Nodes are made once and then updated in place (new nodes cost far more to send).
        scene = self.server.scene
        radius = _tube_radius(self.twin)
        for name in MODEL_NAMES:
            view = frame.views.get(name)
            mesh = self._nodes.get(f"{name}/backbone")
            tip = self._nodes.get(f"{name}/tip")
            if view is None or len(view.positions) < 2:
                for node in (mesh, tip):
                    if node is not None:
                        node.visible = False
                continue
            color = COLORS[name] if view.success else FAILED_COLOR
            opacity = None if view.success else 0.6
            scale = 1.0 if name == self.twin.models[0] else 0.8
            verts, faces = tube_mesh(view.positions, radius * scale, view.rotations)
            if mesh is None or mesh.vertices.shape != verts.shape:
                if mesh is not None:
                    mesh.remove()
                self._nodes[f"{name}/backbone"] = scene.add_mesh_simple(
                    f"/robot/{name}/backbone", verts, faces, color=color, opacity=opacity
                )
            else:
                mesh.vertices = verts
                mesh.color = color
                mesh.opacity = opacity
                mesh.visible = True
            if tip is None:
                self._nodes[f"{name}/tip"] = scene.add_icosphere(
                    f"/robot/{name}/tip",
                    radius=1.6 * radius,
                    color=color,
                    position=view.tip_position,
                )
            else:
                tip.position = view.tip_position
                tip.color = color
                tip.visible = True
        primary = frame.views[self.twin.models[0]]
        for key, segments, color, width in (
            ("disks", disk_circles(self.twin, primary), DISK_COLOR, 2.0),
            ("tendons", tendon_paths(self.twin, primary), TENDON_COLOR, 1.5),
        ):
            lines = self._nodes.get(key)
            if lines is not None and lines.points.shape == segments.shape:
                lines.points = segments.astype(np.float32)
                lines.visible = len(segments) > 0
                continue
            if lines is not None:
                lines.remove()
            self._nodes[key] = scene.add_line_segments(
                f"/robot/{key}", segments, color, thickness=width, thickness_units="screen"
            )


def readout_markdown(twin: RobotTwin, frame: TwinFrame) -> str:
    """The page's readout: one table row per shown model, tensions, tip distances."""
    lines = [
        "| model | tip x, y, z [mm] | solve [ms] | status | stable |",
        "|---|---|---|---|---|",
    ]
    for name, view in frame.views.items():
        tip = ", ".join(f"{1e3 * x:.2f}" for x in view.tip_position)
        status = "ok" if view.success else "**FAILED**"
        lines.append(
            f"| {MODEL_LABELS[name]} | {tip} | {1e3 * view.solve_time:.1f} | {status}: "
            f"{_one_line(view.message)} | {view.stable} |"
        )
    primary: ModelView = frame.views[twin.models[0]]
    tension = ", ".join(f"{t:.2f}" for t in primary.tendon_tension)
    notes = [
        f"primary model: {MODEL_LABELS[twin.models[0]]}",
        f"tip [mm]: {', '.join(f'{1e3 * x:.2f}' for x in primary.tip_position)}",
        f"tensions [N]: {tension}",
    ]
    for (a, b), d in frame.tip_distance.items():
        notes.append(f"tip distance {MODEL_LABELS[a]} - {MODEL_LABELS[b]}: {1e3 * d:.2f} mm")
    # A markdown table needs its rows on consecutive lines; the notes are paragraphs.
    return "\n".join(lines) + "\n\n" + "\n\n".join(notes)


def _one_line(text: str) -> str:
    return " ".join(str(text).replace("|", "/").split())[:120]


def serve_robot(
    robot: Any,
    host: str = "127.0.0.1",
    port: int = 8080,
    models: Sequence[str] = ("exact",),
    links: int = 20,
    control: str = "tension",
) -> TwinServer:
    """Start the page for a robot (RobotSpec, dict, path or shipped name); returns the running
    `TwinServer` (its `url`; `stop()` ends it)."""
    twin = RobotTwin(robot, models=models, links=links, control=control)  # type: ignore[arg-type]
    return TwinServer(twin, host=host, port=port)


def export_page(
    robot: Any,
    path: str | Path,
    models: Sequence[str] = ("exact",),
    links: int = 20,
    tensions: Sequence[float] | None = None,
    frames: int = EXPORT_FRAMES,
    run: tuple[str, str] | None = None,
    duration: float = RUN_DURATION,
) -> Path:
    """Write a self-contained HTML page (viser's embedded playback: no server needed) that
    plays the robot bending from rest to `tensions` [N] and back (default: tendon 1 at half
    its range). With `run=(engine, kind)` (RUN_ENGINES, RUN_KINDS) it plays that dynamics run
    instead (`run_dynamics` from the shape at `tensions`, `duration` [s], `frames` frames
    evenly over the run, each shown for 1/30 s: slow motion for short runs). Returns the path."""
    twin = RobotTwin(robot, models=models, links=links)
    target = (
        np.asarray(tensions, dtype=float)
        if tensions is not None
        else np.eye(twin.n_tendons)[0] * 0.5 * twin.tension_max[0]
    )
    if target.shape != (twin.n_tendons,):
        raise ValueError(f"tensions must have {twin.n_tendons} entries, got {target.shape}")
    playback = None
    if run is not None:
        for k in range(twin.n_tendons):
            twin.set_tension(k, target[k])
        playback = run_dynamics(twin, run[0], run[1], duration)
    page = TwinServer(twin, host="127.0.0.1", port=0, with_gui=False)
    try:
        serializer = page.server.get_scene_serializer()
        if playback is not None:
            _record_playback(page, playback, serializer, frames)
        else:
            # There and back: a loop that shows the motion when the player repeats it.
            for phase in np.sin(np.linspace(0.0, np.pi, frames)):
                for k in range(twin.n_tendons):
                    twin.set_tension(k, phase * target[k])
                page.refresh()
                serializer.insert_sleep(EXPORT_DT)
        html = serializer.as_html()
    finally:
        page.stop()
    out = Path(path)
    out.write_text(html)
    return out


def _record_playback(page: TwinServer, playback: Any, serializer: Any, frames: int) -> None:
    """Record `frames` frames of a run, evenly in time, EXPORT_DT apart into the serializer,
    drawn over the static shape as the Play panel draws them."""
    from softrod.web._pages import PLAY_COLOR, _Tube

    tube = _Tube(page.server, "/playback", PLAY_COLOR)
    radius = _tube_radius(page.twin)
    for t in np.linspace(0.0, float(playback.t[-1]), frames):
        tube.show(playback.view(playback.index_at(t)), radius)
        page.server.flush()
        serializer.insert_sleep(EXPORT_DT)
