"""Dead (world-fixed) tip moments: does a robot hold the static answer? (issue 19 item 1/2)

For the probe cases whose equilibrium the stability test rejects under a dead tip moment
(dev/static_property_probe.py; docs/stability.md "Dead moments: flutter"), at a fraction of
the tip moment and at the full one: the negative directions of the energy's second variation,
the growth over frequency of the linearised undamped dynamics (`_stability.flutter_growth`),
and an LGVI run (20 elements, implicit step, Kelvin-Voigt damping beta = T0 / 100, i.e. a
first-mode damping ratio of 3 %) released from the static answer with a tip-force kick of
1e-3 EI / L^2 for T0 / 10: the tip's distance from the static answer in L, once per lowest
period T0. The LGVI's own discretisation error (20 elements) leaves a constant offset of up to
~1e-2 L; a held shape stays there, an unstable one leaves by O(L).

    PYTHONPATH=src python dev/dead_moment_dynamics.py [SEED/INDEX ...] [--scales 0.3,1.0]

2026-11-26 (load average ~10): every case leaves at the full moment; see docs/stability.md.
"""

from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from snap_cases import case  # noqa: E402

import softrod  # noqa: E402
from softrod.dynamics import (  # noqa: E402
    DynamicLoads,
    build_lgvi_model,
    linear_modes,
    simulate_dynamic,
)
from softrod.rods import compile_model  # noqa: E402
from softrod.rods._stability import (  # noqa: E402
    _second_variation_inertia,
    flutter_growth,
    stability_maps,
)

#: The probe's dead-moment failures on main (seeds 0 and 1, N = 150; docs/validation.md).
CASES = ["0/0", "0/110", "0/117", "0/135", "0/137", "1/10", "1/95"]


def run(seed: int, index: int, scales: list[float], periods: float = 10.0) -> None:
    spec, loads = case(seed, index)
    model = compile_model(spec)
    L = model.total_length
    EI = float(model.K_bt[:, :2].min())
    lgvi = build_lgvi_model(spec, elements=20)
    T0 = 2.0 * np.pi / linear_modes(lgvi)[0]
    for scale in scales:
        scaled = {k: np.asarray(v) for k, v in loads.items()}
        scaled["tip_moment"] = scale * scaled["tip_moment"]
        sol = softrod.solve_static(model, check_stability=False, **scaled)
        maps = stability_maps(model, sol, grouped=True)
        negative = _second_variation_inertia(maps) if maps is not None else -1
        growth = flutter_growth(model, sol)
        dyn = dict(scaled)
        force = dyn.pop("tip_force", np.zeros(3))
        kick = 1e-3 * EI / L**2 * np.array([1.0, 0.3, -0.5])

        def tip_force(t: float, force: np.ndarray = force, kick: np.ndarray = kick) -> np.ndarray:
            return force + (kick if t < 0.1 * T0 else 0.0)

        res = simulate_dynamic(
            lgvi,
            periods * T0,
            loads=DynamicLoads(tip_force=tip_force, strain_damping=0.01 * T0, **dyn),
            initial=sol,
            sample_dt=T0 / 10,
            integrator="implicit",
        )
        dev = np.linalg.norm(res.positions[:, -1] - sol.tip_position, axis=1) / L
        moment = np.linalg.norm(scaled["tip_moment"]) * L / EI
        print(
            f"{seed}/{index} x{scale:g}: |M| L / EI {moment:.2f}, negative directions {negative}, "
            f"flutter growth {growth:.3g}; LGVI ({res.message[:20]}) |tip - static| / L per T0: "
            + " ".join(f"{d:.1e}" for d in dev[::10]),
            flush=True,
        )


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if "/" in a] or CASES
    scales = [1.0]
    if "--scales" in sys.argv:
        scales = [float(x) for x in sys.argv[sys.argv.index("--scales") + 1].split(",")]
    for arg in args:
        s, i = (int(x) for x in arg.split("/"))
        run(s, i, scales)
