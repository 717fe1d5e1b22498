"""`softrod demo`: the showcase, in one module (no hooks).

Writes into the output folder:
* `softmanisim_vs_pcc.png`: the SoftManiSim robot under the benchmark loads vs constant curvature;
* `tdcr3_tendon_pulls.png`: the 3-segment seed-002 TDCR under growing tendon pulls, with gravity;
* `mujoco/` (optional: MuJoCo and a GL backend): `tdcr_wrap.mp4`, the TDCR on a Panda-class arm
  curling around a horizontal cylinder (tip camera inset), `tdcr_wrap.png` (its last frame) and
  `static_convergence.png`, the MuJoCo chain vs the exact rod on the seed-002 static protocol
  (a reduced sample; `softrod bench mujoco` runs all 500 per material);
  and `magnetic_catheter.mp4`, the magnetic catheter steered by a rotating uniform field,
  pressing on two posts (`magnetic_scene`, `MUJOCO_CLIPS`), with its last frame;
* `summary.json`: every number above.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer

from softrod._gl import choose_gl_backend
from softrod.cli._app import app
from softrod.cli._static_cmds import _console, _fmt_vec, _save, _stderr_line, json_safe, load_spec
from softrod.rods import RodModel, StaticResult, compile_model, solve_static

__all__ = [
    "MUJOCO_CLIPS",
    "OPTIONAL_DEMOS",
    "demo_cmd",
    "demo_scene",
    "magnetic_demo",
    "magnetic_scene",
    "mujoco_demo",
    "tensions_toward",
]

# ---------------------------------------------------------------------------------------------
# Static part: the exact rod vs constant curvature (core layers only)

#: SoftManiSim benchmark (seed 000, Appendix B): distributed load [1, 1, 1] N/m and tip forces
#: of 0-2 N, here at fixed directions about z so the error curves read clearly, on top of a
#: 2 N pull of tendon 0 (tendons and segments are numbered from 0, in input order, everywhere).
_SMS_DISTRIBUTED = (1.0, 1.0, 1.0)
_SMS_TENSIONS = (2.0, 0.0, 0.0, 0.0)
_TDCR_GRAVITY = (0.0, 0.0, -9.81)
#: Resolution of the demo figures [dpi].
_DEMO_DPI = 170


@dataclass(frozen=True)
class _Pull:
    """A tdcr3 panel: title, tension pattern (n_t,) [N], and the scales applied to it."""

    title: str
    pattern: tuple[float, ...]
    scales: tuple[float, ...]


def _tdcr_pulls(quick: bool) -> list[_Pull]:
    def pattern(**tau: float) -> tuple[float, ...]:
        out = [0.0] * 9
        for key, value in tau.items():
            out[int(key[1:])] = value
        return tuple(out)

    def scales(top: float) -> tuple[float, ...]:
        return tuple(float(x) for x in np.linspace(0.0, top, 2 if quick else 5))

    return [
        _Pull("distal tendon 6 (segment 2, 80°)", pattern(t6=1.0), scales(4.0)),
        _Pull("proximal tendon 0 (segment 0, 0°)", pattern(t0=1.0), scales(12.0)),
        _Pull("S-curve: tendons 0 (0°) and 7 (200°)", pattern(t0=4.0, t7=2.0), scales(3.0)),
        _Pull(
            "spatial: tendons 0 (0°), 4 (160°), 8 (320°)",
            pattern(t0=2.0, t4=1.0, t8=1.0),
            scales(4.0),
        ),
    ]


def _tension_label(tau: list[float]) -> str:
    """Legend text of a tension vector: `τ0 = 4, τ7 = 1 N`, or `no pull`."""
    pulled = [f"τ{i} = {t:g}" for i, t in enumerate(tau) if t > 0]
    return ", ".join(pulled) + " N" if pulled else "no pull"


def _timed(fn: Any, *args: Any, **kwargs: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    value = fn(*args, **kwargs)
    return value, time.perf_counter() - start


def _case_record(result: StaticResult, wall: float, **extra: Any) -> dict[str, Any]:
    return {
        **extra,
        "tip_position": result.tip_position.tolist(),
        "success": result.success,
        "message": result.message,
        "residual": result.residual,
        "nit": result.nit,
        "solve_time_s": wall,
    }


def _demo_softmanisim(
    model: RodModel, quick: bool, out_dir: Path, advance: Callable[[], None]
) -> tuple[dict[str, Any], Path]:
    """(a) The SoftManiSim robot under the benchmark loads vs constant curvature."""
    from softrod.viz import plot_pcc_comparison

    magnitudes = (0.0, 1.0, 2.0) if quick else tuple(np.linspace(0.0, 2.0, 9).tolist())
    angles = (0.0, 90.0) if quick else (0.0, 90.0, 180.0, 270.0)
    pcc = solve_static(model, _SMS_TENSIONS, method="pcc")
    cases, loaded, mags, angs = [], [], [], []
    for angle in angles:
        guess = None  # warm start along each load ramp
        for mag in magnitudes:
            a = math.radians(angle)
            force = (mag * math.cos(a), mag * math.sin(a), 0.0)
            res, wall = _timed(
                solve_static,
                model,
                _SMS_TENSIONS,
                tip_force=force,
                distributed_force=_SMS_DISTRIBUTED,
                guess=guess,
            )
            guess = res if res.success else None
            err = float(np.linalg.norm(res.tip_position - pcc.tip_position))
            cases.append(
                _case_record(
                    res,
                    wall,
                    tip_force_magnitude=mag,
                    tip_force_angle_deg=angle,
                    tip_force=list(force),
                    pcc_tip_error=err,
                )
            )
            loaded.append(res)
            mags.append(mag)
            angs.append(angle)
            advance()
    errors = [c["pcc_tip_error"] for c in cases]
    record = {
        "robot": model.spec.name,
        "tensions": list(_SMS_TENSIONS),
        "distributed_force": list(_SMS_DISTRIBUTED),
        "pcc_tip_position": pcc.tip_position.tolist(),
        "cases": cases,
        "max_pcc_tip_error": max(errors),
        "mean_pcc_tip_error": float(np.mean(errors)),
        "all_success": all(c["success"] for c in cases),
    }
    fig = plot_pcc_comparison(
        model,
        loaded,
        mags,
        angs,
        pcc,
        title=f"SoftManiSim robot: τ0 = {_SMS_TENSIONS[0]:g} N, distributed load "
        f"{_fmt_vec(_SMS_DISTRIBUTED, 'N/m')}, tip force 0–{max(magnitudes):g} N",
    )
    path = _save(fig, out_dir / "softmanisim_vs_pcc.png", _DEMO_DPI)
    advance()
    return record, path


def _demo_tdcr(
    model: RodModel, quick: bool, out_dir: Path, advance: Callable[[], None]
) -> tuple[dict[str, Any], Path]:
    """(b) The 3-segment TDCR under growing tendon pulls, with gravity, vs PCC."""
    from softrod.viz import TendonPanel, plot_tendon_panels

    panels, records = [], []
    for pull in _tdcr_pulls(quick):
        results, labels, cases = [], [], []
        guess = None
        for scale in pull.scales:
            tau = (scale * np.asarray(pull.pattern)).tolist()
            res, wall = _timed(solve_static, model, tau, gravity=_TDCR_GRAVITY, guess=guess)
            guess = res if res.success else None
            results.append(res)
            labels.append(_tension_label(tau))
            cases.append(_case_record(res, wall, tensions=tau))
            advance()
        pcc = solve_static(model, cases[-1]["tensions"], method="pcc")
        panels.append(TendonPanel(pull.title, results, labels, pcc=pcc))
        records.append(
            {
                "title": pull.title,
                "cases": cases,
                "pcc_tip_position": pcc.tip_position.tolist(),
                "pcc_tip_error_at_max_pull": float(
                    np.linalg.norm(results[-1].tip_position - pcc.tip_position)
                ),
            }
        )
    record = {
        "robot": model.spec.name,
        "gravity": list(_TDCR_GRAVITY),
        "panels": records,
        "all_success": all(c["success"] for r in records for c in r["cases"]),
    }
    fig = plot_tendon_panels(
        model,
        panels,
        title="3-segment TDCR (tdcr3) under tendon pulls, with gravity "
        f"{_fmt_vec(_TDCR_GRAVITY, 'm/s²')}; dashed: constant curvature",
    )
    path = _save(fig, out_dir / "tdcr3_tendon_pulls.png", _DEMO_DPI)
    advance()
    return record, path


# ---------------------------------------------------------------------------------------------
# MuJoCo part: tdcr3 on a Panda-class arm wrapping a cylinder, and the chain's convergence

#: Cylinder the TDCR wraps around: radius, half length [m], centre [m]; axis along world y,
#: beside the hanging TDCR (x = 0.307 m, z from 0.59 down to 0.40 m) on its +x side.
_POST_RADIUS = 0.015
_POST_HALF = 0.03
_POST_POS = (0.333, 0.0, 0.475)
#: Timeline [s]: arm approach, tendon pull, hold.
_T_APPROACH = (0.2, 1.0)
_T_PULL = (1.2, 3.2)
_DURATION = 4.0
#: Tension magnitude per segment [N] at full pull (segments 0..2): segment 0 tilts the TDCR
#: toward the cylinder, 1 and 2 curl it underneath and around.
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
    then the tendons curl it around. Tensions are filled in by `mujoco_demo` (they depend on the
    flange orientation).
    """
    from softrod.scene import PANDA_HOME

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
            {
                "name": "tdcr",
                "robot": load_spec("tdcr3")[1].to_dict(),
                "links": 30,
                "mount": "panda",
            }
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
    from softrod.scene import PANDA_HOME

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


