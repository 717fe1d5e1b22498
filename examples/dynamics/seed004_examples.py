"""Seed-004 set-ups (Tables 3-7, SI; ALGORITHMS.md E.7) with tip-trajectory plots and videos.

Run: .venv/bin/python examples/dynamics/seed004_examples.py [--fast] [--out runs/dynamics]
Writes OUT/<case>_tip.png and <case>.mp4 (OUT: runs/dynamics). The paper's tables are in
(mg, mm, s); the numbers below are their SI equivalents (E.7). The aluminium cases need
~1e-6 s steps and take minutes; --fast runs only the PDMS cases.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import softrod  # noqa: E402
from softrod.dynamics import Magnet, MagneticField, simulate_dynamic  # noqa: E402

OUT = Path("runs/dynamics")
G = [0.0, -9.81, 0.0]  # the paper's gravity acts across the rod


def rod(name: str, E: float, nu: float, rho: float, L: float, **section) -> dict:
    return {"name": name, "model": "cosserat",
            "backbone": {"youngs_modulus": E, "poisson_ratio": nu, "density": rho, **section},
            "segments": [{"length": L}]}  # fmt: skip


def cases(fast: bool) -> dict:
    out = {}
    if not fast:
        al = rod("al_2mm", 75e9, 0.33, 2690.0, 0.2, radius=1e-3)  # Table 3
        st = softrod.solve_static(al, tip_moment=[0.0, 5.89e-2 / 0.2 * math.radians(3.69), 0])
        out["table3_al_in_plane"] = dict(robot=al, duration=0.3, initial=st, gravity=G,
                                         elements=15)  # fmt: skip
    pdms5 = rod("pdms_5mm", 365e3, 0.5, 1101.0, 0.0605, radius=2.5e-3)  # Table 5
    out["table5_pdms_fall"] = dict(robot=pdms5, duration=1.5, gravity=G, elements=10,
                                   damping=2e-3)  # fmt: skip
    pdms4 = rod("pdms_4mm", 365e3, 0.5, 1101.0, 0.06055, radius=2e-3)  # Table 6
    tip = Magnet.cylinder(s=0.06055, diameter=2e-3, height=4e-3, remanence=1.32,
                          direction=[0, 0, 1], mass=9.6e-5)  # fmt: skip
    st = softrod.solve_static(pdms4, tip_moment=[-2e-4, 0.0, 0.0])
    out["table6_pdms_tip_magnet_release"] = dict(robot=pdms4, duration=2.0, initial=st,
                                                 gravity=G, magnets=[tip], elements=10,
                                                 damping=2e-3)  # fmt: skip
    circle = MagneticField(
        uniform=[0.0, 7.75e-3, 0.0],
        rotating_amplitude=14.5e-3,
        rotating_frequency=0.5,
        rotating_axes=(np.array([0.0, 1.0, 0.0]), np.array([1.0, 0, 0])),
    )
    out["table6_rotating_field_circle"] = dict(robot=pdms4, duration=4.0, gravity=G,
                                               magnets=[tip], field=circle, elements=10,
                                               damping=5e-3)  # fmt: skip
    sq = rod(
        "pdms_square",
        3.65e6,
        0.5,
        1101.0,
        0.0855,
        area=4e-6,
        second_moment=4e-6**2 / 12,
        polar_moment=(2e-3) ** 4 / 6,
    )  # Table 7 (J_p = a^4 / 6)
    mags = [
        Magnet(s=0.0855, moment=[0, 0.009, 0], mass=7.2e-5),
        Magnet(s=0.0855 - 0.0361, moment=[0, 0, 0.009], mass=7.2e-5),
    ]
    out["table7_square_two_magnets"] = dict(
        robot=sq,
        duration=3.0,
        gravity=G,
        magnets=mags,
        elements=10,
        damping=2e-3,
        field=lambda t: [0.0, 20e-3 - 0.15e-3 * min(t / 3.0, 1.0), 5e-3 * math.sin(t)],
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="only the PDMS cases (seconds)")
    parser.add_argument("--out", type=Path, default=OUT, help="folder for plots and videos")
    args = parser.parse_args()
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    for name, kw in cases(args.fast).items():
        res = simulate_dynamic(**kw, sample_dt=1e-2)
        print(f"{name}: {res.message}, dt {res.dt:.2e} s, {res.real_time_factor:.2f}x real time")
        fig, ax = plt.subplots(3, 1, figsize=(6, 6), sharex=True)
        for c, lab in enumerate("xyz"):
            ax[c].plot(res.t, 1e3 * res.tip_position[:, c])
            ax[c].set_ylabel(f"tip {lab} [mm]")
        ax[-1].set_xlabel("t [s]")
        fig.suptitle(name)
        fig.savefig(out / f"{name}_tip.png", dpi=100)
        plt.close(fig)
        try:
            import imageio.v2 as imageio

            frames = []
            for k in range(0, res.t.shape[0], 2):
                f2, a2 = plt.subplots(figsize=(4, 4))
                P = 1e3 * res.positions[k]
                a2.plot(P[:, 0], P[:, 1], "o-")
                L = 1e3 * res.node_s[-1]
                a2.set_xlim(-L, L)
                a2.set_ylim(-L, L)
                a2.set_title(f"{name} t = {res.t[k]:.2f} s", fontsize=8)
                f2.canvas.draw()
                frames.append(np.asarray(f2.canvas.buffer_rgba())[..., :3])
                plt.close(f2)
            imageio.mimsave(out / f"{name}.mp4", frames, fps=25)
        except ImportError:
            pass


if __name__ == "__main__":
    main()
