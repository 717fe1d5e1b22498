"""One policy for every command that writes a file: checked before the work, never clobbered.

An existing output is refused unless the command was given `--overwrite` (sweeps continue theirs
with `--resume` instead); a missing folder is created before the work starts, so a long fit or
render never ends in an OS error that loses its result; files are written to a temporary name
beside the target and moved over it when complete, so an interrupted write leaves no truncated
file under the final name.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from softrod.cli._app import CliError

__all__ = ["prepare_output", "atomic_path"]


def prepare_output(path: str | Path, *, overwrite: bool, option: str = "--output") -> Path:
    """Check `path` as an output before any work: not a folder, not an existing file unless
    `overwrite`, its folder created. Returns the path; CliError (one line, exit 2) otherwise."""
    out = Path(path)
    if out.is_dir():
        raise CliError(f"{option} must be a file, got a folder: {out}")
    if out.exists() and not overwrite:
        raise CliError(f"{option} {out} exists; pass --overwrite to replace it")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CliError(f"{option}: cannot create the folder {out.parent}: {exc.strerror}") from None
    if not os.access(out.parent, os.W_OK):
        raise CliError(f"{option}: the folder {out.parent} is not writable")
    return out


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary path beside `path` (same suffix) that is moved over `path` when the block
    ends normally and removed when it raises (Ctrl-C included)."""
    out = Path(path)
    tmp = out.with_name(f".{out.stem}.{os.getpid()}.partial{out.suffix}")
    try:
        yield tmp
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
