"""Crash-safe Parquet result file: rows are appended as points finish.

Every flush writes the whole table to a temporary file beside the output and renames it over
the output (`os.replace`, atomic on POSIX), so the Parquet file is always complete and readable:
a sweep killed at any moment keeps every row flushed before, and `--resume` re-runs only the
points that were still in flight. The sweep's identity (robot, task, options, base inputs) is
stored in the file's metadata so a resume cannot mix two different sweeps.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = ["ResultStore", "read_results", "METADATA_KEY"]

#: Parquet schema metadata key holding the sweep record (JSON).
METADATA_KEY = b"softrod.sweep"


def _pa() -> Any:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ValueError(
            "sweeps write Parquet and need pyarrow (pip install 'softrod[dist]' or pip install "
            "pyarrow)"
        ) from None
    return pa, pq


def read_results(path: str | Path) -> Any:
    """The result table (pyarrow.Table) of a sweep output file; a truncated or corrupt file is
    a ValueError naming it."""
    pa, pq = _pa()
    try:
        # One open file: a path lets pyarrow take the size and then reopen the name, which a
        # running sweep's flush may have replaced in between (a spurious "truncated" error).
        # Its bytes are read here and decoded on this thread: pyarrow reading a Python file with
        # its thread pool aborted the interpreter at exit ("terminate called without an active
        # exception", pyarrow 26, apache/arrow#34314) in 8 of 16 scripts that had imported
        # softrod, 1 of 20 from a buffer with threads, 0 of 40 like this.
        with open(path, "rb") as handle:
            return pq.read_table(pa.BufferReader(handle.read()), use_threads=False)
    except FileNotFoundError:
        raise
    except Exception as exc:  # noqa: BLE001 - any unreadable file is reported the same way
        raise ValueError(
            f"cannot read the sweep results {path}: the file is truncated or corrupt ({exc})"
        ) from None


def _text(values: list[Any]) -> list[str | None]:
    """Values as text (strings kept, others as JSON), for a column whose type varies."""
    return [v if v is None or isinstance(v, str) else json.dumps(v) for v in values]


def _table_from_rows(rows: list[dict[str, Any]]) -> Any:
    """A table of the rows (keys: their union, in order); a column whose values mix types
    (text in one point, numbers in another) becomes a text column instead of an error."""
    pa, _ = _pa()
    keys = list(dict.fromkeys(k for row in rows for k in row))
    columns = {}
    for key in keys:
        values = [row.get(key) for row in rows]
        try:
            columns[key] = pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            columns[key] = pa.array(_text(values), pa.string())
    return pa.table(columns)


def _concat(old: Any, new: Any) -> Any:
    """old + new rows; columns whose types cannot be promoted into one become text in both."""
    pa, _ = _pa()
    try:
        return pa.concat_tables([old, new], promote_options="permissive")
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        pass
    for name in set(old.column_names) & set(new.column_names):
        a, b = old.schema.field(name).type, new.schema.field(name).type
        if a == b or pa.types.is_null(a) or pa.types.is_null(b):
            continue
        if (pa.types.is_integer(a) or pa.types.is_floating(a)) and (
            pa.types.is_integer(b) or pa.types.is_floating(b)
        ):
            continue
        for which in ("old", "new"):
            t = old if which == "old" else new
            col = pa.array(_text(t.column(name).to_pylist()), pa.string())
            t = t.set_column(t.schema.get_field_index(name), name, col)
            old, new = (t, new) if which == "old" else (old, t)
    return pa.concat_tables([old, new], promote_options="permissive")


class ResultStore:
    """The rows of one sweep output: those already in the file plus those added since.

    path : the Parquet file. record : JSON-ready dict stored in the file's metadata.
    """

    def __init__(self, path: str | Path, record: dict[str, Any]) -> None:
        self.path = Path(path)
        self.record = record
        self._table: Any = None
        self._pending: list[dict[str, Any]] = []

    # Reading -------------------------------------------------------------------------------

    def load_existing(self) -> dict[str, Any] | None:
        """Read the existing file; returns its stored record (None when it has none)."""
        pa, pq = _pa()
        try:
            table = pq.read_table(self.path, use_threads=False)  # as `read_results`
        except Exception as exc:  # noqa: BLE001 - any unreadable file is reported the same way
            raise ValueError(f"cannot read the existing output {self.path}: {exc}") from None
        meta = table.schema.metadata or {}
        self._table = table.replace_schema_metadata(None)
        raw = meta.get(METADATA_KEY)
        return None if raw is None else json.loads(raw)

    def done_ids(self, *, include_errors: bool = True) -> set[str]:
        """Point ids with a row (optionally only those that succeeded)."""
        if self._table is None or self._table.num_rows == 0:
            return set()
        ids = self._table.column("point_id").to_pylist()
        if include_errors:
            return set(ids)
        status = self._table.column("status").to_pylist()
        return {i for i, s in zip(ids, status, strict=True) if s == "ok"}

    def drop_errors(self) -> int:
        """Remove rows of failed points (to run them again); returns how many."""
        if self._table is None or self._table.num_rows == 0:
            return 0
        import pyarrow.compute as pc

        mask = pc.equal(self._table.column("status"), "ok")
        before = self._table.num_rows
        self._table = self._table.filter(mask)
        return before - self._table.num_rows

    # Writing -------------------------------------------------------------------------------

    def add(self, rows: list[dict[str, Any]]) -> None:
        self._pending.extend(rows)

    @property
    def n_pending(self) -> int:
        return len(self._pending)

    def flush(self) -> None:
        """Write all rows to the file atomically (no-op when nothing was added)."""
        if not self._pending and self.path.exists():
            return
        pa, pq = _pa()
        # Rows may differ in keys (a failed point has no outputs) and a column's type may change
        # between points (text, then numbers): both are kept, the latter as a text column.
        new = _table_from_rows(self._pending) if self._pending else None
        if new is None and self._table is None:
            return
        if new is None or self._table is None:
            table = new if new is not None else self._table
        else:
            table = _concat(self._table, new)
        meta = {METADATA_KEY: json.dumps(self.record).encode()}
        table = table.replace_schema_metadata(meta)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, tmp)
        os.replace(tmp, self.path)
        self._table = table.replace_schema_metadata(None)
        self._pending.clear()