def mujoco_demo(out_dir: Path) -> dict[str, Any]:
    """Write the wrap video, its last frame and the validation plot; return a JSON-able summary."""
    choose_gl_backend(headless=True)
    from softrod.bench import plot_static
    from softrod.mujoco import render_image, render_video
    from softrod.scene import build_scene
    from softrod.validate import CHAIN_MATERIALS as MATERIALS
    from softrod.validate import static_errors

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
    # The other MuJoCo clips, into the same folder.
    for name, clip in MUJOCO_CLIPS:
        summary[name] = clip(out_dir)
    summary["wall_s"] = time.perf_counter() - t0
    return summary


# ---------------------------------------------------------------------------------------------
# Magnetic catheter (issue 20): steered by a rotating uniform field, with contact

#: Length of the magnetic catheter clip [s]: the 20 mT field turns about y at
#: `_MAGNETIC_RATE`, past +x (the right post) at 1.3 s and to -x (the left one) at 3.9 s.
_MAGNETIC_DURATION = 4.5
#: Turn rate of the demo's field [rad/s]: twice the example scene's 0.6, so that the clip (and
#: the demo's time) stays short.
_MAGNETIC_RATE = 1.2


def magnetic_scene() -> dict[str, Any]:
    """The `magnetic_catheter` scene of examples/scenes (the shipped robot `magnetic_catheter`,
    a 0.1 m rod with a tip magnet, between two posts, a rotating 20 mT field, no gravity), the
    field turning at `_MAGNETIC_RATE`."""
    post = {"type": "cylinder", "radius": 0.006, "half_height": 0.03}
    turn_x = [0.7071068, 0.7071068, 0.0, 0.0]  # posts along y
    return {
        "name": "magnetic_catheter",
        "floor": False,
        "options": {"gravity": [0, 0, 0], "timestep": 0.002},
        "robots": [
            {
                "name": "catheter",
                "robot": "magnetic_catheter",
                "links": 30,
                "pos": [0, 0, 0.02],
                "options": {"damping_ratio": 0.5},
            }
        ],
        "objects": [
            {"name": "post_right", **post, "pos": [0.055, 0, 0.09], "quat": turn_x},
            {"name": "post_left", **post, "pos": [-0.055, 0, 0.09], "quat": turn_x},
        ],
        "cameras": [{"name": "front", "pos": [0, -0.35, 0.08], "target": [0, 0, 0.08]}],
        "magnetic_field": {
            "field": [0.0, 0.0, 0.02],
            "rotation_axis": [0, 1, 0],
            "rotation_rate": _MAGNETIC_RATE,
        },
    }


