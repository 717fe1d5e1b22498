"""The two validation studies of issue 9 as functions that write a report (Markdown + figures)
and return the numbers; `softrod validate sorosim|hardware` calls them."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from softrod.datasets import MATERIALS as DATA_MATERIALS
from softrod.validate._hardware import (
    DEFAULT_MAX_NFEV,
    DEFAULT_STRIDE,
    ROBOTS,
    HardwareFit,
    HardwareParams,
    bootstrap_mean_interval,
    motion_direction,
    predict_marker,
    tip_errors_mm,
)
from softrod.validate._hardware_io import (
    fit_recording,
    read_recording,
    recording_path,
    replay_recording,
    write_fitted,
)
from softrod.validate._mujoco_sweep import LINKS, mujoco_static_study
from softrod.validate._records import RecordCache, cached, write_text_atomic
from softrod.validate._sorosim import StaticStudy, static_solver_study

__all__ = ["hardware_study", "sorosim_study"]

#: Targets of the issue (% of length for SoRoSim, mm for hardware).
STATIC_MEAN_TARGET_PCT = 0.05
MUJOCO_N50_MEAN_TARGET_PCT = 0.2
MUJOCO_N50_MAX_TARGET_PCT = 1.0
HARDWARE_V4_TARGET_MM = 7.7
HARDWARE_V4_STRETCH_MM = 5.0


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _fmt(x: float, nd: int = 3) -> str:
    return f"{x:.{nd}f}"


def _opt(x: float | None, nd: int = 2) -> str:
    return "-" if x is None else f"{x:.{nd}f}"


def sorosim_study(
    out_dir: str | Path,
    materials: Sequence[str] = tuple(DATA_MATERIALS),
    links: Sequence[int] = LINKS,
    limit: int | None = None,
    limit_large: int | None = None,
    large_from: int = 100,
    cache: RecordCache | None = None,
) -> dict[str, Any]:
    """Static solver and MuJoCo N-sweep against SoRoSim's 500 shapes per material.

    `limit` caps the shapes of every study (None: all 500); `limit_large` caps only the MuJoCo
    runs with N >= `large_from` (the slowest). cache : per-shape results already computed (a
    resumed validation) and where new ones go.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results: dict[str, dict[str, StaticStudy]] = {}
    seconds: dict[str, float] = {}
    for mat in materials:
        results[mat] = {}
        t0 = time.perf_counter()
        results[mat]["static"] = static_solver_study(mat, limit=limit, cache=cache)
        seconds[f"{mat}.static"] = time.perf_counter() - t0
        for n in links:
            lim = limit_large if (limit_large is not None and n >= large_from) else limit
            t0 = time.perf_counter()
            results[mat][f"N{n}"] = mujoco_static_study(mat, int(n), limit=lim, cache=cache)
            seconds[f"{mat}.N{n}"] = time.perf_counter() - t0
    summary = {
        mat: {key: {**st.summary(), "shapes": int(len(st.tip_error_pct))} for key, st in r.items()}
        for mat, r in results.items()
    }
    obj: dict[str, Any] = {
        "static_mean_error_pct": {m: summary[m]["static"]["mean_pct"] for m in materials},
        "mujoco_n50_mean_error_pct": {
            m: summary[m]["N50"]["mean_pct"] for m in materials if "N50" in summary[m]
        },
        "mujoco_n50_max_error_pct": {
            m: summary[m]["N50"]["max_pct"] for m in materials if "N50" in summary[m]
        },
        "summary": summary,
        "seconds": seconds,
    }
    _sorosim_figures(out, results, links)
    _sorosim_markdown(out, summary, links, seconds)
    obj["report"] = str(out / "sorosim.md")
    write_text_atomic(out / "sorosim.json", json.dumps(obj, indent=1))
    return obj


