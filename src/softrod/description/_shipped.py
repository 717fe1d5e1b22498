"""The example robots shipped inside the package (`softrod/data/robots`), found by name or path.

One resolver for every caller (CLI, benchmarks, scenes, sweeps, planning, environments): a bare
name such as `tdcr3` (or `tdcr3.yaml`) means a shipped example; anything with a folder part is a
path, optionally relative to the file that names it.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from softrod.description._spec import DescriptionError

__all__ = ["ROBOT_SUFFIXES", "find_robot", "shipped_robot_path", "shipped_robots"]

#: Suffixes a robot description may have (see `softrod.load_robot`).
ROBOT_SUFFIXES = (".yaml", ".yml", ".json")


def _robots_dir() -> Path:
    """Folder of the example robots shipped inside the package."""
    return Path(str(resources.files("softrod").joinpath("data", "robots")))


def shipped_robots() -> dict[str, Path]:
    """Shipped example robots: name (file stem) -> path, sorted by name."""
    folder = _robots_dir()
    if not folder.is_dir():
        return {}
    files = [p for p in folder.iterdir() if p.suffix.lower() in ROBOT_SUFFIXES]
    return {p.stem: p for p in sorted(files)}


def shipped_robot_path(name: str) -> Path | None:
    """Path of the shipped robot called `name` (`tdcr3` or `tdcr3.yaml`), or None.

    A name with a folder part is never a shipped name.
    """
    text = str(name).strip()
    path = Path(text)
    if not text or path.name != text:
        return None
    stem = path.stem if path.suffix.lower() in ROBOT_SUFFIXES else text
    return shipped_robots().get(stem)


def find_robot(name_or_path: str | Path, relative_to: str | Path | None = None) -> Path:
    """Path of a robot description given as a file path or a shipped example's name.

    A file relative to `relative_to` (the folder of the scene or sweep file that names the
    robot) wins, then an existing file as given; otherwise a bare name is looked up among the
    shipped examples. Raises DescriptionError (a ValueError) naming the value and listing the
    shipped names.
    """
    text = str(name_or_path).strip()
    if not text:
        raise DescriptionError("robot must be a description file or a shipped robot name, got ''")
    path = Path(text).expanduser()
    if relative_to is not None and not path.is_absolute():
        beside = Path(relative_to) / path
        if beside.is_file():
            return beside
    if path.is_file():
        return path
    if path.is_dir():
        raise DescriptionError(f"robot must be a description file, got a directory: {text}")
    shipped = shipped_robot_path(text)
    if shipped is not None:
        return shipped
    names = ", ".join(shipped_robots()) or "none"
    raise DescriptionError(
        f"robot not found: {text!r} is neither a file nor a shipped robot (shipped: {names})"
    )
