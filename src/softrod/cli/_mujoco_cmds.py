"""MuJoCo commands: `softrod mjcf`, `render` and `view` (issue 3).

`import mujoco` happens inside the commands so that the static commands start fast.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from softrod._gl import choose_gl_backend
from softrod.cli._app import CliError, app
from softrod.cli._outputs import atomic_path, prepare_output

__all__: list[str] = []


def check_links(links: int | None, option: str = "--links") -> None:
    """CliError unless `links` is None or a chain size MuJoCo builds in reasonable time."""
    from softrod.mujoco import MAX_LINKS

    if links is not None and links < 1:
        raise CliError(f"{option} must be >= 1, got {links}")
    if links is not None and links > MAX_LINKS:
        raise CliError(f"{option} must be <= {MAX_LINKS}, got {links}")


def _robot_path(text: str) -> Path:
    from softrod.cli._resolve import find_robot

    return find_robot(text)


@app.command("mjcf")
def mjcf_cmd(
    robot: Annotated[
        str, typer.Argument(metavar="ROBOT", help="Robot description or shipped name.")
    ],
    links: Annotated[
        int, typer.Option("--links", "-n", help="Number of rigid links N (1-300).")
    ] = 30,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="MJCF file to write (default: stdout).")
    ] = None,
    tendon_control: Annotated[
        str, typer.Option("--tendon-control", help="force (tension_<k>) or length (length_<k>).")
    ] = "force",
    routing: Annotated[
        str, typer.Option("--routing", help="Tendon sites at every link (links) or disks.")
    ] = "links",
    axial: Annotated[bool, typer.Option("--axial", help="Axial slide joints (cosserat).")] = False,
    timestep: Annotated[float, typer.Option("--timestep", help="Timestep [s].")] = 0.002,
    damping_ratio: Annotated[
        float, typer.Option("--damping-ratio", help="First-mode damping ratio.")
    ] = 0.005,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace an existing output file.")
    ] = False,
) -> None:
    """Write a standalone MJCF of ROBOT as a continuum-informed rigid-link chain."""
    from softrod.description import load_robot
    from softrod.mujoco import build_spec

    check_links(links)
    if output is not None:
        prepare_output(output, overwrite=overwrite)

    spec_robot = load_robot(_robot_path(robot))
    for name, value, allowed in (
        ("--tendon-control", tendon_control, ("force", "length")),
        ("--routing", routing, ("links", "disks")),
    ):
        if value not in allowed:
            raise CliError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    spec = build_spec(
        spec_robot,
        links=links,
        tendon_control=tendon_control,
        tendon_routing=routing,
        axial=axial,
        timestep=timestep,
        damping_ratio=damping_ratio,
    )
    spec.compile()
    xml = spec.to_xml()
    if output is None:
        sys.stdout.write(xml)
        return
    with atomic_path(output) as tmp:
        tmp.write_text(xml)
    typer.echo(f"wrote {output}: {spec_robot.name}, {links} links, {spec_robot.n_tendons} tendons")


def _load_scene(path: str, links: int | None) -> Any:
    """A compiled scene (softrod.scene.Scene) from a scene file or a robot description."""
    from softrod.scene import load_scene_or_robot

    return load_scene_or_robot(path, links=links)


@app.command("render")
def render_cmd(
    scene: Annotated[str, typer.Argument(metavar="SCENE", help="Scene YAML, or a robot.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="out.png or out.mp4.")],
    duration: Annotated[float, typer.Option("--duration", help="Video length [s].")] = 3.0,
    fps: Annotated[int, typer.Option("--fps", help="Video frame rate.")] = 30,
    width: Annotated[int, typer.Option("--width", help="Image width [px].")] = 640,
    height: Annotated[int, typer.Option("--height", help="Image height [px].")] = 480,
    camera: Annotated[
        str | None, typer.Option("--camera", help="Camera name (default: the scene's first).")
    ] = None,
    links: Annotated[
        int | None, typer.Option("--links", "-n", help="Links for a robot given alone.")
    ] = None,
    settle: Annotated[
        float, typer.Option("--settle", help="Seconds simulated before a still image [s].")
    ] = 1.0,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace an existing output file.")
    ] = False,
) -> None:
    """Render SCENE headless (MUJOCO_GL=egl) to a PNG image or an MP4 video."""
    choose_gl_backend(headless=True)
    import mujoco
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    from softrod.mujoco import render_image, render_video

    suffix = output.suffix.lower()
    if suffix not in (".png", ".mp4"):
        raise CliError(f"--output must end in .png or .mp4, got {output.name!r}")
    if width < 16 or height < 16 or width > 4096 or height > 4096:
        raise CliError(f"--width/--height must be in [16, 4096], got {width} x {height}")
    if duration <= 0 or fps <= 0:
        raise CliError(f"--duration and --fps must be > 0, got {duration} and {fps}")
    check_links(links)
    prepare_output(output, overwrite=overwrite)
    sc = _load_scene(scene, links)
    cam = camera if camera is not None else sc.default_camera
    with Progress(
        TextColumn("rendering"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as progress:
        # Frames go to a temporary file moved over the output only when complete.
        try:
            with atomic_path(output) as part:
                if suffix == ".png":
                    task = progress.add_task("render", total=1)
                    render_image(
                        sc.model,
                        sc.data,
                        part,
                        camera=cam,
                        width=width,
                        height=height,
                        settle=settle,
                        before_step=sc.apply_keyframes,
                    )
                    progress.advance(task)
                else:
                    n_frames = max(1, int(round(duration * fps)))
                    task = progress.add_task("render", total=n_frames)
                    render_video(
                        sc.model,
                        sc.data,
                        part,
                        duration=duration,
                        fps=fps,
                        camera=cam,
                        width=width,
                        height=height,
                        before_step=sc.apply_keyframes,
                        on_frame=lambda: progress.advance(task),
                    )
        except mujoco.FatalError as exc:
            raise CliError(
                f"rendering failed ({exc}); is MUJOCO_GL=egl or osmesa usable?"
            ) from None
    typer.echo(f"wrote {output}")


@app.command("view")
def view_cmd(
    scene: Annotated[str, typer.Argument(metavar="SCENE", help="Scene YAML, or a robot.")],
    links: Annotated[
        int | None, typer.Option("--links", "-n", help="Links for a robot given alone.")
    ] = None,
    web: Annotated[
        bool, typer.Option("--web", help="Serve the browser twin instead (robots; docs/web.md).")
    ] = False,
    port: Annotated[int, typer.Option("--port", help="Port of the --web page (0: any).")] = 8080,
    host: Annotated[
        str,
        typer.Option("--host", help="Address of the --web page; it has no authentication."),
    ] = "127.0.0.1",
    models: Annotated[
        str, typer.Option("--models", help="Models shown by --web: exact,pcc,mujoco.")
    ] = "exact",
    control: Annotated[
        str, typer.Option("--control", help="--web sliders: tension [N] or length [mm].")
    ] = "tension",
    export: Annotated[
        Path | None,
        typer.Option("--export", help="Write a self-contained page.html (playback) and exit."),
    ] = None,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace an existing --export file.")
    ] = False,
    data: Annotated[
        Path | None,
        typer.Option("--data", help="--web: a recording CSV replayed through SCENE (calibrated)."),
    ] = None,
    run: Annotated[
        str | None,
        typer.Option(
            "--run", help="--export: play ENGINE:KIND (lgvi|mujoco:release|tendon step|...)."
        ),
    ] = None,
) -> None:
    """Open SCENE in MuJoCo's interactive viewer (needs a display), or with --web serve the
    browser twin of a robot (sliders, models, tip drag, dynamics runs), a scene YAML (live), a
    sweep's .parquet result or a calibrated robot with --data RECORDING.csv, and print its URL."""
    if web or export is not None:
        _view_web(scene, links, port, host, models, control, export, overwrite, data, run)
        return
    if data is not None:
        raise CliError("--data needs --web (the browser page of a recording)")
    if not (
        os.environ.get("DISPLAY")
        or os.environ.get("WAYLAND_DISPLAY")
        or sys.platform in ("darwin", "win32")
    ):
        raise CliError("softrod view needs a display (DISPLAY is not set); use softrod render")
    import time

    import mujoco.viewer

    check_links(links)
    sc = _load_scene(scene, links)
    # A passive viewer so the scene's keyframes drive the controls, paced to real time.
    with mujoco.viewer.launch_passive(sc.model, sc.data) as viewer:
        while viewer.is_running():
            start = time.perf_counter()
            sc.step()
            viewer.sync()
            time.sleep(max(0.0, sc.model.opt.timestep - (time.perf_counter() - start)))