def magnetic_demo(out_dir: Path) -> dict[str, Any]:
    """Write `magnetic_catheter.mp4` (the catheter steered by the rotating field, pressing on
    the posts) and its last frame; return a JSON-able summary (steps in contact with each post,
    the tip's x range [m])."""
    choose_gl_backend(headless=True)
    from softrod.mujoco import render_image, render_video
    from softrod.scene import build_scene

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    scene = build_scene(magnetic_scene())
    m, d = scene.model, scene.data
    posts = {name: m.body(name).id for name in ("post_right", "post_left")}
    touched = dict.fromkeys(posts, 0)
    tip_x: list[float] = []
    tip = d.site("catheter/tip")

    def before_step(t: float) -> None:
        # The field of time t on the magnets (the documented per-step hook), then bookkeeping.
        scene.apply_keyframes(t)
        if d.ncon:
            bodies = m.geom_bodyid[np.concatenate([d.contact.geom1, d.contact.geom2])]
            for name, body in posts.items():
                touched[name] += int(np.any(bodies == body))
        tip_x.append(float(tip.xpos[0]))

    video = render_video(
        m, d, out_dir / "magnetic_catheter.mp4", duration=_MAGNETIC_DURATION, fps=30,
        camera="front", width=640, height=480, before_step=before_step,
    )  # fmt: skip
    image = render_image(m, d, out_dir / "magnetic_catheter.png", camera="front")
    return {
        "video": str(video),
        "image": str(image),
        "duration_s": _MAGNETIC_DURATION,
        "contact_steps": touched,
        "tip_x_range_m": [min(tip_x), max(tip_x)],
        "wall_s": time.perf_counter() - t0,
    }


