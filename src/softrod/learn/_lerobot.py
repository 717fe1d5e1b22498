"""Demonstrations in the LeRobot dataset layout (codebase v3.0), written and read without the
`lerobot` package (issue 17, item 5).

`lerobot` pins torch < 2.11 and pulls video decoders and hub clients, so it cannot share the
environment with softrod's torch 2.13; the on-disk layout is plain Parquet and JSON, written
here with pyarrow (the `dist` extra) exactly as `lerobot.datasets.LeRobotDataset` v3.0 reads it:

```
ROOT/
  meta/info.json                              codebase_version "v3.0", fps, features, totals
  meta/stats.json                             per feature: min, max, mean, std, count, q01..q99
  meta/tasks.parquet                          task string (index) -> task_index
  meta/episodes/chunk-000/file-000.parquet    one row per episode: length, tasks, frame range
  data/chunk-000/file-000.parquet             one row per frame
```

Frame columns: `observation.state` (obs_dim float32), `action` (act_dim float32), `timestamp`
[s] (float32, frame_index / fps), `frame_index`, `episode_index`, `index` (frame in the whole
dataset), `task_index` (int64). Vector features are fixed-size lists, as `datasets.Sequence(
length=n)` stores them. The episode rows add softrod's columns `softrod/seed` and
`softrod/success`; `info.json` adds a `softrod` block (env id, env kwargs, control period,
source, dedup tolerance, action noise) so that a written set reads back identically.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from softrod.learn._demos import DemoSet

__all__ = ["CODEBASE_VERSION", "read_lerobot", "write_lerobot"]

#: The LeRobot dataset layout written here.
CODEBASE_VERSION = "v3.0"
#: LeRobot's defaults for new datasets (files per chunk, file sizes [MB]).
CHUNKS_SIZE = 1000
DATA_FILE_SIZE_MB = 100
VIDEO_FILE_SIZE_MB = 200
DATA_PATH = "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
EPISODES_PATH = "meta/episodes/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
#: Quantiles LeRobot's statistics carry (q01 ... q99).
QUANTILES = (0.01, 0.10, 0.50, 0.90, 0.99)


def _pyarrow() -> Any:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:  # pragma: no cover - pyarrow ships with the `dist` extra
        raise ImportError(
            "the LeRobot dataset format needs pyarrow: pip install 'softrod[dist]'"
        ) from exc
    return pa, pq


def _vector_column(pa: Any, values: np.ndarray) -> Any:
    """(n, d) float32 -> a fixed-size-list column (datasets.Sequence(length=d))."""
    arr = np.ascontiguousarray(values, dtype=np.float32)
    flat = pa.array(arr.reshape(-1), type=pa.float32())
    return pa.FixedSizeListArray.from_arrays(flat, arr.shape[1])


def _stats(values: np.ndarray) -> dict[str, list[float]]:
    """LeRobot's per-feature statistics of (n, d) values (over the frames)."""
    v = np.asarray(values, dtype=np.float64)
    out = {
        "min": v.min(axis=0),
        "max": v.max(axis=0),
        "mean": v.mean(axis=0),
        "std": v.std(axis=0),
        "count": np.array([v.shape[0]]),
    }
    for q in QUANTILES:
        out[f"q{round(q * 100):02d}"] = np.quantile(v, q, axis=0)
    return {k: np.asarray(x).tolist() for k, x in out.items()}


def _feature(dtype: str, shape: tuple[int, ...], names: list[str] | None = None) -> dict:
    return {"dtype": dtype, "shape": list(shape), "names": names}


def _task_text(env_id: str) -> str:
    return f"{env_id.removeprefix('softrod/')} (softrod scripted demonstrations)"


