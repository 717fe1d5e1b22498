"""A tension play that saturates (issue 15; docs/validation.md, the capacity screen).

    PYTHONPATH=src python dev/hardware_saturating_play.py ROBOT OUT_DIR [B_MAX_START]

The play band of `tension_play` becomes b_max (1 - exp(-beta T / b_max)): beta T at small
tension (the shipped tension play, `backlash_per_tension` = beta), b_max at large tension (a
constant play). The calibration's `backlash` is read as b_max (start B_MAX_START [m], default
0.3 mm); b_max = 0 keeps the shipped law. Runs `hardware_capacity.py ROBOT OUT_DIR --with
backlash` (fits on train, on val, on train + val; replays on both) with this law patched into
the replay, so every fit and replay uses it. A diagnostic: not a fit option.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import softrod.validate._hardware as hw

sys.path.insert(0, str(Path(__file__).parent))
import hardware_capacity as cap  # noqa: E402

#: Start of b_max [m] (inside the backlash bounds [0, 3 mm]).
B_MAX_START = 3e-4


def saturating_tension_play(displacement, backlash, per_tension, solve, selected) -> np.ndarray:
    """`hw.tension_play` with the band b_max (1 - exp(-beta T / b_max)), b_max = `backlash`."""
    d = np.asarray(displacement, dtype=float)
    out = np.empty_like(d)
    tension = np.zeros(d.shape[1])
    for i in range(len(d)):
        if backlash > 0.0:
            band = backlash * -np.expm1(-per_tension * tension / backlash)
        else:
            band = per_tension * tension
        out[i] = d[i] if i == 0 else np.clip(out[i - 1], d[i] - band, d[i] + band)
        if selected[i]:
            tension = np.asarray(solve(i, out[i]), dtype=float)
    return out


def main() -> None:
    args = sys.argv[1:]
    if len(args) not in (2, 3):
        raise SystemExit(__doc__)
    # `_tension_played` looks the play up in its module at call time.
    hw.tension_play = saturating_tension_play
    cap.CONSTANT_PLAY_START = float(args[2]) if len(args) == 3 else B_MAX_START
    sys.argv = ["hardware_capacity.py", args[0], args[1], "--with", "backlash"]
    cap.main()


if __name__ == "__main__":
    main()
