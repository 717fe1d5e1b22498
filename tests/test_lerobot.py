"""Demonstrations in the LeRobot dataset layout (v3.0): write -> read gives identical arrays,
the files are those LeRobot reads (paths, info.json, column types), and the CLI exports."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from softrod.learn import DemoSet

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


def _demos() -> DemoSet:
    rng = np.random.default_rng(0)
    return DemoSet(
        "softrod/FlipSwitch-v0",
        [rng.normal(size=(5, 3)).astype(np.float32), rng.normal(size=(2, 3)).astype(np.float32)],
        [rng.normal(size=(5, 2)).astype(np.float32), rng.normal(size=(2, 2)).astype(np.float32)],
        [True, False],
        [7, 8],
        {"episode_steps": 10},
        0.05,
        "expert",
        None,
        [0.1, 0.2],
    )


def test_lerobot_round_trip_is_identical(tmp_path: Path) -> None:
    demos = _demos()
    root = demos.save_lerobot(tmp_path / "ds")
    back = DemoSet.load_lerobot(root)
    assert back.env_id == demos.env_id and back.env_kwargs == demos.env_kwargs
    assert back.control_period == demos.control_period and back.source == demos.source
    assert back.action_noise == demos.action_noise and back.dedup_tol is None
    for got, want in zip(back.observations, demos.observations, strict=True):
        np.testing.assert_array_equal(got, want)
    for got, want in zip(back.actions, demos.actions, strict=True):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(back.success, demos.success)
    np.testing.assert_array_equal(back.seeds, demos.seeds)
    # An existing dataset is replaced only on request.
    with pytest.raises(FileExistsError):
        demos.save_lerobot(root)
    demos.save_lerobot(root, overwrite=True)


def test_lerobot_layout_is_what_lerobot_reads(tmp_path: Path) -> None:
    root = _demos().save_lerobot(tmp_path / "ds")
    info = json.loads((root / "meta" / "info.json").read_text())
    assert info["codebase_version"] == "v3.0" and info["fps"] == 20
    assert info["total_episodes"] == 2 and info["total_frames"] == 7
    assert info["features"]["observation.state"] == {
        "dtype": "float32",
        "shape": [3],
        "names": None,
    }
    data = pq.read_table(root / "data" / "chunk-000" / "file-000.parquet")
    assert data.schema.field("action").type == pa.list_(pa.float32(), 2)
    np.testing.assert_array_equal(data.column("episode_index").to_numpy(), [0] * 5 + [1] * 2)
    np.testing.assert_array_equal(data.column("frame_index").to_numpy(), [0, 1, 2, 3, 4, 0, 1])
    np.testing.assert_allclose(data.column("timestamp").to_numpy()[:2], [0.0, 0.05])
    eps = pq.read_table(root / "meta" / "episodes" / "chunk-000" / "file-000.parquet")
    np.testing.assert_array_equal(eps.column("dataset_from_index").to_numpy(), [0, 5])
    np.testing.assert_array_equal(eps.column("dataset_to_index").to_numpy(), [5, 7])
    tasks = pq.read_table(root / "meta" / "tasks.parquet")
    assert json.loads(tasks.schema.metadata[b"pandas"])["index_columns"] == ["__index_level_0__"]
    stats = json.loads((root / "meta" / "stats.json").read_text())
    assert set(stats["action"]) >= {"min", "max", "mean", "std", "count", "q01", "q99"}
    assert stats["action"]["count"] == [7]


def test_demos_cli_exports_lerobot(tmp_path: Path, capsys) -> None:
    import softrod.cli._learn_cmds  # noqa: F401  (registers the learning commands)
    from softrod.cli import main

    npz = _demos().save(tmp_path / "d.npz")
    out = tmp_path / "lerobot"
    assert main(["demos", str(npz), "--format", "lerobot", "-o", str(out)]) == 0
    back = DemoSet.load_lerobot(out)
    np.testing.assert_array_equal(back.actions[1], _demos().actions[1])
    capsys.readouterr()
    assert main(["demos", str(npz), "--format", "lerobot", "-o", str(out)]) == 2
    assert "exists" in capsys.readouterr().err
