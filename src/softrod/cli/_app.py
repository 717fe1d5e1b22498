"""The `softrod` Typer application; command modules register on `app` and `bench_app`."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="softrod",
    help="Describe, simulate, control, plan for and learn with continuum robots.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Help texts are plain text: units such as [s] or [m/s^2] would otherwise be read as rich
    # markup tags and vanish from --help.
    rich_markup_mode=None,
)
bench_app = typer.Typer(
    help="Benchmarks; each prints `case.metric: value` lines.", rich_markup_mode=None
)
app.add_typer(bench_app, name="bench")


class CliError(Exception):
    """An error reported to the user as one line, exit code 2."""
