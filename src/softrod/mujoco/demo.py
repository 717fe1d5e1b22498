"""The MuJoCo part of `softrod demo` (issue 3): `run_demo(out_dir) -> dict`.

Writes into `out_dir`:
* `tdcr_wrap.mp4`: the 3-segment seed-002 TDCR on a Panda-class arm; the arm brings it beside a
  horizontal cylinder and tendon pulls curl it around the cylinder (tip camera inset);
* `tdcr_wrap.png`: the last frame;
* `static_convergence.png`: MuJoCo chain vs the exact rod, seed-002 static protocol (a reduced
  sample; `softrod bench mujoco` runs all 500 per material).
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["run_demo", "demo_scene", "tensions_toward"]

#: Cylinder the TDCR wraps around: radius, half length [m], centre [m]; axis along world y,
#: beside the hanging TDCR (x = 0.307 m, z from 0.59 down to 0.40 m) on its +x side.
_POST_RADIUS = 0.015
_POST_HALF = 0.03
_POST_POS = (0.333, 0.0, 0.475)
#: Timeline [s]: arm approach, tendon pull, hold.
_T_APPROACH = (0.2, 1.0)
_T_PULL = (1.2, 3.2)
_DURATION = 4.0
#: Tension magnitude per segment [N] at full pull (segments 1..3): segment 1 tilts the TDCR
#: toward the cylinder, 2 and 3 curl it underneath and around.
_PULL = (0.0, 4.0, 15.0)
#: Static samples per material in the demo plot (the benchmark uses 500).
_DEMO_SAMPLES = 20
_DEMO_LINKS = (10, 25, 50, 100)
#: Samples for the TPU chain with shear/axial slides (6 DOF per joint, dearer).
_DEMO_SLIDES_SAMPLES = 10


def tensions_toward(robot: Any, segment: int, direction: np.ndarray, magnitude: float) -> list:
    """Tendon tensions (n_t,) [N] that bend `segment` toward a base-frame direction (x, y).

    The segment's two tendons bracketing the direction share `magnitude` so that their summed
    offset vectors point along it (non-negative tensions); other tendons stay slack.
    """
    d = np.asarray(direction, dtype=float)[:2]
    d = d / np.linalg.norm(d)
    tendons = robot.tendon_list()
    own = [i for i, (j, _) in enumerate(tendons) if j == segment]
    vecs = {
        i: np.array(
            [
                math.cos(math.radians(tendons[i][1].angle_deg)),
                math.sin(math.radians(tendons[i][1].angle_deg)),
            ]
        )
        for i in own
    }
    best, best_err = None, math.inf
    for a in own:
        for b in own:
            if a >= b:
                continue
            A = np.stack([vecs[a], vecs[b]], axis=1)
            try:
                w = np.linalg.solve(A, d)
            except np.linalg.LinAlgError:
                continue
            if np.all(w >= -1e-12):
                err = 0.0
                if err < best_err:
                    best, best_err = (a, b, np.maximum(w, 0.0)), err
    out = [0.0] * len(tendons)
    if best is None:  # one tendon is closest
        i = max(own, key=lambda k: vecs[k] @ d)
        out[i] = magnitude
        return out
    a, b, w = best
    w = w / w.sum() * magnitude
    out[a], out[b] = float(w[0]), float(w[1])
    return out


def demo_scene(post: bool = True) -> dict[str, Any]:
    """Scene dict: Panda-class arm at home, tdcr3 (30 links) on its flange, cylinder, cameras.

    The TDCR hangs from the flange at about (0.307, 0, 0.59) m down to z = 0.40 m; the cylinder
    lies along x beside its middle at +y. Keyframes: joint 1 turns the TDCR toward the cylinder,
    then the tendons curl it around. Tensions are filled in by `run_demo` (they depend on the
    flange orientation).
    """
    from softrod.bench._mujoco import tdcr3_robot
    from softrod.scene._rigid import PANDA_HOME

    objects = []
    if post:
        objects.append(
            {
                "name": "post",
                "type": "cylinder",
                "radius": _POST_RADIUS,
                "half_height": _POST_HALF,
                "pos": list(_POST_POS),
                "quat": [math.cos(math.pi / 4), math.sin(math.pi / 4), 0.0, 0.0],
                "rgba": [0.3, 0.55, 0.85, 1.0],
            }
        )
    return {
        "name": "tdcr_panda_wrap",
        "rigid_robots": [{"name": "panda", "model": "panda", "qpos": list(PANDA_HOME)}],
        "robots": [
            {"name": "tdcr", "robot": tdcr3_robot().to_dict(), "links": 30, "mount": "panda"}
        ],
        "objects": objects,
        "cameras": [
            {
                "name": "close",
                "pos": [0.52, -0.36, 0.60],
                "target": [0.35, 0.0, 0.48],
                "fovy": 40.0,
            },
            {"name": "wide", "pos": [1.4, -1.1, 0.9], "target": [0.3, 0.0, 0.35]},
            {"name": "tipcam", "attach": "tdcr", "fovy": 70.0},
        ],
    }


def _keyframes(pull: list[float]) -> list[dict[str, Any]]:
    from softrod.scene._rigid import PANDA_HOME

    home = list(PANDA_HOME)
    near = list(home)
    near[1] += 0.03  # joint 2: lean the TDCR ~9 mm toward +x, against the cylinder
    zero = [0.0] * len(pull)
    return [
        {"time": 0.0, "controls": {"panda": home, "tdcr": zero}},
        {"time": _T_APPROACH[0], "controls": {"panda": home}},
        {"time": _T_APPROACH[1], "controls": {"panda": near}},
        {"time": _T_PULL[0], "controls": {"tdcr": zero}},
        {"time": _T_PULL[1], "controls": {"tdcr": pull}},
    ]


def _pull_pattern(scene: Any) -> list[float]:
    """Tensions bending every segment toward world +x (seen in the TDCR base frame)."""
    info = scene.robots["tdcr"]
    R = scene.data.body(info.base_body).xmat.reshape(3, 3)
    toward = R.T @ np.array([1.0, 0.0, 0.0])
    total = np.zeros(info.robot.n_tendons)
    for j, magnitude in enumerate(_PULL):
        total += np.array(tensions_toward(info.robot, j, toward, magnitude))
    return [float(t) for t in total]


def _simulate(scene: Any, duration: float) -> None:
    """Step a scene (keyframes applied) until `duration` [s]."""
    while scene.data.time < duration:
        scene.step()


def run_demo(out_dir: Path) -> dict[str, Any]:
    """Write the wrap video, its last frame and the validation plot; return a JSON-able summary."""
    os.environ.setdefault("MUJOCO_GL", "egl")
    import time

    from softrod.bench._mujoco import plot_static
    from softrod.mujoco._render import render_image, render_video
    from softrod.scene import build_scene
    from softrod.validate._chain import MATERIALS, static_errors

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    summary: dict[str, Any] = {}

    # Free run (no cylinder) for comparison: how far contact moves the tip.
    free_dict = demo_scene(post=False)
    probe = build_scene(free_dict)
    pull = _pull_pattern(probe)
    free_dict["keyframes"] = _keyframes(pull)
    free = build_scene(free_dict)
    _simulate(free, _DURATION)
    tip_free = free.data.site("tdcr/tip").xpos.copy()

    scene_dict = demo_scene(post=True)
    scene_dict["keyframes"] = _keyframes(pull)
    scene = build_scene(scene_dict)
    video = out_dir / "tdcr_wrap.mp4"
    contacts = {"max": 0}
    post = scene.model.body("post").id

    def count(_t: float = 0.0) -> None:
        d, m = scene.data, scene.model
        n = sum(
            1
            for c in d.contact[: d.ncon]
            if post in (m.geom_bodyid[c.geom1], m.geom_bodyid[c.geom2])
        )
        contacts["max"] = max(contacts["max"], n)

    def before_step(t: float) -> None:
        scene.apply_keyframes(t)
        count()

    render_video(
        scene.model,
        scene.data,
        video,
        duration=_DURATION,
        fps=30,
        camera="close",
        width=640,
        height=480,
        before_step=before_step,
        extra_cameras=("tipcam",),
    )
    tip = scene.data.site("tdcr/tip").xpos.copy()
    image = render_image(
        scene.model, scene.data, out_dir / "tdcr_wrap.png", camera="close", width=640, height=480
    )
    summary["video"] = str(video)
    summary["image"] = str(image)
    summary["tensions_N"] = pull
    summary["tip_with_cylinder_m"] = tip.tolist()
    summary["tip_free_m"] = tip_free.tolist()
    summary["contact_tip_shift_m"] = float(np.linalg.norm(tip - tip_free))
    summary["max_cylinder_contacts"] = int(contacts["max"])

    # Validation plot: seed-002 static protocol, reduced sample.
    rng = np.random.default_rng(0)
    static: dict[str, dict[str, Any]] = {}
    for material in MATERIALS:
        errs = static_errors(material, _DEMO_LINKS, _DEMO_SAMPLES, rng)
        rows = {
            n: {"mean": float(e.mean()), "p95": float(np.percentile(e, 95)), "max": float(e.max())}
            for n, e in errs.items()
        }
        slope = float(
            np.polyfit(np.log(list(rows)), np.log([r["mean"] for r in rows.values()]), 1)[0]
        )
        static[material] = {"rows": rows, "slope": slope}
    # The TPU floor is shear + extension: the chain with slides converges at second order.
    errs = static_errors("tpu", _DEMO_LINKS, _DEMO_SLIDES_SAMPLES, rng, axial=True, shear=True)
    rows = {n: {"mean": float(e.mean())} for n, e in errs.items()}
    slides = {
        "tpu": {
            "rows": rows,
            "slope": float(
                np.polyfit(np.log(list(rows)), np.log([r["mean"] for r in rows.values()]), 1)[0]
            ),
        }
    }
    summary["static_tpu_slides_mean_pct"] = {n: 100 * r["mean"] for n, r in rows.items()}
    plot = plot_static(
        static,
        out_dir / "static_convergence.png",
        slides=slides,
        title=f"MuJoCo chain vs exact rod ({_DEMO_SAMPLES} samples/material)",
    )
    summary["static_plot"] = str(plot)
    summary["static"] = {
        m: {
            "slope": v["slope"],
            "mean_pct": {n: 100 * r["mean"] for n, r in v["rows"].items()},
            "max_pct": {n: 100 * r["max"] for n, r in v["rows"].items()},
        }
        for m, v in static.items()
    }
    summary["contact_shapes_robot"] = bool(
        summary["max_cylinder_contacts"] > 0 and summary["contact_tip_shift_m"] > 0.01
    )
    summary["wall_s"] = time.perf_counter() - t0
    return summary
