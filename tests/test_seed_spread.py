"""examples/learning/seed_spread.py's JSON: no NaN token, written after every seed, and
`--reuse` (the selection among a PPO run's snapshots is tested in test_device_ppo.py, which needs
the warp extra; these need none)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def test_spread_json_partial_writes_and_reuse(tmp_path: Path, learning_example) -> None:
    spread = learning_example("seed_spread")
    # Its JSON holds no NaN token at any depth (tasks without a distance).
    nested = {"a": [float("nan"), (1.0, float("inf"))], "b": {"c": float("nan")}}
    assert spread._nulls(nested) == {"a": [None, [1.0, None]], "b": {"c": None}}
    # The JSON written after each seed: partial until every run is in, NaN distances as null.
    seeds = [{"run": "runs/a", "test": {"final_distance_mean": 0.02, "success_rate": 0.5}}]
    args = argparse.Namespace(select="distance", metric=None, goal="min")
    part = spread._spread("softrod/Reach-v0", args, seeds, 2)
    assert part["complete"] is False and part["final_distance_mean_over_seeds"] == 0.02
    seeds.append({"run": "runs/b", "test": {"final_distance_mean": None, "success_rate": 1.0}})
    full = spread._spread("softrod/Reach-v0", args, seeds, 2)
    assert full["complete"] is True and full["final_distance_mean_over_seeds"] is None
    assert full["success_rate_mean_over_seeds"] == 0.75
    # --reuse keeps an earlier output's seeds for the same task and selection rule only.
    (tmp_path / "spread.json").write_text(json.dumps(full))
    assert set(spread._reusable(tmp_path / "spread.json", "softrod/Reach-v0", args)) == {
        "runs/a",
        "runs/b",
    }
    other = argparse.Namespace(select="success", metric=None, goal="min")
    assert spread._reusable(tmp_path / "spread.json", "softrod/Reach-v0", other) == {}
    assert spread._reusable(tmp_path / "spread.json", "softrod/PlanarReach-v0", args) == {}
    # A metric selection is reused only with the same goal (min or max).
    best_min = argparse.Namespace(select="metric", metric="progress", goal="min")
    mseeds = [{"run": "runs/c", "test": {"final_distance_mean": None, "success_rate": 1.0}}]
    mseeds[0]["test"]["metric_mean"] = 6.7
    (tmp_path / "metric.json").write_text(json.dumps(spread._spread("e", best_min, mseeds, 1)))
    assert set(spread._reusable(tmp_path / "metric.json", "e", best_min)) == {"runs/c"}
    best_max = argparse.Namespace(select="metric", metric="progress", goal="max")
    assert spread._reusable(tmp_path / "metric.json", "e", best_max) == {}


def test_resumed_sac_run_counts_all_its_steps(tmp_path: Path, learning_example) -> None:
    """A SAC run that continued another (`softrod train --resume`) reports the environment
    steps its model trained on in all, not only the steps after the resume that its summary
    counts; the selected checkpoint's steps come from the file itself."""
    import zipfile

    from softrod.learn import SACConfig, save_config

    spread = learning_example("seed_spread")
    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    save_config(SACConfig(env_id="softrod/PushCube-v1", steps=100_000, seed=2), run / "config.yaml")
    for name, steps in (("model.zip", 250_000), ("checkpoints/sac_160000_steps.zip", 160_000)):
        with zipfile.ZipFile(run / name, "w") as z:
            # SB3 keeps its counters in the archive's "data" JSON.
            z.writestr("data", json.dumps({"num_timesteps": steps, "gamma": 0.99}))
    summary = {"steps": 100_000, "wall_time_s": 10.0}
    assert spread._run_settings(run, summary) == ({}, 2, 250_000)
    assert spread._sac_steps(run / "checkpoints" / "sac_160000_steps.zip") == 160_000
    # A run without a final model (killed before saving) falls back to its summary.
    (run / "model.zip").unlink()
    assert spread._run_settings(run, summary) == ({}, 2, 100_000)
    assert spread._sac_steps(run / "policy.pt") is None
