"""Command-line interface: `softrod ...`. Errors print one line and exit with code 2."""

from __future__ import annotations

import sys

import typer

from softrod.cli._app import CliError, app, bench_app

try:  # typer >= 0.20 vendors click
    from typer._click.exceptions import UsageError as _UsageError
except ImportError:  # pragma: no cover - older typer with click as a dependency
    from click.exceptions import UsageError as _UsageError  # type: ignore[no-redef,assignment]

# Command modules register themselves on import.
from softrod.cli import _static_cmds  # noqa: F401, E402  isort: skip
from softrod.cli import _demo  # noqa: F401, E402  isort: skip
from softrod.cli import _mujoco_cmds  # noqa: F401, E402  isort: skip
from softrod.cli import _bench_cmds  # noqa: F401, E402  isort: skip
from softrod.cli import _control_cmds  # noqa: F401, E402  isort: skip
from softrod.cli import _dynamics_cmds  # noqa: F401, E402  isort: skip
from softrod.cli import _sysid_cmds  # noqa: F401, E402  isort: skip
from softrod.cli import _plan_cmds  # noqa: F401, E402  isort: skip
from softrod.cli import _validate_cmds  # noqa: F401, E402  isort: skip
from softrod.cli import _learn_cmds  # noqa: F401, E402  isort: skip
from softrod.cli import _workspace_cmds  # noqa: F401, E402  isort: skip
from softrod.cli import _hardware_cmds  # noqa: F401, E402  isort: skip

__all__ = ["app", "bench_app", "main"]

#: Optional modules and the extra (pyproject.toml) that installs each: a command that imports a
#: missing one ends with one line naming the extra.
EXTRAS = {
    "mujoco": "mujoco",
    "imageio": "mujoco",
    "imageio_ffmpeg": "mujoco",
    "gymnasium": "rl",
    "stable_baselines3": "rl",
    "tensorboard": "rl",
    "torch": "learn",
    "ray": "dist",
    "pyarrow": "dist",
    "optuna": "dist",
    "viser": "web",
    "warp": "warp",
    "mujoco_warp": "warp",
    "skrl": "warp",
    "elastica": "bench",
    "playwright": "dev",
}


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; bad input prints `softrod: error: ...` and returns 2, never a traceback."""
    try:
        rv = app(args=argv, standalone_mode=False, prog_name="softrod")
    except typer.Exit as exc:
        return int(exc.exit_code or 0)
    except typer.Abort:
        print("softrod: aborted", file=sys.stderr)
        return 130
    except _UsageError as exc:
        print(f"softrod: error: {exc.format_message()}", file=sys.stderr)
        return 2
    except (CliError, ValueError, FileNotFoundError) as exc:
        msg = _one_line(exc)
        print(f"softrod: error: {msg}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as exc:
        # An optional extra the command needs is not installed: say which one, not a traceback.
        top = (exc.name or "").partition(".")[0]
        if top not in EXTRAS:
            raise
        print(
            f"softrod: error: this command needs {top} (pip install 'softrod[{EXTRAS[top]}]')",
            file=sys.stderr,
        )
        return 2
    # Without standalone mode a command's `typer.Exit(code)` comes back as the return value.
    return rv if isinstance(rv, int) else 0


def _one_line(exc: Exception) -> str:
    """The error as one line; a config's validation error (pydantic, a ValueError) as its
    messages with their fields, without pydantic's input dump and documentation link."""
    errors = getattr(exc, "errors", None)
    if callable(errors) and type(exc).__name__ == "ValidationError":
        parts = []
        for err in errors():
            loc = ".".join(str(x) for x in err.get("loc", ()))
            msg = str(err.get("msg", "")).removeprefix("Value error, ")
            # A field's own check names the field; its value is shown where the message lacks it.
            got = f" (got {err['input']!r})" if loc and "input" in err else ""
            parts.append(f"{loc}: {msg}{got}" if loc else msg)
        return " ".join("; ".join(parts).split())
    return " ".join(str(exc).split())


def _entry() -> None:
    sys.exit(main())
