"""Every ```python block of the README and docs/ runs as written: a user pastes it into a script
and it works. Each block runs in its own interpreter, from a scratch folder that sees the
repository's `examples/` (the blocks' relative paths are the repository root's), so a block that
uses a name it never defines, a renamed argument or a script-only pitfall (a process pool without
a main guard) fails here rather than for the reader. Every `softrod ...` command line of their
code blocks names commands and options the CLI has (parsed, not run), and every yaml block (of
the docs and of the modules whose docstrings show a file format) loads."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from softrod.cli import EXTRAS

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
#: Seconds one block may take: the Warp blocks compile their kernels on a first run (~40 s on
#: the 2-core machine), the rest take about a second.
BLOCK_TIMEOUT = 300
#: Fewest blocks the docs hold (13 when this test was written): a fence the pattern stopped
#: matching would otherwise skip every block silently.
MIN_BLOCKS = 13
#: A `softrod ...` line in any code block, after optional `VAR=value` prefixes.
COMMAND = re.compile(r"^(?:[A-Z_]+=\S+\s+)*(?:\.venv/bin/)?softrod\s+(.*)$")
#: A synopsis rather than a command: optional parts, alternatives, placeholders, shell syntax.
SYNOPSIS = re.compile(r"[\[\]$<>{}]|\.\.\.|\S\|\S")
#: A block importing one of `EXTRAS` (the CLI's optional module -> extra map) is skipped,
#: naming the extra, where it is not installed (`make setup` installs them all).
IMPORT = re.compile(r"^\s*(?:import|from)\s+([A-Za-z_][A-Za-z0-9_]*)", re.M)


def _blocks() -> list:
    params = []
    for path in DOCS:
        text = path.read_text()
        for match in FENCE.finditer(text):
            line = text.count("\n", 0, match.start()) + 2  # the block's first code line
            params.append(pytest.param(match.group(1), id=f"{path.relative_to(ROOT)}:{line}"))
    return params


BLOCKS = _blocks()


def test_the_docs_hold_their_python_examples():
    assert len(BLOCKS) >= MIN_BLOCKS, [p.id for p in BLOCKS]


@pytest.mark.parametrize("code", BLOCKS)
def test_docs_python_block_runs_as_written(code: str, tmp_path: Path, run_script):
    for module in set(IMPORT.findall(code)) & set(EXTRAS):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"needs {module}: pip install 'softrod[{EXTRAS[module]}]'")
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    script = tmp_path / "example.py"
    script.write_text(code)
    proc = run_script([script], tmp_path, BLOCK_TIMEOUT)
    assert proc.returncode == 0, f"the block failed:\n{code}\n--- stderr:\n{proc.stderr[-3000:]}"


def _commands() -> list:
    params = []
    for path in DOCS:
        text = path.read_text()
        for match in re.finditer(r"^```[a-z]*\n(.*?)^```", text, re.S | re.M):
            for line in match.group(1).replace("\\\n", " ").splitlines():
                command = COMMAND.match(line.split(" #")[0].strip())
                if command is None:
                    continue
                # The command itself: not what it is piped or redirected into, or chained with.
                args = re.split(r" \| | > | && | 2>|; ", command.group(1))[0]
                if not SYNOPSIS.search(args):
                    params.append(pytest.param(args, id=f"{path.relative_to(ROOT)}: {args[:60]}"))
    return params


COMMANDS = _commands()


def test_the_docs_hold_their_commands():
    # 69 complete command lines when this test was written.
    assert len(COMMANDS) >= 60


@pytest.mark.parametrize("args", COMMANDS)
def test_docs_command_names_existing_commands_and_options(args: str):
    import shlex

    import typer

    from softrod.cli import app

    try:
        ctx = typer.main.get_command(app).make_context("softrod", shlex.split(args))
        # Down the command groups (`softrod bench sweep ...`): each level parses its options.
        while hasattr(ctx.command, "resolve_command") and (ctx._protected_args or ctx.args):
            name, command, rest = ctx.command.resolve_command(
                ctx, [*ctx._protected_args, *ctx.args]
            )
            assert command is not None, args
            ctx = command.make_context(name, rest, parent=ctx)
    except Exception as exc:
        if type(exc).__name__ != "Exit":  # `--help` ends the parse early: that is fine
            raise


#: Fragments in the docs are completed with these before loading: a robot's backbone, and a
#: scene with a magnetic robot and a rigid arm (the body the docs' field source sits on).
FRAGMENT_ROBOT = {
    "name": "docs_fragment",
    "backbone": {"youngs_modulus": 50.0e9, "poisson_ratio": 0.3, "radius": 0.0005},
}
FRAGMENT_SCENE = {
    "name": "docs_fragment",
    "robots": [{"name": "c", "robot": "magnetic_catheter", "links": 10}],
    "rigid_robots": [{"name": "arm", "model": "panda"}],
}
#: A yaml block with one of these top-level keys is not softrod's (a Ray cluster file).
FOREIGN_YAML = {"cluster_name"}


#: Module docstrings that show a file format as a yaml block (what `help()` shows a user).
FORMAT_MODULES = [
    ROOT / "src" / "softrod" / name
    for name in ("scene/_spec.py", "sweep/_spec.py", "planning/_env.py")
]


def _yaml_blocks() -> list:
    params = []
    for path in [*DOCS, *FORMAT_MODULES]:
        text = path.read_text()
        for match in re.finditer(r"^```yaml\n(.*?)^```", text, re.S | re.M):
            line = text.count("\n", 0, match.start()) + 2
            params.append(pytest.param(match.group(1), id=f"{path.relative_to(ROOT)}:{line}"))
    return params


YAML_BLOCKS = _yaml_blocks()


def test_the_docs_hold_their_yaml_examples():
    assert len(YAML_BLOCKS) >= 14, [p.id for p in YAML_BLOCKS]  # 14 when this was written


@pytest.mark.parametrize("text", YAML_BLOCKS)
def test_docs_yaml_block_loads(text: str):
    """Each yaml block is a file (or a part of one) that softrod's loaders accept: a sweep, a
    planning environment, a robot description (fragments: with a backbone), a scene (fragments:
    built with a magnetic robot and an arm)."""
    import yaml

    import softrod
    from softrod.planning._env import load_environment
    from softrod.sweep import load_sweep

    data = yaml.safe_load(text)
    assert isinstance(data, dict), data
    keys = set(data)
    if keys & FOREIGN_YAML:
        return
    if "design" in keys:
        load_sweep(data)
    elif {"start", "goal"} <= keys:
        load_environment(data)
    elif keys & {"backbone", "segments"}:
        softrod.load_robot({**FRAGMENT_ROBOT, **data})
    elif keys & {"robots", "magnetic_field", "field_sources", "keyframes"}:
        pytest.importorskip("mujoco")
        from softrod.scene import build_scene

        build_scene({**FRAGMENT_SCENE, **data})
    else:
        pytest.fail(f"a yaml block of no known kind: keys {sorted(keys)}")
