"""How far rounding alone moves the shipped grasp policy's test episodes (tests/test_shipped.py's
CHAOTIC_DISTANCE_TOL): the policy's weights scaled by 1 + eps x N(0, 1), eps at float32's
rounding level, and the first N test episodes replayed beside the recorded ones.

    python dev/shipped_grasp_chaos.py [N]    # N episodes, default 4, for each of 4 perturbations
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("MUJOCO_GL", "egl")

import numpy as np
import torch

from softrod.learn import evaluate, load_shipped, shipped_provenance

torch.set_num_threads(1)
NAME = "WholeBodyGrasp-v0"


def main(n: int) -> None:
    prov = shipped_provenance(NAME)
    test = prov["test"]
    print("recorded", test["final_distance"][:n], test["success"][:n])
    for eps in (0.0, 1e-7, -1e-7, 3e-7):
        pol = load_shipped(NAME)
        # One fixed perturbation per eps: a relative change of every weight at rounding level.
        g = torch.Generator().manual_seed(1)
        with torch.no_grad():
            for p in pol.net.parameters():
                p.mul_(1 + eps * torch.randn(p.shape, generator=g, dtype=p.dtype))
        res = evaluate(
            pol, prov["env_id"], episodes=n, seed=test["seed"], env_kwargs=prov["env_kwargs"]
        )
        print(eps, np.round(res.final_distance, 4).tolist(), res.success.tolist())


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 4)
