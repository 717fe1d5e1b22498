"""examples/learning/ensemble_select.py: the (candidate, ensembling weight) pair is chosen on
validation only (success, then the lower mean distance), only that pair is tested, `--reuse`
runs nothing twice, and held evaluations of other episodes are refused."""

from __future__ import annotations

import json
import sys

import pytest

pytest.importorskip("torch")

#: Validation success of each (iteration, k) in the fake run: three pairs tie at 0.7 and the
#: middle one has the lowest distance, so neither the first nor the last maximum is the answer
#: unless the order's second key (distance) decides.
VAL_SUCCESS = {(100, 0.01): 0.2, (100, 1.0): 0.7, (200, 0.01): 0.3, (200, 1.0): 0.7}
VAL_SUCCESS |= {(300, 0.01): 0.5, (300, 1.0): 0.7}


def _fake_evaluate(calls: list):
    def evaluate(path, k, seed, episodes):
        it = int(path.stem.split("_")[1])
        calls.append((it, k, seed, episodes))
        # The test episodes score what no validation number predicts, so a test read as
        # validation (or the reverse) shows.
        rate = 0.123 if seed == 10_000 else VAL_SUCCESS[(it, k)]
        dist = 0.05 if it == 200 else 0.06
        return {"success_rate": rate, "final_distance_mean": dist, "episodes": episodes}

    return evaluate


def test_selects_on_validation_tests_once_and_reuses(learning_example, tmp_path, monkeypatch):
    mod = learning_example("ensemble_select")
    run = tmp_path / "run"
    (run / "candidates").mkdir(parents=True)
    for it in (100, 200, 300):
        (run / "candidates" / f"policy_{it:06d}.pt").write_bytes(b"")
    calls: list = []
    monkeypatch.setattr(mod, "_evaluate", _fake_evaluate(calls))
    out = tmp_path / "sel.json"
    argv = [str(run), "--weights", "0.01", "1", "--val-episodes", "4", "-o", str(out)]
    monkeypatch.setattr(sys, "argv", ["ensemble_select.py", *argv])
    mod.main()
    doc = json.loads(out.read_text())
    entry = doc["runs"][0]
    assert entry["selected"] == {"iteration": 200, "temporal_ensemble": 1.0}
    assert entry["test"]["success_rate"] == 0.123 and doc["complete"] is True
    # Six validation evaluations on the validation seeds, then one test of the selected pair.
    assert [c for c in calls if c[2] == 20_000] == [
        (it, k, 20_000, 4) for it in (100, 200, 300) for k in (0.01, 1.0)
    ]
    assert [c for c in calls if c[2] != 20_000] == [(200, 1.0, 10_000, 100)]
    # --reuse evaluates nothing again and gives the same document.
    calls.clear()
    monkeypatch.setattr(sys, "argv", ["ensemble_select.py", *argv, "--reuse"])
    mod.main()
    assert calls == [] and json.loads(out.read_text()) == doc
    # Held evaluations of other validation episodes are refused, not mixed in.
    other = [str(run), "--weights", "0.01", "1", "--val-episodes", "5", "-o", str(out), "--reuse"]
    monkeypatch.setattr(sys, "argv", ["ensemble_select.py", *other])
    with pytest.raises(SystemExit, match="other episodes"):
        mod.main()
    assert calls == []


def test_refuses_negative_weights(learning_example, tmp_path, monkeypatch):
    mod = learning_example("ensemble_select")
    argv = ["ensemble_select.py", str(tmp_path), "--weights", "-1", "-o", str(tmp_path / "o")]
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit, match="--weights"):
        mod.main()