def _sorosim_figures(out: Path, results: dict[str, dict[str, StaticStudy]], links) -> None:
    plt = _plt()
    fig, axes = plt.subplots(1, len(results), figsize=(5 * len(results), 4), squeeze=False)
    for ax, (mat, r) in zip(axes[0], results.items(), strict=True):
        ns = [n for n in links if f"N{n}" in r]
        for stat, style in (("mean", "o-"), ("p95", "s--"), ("max", "^:")):
            vals = []
            for n in ns:
                e = r[f"N{n}"].tip_error_pct
                vals.append(
                    e.mean()
                    if stat == "mean"
                    else np.percentile(e, 95)
                    if stat == "p95"
                    else e.max()
                )
            ax.loglog(ns, vals, style, label=f"MuJoCo {stat}")
        ax.axhline(r["static"].tip_error_pct.mean(), color="k", lw=1, label="static solver mean")
        ax.set_xlabel("links N")
        ax.set_ylabel("tip error [% of L]")
        ax.set_title(mat)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "sorosim_error_vs_N.png", dpi=120)
    plt.close(fig)

    fig, axes = plt.subplots(1, len(results), figsize=(5 * len(results), 4), squeeze=False)
    for ax, (mat, r) in zip(axes[0], results.items(), strict=True):
        keys = ["static"] + [k for k in ("N50",) if k in r]
        for key in keys:
            ax.hist(r[key].tip_error_pct, bins=40, alpha=0.6, label=key)
        ax.set_xlabel("tip error [% of L]")
        ax.set_ylabel("shapes")
        ax.set_title(f"{mat}: per-shape tip error")
        ax.legend()
    fig.tight_layout()
    fig.savefig(out / "sorosim_histograms.png", dpi=120)
    plt.close(fig)

    fig, axes = plt.subplots(1, len(results), figsize=(5 * len(results), 4), squeeze=False)
    for ax, (mat, r) in zip(axes[0], results.items(), strict=True):
        for key, st in r.items():
            ax.semilogy(
                np.arange(st.station_error_pct.shape[1]),
                st.station_error_pct.mean(0) + 1e-6,
                "o-",
                ms=3,
                label=key,
            )
        ax.set_xlabel("station (0 = base, 13 = tip; 6/7 = mid)")
        ax.set_ylabel("mean position error [% of L]")
        ax.set_title(f"{mat}: error along the backbone")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "sorosim_backbone.png", dpi=120)
    plt.close(fig)


