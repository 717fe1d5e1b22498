"""The browser twin (`softrod view TARGET --web`, docs/web.md).

`RobotTwin` is the page's model and state without any web library; `serve_robot` puts it on a
viser page and `export_page` writes a self-contained HTML recording. The other targets have
state classes of their own: `run_dynamics` / `Playback` (LGVI and MuJoCo runs played with a
timeline), `SceneTwin` (a MuJoCo scene live), `RecordingTwin` (a hardware recording replayed)
and `SweepTwin` (a sweep's Parquet result), served by `serve_scene`, `serve_recording` and
`serve_sweep`. viser is the optional extra `softrod[web]`: it is imported only by the `serve_*`
functions, the servers and `export_page`.
"""

from typing import TYPE_CHECKING, Any

from softrod.web._data import RecordingTwin, SweepTwin, colormap
from softrod.web._playback import (
    MAGNET_FIELD,
    RUN_ENGINES,
    RUN_KINDS,
    Playback,
    SceneTwin,
    is_magnetic,
    run_dynamics,
)
from softrod.web._twin import (
    GRAVITY,
    MODEL_NAMES,
    ModelView,
    RobotTwin,
    TwinFrame,
    disk_circles,
    tendon_paths,
    tube_mesh,
)

if TYPE_CHECKING:
    from softrod.web._pages import (
        PlayPanel,
        RecordingServer,
        SceneServer,
        SweepServer,
        serve_recording,
        serve_scene,
        serve_sweep,
    )
    from softrod.web._server import TwinServer, export_page, serve_robot

__all__ = [
    "GRAVITY",
    "MAGNET_FIELD",
    "MODEL_NAMES",
    "RUN_ENGINES",
    "RUN_KINDS",
    "ModelView",
    "PlayPanel",
    "Playback",
    "RecordingServer",
    "RecordingTwin",
    "RobotTwin",
    "SceneServer",
    "SceneTwin",
    "SweepServer",
    "SweepTwin",
    "TwinFrame",
    "TwinServer",
    "colormap",
    "disk_circles",
    "export_page",
    "is_magnetic",
    "run_dynamics",
    "serve_recording",
    "serve_robot",
    "serve_scene",
    "serve_sweep",
    "tendon_paths",
    "tube_mesh",
]

_SERVER_NAMES = ("TwinServer", "export_page", "serve_robot")
_PAGE_NAMES = (
    "PlayPanel",
    "RecordingServer",
    "SceneServer",
    "SweepServer",
    "serve_recording",
    "serve_scene",
    "serve_sweep",
)


def __getattr__(name: str) -> Any:
    # The viser layer loads on first use, so the state classes work without the extra.
    if name in _SERVER_NAMES:
        from softrod.web import _server

        return getattr(_server, name)
    if name in _PAGE_NAMES:
        from softrod.web import _pages

        return getattr(_pages, name)
    raise AttributeError(f"module 'softrod.web' has no attribute {name!r}")
