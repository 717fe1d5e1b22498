"""Benchmark cases as data, and the one runner that prints `case.metric: value` lines."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["BenchCase", "BenchRun", "format_metric", "print_run", "run_case"]

#: One benchmark's flat output: "case.metric" -> value (None when not measurable: printed nan).
Metrics = Mapping[str, float | None]


@dataclass(frozen=True)
class BenchRun:
    """What one case returned.

    metrics : the flat `case.metric` numbers printed one per line.
    record : what `--json` prints when it is more than the metrics (None: the metrics).
    """

    metrics: Metrics
    record: Any = None

    @property
    def json_record(self) -> Any:
        return self.metrics if self.record is None else self.record


@dataclass(frozen=True)
class BenchCase:
    """One benchmark: `softrod bench NAME`.

    name : the subcommand's name.
    measures : one line on what it measures (the subcommand's help).
    run : the function; keyword options in, a metrics dict (or a BenchRun) out.
    streams : True when `run` prints its lines itself as it goes (long runs; it takes `emit`).
    """

    name: str
    measures: str
    run: Callable[..., Any]
    streams: bool = False


def format_metric(key: str, value: float | int | str | None) -> str:
    """`key: value` with floats to 6 significant digits and None (not measurable) as nan."""
    if value is None:
        return f"{key}: nan"
    if isinstance(value, str):
        return f"{key}: {value}"
    return f"{key}: {value:.6g}"


def print_run(
    result: BenchRun | Metrics,
    as_json: bool = False,
    emit: Callable[[str], None] = print,
    json_safe: Callable[[Any], Any] | None = None,
) -> None:
    """Print a case's result: one JSON object (`as_json`) or one `case.metric: value` line each.

    `json_safe` cleans a full record (NaN -> null, numpy -> Python) before it is dumped.
    """
    run = result if isinstance(result, BenchRun) else BenchRun(result)
    if as_json:
        record = run.json_record
        if run.record is not None and json_safe is not None:
            record = json_safe(record)
        emit(json.dumps(record))
        return
    for key, value in run.metrics.items():
        emit(format_metric(key, value))


def run_case(
    case: BenchCase | str,
    *,
    as_json: bool = False,
    emit: Callable[[str], None] = print,
    json_safe: Callable[[Any], Any] | None = None,
    **options: Any,
) -> BenchRun:
    """Run one case (by name or as data) with `options` and print what it measured."""
    from softrod.bench._cases import CASES

    if isinstance(case, str):
        if case not in CASES:
            raise ValueError(f"benchmark must be one of {', '.join(CASES)}, got {case!r}")
        case = CASES[case]
    if case.streams:
        out = case.run(emit=emit, **options)
        return out if isinstance(out, BenchRun) else BenchRun(out)
    out = case.run(**options)
    run = out if isinstance(out, BenchRun) else BenchRun(out)
    print_run(run, as_json=as_json, emit=emit, json_safe=json_safe)
    return run
