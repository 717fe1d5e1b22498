"""Benchmarks: data plus one runner per layer; each prints `case.metric: value` lines."""

from softrod.bench._observer import run_observer_bench
from softrod.bench._static import example_robot_path, run_static_bench

__all__ = ["example_robot_path", "run_observer_bench", "run_static_bench"]
