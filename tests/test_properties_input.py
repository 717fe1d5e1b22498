"""Never lie on bad input (issue 19 item 2): random invalid robot, sweep, scene, environment
and calibration files.

Each valid shipped file is corrupted in one place (a wrong type, a negative, non-finite or
huge number, an unknown field), or replaced by garbage text or a huge file. Loading must
either succeed (the corruption happened to be valid) or raise a ValueError
(`DescriptionError`) that names the field; the CLI prints one line and exits 2.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from softrod.bench import example_robot_path
from softrod.cli import main
from softrod.description import MAX_FILE_BYTES, load_robot
from softrod.planning import load_environment
from softrod.scene import load_scene_spec
from softrod.sweep import load_sweep
from softrod.sysid import read_measurements

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
#: Fast loaders: many examples are cheap; derandomized so a failure reproduces.
SETTINGS = settings(
    max_examples=60,
    derandomize=True,
    deadline=None,
    database=None,
    phases=[Phase.explicit, Phase.generate, Phase.shrink],
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _scene() -> dict:
    data = yaml.safe_load((EXAMPLES / "scenes" / "magnetic_catheter.yaml").read_text())
    data["robots"][0]["robot"] = str(EXAMPLES / "robots" / "magnetic_catheter.yaml")
    return data


#: kind -> (valid description dict, loader of a file path, CLI arguments for a file path).
KINDS: dict[str, tuple[Any, Any, Any]] = {
    "robot": (
        lambda: yaml.safe_load(example_robot_path("tdcr3").read_text()),
        load_robot,
        lambda p, tmp: ["info", str(p)],
    ),
    "sweep": (
        lambda: yaml.safe_load((EXAMPLES / "sweeps" / "static_grid.yaml").read_text()),
        load_sweep,
        lambda p, tmp: ["sweep", str(p), "--count"],
    ),
    "scene": (
        _scene,
        load_scene_spec,
        lambda p, tmp: ["render", str(p), "-o", str(tmp / "out.png")],
    ),
    "env": (
        lambda: yaml.safe_load((EXAMPLES / "planning" / "env1.yaml").read_text()),
        load_environment,
        lambda p, tmp: ["plan", str(p)],
    ),
}

BAD_VALUES = st.sampled_from(
    ["abc", [1, 2], {"x": 1}, -1.0, -1e300, 0, math.nan, math.inf, -math.inf, 1e300, None, True]
)


def _paths(data: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path (tuple of keys / indices) to a value inside a nested dict/list."""
    out = []
    items = data.items() if isinstance(data, dict) else enumerate(data)
    for k, v in items:
        out.append((*prefix, k))
        if isinstance(v, dict | list) and v:
            out += _paths(v, (*prefix, k))
    return out


def _set(data: Any, path: tuple, value: Any) -> None:
    for k in path[:-1]:
        data = data[k]
    data[path[-1]] = value


@st.composite
def corrupted(draw: st.DrawFn, kind: str) -> tuple[dict, tuple[str, ...]]:
    """(a corrupted description, the field names on the path to the corruption: its error
    must mention one, e.g. `design` for a grid made too large by a huge `stop`)."""
    data = KINDS[kind][0]()
    paths = _paths(data)
    if draw(st.booleans()):
        # An unknown field in a random mapping.
        maps = [()] + [p for p in paths if isinstance(_get(data, p), dict)]
        where = draw(st.sampled_from(maps))
        _get(data, where)["not_a_field"] = 1.0
        return data, ("not_a_field",)
    path = draw(st.sampled_from(paths))
    _set(data, path, draw(BAD_VALUES))
    return data, tuple(k for k in path if isinstance(k, str))


def _get(data: Any, path: tuple) -> Any:
    for k in path:
        data = data[k]
    return data


def _write(tmp: Path, name: str, data: Any) -> Path:
    path = tmp / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    rc = main(argv)
    return rc, capsys.readouterr().err.strip()


