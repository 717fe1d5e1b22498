"""Why tendon friction does not help the hardware fit: measured vs predicted loops per pattern.

    PYTHONPATH=src python dev/hardware_loops.py FITTED.yaml VAL.csv [CASE ...]

Replays the val recording through the calibrated description FITTED (`softrod hardware fit`),
once per CASE (default mu=0 mu=0.05 mu=0.1 mu=0.2): `mu=V` capstan friction held at V
(`friction_sequence`, length control, state carried row to row), `play=B` a constant play of
B [m] on the displacements (`calibration.backlash`, frictionless), `tplay=BETA` a play of
BETA [m/N] times the tendon tension (`calibration.backlash_per_tension`), `hole=MU:ALPHA`
capstan friction MU with the holes' own wrap ALPHA [rad per hole] (`hole_wrap`), `file` the
description as it is. Prints, per val pattern, the loop the measurement and each replay make:

* a pattern is a ramp out and back (`|d|` grows, then shrinks); the pull branch is its rows up
  to the largest |d|, the release branch the rows after. Each release row is paired with the
  pull branch interpolated at its |d| (linear in |d| on the pull branch, which is monotone).
* `width` [mm]: mean distance between a release row's tip and the pull branch's tip at equal
  |d| (0 for a model without memory). `signed` [mm]: mean of (release - pull) of the tip's
  distance from the straight pose's tip (the model's tip at d = 0, in the tracker frame):
  > 0 when the robot is bent further on the way back (friction lag), < 0 when less.
* `cmd` [mm]: mean distance between the paired commands (the nine displacements), so the loop
  is compared at equal command, not only at equal |d|.

Also prints the held-out mean error per case, pulling vs releasing (`motion_direction`), and
the mean loop over the scurve / spiral patterns whose paired commands differ by < 1 mm (the
all3_same patterns come back along another command: their "loop" is mostly that).
"""

from __future__ import annotations

import sys
import time

import numpy as np

from softrod.description import TendonFrictionSpec, load_robot
from softrod.validate._hardware import (
    friction_sequence,
    motion_direction,
    replay_marker,
    tip_errors_mm,
)
from softrod.validate._hardware_io import read_recording


def branches(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pull rows (up to the largest |d|) and release rows (after it) of one pattern."""
    n = np.linalg.norm(d, axis=1)
    top = int(np.argmax(n))
    return np.arange(0, top + 1), np.arange(top + 1, len(n))


def loop(tip: np.ndarray, d: np.ndarray, straight: np.ndarray) -> tuple[float, float, float] | None:
    """(width, signed, cmd) [mm] of one pattern (see the module doc), None without a loop."""
    pull, rel = branches(d)
    n = np.linalg.norm(d, axis=1)
    # Release rows inside the pull branch's |d| range (interpolation, no extrapolation).
    order = np.argsort(n[pull])
    npull = n[pull][order]
    rel = rel[(n[rel] >= npull[0]) & (n[rel] <= npull[-1])]
    if len(pull) < 3 or len(rel) < 3:
        return None

    def at(values: np.ndarray, x: np.ndarray) -> np.ndarray:
        v = values[pull][order]
        return np.stack([np.interp(x, npull, v[:, c]) for c in range(v.shape[1])], axis=1)

    tp, dp = at(tip, n[rel]), at(d, n[rel])
    width = np.linalg.norm(tip[rel] - tp, axis=1).mean()
    bend = lambda p: np.linalg.norm(p - straight[None, :], axis=1)  # noqa: E731
    signed = (bend(tip[rel]) - bend(tp)).mean()
    cmd = np.linalg.norm(d[rel] - dp, axis=1).mean()
    return 1e3 * width, 1e3 * signed, 1e3 * cmd


def main() -> None:
    fitted, data = sys.argv[1], sys.argv[2]
    cases = sys.argv[3:] or ["mu=0", "mu=0.05", "mu=0.1", "mu=0.2"]
    spec = load_robot(fitted)
    cal = spec.calibration
    assert cal is not None
    plain = cal.model_copy(
        update={"backlash": 0.0, "backlash_per_tension": 0.0, "lag_fraction": 0.0}
    )
    rec = read_recording(data, servo_columns=cal.servo_columns)
    assert rec.tip is not None
    d = rec.displacement
    straight, _ = replay_marker(
        spec.model_copy(update={"calibration": plain}), np.zeros((1, d.shape[1]))
    )
    direction = motion_direction(d)
    labels = [p for i, p in enumerate(rec.pattern) if p not in rec.pattern[:i]]
    labels = [p for p in labels if not p.endswith("_hold")]
    tips = {"measured": rec.tip}
    for case in cases:
        t0 = time.process_time()
        kind, _, value = case.partition("=")
        if kind == "mu":
            tips[case], ok = replay_marker(
                spec.model_copy(update={"calibration": plain}),
                d,
                sequence_model=friction_sequence,
                friction=(float(value), 0.0),
            )
        elif kind == "hole":
            mu, alpha = (float(v) for v in value.split(":"))
            block = TendonFrictionSpec(mu=mu, hole_wrap=alpha)
            tips[case], ok = replay_marker(
                spec.model_copy(update={"calibration": plain, "tendon_friction": block}),
                d,
                sequence_model=friction_sequence,
                friction=(mu, 0.0),
            )
        elif kind in ("play", "tplay"):
            key = "backlash" if kind == "play" else "backlash_per_tension"
            c = plain.model_copy(update={key: float(value)})
            tips[case], ok = replay_marker(spec.model_copy(update={"calibration": c}), d)
        else:
            tips[case], ok = replay_marker(spec, d, t=rec.t)  # the file as fitted (its lag too)
        e = tip_errors_mm(tips[case], rec.tip)
        print(
            f"hardware_loops.{case}: mean {e.mean():.2f} median {np.median(e):.2f} "
            f"max {e.max():.2f} pulling {e[direction > 0].mean():.2f} releasing "
            f"{e[direction < 0].mean():.2f} mm; converged {ok.mean():.3f}; "
            f"{time.process_time() - t0:.1f} s CPU"
        )
    names = list(tips)
    print("pattern | cmd [mm] | " + " | ".join(f"{k} width / signed [mm]" for k in names))
    sums = {k: np.zeros(2) for k in names}
    close = {k: [] for k in names}
    count = 0
    for label in labels:
        rows = np.flatnonzero(rec.pattern == label)
        cells = []
        cmd = np.nan
        for k in names:
            got = loop(tips[k][rows], d[rows], straight[0])
            if got is None:
                break
            cells.append(f"{got[0]:.2f} / {got[1]:+.2f}")
            sums[k] += got[:2]
            cmd = got[2]
            if cmd < 1.0 and ("scurve" in label or "spiral" in label):
                close[k].append(got[:2])
        else:
            count += 1
            print(f"{label} | {cmd:.2f} | " + " | ".join(cells))
    print(
        f"mean over {count} patterns | | "
        + " | ".join(f"{sums[k][0] / count:.2f} / {sums[k][1] / count:+.2f}" for k in names)
    )
    n_close = len(close[names[0]])
    print(
        f"scurve / spiral, {n_close} patterns with cmd < 1 mm | | "
        + " | ".join(
            f"{np.mean(close[k], axis=0)[0]:.2f} / {np.mean(close[k], axis=0)[1]:+.2f}"
            for k in names
        )
    )


if __name__ == "__main__":
    main()
