"""`softrod.bench` (cases as data, one runner) and where studies sit in the layers."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

import softrod.bench._cases as cases_module
from softrod.bench import CASES, BenchCase, BenchRun, format_metric, print_run, run_case
from softrod.cli import bench_app, main
from softrod.description import find_robot, load_robot

SRC = Path(__file__).resolve().parents[1] / "src" / "softrod"
#: Packages that measure or present (they may import every library layer).
STUDY_LAYERS = ("bench", "validate", "cli")


def test_every_bench_subcommand_is_a_case_in_registry_order() -> None:
    names = [cmd.name for cmd in bench_app.registered_commands]
    assert names == list(CASES)
    for cmd in bench_app.registered_commands:
        assert cmd.help == CASES[cmd.name].measures


def test_bench_help_keeps_bracketed_units(capsys: pytest.CaptureFixture[str]) -> None:
    """`[points/s]` and `softrod[warp]` were read as rich markup and vanished from the help."""
    assert main(["bench", "sweep", "--help"]) == 0
    assert "[points/s]" in " ".join(capsys.readouterr().out.split())
    assert main(["bench", "warp-reach", "--help"]) == 0
    assert "softrod[warp]" in " ".join(capsys.readouterr().out.split())


def test_runner_prints_case_metric_lines_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    case = BenchCase("toy", "A toy case.", lambda scale=1.0: {"toy.a": 0.5 * scale, "toy.b": None})
    run = run_case(case, scale=2.0)
    assert run.metrics == {"toy.a": 1.0, "toy.b": None}
    assert capsys.readouterr().out.splitlines() == ["toy.a: 1", "toy.b: nan"]
    run_case(case, as_json=True)
    assert json.loads(capsys.readouterr().out) == {"toy.a": 0.5, "toy.b": None}
    with pytest.raises(ValueError, match="benchmark must be one of"):
        run_case("no-such-case")


def test_format_metric_matches_the_cli_lines() -> None:
    assert format_metric("a.b", 1234567.0) == "a.b: 1.23457e+06"
    assert format_metric("a.b", 3) == "a.b: 3"
    assert format_metric("a.b", None) == "a.b: nan"
    assert format_metric("check.x", "pass") == "check.x: pass"


def test_json_record_is_cleaned_only_when_it_is_not_the_metrics(
    capsys: pytest.CaptureFixture[str],
) -> None:
    print_run(BenchRun({"x.y": 1.0}, record={"deep": [1.0]}), as_json=True, json_safe=lambda r: 7)
    assert capsys.readouterr().out.strip() == "7"
    print_run(BenchRun({"x.y": 1.0}), as_json=True, json_safe=lambda r: 7)
    assert json.loads(capsys.readouterr().out) == {"x.y": 1.0}


def test_planning_case_names_every_line_even_when_a_value_is_missing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A planning environment without a plan printed a bare `nan` line before (no key)."""
    import softrod.planning

    summary = {key: 1.0 for key in cases_module.PLANNING_KEYS}
    summary["environments"] = [
        {"name": "wall", "plan_time_s": None, "nn_distance_to_goal_m": 0.01,
         "noload_distance_to_goal_m": None},
    ]  # fmt: skip
    monkeypatch.setattr(softrod.planning, "run_benchmark", lambda cfg, **kw: (summary, None))
    run_case("planning", config=object(), cache_dir=Path("unused"), log=lambda _m: None)
    lines = capsys.readouterr().out.splitlines()
    assert "planning.wall.plan_time_s: nan" in lines
    assert "planning.wall.nn_distance_to_goal_m: 0.01" in lines
    assert all(line.startswith("planning.") for line in lines)


