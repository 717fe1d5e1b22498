"""Loading typed specs (robots, scenes, sweeps, environments) from YAML, JSON or dicts.

One place for the rule every spec follows: a bad file gets one error that names the field
path, the value and what was expected (`segments[1].length must be > 0, got -0.1`). Also the
one helper that turns results into strict JSON (`json_safe`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import yaml
from pydantic import BaseModel, ValidationError

__all__ = [
    "MAX_FILE_BYTES",
    "DescriptionError",
    "format_validation_error",
    "json_safe",
    "load_spec",
    "parse_mapping",
    "validate_mapping",
]


class DescriptionError(ValueError):
    """A description (robot, scene, sweep, environment, ...) is invalid; the message names the
    field path, the value and the expectation."""


M = TypeVar("M", bound=BaseModel)

#: Largest description file read [bytes]: real ones are a few kB; a larger one is a mistake
#: (a data file passed as a description) that YAML would parse for minutes.
MAX_FILE_BYTES = 16 * 2**20

#: Location parts pydantic adds for unions and validators, not field names a user wrote.
_SKIP_LOC = ("function-", "tagged-union", "union[")


def _format_loc(loc: tuple[Any, ...], tags: Collection[str] = ()) -> str:
    out = ""
    skipped = False
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
            skipped = False
        elif str(part).startswith(_SKIP_LOC) or (part in tags and not skipped):
            # A union's tag directly after its field; a field of the same name below it stays.
            skipped = True
        else:
            out += ("." if out else "") + str(part)
            skipped = False
    return out


def format_validation_error(
    err: ValidationError, what: str, source: str, tags: Collection[str] = ()
) -> str:
    """One line per problem, `invalid <what> (<source>): <field path> <message>, got <value>`,
    the first in full and the others appended.

    `tags` are the tags of the spec's discriminated unions (`grid`, `span`): pydantic puts them
    in the error location after the union's field, where they are not field names a user wrote.
    """
    lines = []
    for e in err.errors():
        loc = _format_loc(tuple(e["loc"]), tags)
        msg = str(e["msg"]).removeprefix("Value error, ")
        if e["type"] == "value_error":
            # "length must be > 0" raised inside segments[0] reads "segments[0].length must ...".
            if loc and re.match(r"^[a-z_]+ (must|is) ", msg):
                line = f"{loc}.{msg}"
            else:
                line = f"{loc}: {msg}" if loc else msg
        else:
            line = f"{loc}: {msg[0].lower() + msg[1:]}, got {e.get('input')!r}"
        lines.append(line)
    head = f"invalid {what} ({source}): {lines[0]}"
    if len(lines) > 1:
        head += f" (and {len(lines) - 1} more: " + "; ".join(lines[1:]) + ")"
    return " ".join(head.split())


def parse_mapping(
    text: str,
    what: str,
    where: str,
    error: type[ValueError] = DescriptionError,
    as_json: bool = False,
) -> dict[str, Any]:
    """The top-level mapping of YAML (or JSON) `text` read from `where`; `error` otherwise."""
    try:
        data = json.loads(text) if as_json else yaml.safe_load(text)
    except (yaml.YAMLError, json.JSONDecodeError) as exc:
        first = str(exc).strip().splitlines()[0]
        raise error(f"cannot parse {where}: {first}") from None
    if not isinstance(data, dict):
        raise error(
            f"invalid {what} ({where}): expected a mapping at the top level, "
            f"got {type(data).__name__}"
        )
    return data


def load_spec(
    model: type[M],
    source: str | Path | Mapping[str, Any] | M,
    what: str,
    error: type[ValueError] = DescriptionError,
    tags: Collection[str] = (),
) -> M:
    """Validate `source` (an instance, a mapping, or a .yaml/.yml/.json file) as `model`.

    Raises `error` (a ValueError subclass) with one message naming the field path and value;
    `tags` as in `format_validation_error`.
    """
    if isinstance(source, model):
        return source
    if isinstance(source, Mapping):
        data: Any = dict(source)
        where = "dict"
    else:
        path = Path(source)  # type: ignore[arg-type]
        where = str(path)
        if not path.is_file():
            noun = what if what.endswith(" file") else f"{what} file"
            raise error(f"{noun} not found: {path}")
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise error(
                f"{what} file too large: {path} has {size / 2**20:.1f} MiB, "
                f"at most {MAX_FILE_BYTES / 2**20:.0f} MiB"
            )
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise error(f"cannot read {where}: not UTF-8 text ({exc.reason})") from None
        data = parse_mapping(text, what, where, error, as_json=path.suffix.lower() == ".json")
    return validate_mapping(model, data, what, where, error, tags)


def validate_mapping(
    model: type[M],
    data: Any,
    what: str,
    where: str,
    error: type[ValueError] = DescriptionError,
    tags: Collection[str] = (),
) -> M:
    """`model.model_validate(data)`, a pydantic error turned into one `error` line."""
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise error(format_validation_error(err, what, where, tags)) from None


def json_safe(value: Any) -> Any:
    """`value` with numpy scalars/arrays as Python objects and NaN/inf as None (strict JSON).

    Dict keys become strings and paths their text, so `json.dumps` takes any result record.
    """
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if isinstance(value, np.ndarray):
        return json_safe(value.tolist())
    if isinstance(value, np.generic):
        return json_safe(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Path):
        return str(value)
    return value
