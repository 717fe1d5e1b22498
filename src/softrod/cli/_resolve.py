"""Command-line argument helpers: robot files by path or shipped name, comma-separated vectors.

Every error is a `CliError` (one line, exit code 2) that names the option and the value given.
"""

from __future__ import annotations

import math
from importlib import resources
from pathlib import Path

from softrod.cli._app import CliError

__all__ = [
    "find_robot",
    "parse_point_load",
    "parse_vector",
    "shipped_robots",
]

#: Suffixes a robot description may have (see `softrod.load_robot`).
ROBOT_SUFFIXES = (".yaml", ".yml", ".json")


def _robots_dir() -> Path:
    """Folder of the example robots shipped inside the package (`softrod/data/robots`)."""
    return Path(str(resources.files("softrod").joinpath("data", "robots")))


def shipped_robots() -> dict[str, Path]:
    """Shipped example robots: name (file stem) -> path, sorted by name."""
    folder = _robots_dir()
    if not folder.is_dir():
        return {}
    files = [p for p in folder.iterdir() if p.suffix.lower() in ROBOT_SUFFIXES]
    return {p.stem: p for p in sorted(files)}


def find_robot(name_or_path: str | Path) -> Path:
    """Path of a robot description given as a file path or a shipped example's name.

    An existing file wins; otherwise a bare name such as `tdcr3` (or `tdcr3.yaml`) is looked up
    among the shipped examples. Raises CliError listing the shipped names when neither exists.
    """
    text = str(name_or_path).strip()
    if not text:
        raise CliError("ROBOT must be a robot description file or a shipped robot name, got ''")
    path = Path(text).expanduser()
    if path.is_file():
        return path
    if path.is_dir():
        raise CliError(f"ROBOT must be a robot description file, got a directory: {text}")
    shipped = shipped_robots()
    # Only a bare name (no folder part) may refer to a shipped example.
    if path.name == text:
        stem = path.stem if path.suffix.lower() in ROBOT_SUFFIXES else text
        if stem in shipped:
            return shipped[stem]
    names = ", ".join(shipped) or "none"
    raise CliError(
        f"robot not found: {text!r} is neither a file nor a shipped robot (shipped: {names})"
    )


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
