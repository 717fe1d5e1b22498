"""Loading typed specs (robots, scenes, sweeps, environments) from YAML, JSON or dicts.

One place for the rule every spec follows: a bad file gets one error that names the field
path, the value and what was expected (`segments[1].length must be > 0, got -0.1`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

__all__ = ["format_validation_error", "load_spec"]

M = TypeVar("M", bound=BaseModel)

#: Location parts pydantic adds for unions and validators, not field names a user wrote.
_SKIP_LOC = ("function-", "tagged-union", "union[")


def _format_loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not str(part).startswith(_SKIP_LOC):
            out += ("." if out else "") + str(part)
    return out


def format_validation_error(err: ValidationError, what: str, source: str) -> str:
    """One line per problem, `invalid <what> (<source>): <field path> <message>, got <value>`,
    the first in full and the others appended."""
    lines = []
    for e in err.errors():
        loc = _format_loc(tuple(e["loc"]))
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


def load_spec(
    model: type[M],
    source: str | Path | Mapping[str, Any] | M,
    what: str,
    error: type[ValueError] = ValueError,
) -> M:
    """Validate `source` (an instance, a mapping, or a .yaml/.yml/.json file) as `model`.

    Raises `error` (a ValueError subclass) with one message naming the field path and value.
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
            raise error(f"{what} file not found: {path}")
        text = path.read_text()
        try:
            data = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
        except (yaml.YAMLError, json.JSONDecodeError) as exc:
            first = str(exc).strip().splitlines()[0]
            raise error(f"cannot parse {path}: {first}") from None
        if not isinstance(data, dict):
            raise error(
                f"invalid {what} ({path}): expected a mapping at the top level, "
                f"got {type(data).__name__}"
            )
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise error(format_validation_error(err, what, where)) from None