def write_lerobot(
    demos: DemoSet,
    root: str | Path,
    *,
    task: str | None = None,
    robot_type: str = "softrod",
    overwrite: bool = False,
) -> Path:
    """Write `demos` as a LeRobot v3.0 dataset in the folder `root` (layout in the module
    docstring); returns root. The frame rate is round(1 / control_period) [Hz]; `task` is the
    episodes' task text (default: the environment id). An existing non-empty folder is
    refused unless `overwrite`."""
    pa, pq = _pyarrow()
    out = Path(root)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        if not overwrite:
            raise FileExistsError(f"{out} exists and is not an empty folder; pass overwrite=True")
        shutil.rmtree(out) if out.is_dir() else out.unlink()
    if demos.n_episodes == 0:
        raise ValueError("cannot write an empty demonstration set")
    fps = round(1.0 / demos.control_period)
    if abs(fps * demos.control_period - 1.0) > 1e-6:
        raise ValueError(
            f"LeRobot stores an integer frame rate; control_period {demos.control_period} s is "
            "not 1 / an integer"
        )
    text = task if task is not None else _task_text(demos.env_id)
    lengths = np.array([len(o) for o in demos.observations], dtype=np.int64)
    obs = np.concatenate(demos.observations).astype(np.float32)
    act = np.concatenate(demos.actions).astype(np.float32)
    n = int(lengths.sum())
    ep_index = np.repeat(np.arange(demos.n_episodes, dtype=np.int64), lengths)
    frame_index = np.concatenate([np.arange(k, dtype=np.int64) for k in lengths])
    ends = np.cumsum(lengths)
    starts = ends - lengths

    # One data file and one episodes file: LeRobot splits at 100 MB, far above a demo set.
    data = pa.table(
        {
            "observation.state": _vector_column(pa, obs),
            "action": _vector_column(pa, act),
            "timestamp": pa.array(frame_index / fps, type=pa.float32()),
            "frame_index": pa.array(frame_index),
            "episode_index": pa.array(ep_index),
            "index": pa.array(np.arange(n, dtype=np.int64)),
            "task_index": pa.array(np.zeros(n, dtype=np.int64)),
        }
    )
    data_file = out / DATA_PATH.format(chunk_index=0, file_index=0)
    data_file.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(data, data_file, compression="snappy")

    zeros = np.zeros(demos.n_episodes, dtype=np.int64)
    episodes = pa.table(
        {
            "episode_index": pa.array(np.arange(demos.n_episodes, dtype=np.int64)),
            "tasks": pa.array([[text]] * demos.n_episodes, type=pa.list_(pa.string())),
            "length": pa.array(lengths),
            "data/chunk_index": pa.array(zeros),
            "data/file_index": pa.array(zeros),
            "dataset_from_index": pa.array(starts),
            "dataset_to_index": pa.array(ends),
            "meta/episodes/chunk_index": pa.array(zeros),
            "meta/episodes/file_index": pa.array(zeros),
            "softrod/seed": pa.array(demos.seeds.astype(np.int64)),
            "softrod/success": pa.array(demos.success.astype(bool)),
        }
    )
    ep_file = out / EPISODES_PATH.format(chunk_index=0, file_index=0)
    ep_file.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(episodes, ep_file)

    # tasks.parquet as pandas writes a frame indexed by the task text (what LeRobot reads).
    tasks = pa.table({"task_index": pa.array([0]), "__index_level_0__": pa.array([text])})
    pandas_meta = {
        "index_columns": ["__index_level_0__"],
        "column_indexes": [
            {
                "name": None,
                "field_name": None,
                "pandas_type": "unicode",
                "numpy_type": "object",
                "metadata": {"encoding": "UTF-8"},
            }
        ],
        "columns": [
            {
                "name": "task_index",
                "field_name": "task_index",
                "pandas_type": "int64",
                "numpy_type": "int64",
                "metadata": None,
            },
            {
                "name": None,
                "field_name": "__index_level_0__",
                "pandas_type": "unicode",
                "numpy_type": "object",
                "metadata": None,
            },
        ],
        "creator": {"library": "pyarrow", "version": pa.__version__},
        "pandas_version": "2.2.0",
    }
    tasks = tasks.replace_schema_metadata({"pandas": json.dumps(pandas_meta)})
    pq.write_table(tasks, out / "meta" / "tasks.parquet")

    scalar = (1,)
    features = {
        "observation.state": _feature("float32", (obs.shape[1],)),
        "action": _feature("float32", (act.shape[1],)),
        "timestamp": _feature("float32", scalar),
        "frame_index": _feature("int64", scalar),
        "episode_index": _feature("int64", scalar),
        "index": _feature("int64", scalar),
        "task_index": _feature("int64", scalar),
    }
    from softrod._version import __version__

    info = {
        "codebase_version": CODEBASE_VERSION,
        "robot_type": robot_type,
        "total_episodes": demos.n_episodes,
        "total_frames": n,
        "total_tasks": 1,
        "chunks_size": CHUNKS_SIZE,
        "data_files_size_in_mb": DATA_FILE_SIZE_MB,
        "video_files_size_in_mb": VIDEO_FILE_SIZE_MB,
        "fps": fps,
        "splits": {"train": f"0:{demos.n_episodes}"},
        "data_path": DATA_PATH,
        "video_path": None,
        "features": features,
        "softrod": {
            "env_id": demos.env_id,
            "env_kwargs": demos.env_kwargs,
            "control_period": demos.control_period,
            "source": demos.source,
            "dedup_tol": demos.dedup_tol,
            "action_noise": demos.action_noise,
            "softrod_version": __version__,
        },
    }
    (out / "meta" / "info.json").write_text(json.dumps(info, indent=4))
    stats = {
        "observation.state": _stats(obs),
        "action": _stats(act),
        "timestamp": _stats((frame_index / fps)[:, None]),
        "frame_index": _stats(frame_index[:, None]),
        "episode_index": _stats(ep_index[:, None]),
        "index": _stats(np.arange(n)[:, None]),
        "task_index": _stats(np.zeros((n, 1))),
    }
    (out / "meta" / "stats.json").write_text(json.dumps(stats, indent=4))
    return out