#: Clips the MuJoCo demo renders after the wrap (name in summary.json, function writing into
#: the MuJoCo demo's folder and returning a JSON-able summary).
MUJOCO_CLIPS: tuple[tuple[str, Callable[[Path], Any]], ...] = (
    ("magnetic_catheter", magnetic_demo),
)


# ---------------------------------------------------------------------------------------------
# The command

#: Optional parts of the demo (they need MuJoCo and a GL backend): (name, function writing
#: into `output / name` and returning a JSON-able summary).
OPTIONAL_DEMOS: tuple[tuple[str, Callable[[Path], Any]], ...] = (("mujoco", mujoco_demo),)


def _optional_missing(exc: ImportError) -> bool:
    """True when `exc` means an optional third-party dependency is not installed; a missing
    softrod module is a bug and is not skipped."""
    missing = getattr(exc, "name", None)
    if not isinstance(exc, ModuleNotFoundError) or not missing:
        return True
    return not (missing == "softrod" or missing.startswith("softrod."))


def _run_optional(name: str, fn: Callable[[Path], Any], out_dir: Path) -> tuple[str, Any]:
    """Run an optional part `fn(out_dir / name)`.

    Returns ("ok", its return value), or ("skipped: reason", None) when an optional dependency
    is missing. Any other error propagates.
    """
    try:
        output = fn(out_dir / name)
    except ImportError as exc:  # an optional dependency imported lazily by the part
        if not _optional_missing(exc):
            raise
        return f"skipped: {type(exc).__name__}: {exc}", None
    return "ok", output


