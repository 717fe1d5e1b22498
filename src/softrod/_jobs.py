"""Helpers shared by long jobs (sweeps, training, calibrations, validations): a kill that still
saves what was done, and a journal that lets a killed job resume."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import threading
import warnings
import zipfile
import zlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from softrod._version import __version__

__all__ = [
    "Journal",
    "StopFlag",
    "config_hash",
    "end_if_importing_main",
    "load_npz",
    "save_npz",
    "sigterm_as_interrupt",
    "stop_requested",
    "workers_cannot_start",
]


def end_if_importing_main() -> None:
    """End this process quietly if it is a worker importing the main script (multiprocessing's
    spawn / forkserver start): a script that starts a job at import time, with no
    `if __name__ == "__main__":`, would start it again in every worker. The parent says why
    (`workers_cannot_start`); the worker adds no traceback of its own."""
    import multiprocessing as mp

    if getattr(mp.current_process(), "_inheriting", False):
        raise SystemExit(1)


def workers_cannot_start(job: str, outcome: str) -> RuntimeError:
    """The error of a job (`sweep`, `train`) whose worker processes ended while starting: most
    often a script without a main guard (each worker imports the main script, which starts the
    job again) or a script read from standard input (which a worker cannot import). outcome :
    what the job did not do, e.g. "nothing was run or written"."""
    return RuntimeError(
        f"{job}: the worker processes ended while starting. Each starts by importing the main "
        'script: one that calls softrod needs `if __name__ == "__main__":` around the call, '
        f"and it must be a file (not read from standard input); {outcome}"
    )


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM raises KeyboardInterrupt inside the block (main thread only), so a job stopped by
    `kill` saves its results the way a Ctrl-C'd one does."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


class StopFlag:
    """Set by SIGINT/SIGTERM inside `stop_requested()`; a loop checks it between units of work
    so it can save a consistent state. A second signal interrupts at once."""

    def __init__(self) -> None:
        self.requested = False


@contextmanager
def stop_requested() -> Iterator[StopFlag]:
    """Ctrl-C and SIGTERM set the yielded flag instead of interrupting (main thread only)."""
    flag = StopFlag()
    if threading.current_thread() is not threading.main_thread():
        yield flag
        return

    def handler(signum: int, frame: Any) -> None:
        if flag.requested:
            raise KeyboardInterrupt
        flag.requested = True

    old = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield flag
    finally:
        for sig, previous in old.items():
            signal.signal(sig, previous)


#: Version of the journal format (first line of every journal).
JOURNAL_FORMAT = 1


def config_hash(config: Mapping[str, Any]) -> str:
    """SHA-256 of a job's configuration (JSON with sorted keys; numpy arrays by their bytes)."""

    def default(obj: Any) -> Any:
        if hasattr(obj, "tobytes") and hasattr(obj, "dtype"):
            return hashlib.sha256(obj.tobytes()).hexdigest() + str(obj.dtype) + str(obj.shape)
        return str(obj)

    text = json.dumps(config, sort_keys=True, default=default)
    return hashlib.sha256(text.encode()).hexdigest()


