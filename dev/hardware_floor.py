"""Evidence for the hardware floor: tracker noise, repeats with the same recent history, and
an oracle that knows the model's true error at each row's neighbours.

    PYTHONPATH=src python dev/hardware_floor.py [ROBOT] [FITTED.yaml]   (default ftdcr_v4)

Data only unless FITTED (a `softrod hardware fit` description) is given:

* `hold`: consecutive rows whose nine displacements agree within `HOLD_TOL` (one servo tick,
  0.015 mm, moves the tip by ~0.17 mm): the command holds; the tip
  change between them [mm] bounds the tracker's noise plus creep (noise alone: / sqrt(2)).
* `history k`: pairs of rows (train + val merged in time order, more than `APART` s apart)
  whose displacements agree within `CMD_TOL` at the row and at each of the k previous rows
  (within `PREV_TOL`), so the commanded path into the point agrees; a model of the command
  history up to depth k predicts one tip for both, so its mean error on them is at least half
  their mean distance.
* `neighbours` (data only): each val row's tip predicted as the mean of the previous and the
  next row's tips (same pattern): how much the tip moves between samples.
* `oracle` (with FITTED): the static replay of val through FITTED, each row corrected by the mean
  of the model's true error vectors at the previous and next rows of the same pattern. What is
  left is the part of the error that does not vary smoothly along the recording; the error the
  oracle removes is systematic (a function of where the robot is and how it got there), which a
  better model could in principle remove.
"""

from __future__ import annotations

import sys

import numpy as np
from hardware_repeatability import merged  # the same train + val merge (dev/ is on the path)

from softrod.validate import read_recording, recording_path, replay_recording

APART = 3.0
CMD_TOL = 1e-4
PREV_TOL = 3e-4
HOLD_TOL = 2e-5


def stats(x: np.ndarray) -> str:
    return (
        f"mean {x.mean():.2f} median {np.median(x):.2f} p90 {np.percentile(x, 90):.2f} "
        f"max {x.max():.2f} mm"
    )


def main() -> None:
    robot = sys.argv[1] if len(sys.argv) > 1 else "ftdcr_v4"
    t, d, tip = merged(robot)
    step = np.abs(np.diff(d, axis=0)).max(axis=1)
    hold = np.flatnonzero(step <= HOLD_TOL)
    moves = np.linalg.norm(np.diff(tip, axis=0)[hold], axis=1) * 1e3
    if hold.size:
        print(f"{robot}.hold: {hold.size} consecutive pairs at an unchanged command; tip "
              f"change {stats(moves)}")  # fmt: skip
    for depth in (0, 1, 2, 3):
        dist = []
        for i in range(depth, len(t)):
            far = np.flatnonzero((np.abs(t - t[i]) > APART) & (np.arange(len(t)) > i))
            far = far[far >= depth]
            ok = np.abs(d[far] - d[i]).max(axis=1) <= CMD_TOL
            for k in range(1, depth + 1):
                ok &= np.abs(d[far - k] - d[i - k]).max(axis=1) <= PREV_TOL
            dist += list(np.linalg.norm(tip[far[ok]] - tip[i], axis=1) * 1e3)
        if dist:
            a = np.array(dist)
            print(f"{robot}.history_{depth}: {a.size} pairs; tip distance {stats(a)}; floor "
                  f"{a.mean() / 2:.2f} mm")  # fmt: skip
        else:
            print(f"{robot}.history_{depth}: no pairs")
    val = read_recording(recording_path(robot, "val"))
    assert val.tip is not None
    same = val.pattern[1:-1] == val.pattern[:-2]
    same &= val.pattern[1:-1] == val.pattern[2:]
    mid = np.flatnonzero(same) + 1
    guess = 0.5 * (val.tip[mid - 1] + val.tip[mid + 1])
    e = np.linalg.norm(guess - val.tip[mid], axis=1) * 1e3
    print(f"{robot}.neighbours: {mid.size} val rows; tip vs the mean of its neighbours {stats(e)}")
    if len(sys.argv) > 2:
        rep = replay_recording(sys.argv[2], recording_path(robot, "val"))
        err = rep.tip - val.tip
        own = np.linalg.norm(err[mid], axis=1) * 1e3
        fixed = err[mid] - 0.5 * (err[mid - 1] + err[mid + 1])
        left = np.linalg.norm(fixed, axis=1) * 1e3
        print(f"{robot}.model: the same rows {stats(own)}")
        print(f"{robot}.oracle: corrected by the neighbours' true errors {stats(left)}")


if __name__ == "__main__":
    main()