def test_static_case_never_asks_scipy_for_more_solves_than_it_made(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`softrod bench static --n 10` (allowed) indexed past the 10 inputs in the SciPy loop."""
    import softrod.bench._static as static

    seen: dict[str, int] = {}

    def fake(n_softmanisim: int, n_scipy: int, seed: int) -> dict[str, float]:
        seen.update(n=n_softmanisim, n_scipy=n_scipy)
        return {}

    monkeypatch.setattr(static, "run_static_bench", fake)
    CASES["static"].run(n=10)
    assert seen == {"n": 10, "n_scipy": 10}
    CASES["static"].run(n=300)
    assert seen == {"n": 300, "n_scipy": cases_module.STATIC_N_SCIPY}


def test_bad_bench_options_are_one_line_errors(capsys: pytest.CaptureFixture[str]) -> None:
    for argv, needle in [
        (["bench", "static", "--n", "5"], "--n must be >= 10"),
        (["bench", "observer", "--n", "5"], "--n must be >= 10"),
        (["bench", "dynamics", "--elements", "1"], "--elements must be >= 2"),
        (["bench", "sweep", "--n", "5"], "--n must be >= 10"),
        (["bench", "sweep", "--workers", "0"], "--workers must be >= 1"),
        (["bench", "mujoco", "--samples", "1"], "--samples must be >= 2"),
        (["bench", "web", "--viewport", "10x10"], "--viewport must be WIDTHxHEIGHT"),
        (["bench", "web", "--viewport", "wide"], "--viewport must be WIDTHxHEIGHT"),
        (
            ["bench", "web", "--gl", "opengl"],
            "--gl must be one of swiftshader, llvmpipe, got 'opengl'",
        ),
    ]:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert needle in err and err.count("\n") == 1, err


def test_studies_use_the_shipped_validation_rods() -> None:
    """The seed-002 rods and the TDCR have one definition: their shipped YAML."""
    from softrod.bench._dynamics import RELEASE_CASES
    from softrod.bench._mujoco import tdcr3_robot
    from softrod.validate import CHAIN_MATERIALS, material_robot

    for material, data in CHAIN_MATERIALS.items():
        assert material_robot(material) == load_robot(find_robot(data["robot"]))
    # The release test runs each rod as one segment of the shipped rod's length.
    for case, name in (("tpu_rod", "tpu_rod"), ("steel_rod", "spring_steel_rod")):
        rod, shipped = RELEASE_CASES[case][0], load_robot(find_robot(name))
        assert rod.backbone == shipped.backbone and rod.model == shipped.model
        assert [s.length for s in rod.segments] == [shipped.total_length]
    assert tdcr3_robot() == load_robot(find_robot("tdcr3"))


def _imports(path: Path) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.lineno, node.module))
    return out


def test_no_library_layer_imports_softrod_itself_or_a_study() -> None:
    """Studies sit above what they measure: a library layer never imports `softrod` (the
    top-level package), `softrod.bench`, `softrod.validate` or the CLI; `validate` never imports
    `bench` or the CLI, and `bench` never imports the CLI."""
    above = {"bench": ("cli",), "validate": ("bench", "cli"), "cli": ()}
    bad = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC)
        if len(rel.parts) < 2:
            continue
        pkg = rel.parts[0]
        forbidden = above.get(pkg, STUDY_LAYERS)
        for line, module in _imports(path):
            parts = module.split(".")
            if pkg != "cli" and module == "softrod":
                bad.append(f"{rel}:{line} imports softrod itself")
            elif parts[0] == "softrod" and len(parts) > 1 and parts[1] in forbidden:
                bad.append(f"{rel}:{line} imports {module}")
    assert not bad, "\n".join(bad)


def test_bench_web_passes_its_options_through(capsys: pytest.CaptureFixture[str]) -> None:
    """`softrod bench web` without a browser: the server-side latencies of both models, and the
    browser options recorded in the output (they reach the bench, not only the parser)."""
    pytest.importorskip("viser", reason="the browser twin needs viser: pip install softrod[web]")
    argv = ["bench", "web", "--n", "10", "--links", "4", "--no-browser", "--json"]
    assert main([*argv, "--gl", "llvmpipe", "--no-frame-limit"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["web.gl"], out["web.frame_limit"], out["web.updates"]) == ("llvmpipe", False, 10)
    assert out["web.exact.server_median_ms"] > 0 and out["web.mujoco.server_median_ms"] > 0
    assert out["web.exact.browser_median_ms"] is None  # --no-browser


def test_bench_web_reports_a_stalled_browser_in_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page that stops answering (software WebGL starving the CPU) ends the bench with one
    line on stderr and exit 1, not a traceback."""
    pytest.importorskip("viser", reason="the browser twin needs viser: pip install softrod[web]")
    import softrod.bench._web as web

    def stalled(*args: object, **kwargs: object) -> None:
        raise web.BrowserStalled("the page did not answer within 120 s (press timed out)")

    monkeypatch.setattr(web, "_browser_side", stalled)
    assert main(["bench", "web", "--n", "10", "--links", "2", "--json"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and "did not answer within 120 s" in captured.err