def _web_target(target: str, data: Path | None) -> tuple[str, Path]:
    """What `softrod view --web` shows: ("robot" | "scene" | "sweep" | "recording", path)."""
    if data is not None:
        if not data.is_file():
            raise CliError(f"--data: no such file {data}")
        return "recording", _robot_path(target)
    if target.lower().endswith(".parquet"):
        path = Path(target)
        if not path.is_file():
            raise CliError(f"{target}: no such sweep result")
        return "sweep", path
    path = _robot_path(target)
    if path.suffix.lower() in (".yaml", ".yml", ".json"):
        import yaml

        content = yaml.safe_load(path.read_text())
        if not isinstance(content, dict) or "segments" not in content:
            return "scene", path
    return "robot", path


def _view_web(
    target: str,
    links: int | None,
    port: int,
    host: str,
    models: str,
    control: str,
    export: Path | None,
    overwrite: bool,
    data: Path | None = None,
    run: str | None = None,
) -> None:
    """`softrod view --web` / `--export`: the browser twin of a robot, a scene, a sweep result
    or a recording (docs/web.md)."""
    import time

    try:
        import viser  # noqa: F401
    except ImportError:
        raise CliError("the browser twin needs viser: pip install softrod[web]") from None
    from softrod import web

    check_links(links)
    if not 0 <= port <= 65535:
        raise CliError(f"--port must be in [0, 65535], got {port}")
    chosen = [m.strip() for m in models.split(",") if m.strip()]
    if not chosen or any(m not in web.MODEL_NAMES for m in chosen):
        raise CliError(f"--models must be a list of {', '.join(web.MODEL_NAMES)}, got {models!r}")
    if control not in ("tension", "length"):
        raise CliError(f"--control must be tension or length, got {control!r}")
    kind, path = _web_target(target, data)
    n_links = links if links is not None else 20
    played = None
    if run is not None:
        played = tuple(x.strip() for x in run.split(":", 1))
        if export is None or len(played) != 2:
            raise CliError(f"--run ENGINE:KIND goes with --export, got {run!r}")
        if played[0] not in web.RUN_ENGINES or played[1] not in web.RUN_KINDS:
            raise CliError(
                f"--run must be one of {', '.join(web.RUN_ENGINES)} : "
                f"{', '.join(web.RUN_KINDS)}, got {run!r}"
            )
    if export is not None:
        if kind != "robot":
            raise CliError(f"--export writes a robot's page; {target} is a {kind}")
        prepare_output(export, overwrite=overwrite, option="--export")
        try:
            web.export_page(path, export, models=chosen, links=n_links, run=played)  # type: ignore[arg-type]
        except ValueError as exc:
            raise CliError(f"--run: {exc}") from None
        typer.echo(f"wrote {export}")
        return
    page: Any
    try:
        if kind == "robot":
            page = web.serve_robot(
                path, host=host, port=port, models=chosen, links=n_links, control=control
            )
        elif kind == "scene":
            page = web.serve_scene(path, host=host, port=port, links=links)
        elif kind == "sweep":
            page = web.serve_sweep(path, host=host, port=port)
        else:
            from softrod.validate import replay_recording

            assert data is not None
            replay = replay_recording(path, data, links=links)
            page = web.serve_recording(replay, host=host, port=port)
    except (ValueError, FileNotFoundError) as exc:
        raise CliError(f"{target}: {exc}") from None
    # Ctrl+C stops the server cleanly from the moment the URL is out.
    try:
        typer.echo(f"softrod view: serving {path.stem} at {page.url} (Ctrl+C stops)")
        if host not in ("127.0.0.1", "localhost", "::1"):
            typer.echo("softrod view: warning: the page has no authentication", err=True)
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        page.stop()
