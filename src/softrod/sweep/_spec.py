"""The sweep file: a typed, YAML round-trippable description of a design sweep.

```yaml
name: tdcr3_static_grid
robot: tdcr3                 # description file (relative to this file) or a shipped robot name
task: static_tip             # built-in, or module:function, or file.py:function
task_options: {method: shooting}
inputs:                      # the task's base inputs; a point's `inputs.*` values replace them
  tensions: [0, 0, 0, 0, 0, 0, 0, 0, 0]
design:
  kind: grid                 # grid: every combination, in the order given; random: n draws
  parameters:
    backbone.youngs_modulus: {values: [40.0e9, 60.0e9, 80.0e9]}
    inputs.tensions.0: {start: 0.0, stop: 2.0, num: 9}
seed: 0                      # random designs: one stream per parameter from (seed, position)
```

A parameter is a dotted path into the robot description (`backbone.youngs_modulus`,
`segments.0.tendons.*.offset`, a bare field name: see `softrod.description.with_fields`) or into the
task inputs (`inputs.<name>[.<index>]`). Every point gets a stable `point_id`: a hash of its
parameter values, independent of the order of the design, so a resumed or extended sweep finds
the points it already has.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

import numpy as np
from pydantic import Discriminator, Field, Tag, field_validator, model_validator

from softrod.description import Spec

__all__ = [
    "Values",
    "Span",
    "Uniform",
    "GridDesign",
    "RandomDesign",
    "SweepSpec",
    "PointSpec",
    "load_sweep",
    "generate_points",
    "count_points",
    "point_id",
    "MAX_SWEEP_POINTS",
]

#: Largest design a sweep accepts. The points are held in memory (~1 kB each) and the Parquet
#: output is rewritten at each flush, so a million points is the most one run handles well; a
#: larger study is split into several sweep files (each resumable on its own).
MAX_SWEEP_POINTS = 1_000_000


#: Numbers in exponent notation without a sign in the exponent ("60.0e9") are strings to
#: YAML 1.1 (PyYAML); values that look like that are read as floats.
_EXP_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)[eE][+-]?\d+$")


def _yaml_number(value: Any) -> Any:
    if isinstance(value, str) and _EXP_NUMBER.match(value.strip()):
        return float(value)
    if isinstance(value, list):
        return [_yaml_number(v) for v in value]
    return value


class Values(Spec):
    """An explicit list of values (grid axis, or a uniform choice in a random design)."""

    values: list[Any] = Field(min_length=1, description="The values, in order.")

    @field_validator("values", mode="before")
    @classmethod
    def _numbers(cls, value: Any) -> Any:
        return _yaml_number(value) if isinstance(value, list) else value


class Span(Spec):
    """Evenly spaced numbers from `start` to `stop` (both included): give `num` or `step`."""

    start: float = Field(description="First value.")
    stop: float = Field(description="Last value.")
    num: int | None = Field(default=None, description="Number of values (>= 1).")
    step: float | None = Field(default=None, description="Spacing; stop is kept when on the grid.")
    integer: bool = Field(default=False, description="Round the values to integers.")

    @model_validator(mode="after")
    def _check(self) -> Span:
        if (self.num is None) == (self.step is None):
            raise ValueError("give exactly one of num and step")
        if self.num is not None and self.num < 1:
            raise ValueError(f"num must be >= 1, got {self.num}")
        if self.step is not None:
            if not self.step > 0:
                raise ValueError(f"step must be > 0, got {self.step}")
            if self.stop < self.start:
                raise ValueError(
                    f"stop must be >= start with a step, got {self.start}..{self.stop}"
                )
        return self

    def size(self) -> int:
        """Number of values `grid()` returns, computed without building them."""
        if self.num is not None:
            return self.num
        assert self.step is not None
        return int(math.floor((self.stop - self.start) / self.step + 1e-9)) + 1

    def grid(self) -> list[Any]:
        vals: np.ndarray
        if self.num is not None:
            vals = np.linspace(self.start, self.stop, self.num)
        else:
            assert self.step is not None
            # Tolerance so that float steps such as 0.005 still reach `stop`.
            n = int(math.floor((self.stop - self.start) / self.step + 1e-9)) + 1
            vals = self.start + self.step * np.arange(n)
        if self.integer:
            return [int(round(v)) for v in vals]
        # Round off the last bits so that point ids do not depend on the arithmetic.
        return [float(f"{v:.12g}") for v in vals]


class Uniform(Spec):
    """A uniform draw from [low, high] (log-uniform when `log`), for random designs."""

    low: float
    high: float
    log: bool = Field(default=False, description="Draw uniformly in log(value); low must be > 0.")
    integer: bool = Field(default=False, description="Round the draw to an integer.")

    @model_validator(mode="after")
    def _check(self) -> Uniform:
        if not self.low < self.high:
            raise ValueError(f"low must be < high, got low={self.low}, high={self.high}")
        if self.log and not self.low > 0:
            raise ValueError(f"log draws need low > 0, got {self.low}")
        return self

    def draw(self, rng: np.random.Generator, n: int) -> list[Any]:
        if self.log:
            vals = np.exp(rng.uniform(math.log(self.low), math.log(self.high), n))
        else:
            vals = rng.uniform(self.low, self.high, n)
        if self.integer:
            return [int(round(v)) for v in vals]
        return [float(f"{v:.12g}") for v in vals]


def _axis_kind(value: Any) -> str:
    """Which axis model a parameter entry is, from its keys (clear errors instead of a union's)."""
    if isinstance(value, Mapping):
        if "values" in value:
            return "values"
        if "low" in value or "high" in value:
            return "uniform"
        return "span"
    if isinstance(value, Span):
        return "span"
    if isinstance(value, Uniform):
        return "uniform"
    return "values"


GridAxis = Annotated[
    Annotated[Values, Tag("values")] | Annotated[Span, Tag("span")],
    Discriminator(
        _axis_kind,
        custom_error_type="axis",
        custom_error_message=("a grid axis is {values: [...]} or {start, stop, num | step}"),
    ),
]
RandomAxis = Annotated[
    Annotated[Values, Tag("values")] | Annotated[Uniform, Tag("uniform")],
    Discriminator(
        _axis_kind,
        custom_error_type="axis",
        custom_error_message=(
            "a random axis is {values: [...]} (uniform choice) or {low, high[, log]}"
        ),
    ),
]


class GridDesign(Spec):
    """Every combination of the axes (the first axis varies slowest)."""

    kind: Literal["grid"] = "grid"
    parameters: dict[str, GridAxis] = Field(description="Dotted path -> values or span.")

    @model_validator(mode="after")
    def _check(self) -> GridDesign:
        if not self.parameters:
            raise ValueError("a grid needs at least one parameter")
        # Refuse a design too large to run before anything is built (1e9 points once hung here).
        upper = math.prod(
            len(ax.values) if isinstance(ax, Values) else ax.size()
            for ax in self.parameters.values()
        )
        if upper > MAX_SWEEP_POINTS:
            raise ValueError(
                f"the grid has {upper:,} points, more than one sweep takes "
                f"({MAX_SWEEP_POINTS:,}); split it into several sweep files"
            )
        return self


class RandomDesign(Spec):
    """`n` independent draws of every parameter (np.random.default_rng(seed))."""

    kind: Literal["random"] = "random"
    n: int = Field(description="Number of points (>= 1).")
    parameters: dict[str, RandomAxis] = Field(description="Dotted path -> distribution.")

    @model_validator(mode="after")
    def _check(self) -> RandomDesign:
        if self.n < 1:
            raise ValueError(f"n must be >= 1, got {self.n}")
        if self.n > MAX_SWEEP_POINTS:
            raise ValueError(
                f"n must be <= {MAX_SWEEP_POINTS:,} (split larger studies into several sweep "
                f"files), got {self.n:,}"
            )
        if not self.parameters:
            raise ValueError("a random design needs at least one parameter")
        return self


class SweepSpec(Spec):
    """A design sweep: a robot (or none), a task, base inputs and a design over dotted paths."""

    spec_what: ClassVar[str] = "sweep file"
    spec_tags: ClassVar[tuple[str, ...]] = ("grid", "random", "values", "span", "uniform")

    name: str = Field(default="sweep", description="Free-form name (recorded in the output).")
    robot: str | None = Field(
        default=None,
        description="Robot description file (relative to the sweep file) or shipped robot name.",
    )
    task: str = Field(
        default="static_tip",
        description="Built-in task name, or `package.module:function` / `file.py:function`.",
    )
    task_options: dict[str, Any] = Field(default_factory=dict, description="Passed to the task.")
    inputs: dict[str, Any] = Field(default_factory=dict, description="Base inputs of the task.")
    design: Annotated[GridDesign | RandomDesign, Field(discriminator="kind")]
    seed: int = Field(default=0, description="Seed of random designs.")
    chunk_size: int | None = Field(
        default=None, description="Points per worker job (default: chosen from the point count)."
    )

    @model_validator(mode="after")
    def _check(self) -> SweepSpec:
        if self.chunk_size is not None and self.chunk_size < 1:
            raise ValueError(f"chunk_size must be >= 1, got {self.chunk_size}")
        for path in self.design.parameters:
            if not path.strip() or path.strip() != path:
                raise ValueError(f"parameter path {path!r} must be non-empty without spaces")
            if path.startswith("inputs") and path != "inputs" and not path.startswith("inputs."):
                raise ValueError(f"parameter path {path!r}: write inputs.<name>")
        return self


def load_sweep(source: str | Path | Mapping[str, Any] | SweepSpec) -> SweepSpec:
    """Read and validate a sweep file (YAML or JSON), a dict or a SweepSpec.

    Raises DescriptionError (a ValueError) naming the field, the value and what was expected.
    """
    return SweepSpec.load(source)


# ---------------------------------------------------------------------------------------------
# Points


def _plain(value: Any) -> Any:
    """JSON-stable Python value (numpy scalars and arrays to floats, ints and lists)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray | list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def point_id(params: Mapping[str, Any]) -> str:
    """Stable id of a point: the first 16 hex digits of SHA-256 of its canonical JSON."""
    text = json.dumps(_plain(dict(params)), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class PointSpec:
    """One design point: its position in the design, id and parameter values."""

    index: int
    point_id: str
    params: dict[str, Any]


def generate_points(spec: SweepSpec) -> list[PointSpec]:
    """All points of the design, duplicates (same values) removed, in design order."""
    design = spec.design
    names = list(design.parameters)
    if isinstance(design, GridDesign):
        axes = [
            ax.values if isinstance(ax, Values) else ax.grid() for ax in design.parameters.values()
        ]
        combos = itertools.product(*axes)
        rows = [dict(zip(names, (_plain(v) for v in combo), strict=True)) for combo in combos]
    else:
        # One stream per parameter, keyed by (seed, position): the first n draws do not depend on
        # n, so raising n and resuming runs only the new points.
        columns = []
        for k, ax in enumerate(design.parameters.values()):
            rng = np.random.default_rng(np.random.SeedSequence(spec.seed, spawn_key=(k,)))
            if isinstance(ax, Values):
                picks = rng.integers(0, len(ax.values), design.n)
                columns.append([_plain(ax.values[i]) for i in picks])
            else:
                columns.append(ax.draw(rng, design.n))
        rows = [dict(zip(names, vals, strict=True)) for vals in zip(*columns, strict=True)]
    out: list[PointSpec] = []
    seen: set[str] = set()
    for params in rows:
        pid = point_id(params)
        if pid in seen:
            continue
        seen.add(pid)
        out.append(PointSpec(len(out), pid, params))
    return out


def _distinct_codes(values: list[Any]) -> tuple[int, list[int]]:
    """Number of distinct values (by the canonical JSON that point ids hash) and each value's
    code."""
    codes: dict[str, int] = {}
    out = [codes.setdefault(json.dumps(_plain(v), sort_keys=True), len(codes)) for v in values]
    return len(codes), out


def count_points(spec_path: str | Path | Mapping[str, Any] | SweepSpec) -> int:
    """Number of distinct points of a sweep file's design, counted without building them
    (a grid is the product of its axes' distinct values; a random design counts distinct rows
    of its draws).

    Designs larger than `MAX_SWEEP_POINTS` are refused when the file is read (ValueError).
    """
    spec = load_sweep(spec_path)
    design = spec.design
    if isinstance(design, GridDesign):
        # Combinations of distinct axis values are distinct points: no need to build them.
        return math.prod(
            _distinct_codes(ax.values if isinstance(ax, Values) else ax.grid())[0]
            for ax in design.parameters.values()
        )
    # The same streams as generate_points, kept as codes: distinct rows of small integers.
    columns = []
    for k, ax in enumerate(design.parameters.values()):
        rng = np.random.default_rng(np.random.SeedSequence(spec.seed, spawn_key=(k,)))
        if isinstance(ax, Values):
            codes = np.asarray(_distinct_codes(ax.values)[1])
            columns.append(codes[rng.integers(0, len(ax.values), design.n)])
        else:
            columns.append(np.unique(np.asarray(ax.draw(rng, design.n)), return_inverse=True)[1])
    return int(len(np.unique(np.stack(columns, axis=1), axis=0)))
