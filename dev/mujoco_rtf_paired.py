"""Real-time factor of the bench's tdcr3 chain, this tree against another checkout, alternately
in one session (docs/mujoco.md, "Measured again"): tells a slower machine from a slower chain.

    PYTHONPATH=src python dev/mujoco_rtf_paired.py OTHER_CHECKOUT [--rounds 2]

OTHER_CHECKOUT is a git worktree of another commit (`git worktree add /tmp/old COMMIT`). Each
side's own `_rtf` (this tree: `softrod.bench._mujoco`; the first MuJoCo commit 6493502:
`softrod.mujoco._bench`) runs in its own process: 2 s simulated, best of 3, N = 20 and 30,
free and against the box; prints thread-CPU real-time factors.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

#: Runs in the checkout's interpreter path: that tree's `_rtf`, wherever its module lives.
CHILD = """
import importlib
for name in ("softrod.bench._mujoco", "softrod.mujoco._bench"):
    try:
        mod = importlib.import_module(name)
        break
    except ImportError:
        continue
out = []
for links in (20, 30):
    for box in (False, True):
        cpu, _, _ = mod._rtf(links, box, 2.0, 3)
        out.append(f"n{links} {'contact' if box else 'free'} {cpu:.1f}x")
print(name, ", ".join(out))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("other", type=Path)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    here = Path(__file__).resolve().parents[1]
    for r in range(args.rounds):
        for tree in (args.other.resolve(), here):
            line = subprocess.run(
                [sys.executable, "-c", CHILD],
                env={"PYTHONPATH": str(tree / "src"), "MUJOCO_GL": "egl", "PATH": ""},
                capture_output=True, text=True, check=True,
            ).stdout.strip()  # fmt: skip
            print(f"round {r + 1}, {tree}: {line}", flush=True)


if __name__ == "__main__":
    main()
