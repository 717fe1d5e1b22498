"""The browser twin (`softrod view TARGET --web`, docs/web.md).

`RobotTwin` is the page's model and state without any web library; `serve_robot` puts it on a
viser page and `export_page` writes a self-contained HTML recording. viser is the optional extra
`softrod[web]`: it is imported only by `serve_robot` / `export_page`.
"""

from typing import TYPE_CHECKING, Any

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
    from softrod.web._server import TwinServer, export_page, serve_robot

__all__ = [
    "GRAVITY",
    "MODEL_NAMES",
    "ModelView",
    "RobotTwin",
    "TwinFrame",
    "TwinServer",
    "disk_circles",
    "export_page",
    "serve_robot",
    "tendon_paths",
    "tube_mesh",
]


def __getattr__(name: str) -> Any:
    # The viser layer loads on first use, so the state class works without the extra.
    if name in ("TwinServer", "export_page", "serve_robot"):
        from softrod.web import _server

        return getattr(_server, name)
    raise AttributeError(f"module 'softrod.web' has no attribute {name!r}")