def _sorosim_markdown(out: Path, summary, links, seconds) -> None:
    lines = [
        "# SoRoSim statics: softrod vs SoRoSim's 500 equilibria per rod",
        "",
        "Tip error in % of the rod length; backbone = all 14 stations. Command: "
        "`softrod validate sorosim`.",
        "",
        "| rod | model | shapes | mean | p95 | max | backbone mean | backbone max | converged |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for mat, rows in summary.items():
        for key, s in rows.items():
            lines.append(
                f"| {mat} | {key} | {s['shapes']} | {_fmt(s['mean_pct'], 4)} | "
                f"{_fmt(s['p95_pct'], 4)} | {_fmt(s['max_pct'], 4)} | "
                f"{_fmt(s['backbone_mean_pct'], 4)} | {_fmt(s['backbone_max_pct'], 4)} | "
                f"{s['converged_fraction']:.3f} |"
            )
    lines += [
        "",
        f"Targets: static solver mean <= {STATIC_MEAN_TARGET_PCT}%; MuJoCo N = 50 mean <= "
        f"{MUJOCO_N50_MEAN_TARGET_PCT}% and max <= {MUJOCO_N50_MAX_TARGET_PCT}%.",
        "",
        "![error vs N](sorosim_error_vs_N.png)",
        "![histograms](sorosim_histograms.png)",
        "![backbone](sorosim_backbone.png)",
        "",
        "Run times [s]: " + ", ".join(f"{k} {v:.0f}" for k, v in seconds.items()),
    ]
    write_text_atomic(out / "sorosim.md", "\n".join(lines) + "\n")


def _group(pattern: str) -> str:
    """Pattern label without the repetition prefix and the `_hold` suffix."""
    return re.sub(r"_hold$", "", re.sub(r"^rep\d+_", "", pattern))


#: Bootstrap of the held-out mean: resamples and the interval's level.
BOOTSTRAP_SAMPLES = 2000
BOOTSTRAP_LEVEL = 0.95


def hardware_study(
    out_dir: str | Path,
    robots: Sequence[str] = ROBOTS,
    stride: int = DEFAULT_STRIDE,
    max_nfev: int = DEFAULT_MAX_NFEV,
    mujoco: bool = True,
    links: int = 30,
    cache: RecordCache | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """Fit on train (every `stride`-th row; `softrod hardware fit`), write the calibrated
    description `<out>/<robot>_fitted.yaml`, replay all of val through it per model
    (`softrod hardware replay`), write the report.

    Per robot and model: held-out mean / median / max, the mean while pulling vs releasing
    (`motion_direction`), the mean's bootstrap interval (val patterns resampled as blocks,
    `seed`); per robot the parameters' standard errors. cache : per-robot calibrations already
    done (a resumed validation) and where new ones go.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    obj: dict[str, Any] = {"val_mean_tip_error_mm": {}, "robots": {}}
    figs: dict[str, dict[str, np.ndarray]] = {}
    for rob in robots:
        train_path = recording_path(rob, "train")
        val_path = recording_path(rob, "val")
        fit = _fit_from_record(
            cached(
                cache,
                f"{rob}/calibration/stride{stride}/nfev{max_nfev}/tension-play",
                _calibrated,
                rob,
                stride,
                max_nfev,
            )
        )
        if "servo_columns" not in fit.extra:  # a journal written before fit / replay
            fit.extra.update(
                data=str(train_path), servo_columns=list(read_recording(train_path).servo_columns)
            )
        fitted = out / f"{rob}_fitted.yaml"
        write_fitted(fit, fitted)
        val = read_recording(val_path)
        assert val.tip is not None
        direction = motion_direction(val.displacement)
        preds: dict[str, np.ndarray] = {}
        entry: dict[str, Any] = {
            "params": fit.params.as_dict(),
            "initial_params": fit.initial.as_dict(),
            "train_rows": fit.train_rows,
            "train_rmse_before_mm": fit.rmse_before_mm,
            "train_rmse_after_mm": fit.rmse_after_mm,
            "calibration_seconds": fit.seconds,
            "calibration_message": fit.message,
            "calibration_converged": fit.converged,
            "val_rows": val.rows,
            "models": {},
            "fitted_description": str(fitted),
            "standard_errors": fit.extra.get("standard_errors"),
            "standard_errors_message": fit.extra.get("standard_errors_message"),
            "friction": fit.extra.get("friction"),
            "friction_message": fit.extra.get("friction_message"),
            "bootstrap": {
                "seed": seed,
                "samples": BOOTSTRAP_SAMPLES,
                "level": BOOTSTRAP_LEVEL,
                "blocks": int(len(set(val.pattern.tolist()))),
            },
            "pulling_rows": int((direction > 0).sum()),
            "releasing_rows": int((direction < 0).sum()),
        }
        p_init, _ = predict_marker(rob, fit.initial, val.displacement)
        e0 = tip_errors_mm(p_init, val.tip)
        entry["val_uncalibrated_static_mean_mm"] = float(e0.mean())
        names = ["static", "mujoco"] if mujoco else ["static"]
        for name in names:
            t0 = time.perf_counter()
            rep = replay_recording(fitted, val_path, model=name, links=links)  # type: ignore[arg-type]
            e = tip_errors_mm(rep.tip, val.tip)
            preds[name] = rep.tip
            lo, hi = bootstrap_mean_interval(
                e, val.pattern, seed, BOOTSTRAP_SAMPLES, BOOTSTRAP_LEVEL
            )
            entry["models"][name] = {
                "mean_mm": float(e.mean()),
                "median_mm": float(np.median(e)),
                "max_mm": float(e.max()),
                "converged_fraction": float(rep.ok.mean()),
                "seconds": time.perf_counter() - t0,
                "replay_seconds": rep.seconds,
                "replay_cpu_seconds": rep.cpu_seconds,
                "mean_ci_mm": [lo, hi],
                "pulling_mean_mm": _mean_or_none(e[direction > 0]),
                "releasing_mean_mm": _mean_or_none(e[direction < 0]),
            }
        obj["val_mean_tip_error_mm"][rob] = {k: v["mean_mm"] for k, v in entry["models"].items()}
        obj["robots"][rob] = entry
        figs[rob] = {
            "measured": val.tip,
            **preds,
            "pattern": val.pattern,
            "displacement": val.displacement,
        }
    _hardware_figures(out, figs)
    _hardware_loops(out, figs)
    _hardware_markdown(out, obj, stride, links)
    obj["report"] = str(out / "hardware.md")
    write_text_atomic(out / "hardware.json", json.dumps(obj, indent=1))
    return obj


def _mean_or_none(e: np.ndarray) -> float | None:
    return float(e.mean()) if len(e) else None


def _calibrated(robot: str, stride: int, max_nfev: int) -> dict[str, Any]:
    path = recording_path(robot, "train")
    # With the tension play (`--tension-backlash`, docs/friction.md): fitted on train only.
    fit = fit_recording(robot, path, stride=stride, max_nfev=max_nfev, tension_backlash=True)
    return _fit_record(fit)


def _fit_record(fit: HardwareFit) -> dict[str, Any]:
    """A hardware calibration as a JSON-ready record (parameter vectors round-trip exactly)."""
    return {
        "robot": fit.robot,
        "params": fit.params.to_vector().tolist(),
        "initial": fit.initial.to_vector().tolist(),
        "train_rows": fit.train_rows,
        "rmse_before_mm": fit.rmse_before_mm,
        "rmse_after_mm": fit.rmse_after_mm,
        "nfev": fit.nfev,
        "converged": fit.converged,
        "seconds": fit.seconds,
        "message": fit.message,
        "extra": fit.extra,
    }


def _fit_from_record(rec: dict[str, Any]) -> HardwareFit:
    extra = dict(rec.get("extra", {}))
    params = HardwareParams.from_vector(np.array(rec["params"]))
    # The play per newton is not in the vector: the fit keeps it in `extra`.
    params.backlash_per_tension = float(extra.get("backlash_per_tension", 0.0))
    return HardwareFit(
        robot=rec["robot"],
        params=params,
        initial=HardwareParams.from_vector(np.array(rec["initial"])),
        train_rows=int(rec["train_rows"]),
        rmse_before_mm=rec["rmse_before_mm"],
        rmse_after_mm=rec["rmse_after_mm"],
        nfev=int(rec["nfev"]),
        seconds=rec["seconds"],
        message=rec["message"],
        extra=extra,
        converged=rec.get("converged"),
    )


def _hardware_loops(out: Path, figs: dict[str, dict[str, np.ndarray]]) -> None:
    """Loops: tip distance from the backbone axis [mm] against the command's size |d| [mm],
    measured and predicted, per val pattern; hysteresis shows as measured loops that the
    models retrace as one line."""
    plt = _plt()
    for rob, f in figs.items():
        groups = sorted({_group(p) for p in f["pattern"]})
        ncol = 4
        nrow = (len(groups) + ncol - 1) // ncol
        fig, axes = plt.subplots(nrow, ncol, figsize=(3.2 * ncol, 3.0 * nrow), squeeze=False)
        size = np.linalg.norm(f["displacement"], axis=1) * 1e3
        radial = {
            k: np.hypot(f[k][:, 0], f[k][:, 1]) * 1e3
            for k in ("measured", "static", "mujoco")
            if k in f
        }
        for ax, g in zip(axes.ravel(), groups, strict=False):
            idx = np.array([_group(p) == g for p in f["pattern"]])
            for name, style in (("measured", "k.-"), ("static", "r.--"), ("mujoco", "b.:")):
                if name in radial:
                    ax.plot(size[idx], radial[name][idx], style, lw=1, ms=2, label=name)
            ax.set_title(g, fontsize=7)
            ax.tick_params(labelsize=6)
        for ax in axes.ravel()[len(groups) :]:
            ax.axis("off")
        axes[0, 0].legend(fontsize=6)
        fig.suptitle(f"{rob} val loops: tip distance from the axis [mm] vs command |d| [mm]")
        fig.tight_layout()
        fig.savefig(out / f"hardware_{rob}_loops.png", dpi=110)
        plt.close(fig)


def _hardware_figures(out: Path, figs: dict[str, dict[str, np.ndarray]]) -> None:
    plt = _plt()
    for rob, f in figs.items():
        groups = sorted({_group(p) for p in f["pattern"]})
        ncol = 4
        nrow = (len(groups) + ncol - 1) // ncol
        fig, axes = plt.subplots(nrow, ncol, figsize=(3.2 * ncol, 3.0 * nrow), squeeze=False)
        for ax, g in zip(axes.ravel(), groups, strict=False):
            idx = np.array([_group(p) == g for p in f["pattern"]])
            ax.plot(
                f["measured"][idx, 0] * 1e3,
                f["measured"][idx, 1] * 1e3,
                "k.-",
                lw=1,
                ms=3,
                label="measured",
            )
            for name, style in (("static", "r.--"), ("mujoco", "b.:")):
                if name in f:
                    ax.plot(
                        f[name][idx, 0] * 1e3, f[name][idx, 1] * 1e3, style, lw=1, ms=2, label=name
                    )
            ax.set_title(g, fontsize=7)
            ax.set_aspect("equal", adjustable="datalim")
            ax.tick_params(labelsize=6)
        for ax in axes.ravel()[len(groups) :]:
            ax.axis("off")
        axes[0, 0].legend(fontsize=6)
        fig.suptitle(f"{rob} val: tip x-y [mm], predicted vs measured per tendon pattern")
        fig.tight_layout()
        fig.savefig(out / f"hardware_{rob}_paths.png", dpi=110)
        plt.close(fig)

        fig, ax = plt.subplots(figsize=(5, 3.5))
        for name in ("static", "mujoco"):
            if name in f:
                ax.hist(tip_errors_mm(f[name], f["measured"]), bins=40, alpha=0.6, label=name)
        ax.set_xlabel("val tip error [mm]")
        ax.set_ylabel("rows")
        ax.set_title(rob)
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / f"hardware_{rob}_histogram.png", dpi=120)
        plt.close(fig)


def _hardware_markdown(out: Path, obj: dict[str, Any], stride: int, links: int) -> None:
    lines = [
        "# Hardware: seed-002 TDCRs, calibrated on train, evaluated on val",
        "",
        f"Calibration on every {stride}th row of the train split (static rod, length-controlled "
        "elastic pull-only tendons with per-segment pretension and the tension play "
        "`backlash_per_tension`, friction behind a compliance: docs/friction.md, "
        "docs/validation.md); the MuJoCo "
        f"chain ({links} links) uses the same parameters. Command: `softrod validate hardware`.",
        "",
        "| robot | model | val rows | mean [mm] | 95 % interval [mm] | median [mm] | max [mm] "
        "| pulling / releasing [mm] | converged |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for rob, e in obj["robots"].items():
        for name, m in e["models"].items():
            ci = m.get("mean_ci_mm") or [float("nan")] * 2
            lines.append(
                f"| {rob} | {name} | {e['val_rows']} | {_fmt(m['mean_mm'], 2)} | "
                f"{_fmt(ci[0], 2)}-{_fmt(ci[1], 2)} | "
                f"{_fmt(m['median_mm'], 2)} | {_fmt(m['max_mm'], 2)} | "
                f"{_opt(m.get('pulling_mean_mm'))} / {_opt(m.get('releasing_mean_mm'))} | "
                f"{m['converged_fraction']:.3f} |"
            )
    lines += [
        "",
        "Pulling / releasing: rows where the norm of the nine commanded displacements grows / "
        "shrinks from the previous row. Interval: percentile bootstrap of the mean, val "
        "patterns resampled as blocks.",
    ]
    lines += [
        "",
        f"Target ftdcr_v4 mean <= {HARDWARE_V4_TARGET_MM} mm (stretch "
        f"{HARDWARE_V4_STRETCH_MM} mm).",
        "",
    ]
    for rob, e in obj["robots"].items():
        lines += [
            f"## {rob}",
            "",
            f"- uncalibrated (authors' parameters) static val mean: "
            f"{e['val_uncalibrated_static_mean_mm']:.2f} mm",
            f"- train RMSE {e['train_rmse_before_mm']:.2f} -> {e['train_rmse_after_mm']:.2f} mm "
            f"({e['train_rows']} rows, {e['calibration_seconds']:.0f} s)",
            f"- fitted: `{json.dumps(e['params'])}` (description `{e['fitted_description']}`)",
            f"- standard errors: `{json.dumps(e['standard_errors'])}` "
            f"({e['standard_errors_message']})",
            f"- friction: {json.dumps(e['friction'])} ({e['friction_message']})",
            "",
            f"![paths](hardware_{rob}_paths.png)",
            f"![loops](hardware_{rob}_loops.png)",
            f"![histogram](hardware_{rob}_histogram.png)",
            "",
        ]
    write_text_atomic(out / "hardware.md", "\n".join(lines) + "\n")
