"""`Spec`: the base of every typed description (robots, scenes, sweeps, environments, configs).

One strict configuration (unknown fields and non-finite numbers are errors, assignments are
validated), one loader (`Spec.load`: a file path, a dict or an instance), one YAML round trip
(`to_yaml` / `from_yaml`) and one error format: a `DescriptionError` (or the subclass a spec
names) that gives the dotted field path, the value and what was expected.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import yaml
from pydantic import BaseModel, ConfigDict
from typing_extensions import Self

from softrod.description._io import DescriptionError, load_spec, parse_mapping, validate_mapping

__all__ = ["Spec"]


class Spec(BaseModel):
    """Base class of softrod's typed descriptions (pydantic models).

    Subclasses set two class variables for their error messages: `spec_what`, how a file of
    this kind is called (`"robot description"`, `"sweep file"`), and `spec_error`, the
    ValueError subclass raised for a bad one (default `DescriptionError`). `spec_tags` lists the
    tags of discriminated unions, which are left out of error field paths.

    >>> class Gain(Spec):
    ...     k: float = 1.0
    >>> Gain.from_yaml(Gain(k=2.0).to_yaml()).k
    2.0
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, validate_assignment=True)

    spec_what: ClassVar[str] = "description"
    spec_error: ClassVar[type[ValueError]] = DescriptionError
    spec_tags: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def load(cls, source: str | Path | Mapping[str, Any] | Self) -> Self:
        """Validate `source`: an instance (returned as is), a mapping, or a .yaml/.yml/.json file.

        Raises `spec_error` naming the field path, the value and what was expected.
        """
        return load_spec(cls, source, cls.spec_what, cls.spec_error, cls.spec_tags)

    @classmethod
    def from_yaml(cls, text: str) -> Self:
        """Validate YAML text (what `to_yaml` writes); `spec_error` on a bad document."""
        data = parse_mapping(text, cls.spec_what, "yaml", cls.spec_error)
        return validate_mapping(cls, data, cls.spec_what, "yaml", cls.spec_error, cls.spec_tags)

    def to_dict(self) -> dict[str, Any]:
        """A plain JSON-able dict that `load` reads back to an equal spec.

        Fields that are None and default to None are left out (an empty optional block);
        a None that replaces another default is kept, so that it survives the round trip.
        """
        data = self.model_dump(mode="json")
        _drop_default_nones(self, data)
        return data

    def to_yaml(self, path: str | Path | None = None) -> str:
        """YAML text of `to_dict()` (fields in declaration order); also written to `path`."""
        text = yaml.safe_dump(self.to_dict(), sort_keys=False)
        if path is not None:
            Path(path).write_text(text)
        return text


def _drop_default_nones(model: BaseModel, data: dict[str, Any]) -> None:
    """Remove from `data` (`model`'s JSON dump) the None fields whose default is None."""
    for name, field in type(model).model_fields.items():
        if name not in data:  # excluded from dumps
            continue
        value = getattr(model, name)
        if value is None:
            if field.default is None:
                del data[name]
        else:
            _drop_nested(value, data[name])


def _drop_nested(value: Any, data: Any) -> None:
    # Recurse into nested models, lists and dicts of them, in step with their dump.
    if isinstance(value, BaseModel) and isinstance(data, dict):
        _drop_default_nones(value, data)
    elif isinstance(value, list | tuple) and isinstance(data, list):
        for item, sub in zip(value, data, strict=False):
            _drop_nested(item, sub)
    elif isinstance(value, Mapping) and isinstance(data, dict):
        for key, item in value.items():
            if str(key) in data:
                _drop_nested(item, data[str(key)])
