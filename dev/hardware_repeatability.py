"""The floor of any model of the commands: repeatability of the tip at equal command history.

    PYTHONPATH=src python dev/hardware_repeatability.py [ROBOT ...]   (default ftdcr_v4 ftdcr_v6)

Data only, no model. The train and val recordings of a robot (one session) are merged in time
order. A pair is two rows recorded more than `APART` s apart whose nine servo displacements
agree within `CMD_TOL` (largest |difference|), and, for the history classes, whose recent
history agrees too:

* `command`: the displacements only (the section "Hardware" of docs/validation.md: 5.3 mm);
* `+ direction`: both rows move the same way (`motion_direction`: +1 pulling / -1 releasing;
  holding rows excluded);
* `+ previous`: also the previous rows' displacements agree within `PREV_TOL` (the last
  `DEPTH` rows each: same direction of motion *and* same path into the point);

Also the residual bend: rows whose command is within `REST_CMD` of zero, their tip's offset
from the median of those tips, and the cosine between that offset and the direction of the
last clearly bent tip before them (|d| > `BENT_CMD`), in the horizontal plane: near 1 means
the robot stays bent toward where it was last bent (memory that outlasts the motion).

For each class: the number of pairs, the mean / median / 90th percentile of the distance
between the two tips [mm], and the floor = half the mean distance: a model whose prediction is
a function of the command history (up to that depth) predicts one tip for both rows, so its
error on the two is at least |a - b| / 2 on average (triangle inequality). The command
tolerance itself moves the tip: `tip_per_cmd` estimates that part (the median tip change per mm
of command change between consecutive rows, times the pairs' mean command difference).
"""

from __future__ import annotations

import sys

import numpy as np

from softrod.validate._hardware import motion_direction
from softrod.validate._hardware_io import read_recording, recording_path

#: Rows closer in time than this [s] are not a repeat (the same moment of one sweep).
APART = 3.0
#: Servo displacements agree within this [m] (largest absolute difference over the tendons).
CMD_TOL = 1e-4
#: The previous rows' displacements agree within this [m].
PREV_TOL = 3e-4
#: How many previous rows must agree (the history class).
DEPTH = 3
#: "At rest" and "clearly bent" command norms [m] of the residual-bend check.
REST_CMD = 5e-4
BENT_CMD = 5e-3


def merged(robot: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(t [s], displacement (k, 9) [m], tip (k, 3) [m]) of train + val in time order."""
    ts, ds, tips = [], [], []
    columns = None
    for split in ("train", "val"):
        path = recording_path(robot, split)
        rec = read_recording(path, servo_columns=columns)
        columns = rec.servo_columns
        t0 = float(np.loadtxt(path, delimiter=",", skiprows=1, usecols=0, max_rows=1))
        ts.append(rec.t + t0)
        ds.append(rec.displacement)
        assert rec.tip is not None
        tips.append(rec.tip)
    t = np.concatenate(ts)
    order = np.argsort(t, kind="stable")
    return t[order], np.concatenate(ds)[order], np.concatenate(tips)[order]


def pairs(
    t: np.ndarray, d: np.ndarray, direction: np.ndarray, depth: int, same_dir: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Index arrays (i, j) of the pairs of one class (see the module doc)."""
    diff = np.max(np.abs(d[:, None, :] - d[None, :, :]), axis=2)
    ok = (diff <= CMD_TOL) & (np.abs(t[:, None] - t[None, :]) > APART)
    ok &= np.triu(np.ones_like(ok), 1)
    if same_dir:
        ok &= (direction[:, None] == direction[None, :]) & (direction[:, None] != 0)
    for back in range(1, depth + 1):
        prev = np.max(
            np.abs(np.roll(d, back, axis=0)[:, None, :] - np.roll(d, back, axis=0)[None, :, :]),
            axis=2,
        )
        ok &= prev <= PREV_TOL
        ok[:back, :] = False
        ok[:, :back] = False
    return np.nonzero(ok)


def residual_bend(d: np.ndarray, tip: np.ndarray) -> None:
    """Print the residual-bend check of the module doc."""
    norm = np.linalg.norm(d, axis=1)
    rest = np.flatnonzero(norm < REST_CMD)
    center = np.median(tip[rest], axis=0)
    cosines, offsets = [], []
    for i in rest:
        bent = np.flatnonzero(norm[:i] > BENT_CMD)
        a = (tip[i] - center)[:2]
        if len(bent) == 0 or not np.linalg.norm(a) > 0.0:
            continue
        b = (tip[bent[-1]] - center)[:2]
        cosines.append(float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b))))
        offsets.append(1e3 * float(np.linalg.norm(a)))
    c = np.array(cosines)
    print(
        f"  residual bend: {len(c)} rows at |d| < {1e3 * REST_CMD:g} mm after a bend; offset "
        f"from their median tip {np.mean(offsets):.2f} mm; cosine with the last bend "
        f"{c.mean():.2f} (> 0 in {100 * (c > 0).mean():.0f} %)"
    )


def main() -> None:
    robots = sys.argv[1:] or ["ftdcr_v4", "ftdcr_v6"]
    for robot in robots:
        t, d, tip = merged(robot)
        direction = motion_direction(d)
        step_cmd = np.linalg.norm(np.diff(d, axis=0), axis=1)
        step_tip = np.linalg.norm(np.diff(tip, axis=0), axis=1)
        moving = step_cmd > 1e-5
        tip_per_cmd = float(np.median(step_tip[moving] / step_cmd[moving]))
        print(f"{robot}: {len(t)} rows (train + val); tip / command {tip_per_cmd:.2f} mm/mm")
        residual_bend(d, tip)
        for name, depth, same_dir in (
            ("command", 0, False),
            ("+ direction", 0, True),
            (f"+ previous {DEPTH} rows", DEPTH, True),
        ):
            i, j = pairs(t, d, direction, depth, same_dir)
            if len(i) == 0:
                print(f"  {name}: no pairs")
                continue
            dist = 1e3 * np.linalg.norm(tip[i] - tip[j], axis=1)
            dcmd = 1e3 * np.linalg.norm(d[i] - d[j], axis=1)
            rows = len(np.unique(np.r_[i, j]))
            print(
                f"  {name}: {len(i)} pairs ({rows} rows); tip distance mean {dist.mean():.2f} "
                f"median {np.median(dist):.2f} p90 {np.percentile(dist, 90):.2f} max "
                f"{dist.max():.2f} mm; floor (mean / 2) {dist.mean() / 2:.2f} mm; command "
                f"difference {dcmd.mean():.3f} mm -> {tip_per_cmd * dcmd.mean():.2f} mm of tip"
            )


if __name__ == "__main__":
    main()