@pytest.mark.parametrize("kind", list(KINDS))
def test_corrupted_field_is_named(kind: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    loader = KINDS[kind][1]

    @SETTINGS
    @given(corrupted(kind))
    def check(case: tuple[dict, tuple[str, ...]]) -> None:
        data, fields = case
        path = _write(tmp_path_factory.mktemp(kind), f"{kind}.yaml", data)
        try:
            loader(path)
        except ValueError as exc:
            msg = str(exc)
            assert "\n" not in msg.strip(), msg
            assert not fields or any(f in msg for f in fields), (fields, msg)

    check()


@pytest.mark.parametrize("kind", list(KINDS))
@SETTINGS
@given(text=st.text(max_size=200) | st.binary(max_size=200).map(lambda b: b.decode("latin-1")))
def test_garbage_text_is_an_error_not_a_crash(
    kind: str, text: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    path = tmp_path_factory.mktemp(kind) / f"{kind}.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogateescape")
    try:
        KINDS[kind][1](path)
    except ValueError as exc:
        assert str(exc).strip() and "\n" not in str(exc).strip()


@pytest.mark.parametrize("kind", list(KINDS))
def test_invalid_files_exit_2_with_one_line(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    valid, _, argv = KINDS[kind]
    cases = {
        "garbage": "name: [unclosed\n",
        "list": "- 1\n- 2\n",
        "unknown": yaml.safe_dump({**valid(), "not_a_field": 1}),
        "nan": yaml.safe_dump({**valid(), "name": math.nan}),
    }
    for name, text in cases.items():
        path = tmp_path / f"{name}.yaml"
        path.write_text(text)
        rc, err = _cli(argv(path, tmp_path), capsys)
        assert rc == 2, (name, err)
        assert len(err.splitlines()) == 1 and err.startswith("softrod: error"), (name, err)


@pytest.mark.parametrize("kind", list(KINDS))
def test_huge_file_is_refused_quickly(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / f"{kind}.yaml"
    line = "# " + "x" * 1000 + "\n"
    path.write_text("name: big\n" + line * (MAX_FILE_BYTES // len(line) + 1))
    with pytest.raises(ValueError, match="too large"):
        KINDS[kind][1](path)
    rc, err = _cli(KINDS[kind][2](path, tmp_path), capsys)
    assert rc == 2 and "too large" in err and len(err.splitlines()) == 1


def _csv(tmp: Path, header: list[str], rows: list[list[str]]) -> Path:
    path = tmp / "data.csv"
    path.write_text("\n".join(",".join(r) for r in [header, *rows]) + "\n")
    return path


CSV_HEADER = [f"tension_{i}" for i in range(9)] + ["x", "y", "z"]


@SETTINGS
@given(
    row=st.integers(0, 2),
    col=st.integers(0, len(CSV_HEADER) - 1),
    cell=st.sampled_from(["abc", "nan", "inf", "-inf", "", "1e999", "1,2"]),
)
def test_calibration_csv_bad_cell_is_named(
    row: int, col: int, cell: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    rows = [["0.5"] * 9 + ["0.01", "0.02", "0.2"] for _ in range(3)]
    rows[row][col] = cell
    path = _csv(tmp_path_factory.mktemp("csv"), CSV_HEADER, rows)
    with pytest.raises(ValueError) as info:
        read_measurements(path, n_tendons=9)
    msg = str(info.value)
    assert "\n" not in msg
    # The column (or the line, when the row's width is wrong) is named.
    assert CSV_HEADER[col] in msg or f"line {row + 2}" in msg, msg


def test_calibration_cli_bad_csv_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for header, rows in [
        (CSV_HEADER, [["0.5"] * 9 + ["0.01", "nan", "0.2"]]),
        (["a", "b"], [["1", "2"]]),
        (CSV_HEADER + ["unknown"], [["0.5"] * 9 + ["0.01", "0.02", "0.2", "1"]]),
    ]:
        path = _csv(tmp_path, header, rows)
        argv = ["calibrate", "tdcr3", "--data", str(path), "--fit", "youngs_modulus"]
        rc, err = _cli([*argv, "-o", str(tmp_path / "out.yaml")], capsys)
        assert rc == 2 and len(err.splitlines()) == 1, err
