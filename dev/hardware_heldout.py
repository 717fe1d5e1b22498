"""Held-out error of a fitted description on a recording, as `softrod validate hardware`
reports it: mean / median / max tip error, pulling vs releasing, 95 % bootstrap interval.

    PYTHONPATH=src python dev/hardware_heldout.py FITTED.yaml VAL.csv [static|mujoco ...]

Replays VAL through FITTED (`softrod.validate.replay_recording`: the description's friction
block and calibration, play included) per model (default static) and prints one line each.
Pulling / releasing: `motion_direction` of the commands (+1 / -1). The interval resamples whole
val patterns (`pattern_label`), 2000 resamples, seed 0 (`bootstrap_mean_interval`).
"""

from __future__ import annotations

import sys

import numpy as np

from softrod.validate import (
    bootstrap_mean_interval,
    motion_direction,
    replay_recording,
    tip_errors_mm,
)


def main() -> None:
    fitted, data = sys.argv[1], sys.argv[2]
    for model in sys.argv[3:] or ["static"]:
        rep = replay_recording(fitted, data, model=model)  # type: ignore[arg-type]
        rec = rep.recording
        assert rec.tip is not None
        e = tip_errors_mm(rep.tip, rec.tip)
        direction = motion_direction(rec.displacement)
        lo, hi = bootstrap_mean_interval(e, rec.pattern, seed=0)
        print(
            f"hardware_heldout.{model}: mean {e.mean():.2f} (95 % {lo:.2f}-{hi:.2f}) median "
            f"{np.median(e):.2f} max {e.max():.2f} mm; pulling {e[direction > 0].mean():.2f} "
            f"releasing {e[direction < 0].mean():.2f} mm ({(direction > 0).sum()} / "
            f"{(direction < 0).sum()} rows); converged {rep.ok.mean():.3f}; solve "
            f"{rep.cpu_seconds:.2f} s CPU"
        )


if __name__ == "__main__":
    main()