class Journal:
    """Append-only JSON Lines record of a resumable job.

    Line 1 names the job and the hash of its configuration; every later line is one finished
    unit of work (a model evaluation, a validated record), flushed and fsync'ed before the job
    moves on, so a kill (SIGKILL included) loses at most the unit in progress. Opening with
    `resume=True` reads the records back: a last line cut by the kill, or any damaged line, is
    dropped together with everything after it (the file is truncated there and those units run
    again: a journal is a cache), with a warning naming the file. A journal of another
    configuration is refused (ValueError naming the file); a header that cannot be read starts
    the journal over. Without `resume` the file is started afresh (header written atomically).

    path : the journal file (`.jsonl`). kind : what the job is ("calibration", ...).
    config : everything that determines the job's results (hashed with `config_hash`).
    """

    def __init__(
        self, path: str | Path, kind: str, config: Mapping[str, Any], *, resume: bool
    ) -> None:
        self.path = Path(path)
        self.kind = kind
        self.hash = config_hash(config)
        self.records: list[dict[str, Any]] = []
        self.resumed = False
        if resume and self.path.exists() and self._read():
            self.resumed = True
        else:
            self._start()
        self._fh = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 (closed in close())

    def _header(self) -> dict[str, Any]:
        return {
            "softrod_journal": JOURNAL_FORMAT,
            "kind": self.kind,
            "config": self.hash,
            "softrod": __version__,
        }

    def _start(self) -> None:
        # A fresh journal appears complete or not at all: header written to a temporary name.
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.partial")
        try:
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write(json.dumps(self._header()) + "\n")
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        finally:
            tmp.unlink(missing_ok=True)

    def _read(self) -> bool:
        """Load the records; False when the header is unreadable (the journal starts over)."""
        raw = self.path.read_bytes()
        lines = raw.split(b"\n")
        try:
            header = json.loads(lines[0]) if len(lines) > 1 else None
        except ValueError:
            header = None
        if not isinstance(header, dict) or header.get("softrod_journal") != JOURNAL_FORMAT:
            warnings.warn(
                f"{self.path}: not a readable softrod {self.kind} journal (damaged header); "
                "starting over",
                stacklevel=3,
            )
            return False
        # Recorded results depend on the code that computed them, not only on the configuration
        # (journals written before versions were recorded carry none and are read).
        recorded = header.get("softrod")
        if recorded is not None and recorded != __version__:
            raise ValueError(
                f"{self.path} was written by softrod {recorded}, this is {__version__}: its "
                f"{self.kind} results may differ; delete it, or run without --resume to start over"
            )
        if header.get("kind") != self.kind or header.get("config") != self.hash:
            raise ValueError(
                f"{self.path} is the journal of a different {self.kind} (its configuration "
                "changed); delete it, or run without --resume to start over"
            )
        good = len(lines[0]) + 1
        dropped = 0
        # Complete lines end in a newline; the last element is a tail cut by a kill (or b"").
        for k, line in enumerate(lines[1:-1]):
            try:
                rec = json.loads(line)
                if not isinstance(rec, dict):
                    raise ValueError
            except ValueError:
                dropped = len(lines) - 2 - k
                break
            self.records.append(rec)
            good += len(line) + 1
        if good < len(raw):
            what = f"{dropped} damaged record(s)" if dropped else "a record cut short"
            warnings.warn(
                f"{self.path}: dropped {what} after record {len(self.records)}; "
                "that work runs again",
                stacklevel=3,
            )
            with open(self.path, "r+b") as fh:
                fh.truncate(good)
        return True

    def append(self, record: Mapping[str, Any]) -> None:
        """Write one record and make it durable (flush + fsync) before returning."""
        self._fh.write(json.dumps(record) + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self.records.append(dict(record))

    def close(self) -> None:
        self._fh.close()

    def remove(self) -> None:
        """Close and delete the journal (the job's results are safely written elsewhere)."""
        self.close()
        self.path.unlink(missing_ok=True)


def save_npz(path: str | Path, arrays: Mapping[str, Any], *, compressed: bool = False) -> Path:
    """`np.savez[_compressed](path, **arrays)` written under a temporary name beside `path` and
    renamed over it when complete, so a kill never leaves a partial file under the final name.
    Returns the path written (`.npz` appended when missing, as numpy does)."""
    import numpy as np

    out = Path(path)
    if out.suffix != ".npz":
        out = out.with_name(out.name + ".npz")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.stem}.{os.getpid()}.partial.npz")
    try:
        (np.savez_compressed if compressed else np.savez)(tmp, **arrays)
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    return out


def load_npz(path: str | Path, what: str, keys: tuple[str, ...] = ()) -> dict[str, Any]:
    """Every array of an `.npz` file, read (and checksummed) at once; a missing key among `keys`
    or a truncated or corrupt file is a ValueError naming `what` and the file, never a silent
    partial read. Pickled objects are refused."""
    import numpy as np

    p = Path(path)
    try:
        with np.load(p, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except FileNotFoundError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
        raise ValueError(
            f"cannot read the {what} {p}: the file is truncated or corrupt ({exc})"
        ) from None
    missing = [k for k in keys if k not in arrays]
    if missing:
        raise ValueError(
            f"cannot read the {what} {p}: it lacks {', '.join(missing)} (not a file of this "
            "kind, or written by another version)"
        )
    return arrays
