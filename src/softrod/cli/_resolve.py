"""Command-line argument helpers: robot files by path or shipped name, comma-separated vectors.

Every error is a `CliError` (one line, exit code 2) that names the option and the value given.
"""

from __future__ import annotations

import math
from pathlib import Path

from softrod.cli._app import CliError
from softrod.description import DescriptionError, shipped_robots
from softrod.description import find_robot as _find_robot

__all__ = [
    "find_robot",
    "parse_point_load",
    "parse_vector",
    "shipped_robots",
]


def find_robot(name_or_path: str | Path) -> Path:
    """Path of a robot description given as a file path or a shipped example's name
    (`softrod.description.find_robot`); a CliError (one line, exit 2) when neither exists."""
    try:
        return _find_robot(name_or_path)
    except DescriptionError as exc:
        raise CliError(f"ROBOT: {exc}") from None


def parse_vector(option: str, text: str, n: int | None = None, what: str = "") -> list[float]:
    """Parse `option`'s comma-separated numbers, e.g. `--tip-force 0,0.1,0`.

    Parameters
    ----------
    option : the option's name for error messages (`--tip-force`).
    text : the value as typed.
    n : the number of values required, or None for any number >= 1.
    what : what the values mean, for the count error (`x,y,z`).

    Raises CliError naming the option and the value when a part is not a finite number or the
    count is wrong.
    """
    parts = [p.strip() for p in text.split(",")]
    if parts == [""]:
        raise CliError(f"{option} needs comma-separated numbers, got an empty value")
    values: list[float] = []
    for i, part in enumerate(parts):
        try:
            value = float(part)
        except ValueError:
            shown = repr(part) if part else "an empty entry"
            raise CliError(
                f"{option}: value {i + 1} of {text!r} is not a number: {shown}"
            ) from None
        if not math.isfinite(value):
            raise CliError(f"{option}: value {i + 1} of {text!r} must be finite, got {part!r}")
        values.append(value)
    if n is not None and len(values) != n:
        hint = f" ({what})" if what else ""
        raise CliError(
            f"{option} needs {n} comma-separated numbers{hint}, got {len(values)}: {text!r}"
        )
    return values


def parse_point_load(text: str) -> tuple[float, list[float], list[float]]:
    """Parse `--point-load s,fx,fy,fz[,mx,my,mz]` into (s [m], force [N], moment [N m])."""
    values = parse_vector("--point-load", text)
    if len(values) not in (4, 7):
        raise CliError(
            "--point-load needs 4 or 7 comma-separated numbers (s,fx,fy,fz[,mx,my,mz]), "
            f"got {len(values)}: {text!r}"
        )
    moment = values[4:7] if len(values) == 7 else [0.0, 0.0, 0.0]
    return values[0], values[1:4], moment