@app.command("demo")
def demo_cmd(
    output: Annotated[Path, typer.Option("-o", "--output", help="Output folder.")] = Path(
        "runs/demo"
    ),
    quick: Annotated[
        bool, typer.Option("--quick", help="Fewer load cases (a few seconds; for tests).")
    ] = False,
    hooks: Annotated[
        bool,
        typer.Option(
            "--hooks/--no-hooks",
            help="Run the optional demos of other layers (MuJoCo) if installed.",
        ),
    ] = True,
) -> None:
    """Showcase: SoftManiSim robot vs constant curvature, 3-segment TDCR pulls, summary.json.

    Writes two figures and summary.json to the output folder, then the optional MuJoCo demo.

    Exits 1 when a solve does not converge; a failing optional demo is recorded, then raised.
    """
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    start = time.perf_counter()
    out_dir = Path(output)
    out_dir.mkdir(parents=True, exist_ok=True)
    sms = compile_model(load_spec("softmanisim")[1])
    tdcr = compile_model(load_spec("tdcr3")[1])
    # Load the compiled kernels once, so the recorded times are the solver's own.
    solve_static(sms, _SMS_TENSIONS, tip_force=(0.0, 0.1, 0.0))
    n_sms = (3 * 2 if quick else 9 * 4) + 1
    n_tdcr = sum(len(p.scales) for p in _tdcr_pulls(quick)) + 1
    n_work = n_sms + n_tdcr + len(OPTIONAL_DEMOS)

    summary: dict[str, Any] = {"quick": quick}
    files: dict[str, str] = {}
    hook_status: dict[str, str] = {}
    hook_outputs: dict[str, Any] = {}
    hook_error: Exception | None = None
    progress = Progress(
        TextColumn("{task.description:<34}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=_console(stderr=True),
    )
    with progress:
        task = progress.add_task("softmanisim: loaded rod vs PCC", total=n_work)

        def advance() -> None:
            progress.advance(task)

        summary["softmanisim"], path = _demo_softmanisim(sms, quick, out_dir, advance)
        files["softmanisim_vs_pcc"] = str(path)
        progress.update(task, description="tdcr3: tendon pulls")
        summary["tdcr3"], path = _demo_tdcr(tdcr, quick, out_dir, advance)
        files["tdcr3_tendon_pulls"] = str(path)

        # Optional demos of other layers: skipped when absent, never silently broken.
        for name, part in OPTIONAL_DEMOS:
            progress.update(task, description=f"{name} demo")
            if not hooks:
                hook_status[name] = "skipped: --no-hooks"
            else:
                try:
                    hook_status[name], value = _run_optional(name, part, out_dir)
                except Exception as exc:  # recorded here, raised after summary.json is written
                    hook_status[name], value = f"failed: {type(exc).__name__}: {exc}", None
                    hook_error = hook_error or exc
                if value is not None:
                    hook_outputs[name] = value
            advance()
        progress.update(task, description="done")

    summary["hooks"] = hook_status
    if hook_outputs:
        summary["hook_outputs"] = hook_outputs
    summary["success"] = bool(
        summary["softmanisim"]["all_success"]
        and summary["tdcr3"]["all_success"]
        and hook_error is None
    )
    summary["total_time_s"] = time.perf_counter() - start
    summary_path = out_dir / "summary.json"
    files["summary"] = str(summary_path)
    summary["files"] = files
    summary_path.write_text(json.dumps(json_safe(summary), indent=2, default=str) + "\n")
    _print_demo_report(summary)

    if hook_error is not None:
        raise RuntimeError(f"demo hook failed (recorded in {summary_path})") from hook_error
    if not summary["success"]:
        _stderr_line(f"softrod: demo: some solves did not converge; see {summary_path}")
        raise typer.Exit(1)


def _print_demo_report(summary: dict[str, Any]) -> None:
    """Plain lines (no wrapping) so that scripts can pick up the written paths."""
    sms = summary["softmanisim"]
    print(
        f"softmanisim: {len(sms['cases'])} loaded solves, PCC tip error up to "
        f"{1e3 * sms['max_pcc_tip_error']:.1f} mm (mean {1e3 * sms['mean_pcc_tip_error']:.1f} mm)"
    )
    panels = summary["tdcr3"]["panels"]
    n_tdcr = sum(len(p["cases"]) for p in panels)
    print(f"tdcr3: {n_tdcr} solves in {len(panels)} pull patterns")
    for name, status in summary["hooks"].items():
        print(f"{name} demo: {status}")
    for path in summary["files"].values():
        print(f"wrote {path}")
    print(f"demo took {summary['total_time_s']:.1f} s")
