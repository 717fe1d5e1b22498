"""The one place that chooses MuJoCo's OpenGL backend (`MUJOCO_GL`) for headless rendering.

MuJoCo reads `MUJOCO_GL` once, when it is first imported, and GLFW without a display aborts the
process; so every module that may render calls `choose_gl_backend()` before `import mujoco`.
A backend the user chose (`MUJOCO_GL` already set) always wins.
"""

from __future__ import annotations

import os
import sys

__all__ = ["choose_gl_backend"]


def choose_gl_backend(headless: bool = False) -> str | None:
    """Set `MUJOCO_GL=egl` unless the user chose a backend; return the backend in effect.

    Parameters
    ----------
    headless : True for commands that always render offscreen (`softrod render`, training);
        False chooses EGL only on Linux without a display (X11 or Wayland).

    Returns
    -------
    The value of `MUJOCO_GL` afterwards, or None when MuJoCo picks its own default.
    """
    if "MUJOCO_GL" not in os.environ:
        no_display = not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY")
        if headless or (sys.platform.startswith("linux") and no_display):
            os.environ["MUJOCO_GL"] = "egl"
    return os.environ.get("MUJOCO_GL")
