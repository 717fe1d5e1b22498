"""SoRoSim's steel releases with the implicit step (issue 21, docs/dynamics.md "Implicit step").

Each of the ten records: held by `solve_static`, released with `simulate_dynamic(...,
integrator="implicit")` at the physical rotary inertia and SoRoSim's Kelvin-Voigt damping
(`lgvi_release`, the same call as `softrod validate sorosim --integrator implicit`); the tip
error in % of L (mean over the record) per record, their mean and the count under 0.5 %.

    PYTHONPATH=src NUMBA_NUM_THREADS=1 python dev/sorosim_implicit.py [--elements 20,40] [--json]
"""

from __future__ import annotations

import argparse
import json

from softrod.validate._dynamics import RELEASES, lgvi_release

#: Issue 21's target: mean tip error <= 0.5 % of L on every record.
TARGET_PCT = 0.5


def study(material: str, elements: int) -> dict:
    errs = [
        lgvi_release(material, i, elements=elements, integrator="implicit").mean_error_pct
        for i in RELEASES
    ]
    return {
        "material": material,
        "elements": elements,
        "per_record_pct": errs,
        "mean_pct": sum(errs) / len(errs),
        "under_target": sum(e < TARGET_PCT for e in errs),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--material", default="steel")
    ap.add_argument("--elements", default="20,40")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = [study(args.material, int(e)) for e in args.elements.split(",")]
    if args.json:
        print(json.dumps(rows))
        return
    for r in rows:
        per = " ".join(f"{e:.2f}" for e in r["per_record_pct"])
        n_ok = f"{r['under_target']}/{len(RELEASES)}"
        print(f"{r['material']} implicit, {r['elements']} el.: {per} | mean "
              f"{r['mean_pct']:.2f} % | {n_ok} under 0.5 %")  # fmt: skip


if __name__ == "__main__":
    main()
