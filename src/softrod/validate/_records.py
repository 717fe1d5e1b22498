"""Per-record results of a validation run, journaled so a killed `softrod validate` resumes.

One record is one unit of a study that can be computed alone: a SoRoSim shape solved by one
model, one release record, one robot's hardware calibration. Each is appended to
`<out>/<study>.records.jsonl` (`softrod._jobs.Journal`: flushed and fsync'ed per record) as it
finishes; `resume=True` reads them back and only the missing records are computed. Floats are
written with Python's shortest round-trip repr, so a cached record equals the computed one bit
for bit.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from softrod._jobs import Journal

__all__ = ["RecordCache", "write_text_atomic"]


class RecordCache:
    """Journaled per-record results. path : the journal; config : what every record's value
    depends on beyond its key (a different config refuses the journal); resume : read it back.
    """

    def __init__(self, path: str | Path, config: Mapping[str, Any], *, resume: bool) -> None:
        self.journal = Journal(path, "validation", config, resume=resume)
        self.done: dict[str, Any] = {r["key"]: r["value"] for r in self.journal.records}
        self.n_cached = len(self.done)
        self.n_computed = 0

    def get(self, key: str, compute: Callable[..., Any], *args: Any) -> Any:
        """The record `key`: from the journal, or `compute(*args)` (JSON-ready) and journaled."""
        if key in self.done:
            return self.done[key]
        value = compute(*args)
        self.journal.append({"key": key, "value": value})
        self.done[key] = value
        self.n_computed += 1
        return value

    def close(self) -> None:
        self.journal.close()


def cached(cache: RecordCache | None, key: str, compute: Callable[..., Any], *args: Any) -> Any:
    """`cache.get(key, compute, *args)`, or `compute(*args)` without a cache."""
    return compute(*args) if cache is None else cache.get(key, compute, *args)


def write_text_atomic(path: Path, text: str) -> None:
    """Write `text` to a temporary file beside `path` and move it over `path` when complete."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        tmp.write_text(text)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
