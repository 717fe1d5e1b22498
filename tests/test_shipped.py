"""Policies shipped in the package (`softrod/learn/shipped`): sizes, provenance, and that a few
test episodes of each reproduce the outcomes recorded beside it (issue 17 item 3)."""

from __future__ import annotations

import json
import os

os.environ.setdefault("MUJOCO_GL", "egl")

import numpy as np
import pytest

pytest.importorskip("gymnasium")
pytest.importorskip("mujoco")
torch = pytest.importorskip("torch")

import softrod.cli._learn_cmds  # noqa: E402, F401  (registers the commands)
from softrod.cli import main  # noqa: E402
from softrod.learn import (  # noqa: E402
    evaluate,
    load_shipped,
    shipped_policies,
    shipped_provenance,
)

torch.set_num_threads(1)

#: The policies issue 17 asks the package to ship.
REQUIRED = ("Reach-v0", "ReachObstacle-v0", "WholeBodyGrasp-v0", "FlipSwitch-v0")
#: Issue 17's size limits [bytes]: each policy folder, and all of them together.
MAX_EACH, MAX_TOTAL = 5 * 1024 * 1024, 20 * 1024 * 1024
#: Test episodes replayed per policy (the first of the recorded 100; a few seconds each).
N_EPISODES = 2
#: Final distance [m] a replayed episode may differ from the recorded one: the same code gives
#: the same number on one machine; another CPU's float32 matrix products round differently.
DISTANCE_TOL = 1e-3
#: The same for tasks whose final distance is chaotic in the last bits [m]: the grasp's contacts
#: amplify rounding. The shipped grasp policy with its weights scaled by 1 + 1e-7 x N(0, 1)
#: (float32 rounding, what another CPU's libm or matrix kernels change) ends the first four test
#: episodes up to 11 mm from the unperturbed ones, and this machine's CPU ends the first two
#: 5.7 / 4.0 mm from the recorded ones (2026-12-07, `python dev/shipped_grasp_chaos.py`); no
#: success flag changed. Twice the largest change seen (12 mm against the record), rounded up:
#: a broken policy still fails it (its success flags or a larger miss).
CHAOTIC_DISTANCE_TOL = {"WholeBodyGrasp-v0": 0.025}
#: Provenance keys every shipped policy records.
PROVENANCE_KEYS = (
    "env_id",
    "algorithm",
    "policy_file",
    "env_kwargs",
    "commands",
    "train_seed",
    "steps",
    "wall_time_s",
    "git_commit",
    "selection",
    "eval_command",
    "test",
)


def test_required_policies_are_shipped_small_and_documented() -> None:
    shipped = shipped_policies()
    assert {f"softrod/{n}" for n in REQUIRED} <= set(shipped)
    sizes = {}
    for env_id, folder in shipped.items():
        sizes[env_id] = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
        assert sizes[env_id] <= MAX_EACH, (env_id, sizes[env_id])
        prov = shipped_provenance(env_id)
        assert all(k in prov for k in PROVENANCE_KEYS), sorted(prov)
        assert prov["env_id"] == env_id and (folder / prov["policy_file"]).is_file()
        assert (folder / "PROVENANCE.md").is_file()
        assert len(prov["test"]["success"]) == prov["test"]["episodes"] == 100
    assert sum(sizes.values()) <= MAX_TOTAL


@pytest.mark.parametrize("name", REQUIRED)
def test_shipped_policy_reproduces_its_recorded_episodes(name: str) -> None:
    prov = shipped_provenance(name)
    pol = load_shipped(name)
    assert pol.env_id == prov["env_id"] and pol.env_kwargs == prov["env_kwargs"]
    test = prov["test"]
    res = evaluate(
        pol, prov["env_id"], episodes=N_EPISODES, seed=test["seed"], env_kwargs=prov["env_kwargs"]
    )
    recorded = np.array(test["final_distance"][:N_EPISODES])
    tol = CHAOTIC_DISTANCE_TOL.get(name, DISTANCE_TOL)
    np.testing.assert_allclose(res.final_distance, recorded, atol=tol)
    assert list(res.success) == test["success"][:N_EPISODES]


def test_cli_eval_shipped_and_bad_name(capsys: pytest.CaptureFixture) -> None:
    prov = shipped_provenance("Reach-v0")
    assert main(["eval", "shipped:Reach-v0", "--episodes", "1", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["env_id"] == "softrod/Reach-v0" and summary["seed"] == 10_000
    assert summary["final_distance_mean"] == pytest.approx(
        prov["test"]["final_distance"][0], abs=DISTANCE_TOL
    )
    # --seed and --env-kwargs as for a run directory.
    assert (
        main(
            [
                "eval",
                "shipped:softrod/Reach-v0",
                "--episodes",
                "1",
                "--seed",
                "10001",
                "--env-kwargs",
                json.dumps(prov["env_kwargs"]),
                "--json",
            ]
        )
        == 0
    )
    summary = json.loads(capsys.readouterr().out)
    assert summary["seed"] == 10_001
    assert summary["final_distance_mean"] == pytest.approx(
        prov["test"]["final_distance"][1], abs=DISTANCE_TOL
    )
    # Kwargs that change the observation (the shipped Reach policy reads the fine-error input):
    # one line that says so, exit code 2.
    assert prov["env_kwargs"].get("error_gain", 0) > 0
    assert main(["eval", "shipped:Reach-v0", "--episodes", "1", "--env-kwargs", "{}"]) == 2
    err = capsys.readouterr().err
    assert "trained with other env kwargs" in err and err.count("\n") == 1, err
    # An unknown name: one line listing what is shipped, exit code 2.
    assert main(["eval", "shipped:Nope-v0", "--json"]) == 2
    err = capsys.readouterr().err
    assert "Nope-v0" in err and all(n in err for n in REQUIRED)
