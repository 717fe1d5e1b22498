"""Partial files are never silently read: every file softrod reads back that a kill (or a full
disk) could leave truncated is either repaired (a cache that can be rebuilt) or refused with
one message naming it. One test per reader, each with a truncated file."""

from __future__ import annotations

import importlib.util
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from softrod._jobs import Journal

needs_pyarrow = pytest.mark.skipif(
    importlib.util.find_spec("pyarrow") is None, reason="pyarrow not installed"
)


def _truncate(path: Path, keep: float = 0.5) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])


@needs_pyarrow
def test_truncated_sweep_results_are_refused(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from softrod.sweep import read_results, run_sweep

    out = tmp_path / "r.parquet"
    pq.write_table(pa.table({"point_id": ["a", "b"], "y": [1.0, 2.0]}), out)
    _truncate(out)
    with pytest.raises(ValueError, match=r"cannot read the sweep results .*r\.parquet"):
        read_results(out)
    spec = {
        "name": "s",
        "robot": "tdcr3",
        "task": "static_tip",
        "inputs": {"tensions": [0.0] * 9},
        "design": {"kind": "grid", "parameters": {"inputs.tensions.0": {"values": [0.0]}}},
    }
    with pytest.raises(ValueError, match=r"r\.parquet"):
        run_sweep(spec, out, resume=True, workers=1, progress=False)


def test_truncated_journal_is_repaired(tmp_path):
    """Calibration checkpoints and validate caches: a cut or damaged record and everything
    after it are dropped (the work runs again), with a warning naming the file."""
    path = tmp_path / "j.jsonl"
    j = Journal(path, "validation", {"a": 1}, resume=False)
    for k in range(4):
        j.append({"key": str(k), "value": k})
    j.close()
    lines = path.read_text().splitlines(keepends=True)
    # A damaged record in the middle (a bad disk block): it and the rest are recomputed.
    path.write_text("".join([*lines[:2], '{"key": "1", "val\n', *lines[3:]]))
    with pytest.warns(UserWarning, match=r"j\.jsonl: dropped 3 damaged record"):
        j = Journal(path, "validation", {"a": 1}, resume=True)
    assert [r["key"] for r in j.records] == ["0"]
    j.append({"key": "1", "value": 1})
    j.close()
    assert len(path.read_text().splitlines()) == 3
    # A journal of another configuration is refused, naming the file.
    with pytest.raises(ValueError, match=r"j\.jsonl is the journal of a different validation"):
        Journal(path, "validation", {"a": 2}, resume=True)


def test_truncated_demonstrations_are_refused(tmp_path):
    from softrod.learn import DemoSet

    rng = np.random.default_rng(0)
    demos = DemoSet(
        "softrod/Reach-v0", [rng.normal(size=(50, 3))], [rng.normal(size=(50, 2))], [True], [1]
    )
    path = demos.save(tmp_path / "d.npz")
    # Saved atomically: nothing but the file itself is left in the folder.
    assert [p.name for p in tmp_path.iterdir()] == ["d.npz"]
    _truncate(path, 0.7)
    with pytest.raises(ValueError, match=r"cannot read the demonstrations .*d\.npz.*truncated"):
        DemoSet.load(path)


def test_truncated_bc_policy_and_checkpoint_are_refused(tmp_path):
    import torch

    from softrod.learn import BCConfig, DemoSet, load_bc_policy, train_bc

    policy = tmp_path / "policy.pt"
    torch.save({"kind": "x", "w": torch.zeros(1000)}, policy)
    _truncate(policy)
    with pytest.raises(ValueError, match=r"cannot read the BC policy .*policy\.pt"):
        load_bc_policy(policy)

    rng = np.random.default_rng(0)
    demos = DemoSet(
        "softrod/FlipSwitch-v0",
        [rng.normal(size=(12, 19))],
        [rng.normal(size=(12, 16))],
        [True],
        [1],
    )
    run = tmp_path / "run"
    run.mkdir()
    torch.save({"w": torch.zeros(1000)}, run / "checkpoint.pt")
    _truncate(run / "checkpoint.pt")
    cfg = BCConfig(iterations=2, hidden=8, layers=1, chunk=2, batch_size=4)
    with pytest.raises(ValueError, match=r"cannot read the checkpoint .*checkpoint\.pt"):
        train_bc(demos, cfg, run, progress=False, resume=True)


def test_truncated_sac_model_is_refused(tmp_path):
    from softrod.learn import load_sb3_policy

    model = tmp_path / "model.zip"
    with zipfile.ZipFile(model, "w") as z:
        z.writestr("data", json.dumps({"x": list(range(2000))}))
    _truncate(model)
    with pytest.raises(ValueError, match=r"cannot read the SAC model .*model\.zip"):
        load_sb3_policy(model)


def test_truncated_calibration_output_is_refused(tdcr3, tmp_path):
    """The calibrated description is read back as a robot: a cut file is a DescriptionError
    naming it (the file itself is written atomically by `softrod calibrate`)."""
    import softrod
    from softrod.description import DescriptionError

    path = tmp_path / "fit_calibrated.yaml"
    softrod.load_robot(tdcr3).to_yaml(path)
    _truncate(path, 0.4)
    with pytest.raises(DescriptionError, match=r"fit_calibrated\.yaml"):
        softrod.load_robot(path)


def _corrupt_middle(path: Path) -> None:
    data = bytearray(path.read_bytes())
    mid = len(data) // 3
    data[mid : mid + 8] = bytes(b ^ 0xFF for b in data[mid : mid + 8])
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("damage", [_truncate, _corrupt_middle])
def test_cached_recordings_and_networks_are_refused_when_damaged(tmp_path, damage):
    """The planning benchmark's cached datasets and network (`runs/planning/...`): written
    atomically; a cut or corrupt file is refused with one message naming it."""
    from softrod.planning import CompensationNetwork
    from softrod.pneumatic import Recording

    rng = np.random.default_rng(0)
    rec = Recording(rng.normal(size=(50, 2)), rng.normal(size=(50, 4, 3)), np.arange(5), 0.05)
    path = rec.save(tmp_path / "train.npz")
    back = Recording.load(path)
    assert np.array_equal(back.backbones, rec.backbones) and back.frame_dt == rec.frame_dt
    net = CompensationNetwork(
        weights=[rng.normal(size=(8, 30)), rng.normal(size=(12, 8))],
        biases=[rng.normal(size=8), rng.normal(size=12)],
        in_min=np.zeros(30),
        in_scale=np.ones(30),
        out_min=np.zeros(12),
        out_scale=np.ones(12),
        n_segments=2,
        n_plates=4,
        meta={"epochs": 3},
    )
    f_net = net.save(tmp_path / "network.npz")
    assert CompensationNetwork.load(f_net).meta == {"epochs": 3}
    # Nothing but the two files (no temporaries left beside them).
    assert sorted(p.name for p in tmp_path.iterdir()) == ["network.npz", "train.npz"]
    damage(path)
    damage(f_net)
    with pytest.raises(ValueError, match=r"cannot read the recording .*train\.npz"):
        Recording.load(path)
    with pytest.raises(ValueError, match=r"cannot read the compensation network .*network\.npz"):
        CompensationNetwork.load(f_net)


def test_a_file_of_another_kind_is_refused_by_name(tmp_path):
    from softrod.pneumatic import Recording

    other = tmp_path / "other.npz"
    np.savez(other, x=np.zeros(3))
    with pytest.raises(ValueError, match=r"other\.npz: it lacks commands"):
        Recording.load(other)


def test_results_of_another_softrod_version_are_not_resumed(tmp_path, monkeypatch):
    """Journals and sweep results record the softrod version; a resume by another version is
    refused (its cached results may differ), naming the file and both versions."""
    import softrod._jobs

    path = tmp_path / "j.jsonl"
    Journal(path, "calibration", {"a": 1}, resume=False).close()
    assert json.loads(path.read_text().splitlines()[0])["softrod"] == softrod._jobs.__version__
    monkeypatch.setattr(softrod._jobs, "__version__", "9.9.9")
    with pytest.raises(ValueError, match=r"j\.jsonl was written by softrod .*this is 9\.9\.9"):
        Journal(path, "calibration", {"a": 1}, resume=True)
    # A journal from before versions were recorded is still read.
    header = json.loads(path.read_text().splitlines()[0])
    del header["softrod"]
    path.write_text(json.dumps(header) + "\n")
    assert Journal(path, "calibration", {"a": 1}, resume=True).resumed


@needs_pyarrow
def test_sweep_results_of_another_version_are_not_resumed(tmp_path, monkeypatch):
    import softrod.sweep._run
    from softrod.sweep import run_sweep

    (tmp_path / "tasks.py").write_text("def task(point):\n    return {'y': point.inputs['x']}\n")
    spec = {
        "name": "v",
        "task": "tasks.py:task",
        "inputs": {"x": 0},
        "design": {"kind": "grid", "parameters": {"inputs.x": {"values": [1, 2]}}},
    }
    out = tmp_path / "v.parquet"
    run_sweep(spec, out, workers=1, progress=False, spec_dir=tmp_path)
    monkeypatch.setattr(softrod.sweep._run, "__version__", "9.9.9")
    with pytest.raises(ValueError, match=r"v\.parquet was written by softrod .*this is 9\.9\.9"):
        run_sweep(spec, out, resume=True, workers=1, progress=False, spec_dir=tmp_path)


def test_planning_cache_key_includes_the_version(monkeypatch):
    import softrod.planning._benchmark as bench
    from softrod.planning import BenchmarkConfig

    cfg = BenchmarkConfig()
    arm = bench._resolve_robot(cfg.robot)
    key = cfg.cache_key(arm)
    monkeypatch.setattr(bench, "__version__", "9.9.9")
    assert cfg.cache_key(arm) != key
