"""Headless rendering of a MuJoCo model to PNG images and MP4 videos.

Set `MUJOCO_GL=egl` (GPU-less EGL) or `osmesa` before `import mujoco` on a machine without a
display; `softrod render` sets egl when nothing is set.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import mujoco
import numpy as np

__all__ = ["render_image", "render_video", "Renderer"]


class Renderer:
    """A mujoco.Renderer with a fixed camera; `frame()` returns (height, width, 3) uint8."""

    def __init__(
        self,
        model: mujoco.MjModel,
        width: int = 640,
        height: int = 480,
        camera: str | int | None = None,
    ) -> None:
        if width > model.vis.global_.offwidth or height > model.vis.global_.offheight:
            raise ValueError(
                f"image {width} x {height} exceeds the model's offscreen buffer "
                f"{model.vis.global_.offwidth} x {model.vis.global_.offheight}"
            )
        if isinstance(camera, str):
            if mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_CAMERA, camera) < 0:
                names = [model.camera(i).name for i in range(model.ncam)]
                raise ValueError(f"camera {camera!r} not in the model; cameras: {names}")
        self.model = model
        self.camera = camera if camera is not None else -1
        self._renderer = mujoco.Renderer(model, height=height, width=width)

    def frame(self, data: mujoco.MjData) -> np.ndarray:
        self._renderer.update_scene(data, camera=self.camera)
        return self._renderer.render().copy()

    def close(self) -> None:
        self._renderer.close()


def render_image(
    model: mujoco.MjModel,
    data: mujoco.MjData,
    path: str | Path,
    *,
    camera: str | int | None = None,
    width: int = 640,
    height: int = 480,
    settle: float = 0.0,
    before_step: Callable[[float], None] | None = None,
) -> Path:
    """Simulate `settle` seconds (calling `before_step(t)` each step), then save a PNG."""
    import imageio.v2 as imageio

    n = int(round(settle / model.opt.timestep))
    for _ in range(n):
        if before_step is not None:
            before_step(data.time)
        mujoco.mj_step(model, data)
    mujoco.mj_forward(model, data)
    renderer = Renderer(model, width, height, camera)
    try:
        image = renderer.frame(data)
    finally:
        renderer.close()
    path = Path(path)
    imageio.imwrite(path, image)
    return path


def render_video(
    model: mujoco.MjModel,
    data: mujoco.MjData,
    path: str | Path,
    *,
    duration: float = 3.0,
    fps: int = 30,
    camera: str | int | None = None,
    width: int = 640,
    height: int = 480,
    before_step: Callable[[float], None] | None = None,
    on_frame: Callable[[], None] | None = None,
    extra_cameras: tuple[str, ...] = (),
) -> Path:
    """Simulate `duration` seconds and write an H.264 MP4 at `fps` frames per second.

    before_step(t) runs before every physics step (controls); on_frame() after every frame
    (progress). `extra_cameras` are rendered into an inset in the top-right corner (for a tip
    camera), a quarter of the frame's width.
    """
    import imageio.v2 as imageio

    steps_per_frame = max(1, int(round(1.0 / (fps * model.opt.timestep))))
    n_frames = max(1, int(round(duration * fps)))
    renderer = Renderer(model, width, height, camera)
    inset_w = (width // 4) // 16 * 16
    inset_h = (inset_w * 3 // 4) // 2 * 2
    insets = [Renderer(model, inset_w, inset_h, c) for c in extra_cameras]
    path = Path(path)
    writer = imageio.get_writer(
        path, fps=fps, codec="libx264", quality=8, macro_block_size=16, ffmpeg_log_level="error"
    )
    try:
        for _ in range(n_frames):
            for _ in range(steps_per_frame):
                if before_step is not None:
                    before_step(data.time)
                mujoco.mj_step(model, data)
            image = renderer.frame(data)
            for k, inset in enumerate(insets):
                small = inset.frame(data)
                y0 = 8 + k * (inset_h + 8)
                image[y0 : y0 + inset_h, width - inset_w - 8 : width - 8] = small
            writer.append_data(image)
            if on_frame is not None:
                on_frame()
    finally:
        writer.close()
        renderer.close()
        for inset in insets:
            inset.close()
    return path