def read_lerobot(root: str | Path) -> DemoSet:
    """Read a LeRobot v3.0 dataset (one written by `write_lerobot`, or any with vector
    `observation.state` and `action` features) as a `DemoSet`. Without softrod's metadata the
    env id is the dataset's robot_type, seeds are -1 and every episode counts as successful."""
    from softrod.learn._demos import DemoSet

    _, pq = _pyarrow()
    base = Path(root)
    info_file = base / "meta" / "info.json"
    if not info_file.is_file():
        raise FileNotFoundError(f"no LeRobot dataset at {base} (missing meta/info.json)")
    info = json.loads(info_file.read_text())
    version = str(info.get("codebase_version", ""))
    if not version.startswith("v3"):
        raise ValueError(
            f"{base}: LeRobot codebase_version {version!r} is not supported (v3.x is; convert "
            "older sets with LeRobot's convert_dataset_v21_to_v30)"
        )
    for key in ("observation.state", "action"):
        if key not in info.get("features", {}):
            raise ValueError(f"{base}: the dataset has no {key!r} feature")
    files = sorted((base / "data").glob("*/*.parquet"))
    if not files:
        raise FileNotFoundError(f"{base}: no data/chunk-*/file-*.parquet files")
    cols = ["observation.state", "action", "episode_index", "frame_index"]
    tables = [pq.read_table(f, columns=cols) for f in files]
    obs = np.concatenate([_matrix(t.column("observation.state")) for t in tables])
    act = np.concatenate([_matrix(t.column("action")) for t in tables])
    ep = np.concatenate([t.column("episode_index").to_numpy() for t in tables])
    frame = np.concatenate([t.column("frame_index").to_numpy() for t in tables])
    order = np.lexsort((frame, ep))
    obs, act, ep = obs[order], act[order], ep[order]
    ids, first = np.unique(ep, return_index=True)
    cuts = first[1:]
    meta = info.get("softrod", {})
    seeds = -np.ones(len(ids), dtype=np.int64)
    success = np.ones(len(ids), dtype=bool)
    ep_files = sorted((base / "meta" / "episodes").glob("*/*.parquet"))
    if ep_files:
        rows = [pq.read_table(f) for f in ep_files]
        names = set(rows[0].column_names)
        if {"softrod/seed", "softrod/success"} <= names:
            idx = np.concatenate([r.column("episode_index").to_numpy() for r in rows])
            pos = {int(k): i for i, k in enumerate(idx)}
            s_all = np.concatenate([r.column("softrod/seed").to_numpy() for r in rows])
            ok_all = np.concatenate(
                [r.column("softrod/success").to_numpy(zero_copy_only=False) for r in rows]
            )
            sel = np.array([pos[int(k)] for k in ids])
            seeds, success = s_all[sel].astype(np.int64), ok_all[sel].astype(bool)
    return DemoSet(
        str(meta.get("env_id", info.get("robot_type") or "unknown")),
        list(np.split(obs, cuts)),
        list(np.split(act, cuts)),
        success,
        seeds,
        dict(meta.get("env_kwargs", {})),
        float(meta.get("control_period", 1.0 / float(info["fps"]))),
        str(meta.get("source", "lerobot")),
        meta.get("dedup_tol"),
        meta.get("action_noise"),
    )


def _matrix(column: Any) -> np.ndarray:
    """A (fixed-size or variable) list column of equal-length rows -> (n, d) float32."""
    chunks = []
    for chunk in column.chunks:
        d = chunk.type.list_size if hasattr(chunk.type, "list_size") else None
        flat = chunk.flatten().to_numpy(zero_copy_only=False)
        if d is None:
            d = flat.size // max(len(chunk), 1)
        chunks.append(flat.reshape(len(chunk), d))
    if not chunks:
        return np.zeros((0, 0), dtype=np.float32)
    return np.concatenate(chunks).astype(np.float32)
