"""Command-line interface: `softrod ...`. Errors print one line and exit with code 2."""

from __future__ import annotations

import sys

import click

from softrod.cli._app import CliError, app, bench_app

# Command modules register themselves on import.
from softrod.cli import _static_cmds  # noqa: F401, E402  isort: skip
from softrod.cli import _mujoco_cmds  # noqa: F401, E402  isort: skip

__all__ = ["app", "bench_app", "main"]


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; bad input prints `softrod: error: ...` and returns 2, never a traceback."""
    try:
        app(args=argv, standalone_mode=False, prog_name="softrod")
    except click.exceptions.Exit as exc:
        return int(exc.exit_code or 0)
    except click.exceptions.Abort:
        print("softrod: aborted", file=sys.stderr)
        return 130
    except click.UsageError as exc:
        print(f"softrod: error: {exc.format_message()}", file=sys.stderr)
        return 2
    except (CliError, ValueError, FileNotFoundError) as exc:
        msg = " ".join(str(exc).split())
        print(f"softrod: error: {msg}", file=sys.stderr)
        return 2
    return 0


def _entry() -> None:
    sys.exit(main())
