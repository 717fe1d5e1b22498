"""Dotted paths into a robot description: `backbone.youngs_modulus`, `segments.0.tendons.1.offset`.

Paths are resolved against `RobotSpec.model_dump()` and the edited dict is validated again, so a
bad value is reported by the description's own checks with the field's name. Three spellings
name fields:

* a full path, with list indices as numbers: `segments.0.tendons.1.offset` (the error-message
  form `segments[0].tendons[1].offset` is accepted too);
* a pattern with `*` for any key or index: `segments.*.tendons.*.stiffness`;
* a bare field name, which means every numeric field with that last name: `youngs_modulus`
  (the robot backbone and any per-segment override that gives one), `offset` (every tendon).

A name that matches several fields is one *tied* parameter: fitting or sweeping it sets all of
them to the same value.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from typing import Any

from softrod.description._io import DescriptionError
from softrod.description._spec import RobotSpec, load_robot

__all__ = [
    "get_field",
    "numeric_fields",
    "normalize_path",
    "resolve_fields",
    "set_path",
    "with_fields",
]

_INDEX = re.compile(r"\[(\d+|\*)\]")


def normalize_path(path: str) -> str:
    """`segments[0].tendons[1].offset` -> `segments.0.tendons.1.offset` (whitespace stripped)."""
    text = str(path).strip()
    if not text:
        raise ValueError("a field path must not be empty")
    text = _INDEX.sub(lambda m: "." + m.group(1), text).lstrip(".")
    parts = text.split(".")
    if any(p == "" for p in parts):
        raise ValueError(f"field path {path!r} has an empty part")
    return ".".join(parts)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _walk(node: Any, prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """(path parts, value) of every numeric leaf below `node` (dicts, lists and tuples)."""
    if isinstance(node, Mapping):
        for key, value in node.items():
            yield from _walk(value, (*prefix, str(key)))
    elif isinstance(node, list | tuple):
        for i, value in enumerate(node):
            yield from _walk(value, (*prefix, str(i)))
    elif _is_number(node):
        yield prefix, node


def numeric_fields(spec: RobotSpec | Mapping[str, Any]) -> dict[str, float]:
    """Every numeric field of a description that has a value: dotted path -> value."""
    data = spec.model_dump() if isinstance(spec, RobotSpec) else spec
    return {".".join(parts): float(value) for parts, value in _walk(data)}


def _matches(pattern: tuple[str, ...], parts: tuple[str, ...]) -> bool:
    return len(pattern) == len(parts) and all(
        p in ("*", q) for p, q in zip(pattern, parts, strict=True)
    )


def resolve_fields(spec: RobotSpec | Mapping[str, Any], name: str) -> tuple[str, ...]:
    """The numeric field paths that `name` (full path, `*` pattern or bare name) refers to.

    Raises ValueError naming `name` and some valid choices when nothing matches.
    """
    fields = numeric_fields(spec)
    norm = normalize_path(name)
    if norm in fields:
        return (norm,)
    pattern = tuple(norm.split("."))
    if len(pattern) == 1:
        found = tuple(p for p in fields if p.rsplit(".", 1)[-1] == norm)
    else:
        found = tuple(p for p in fields if _matches(pattern, tuple(p.split("."))))
    if found:
        return found
    # Not numeric now but present (e.g. an optional field left empty): say so.
    data = spec.model_dump() if isinstance(spec, RobotSpec) else spec
    try:
        value = get_field(data, norm)
    except (KeyError, IndexError, ValueError):
        value = _MISSING
    if value is None:
        raise ValueError(f"field {name!r} has no value in this description; set it first")
    leaves = sorted({p.rsplit(".", 1)[-1] for p in fields if not p[-1].isdigit()})
    raise ValueError(
        f"field {name!r} is not a numeric field of the description (numeric field names: "
        + ", ".join(leaves)
        + ")"
    )


_MISSING = object()


def _step(node: Any, key: str, path: str) -> Any:
    if isinstance(node, Mapping):
        if key not in node:
            raise KeyError(f"field path {path!r}: no field {key!r} (fields: {', '.join(node)})")
        return node[key]
    if isinstance(node, list | tuple):
        if not key.isdigit() or int(key) >= len(node):
            raise IndexError(f"field path {path!r}: index {key!r} out of range 0..{len(node) - 1}")
        return node[int(key)]
    raise KeyError(f"field path {path!r}: {key!r} is below a value, not a field")


def get_field(spec: RobotSpec | Mapping[str, Any], path: str) -> Any:
    """The value at a full dotted `path` of a description (or of any nested dict)."""
    node: Any = spec.model_dump() if isinstance(spec, RobotSpec) else spec
    norm = normalize_path(path)
    for key in norm.split("."):
        node = _step(node, key, norm)
    return node


def _child(node: Any, key: str, path: str) -> Any:
    """The container below `node[key]`, created when an optional block is empty."""
    if isinstance(node, dict) and node.get(key) is None:
        node[key] = {}
    child = _step(node, key, path)
    if isinstance(child, tuple):  # tuples from model_dump become editable lists
        child = list(child)
        if isinstance(node, dict):
            node[key] = child
        else:
            node[int(key)] = child
    return child


def set_path(data: dict[str, Any], path: str, value: Any) -> None:
    """Set `value` at a full dotted `path` of a nested dict in place (empty blocks created)."""
    parts = normalize_path(path).split(".")
    node: Any = data
    for key in parts[:-1]:
        node = _child(node, key, path)
    last = parts[-1]
    if isinstance(node, dict):
        node[last] = value
    elif isinstance(node, list):
        _step(node, last, path)  # range check
        node[int(last)] = value
    else:
        raise KeyError(f"field path {path!r}: {last!r} is below a value, not a field")


def with_fields(spec: RobotSpec | Mapping[str, Any], values: Mapping[str, Any]) -> RobotSpec:
    """A new, validated RobotSpec with `values` (path or name -> value) set.

    Names are resolved with `resolve_fields` when they match existing numeric fields; a full
    path to an empty optional field (e.g. `segments.1.backbone.youngs_modulus`) is created.
    Raises DescriptionError (a ValueError) naming the field and the value when the result is not
    a valid description.
    """
    base = load_robot(dict(spec) if isinstance(spec, Mapping) else spec)
    # model_dump builds new dicts and lists (nothing shared with `base`): no deep copy needed,
    # which was a third of a sweep point's cost (tests/test_sweep.py checks the base is kept).
    data = base.model_dump()
    for name, value in values.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise DescriptionError(f"{name} must be finite, got {value!r}")
        # A full path to a numeric field needs no search of every field (a sweep sets one per
        # point); names and patterns go through `resolve_fields`.
        norm = normalize_path(name)
        try:
            current = get_field(data, norm)
        except (KeyError, IndexError, ValueError):
            current = _MISSING
        paths: tuple[str, ...]
        if _is_number(current):
            paths = (norm,)
        else:
            try:
                paths = resolve_fields(base, name)
            except ValueError:
                paths = (norm,)
        for path in paths:
            try:
                set_path(data, path, value)
            except (KeyError, IndexError) as exc:
                raise DescriptionError(str(exc).strip("'\"")) from None
    try:
        return load_robot(data)
    except DescriptionError as exc:
        shown = ", ".join(f"{k} = {v!r}" for k, v in values.items())
        raise DescriptionError(f"setting {shown}: {exc}") from None
