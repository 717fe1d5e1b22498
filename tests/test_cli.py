"""`softrod solve / info / plot / schema / demo`: contracts, bad inputs, outputs.

Most commands run in-process through `softrod.cli.main` (fast); a few run the installed entry
point to check real exit codes and that errors are one line on stderr without a traceback.
"""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import softrod
from softrod.cli import CliError, _demo, _static_cmds, main
from softrod.cli._resolve import find_robot, parse_vector, shipped_robots
from softrod.viz import disk_circles, disk_nodes, tendon_paths

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "robots"
TDCR3_PULL = "1,0,0,0,0,0,0,0,0"

#: Agreement of the CLI with the library: both run the same solver on the same inputs, so the
#: only difference is JSON round-tripping of floats (exact for repr-printed doubles).
SAME_SOLVER_ATOL = 1e-12
#: PCC vs shooting for a tendon-only, load-free single segment: both are exact, so they agree to
#: the shooting tolerance and the RK4 error on the default grid (< 1e-7 m for shipped robots).
PCC_EXACT_ATOL = 1e-7
#: Section frames come from RK4 integration of R' = R [u]x and stay orthonormal to ~1e-11, so
#: drawn disk radii and tendon offsets match the description to this relative tolerance.
FRAME_DRIFT_RTOL = 1e-9
#: With standalone_mode=False, click returns (not raises) the code of `typer.Exit(code)`.
MAIN_EXIT_HINT = "softrod.cli.main must return the code that app(...) returns for typer.Exit"


def run(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    """Run `softrod ARGS` in-process; returns (exit code, stdout, stderr)."""
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def entry_point() -> list[str]:
    """Command that runs the installed `softrod` script of this interpreter's environment."""
    script = Path(sys.executable).parent / "softrod"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from softrod.cli import _entry; _entry()"]


def run_process(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*entry_point(), *args], capture_output=True, text=True, timeout=120, cwd=ROOT
    )


# ---------------------------------------------------------------------------------------------
# solve


def test_solve_json_contract(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        capsys,
        "solve",
        "tdcr3",
        "--tensions",
        TDCR3_PULL,
        "--tip-force",
        "0,0.1,0",
        "--distributed-force",
        "0,0,-0.1",
        "--json",
    )
    assert code == 0, err
    assert out.count("\n") == 1  # exactly one JSON object on one line
    data = json.loads(out)
    assert {"tip_position", "success", "residual", "method", "robot"} <= data.keys()
    assert data["robot"] == "tdcr3"
    assert data["method"] == "shooting"
    assert data["success"] is True
    assert isinstance(data["residual"], float)
    # Same numbers as the library call.
    ref = softrod.solve_static(
        softrod.load_robot(EXAMPLES / "tdcr3.yaml"),
        [1, 0, 0, 0, 0, 0, 0, 0, 0],
        tip_force=[0, 0.1, 0],
        distributed_force=[0, 0, -0.1],
    )
    np.testing.assert_allclose(data["tip_position"], ref.tip_position, atol=SAME_SOLVER_ATOL)


def test_solve_path_and_shipped_name_agree(capsys: pytest.CaptureFixture[str]) -> None:
    _, by_name, _ = run(capsys, "solve", "tdcr3", "--tensions", TDCR3_PULL, "--json")
    _, by_path, _ = run(
        capsys, "solve", EXAMPLES / "tdcr3.yaml", "--tensions", TDCR3_PULL, "--json"
    )
    assert json.loads(by_name)["tip_position"] == json.loads(by_path)["tip_position"]


def test_solve_shape_and_loads(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        capsys,
        "solve",
        "softmanisim",
        "--tensions",
        "0.5,0,0,0",
        "--gravity",
        "0,0,-9.81",
        "--point-load",
        "0.035,0,0.2,0",
        "--point-load",
        "0.07,0,0,0,0,0,0.001",
        "--steps",
        "40",
        "--json",
        "--shape",
    )
    assert code == 0, err
    data = json.loads(out)
    positions = np.array(data["positions"])
    assert positions.shape == (len(data["s"]), 3)
    np.testing.assert_allclose(positions[-1], data["tip_position"])
    ref = softrod.solve_static(
        softrod.load_robot(EXAMPLES / "softmanisim.yaml"),
        [0.5, 0, 0, 0],
        gravity=[0, 0, -9.81],
        point_loads=[(0.035, [0, 0.2, 0]), (0.07, [0, 0, 0], [0, 0, 0.001])],
        steps=40,
    )
    np.testing.assert_allclose(data["tip_position"], ref.tip_position, atol=SAME_SOLVER_ATOL)


def test_solve_pcc_matches_shooting_without_external_load(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Cross-model oracle: tendons alone bend one segment into an exact arc."""
    tips = {}
    for method in ("shooting", "pcc"):
        code, out, err = run(
            capsys, "solve", "softmanisim", "--tensions", "2,0,1,0", "--method", method, "--json"
        )
        assert code == 0, err
        data = json.loads(out)
        assert data["method"] == method
        tips[method] = np.array(data["tip_position"])
    np.testing.assert_allclose(tips["pcc"], tips["shooting"], atol=PCC_EXACT_ATOL)


def test_solve_human_summary(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "solve", "tdcr3", "--tensions", TDCR3_PULL, "--tip-force", "0,0.1,0")
    assert code == 0
    assert "converged" in out
    assert "tip position [mm]" in out
    assert "tip force (0, 0.1, 0) N" in out


def _failed(result: softrod.StaticResult) -> softrod.StaticResult:
    return dataclasses.replace(
        result, success=False, status=1, load_scale=0.5, message="did not converge: test stand-in"
    )


def test_failed_solve_prints_json_then_exits_1(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = _static_cmds.solve_static
    monkeypatch.setattr(_static_cmds, "solve_static", lambda *a, **k: _failed(real(*a, **k)))
    code, out, err = run(capsys, "solve", "softmanisim", "--tensions", "1,0,0,0", "--json")
    data = json.loads(out)
    assert data["success"] is False
    assert err.strip() == "softrod: solve failed: did not converge: test stand-in"
    assert code == 1, MAIN_EXIT_HINT


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["solve", "no_such_robot.yaml"], "robot not found: 'no_such_robot.yaml'"),
        (["solve", "no_such_robot"], "shipped: "),
        (["solve", "tdcr3", "--tensions", "1,a"], "--tensions: value 2 of '1,a' is not a number"),
        (["solve", "softmanisim", "--tensions", "-1,0,0,0"], "must be >= 0 (tendons only pull)"),
        (["solve", "softmanisim", "--tensions", "1,0,0"], "--tensions needs 4 comma-separated"),
        (["solve", "softmanisim", "--method", "magic"], "--method must be one of shooting"),
        (["solve", "softmanisim", "--tip-force", "1,2"], "--tip-force needs 3"),
        (["solve", "softmanisim", "--gravity", "0,0,inf"], "--gravity: value 3"),
        (["solve", "softmanisim", "--point-load", "0.5,0,0,1"], "s must be in (0, 0.07] m"),
        (["solve", "softmanisim", "--point-load", "0.05,1"], "--point-load needs 4 or 7"),
        (["solve", "softmanisim", "--tensions", "1,0,0,0", "--lengths", "1,1,1,1"], "not both"),
        (["solve", "softmanisim", "--lengths", "0.07,0.07,0.07,0.07"], "stiffness"),
        (["solve", "tpu_rod", "--tensions", "1"], "has no tendons"),
        (["solve", "softmanisim", "--steps", "0"], "--steps must be >= 1"),
        (["solve", "softmanisim", "--steps", "many"], "'--steps'"),
        (["solve", "softmanisim", "--no-such-option"], "No such option"),
        (["plot", "softmanisim", "-o", "shape.xyz"], "-o/--output must end in an image suffix"),
        (["plot", "softmanisim", "--compare-pcc", "--method", "pcc"], "--compare-pcc"),
        (["info", "no_such_robot"], "robot not found"),
    ],
)
def test_bad_input_is_one_line_exit_2(
    capsys: pytest.CaptureFixture[str], args: list[str], expected: str
) -> None:
    code, out, err = run(capsys, *args)
    assert code == 2
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("softrod: error: ")
    assert expected in lines[0]


def test_invalid_robot_file_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "name: bad\nbackbone: {youngs_modulus: -1, poisson_ratio: 0.3, radius: 1e-3}\n"
        "segments: [{length: 0.1}]\n"
    )
    code, _, err = run(capsys, "solve", bad)
    assert code == 2
    assert len(err.splitlines()) == 1
    assert "youngs_modulus" in err


def test_entry_point_exit_codes_and_clean_errors() -> None:
    ok = run_process("solve", "examples/robots/tdcr3.yaml", "--tensions", TDCR3_PULL, "--json")
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["success"] is True
    assert ok.stderr == ""

    bad = run_process("solve", "tdcr3", "--tensions", "1,a")
    assert bad.returncode == 2
    assert bad.stdout == ""
    assert bad.stderr.count("\n") == 1
    assert bad.stderr.startswith("softrod: error: --tensions")
    assert "Traceback" not in bad.stderr


def test_entry_point_failed_solve_exits_1() -> None:
    """A tolerance below round-off cannot be met: the real solver reports failure."""
    res = run_process("solve", "softmanisim", "--tip-force", "0,50,0", "--rtol", "1e-30", "--json")
    assert json.loads(res.stdout)["success"] is False
    assert res.stderr.startswith("softrod: solve failed: ")
    assert "Traceback" not in res.stderr
    assert res.returncode == 1, MAIN_EXIT_HINT


def test_solve_path_avoids_heavy_imports() -> None:
    code = (
        "import sys\n"
        "from softrod.cli import main\n"
        f"main(['solve', 'tdcr3', '--tensions', '{TDCR3_PULL}', '--json'])\n"
        "print(','.join(m for m in ('matplotlib', 'mujoco', 'torch') if m in sys.modules))\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[-1] == ""


# ---------------------------------------------------------------------------------------------
# info and schema


def test_info_json_derived_quantities(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "info", "tdcr3", "--json")
    assert code == 0, err
    data = json.loads(out)
    E, nu, r, rho = 60.0e9, 0.33, 0.0005, 6450.0  # examples/robots/tdcr3.yaml
    L = 3 * 0.062166667
    G = E / (2 * (1 + nu))
    for seg in data["segments"]:
        assert seg["EI"] == pytest.approx(E * math.pi * r**4 / 4, rel=1e-12)
        assert seg["GJ"] == pytest.approx(G * math.pi * r**4 / 2, rel=1e-12)
        assert seg["EA"] == pytest.approx(E * math.pi * r**2, rel=1e-12)
        assert seg["GA"] == pytest.approx(G * math.pi * r**2, rel=1e-12)
    assert data["total_length"] == pytest.approx(L, rel=1e-12)
    assert data["mass"]["backbone"] == pytest.approx(rho * math.pi * r**2 * L, rel=1e-12)
    assert data["mass"]["disks"] == pytest.approx(30 * 0.00048, rel=1e-12)
    assert data["mass"]["total"] == pytest.approx(
        data["mass"]["backbone"] + data["mass"]["disks"], rel=1e-12
    )
    EI = E * math.pi * r**4 / 4
    assert data["buckling_load"] == pytest.approx(math.pi**2 * EI / (4 * L**2), rel=1e-12)
    tendons = data["tendons"]
    assert [t["segment"] for t in tendons] == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert [t["angle_deg"] for t in tendons[3:6]] == [40, 160, 280]
    assert all(t["offset"] == 0.0045 and t["stiffness"] == 20000.0 for t in tendons)


def test_info_buckling_matches_paper_value(capsys: pytest.CaptureFixture[str]) -> None:
    """ALGORITHMS.md A.5: EI = 2.209e-3 N m^2 and L = 0.07 m give P_cr = 1.11 N."""
    _, out, _ = run(capsys, "info", "softmanisim", "--json")
    assert json.loads(out)["buckling_load"] == pytest.approx(1.11, abs=0.005)


def test_info_tension_for_90_degrees_turns_the_tip_90_degrees(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, out, _ = run(capsys, "info", "tdcr3", "--json")
    tendon = json.loads(out)["tendons"][4]  # segment 2 (index 1), 160 deg
    tau = np.zeros(9)
    tau[4] = tendon["tension_90deg"]
    sol = softrod.solve_static(EXAMPLES / "tdcr3.yaml", tau, method="pcc")
    angle = math.degrees(math.acos(sol.tip_rotation[2, 2]))
    assert angle == pytest.approx(90.0, abs=1e-9)


def test_info_human_output(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "info", "softmanisim")
    assert code == 0
    for text in ("EI [N m²]", "buckling load", "tendon", "total"):
        assert text in out


def test_schema_stdout_and_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(capsys, "schema")
    assert code == 0
    schema = json.loads(out)
    assert "segments" in schema["properties"]
    target = tmp_path / "sub" / "robot.schema.json"
    code, _, _ = run(capsys, "schema", "-o", target)
    assert code == 0
    assert json.loads(target.read_text()) == schema


# ---------------------------------------------------------------------------------------------
# robot resolution


def test_shipped_robots_are_the_examples() -> None:
    """src/softrod/data/robots holds verbatim copies of examples/robots (re-copy on change)."""
    if not EXAMPLES.is_dir():
        pytest.skip("examples/robots not present (installed package)")
    shipped = shipped_robots()
    for example in sorted(EXAMPLES.glob("*.y*ml")):
        assert example.stem in shipped, f"copy {example} to src/softrod/data/robots/"
        assert shipped[example.stem].read_text() == example.read_text(), example.name


def test_find_robot_paths_and_names(tmp_path: Path) -> None:
    assert find_robot("tdcr3") == shipped_robots()["tdcr3"]
    assert find_robot("tdcr3.yaml") == shipped_robots()["tdcr3"]
    own = tmp_path / "tdcr3.yaml"
    own.write_text((EXAMPLES / "tdcr3.yaml").read_text())
    assert find_robot(own) == own  # an existing file wins over the shipped name
    with pytest.raises(CliError, match="neither a file nor a shipped robot"):
        find_robot(tmp_path / "missing" / "tdcr3")  # a folder part never means a shipped name


def test_parse_vector_messages() -> None:
    assert parse_vector("--x", " 1, -2.5 ,3e-1", 3) == [1.0, -2.5, 0.3]
    with pytest.raises(CliError, match=r"--x: value 2 of '1,,3' .* an empty entry"):
        parse_vector("--x", "1,,3")
    with pytest.raises(CliError, match="--x needs comma-separated numbers"):
        parse_vector("--x", "")


# ---------------------------------------------------------------------------------------------
# plot and drawing geometry


def test_plot_writes_png(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = tmp_path / "figs" / "shape.png"
    code, out, err = run(
        capsys,
        "plot",
        "softmanisim",
        "--tensions",
        "2,0,0,0",
        "--tip-force",
        "0,0.5,0",
        "--distributed-force",
        "1,1,1",
        "--compare-pcc",
        "-o",
        target,
        "--dpi",
        "60",
    )
    assert code == 0, err
    assert str(target) in out
    data = target.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 5000


def test_disk_and_tendon_geometry() -> None:
    """Disks are circles of the given radius in their section planes; each tendon runs from
    the base to its anchoring disk at its offset from the backbone."""
    spec = softrod.load_robot(EXAMPLES / "tdcr3.yaml")
    model = softrod.compile_model(spec)
    sol = softrod.solve_static(model, [2, 0, 0, 0, 1, 0, 0, 0, 0.5], gravity=[0, 0, -9.81])
    idx = disk_nodes(model, sol)
    np.testing.assert_allclose(sol.s[idx], model.disk_s, atol=1e-12)
    circles = disk_circles(model, sol)
    assert circles.shape[0] == 30
    centers = sol.positions[idx]
    tangents = sol.rotations[idx][:, :, 2]
    rel = circles - centers[:, None, :]
    np.testing.assert_allclose(
        np.einsum("dpk,dk->dp", rel, tangents), 0.0, atol=FRAME_DRIFT_RTOL * 0.005
    )
    np.testing.assert_allclose(np.linalg.norm(rel, axis=2), 0.005, rtol=FRAME_DRIFT_RTOL)
    paths = tendon_paths(model, sol)
    assert [p.shape[0] for p in paths] == [11] * 3 + [21] * 3 + [31] * 3
    for i, path in enumerate(paths):
        nodes = np.concatenate([[0], idx[model.disk_seg <= model.tendon_seg[i]]])
        np.testing.assert_allclose(
            np.linalg.norm(path - sol.positions[nodes], axis=1), 0.0045, rtol=FRAME_DRIFT_RTOL
        )
        seg = model.tendon_seg[i]
        assert sol.s[nodes[-1]] == pytest.approx(model.seg_start[seg] + model.seg_length[seg])


# ---------------------------------------------------------------------------------------------
# demo


@pytest.mark.slow
def test_demo_quick_writes_figures_and_summary(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out_dir = tmp_path / "demo"
    code, out, err = run(capsys, "demo", "-o", out_dir, "--quick", "--no-hooks")
    assert code == 0, err
    summary = json.loads((out_dir / "summary.json").read_text())
    assert summary["success"] is True
    assert summary["hooks"] == {"mujoco": "skipped: --no-hooks"}
    sms = summary["softmanisim"]
    assert sms["distributed_force"] == [1.0, 1.0, 1.0]
    assert all(c["success"] and c["solve_time_s"] > 0 for c in sms["cases"])
    # The benchmark loads move the tip far from the load-free arc; a zero tip force, only a bit.
    errors = {c["tip_force_magnitude"]: c["pcc_tip_error"] for c in sms["cases"]}
    assert errors[0.0] < 0.005 < errors[2.0]
    assert all(len(p["cases"]) == 2 for p in summary["tdcr3"]["panels"])
    for name in ("softmanisim_vs_pcc.png", "tdcr3_tendon_pulls.png"):
        assert (out_dir / name).read_bytes()[:4] == b"\x89PNG"
        assert str(out_dir / name) in out


def _fake_optional_demo(monkeypatch: pytest.MonkeyPatch, fn: object) -> None:
    monkeypatch.setattr(_demo, "OPTIONAL_DEMOS", (("fake", fn),))


@pytest.mark.slow
def test_demo_runs_hooks_and_records_their_output(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def run_demo(out: Path) -> dict[str, str]:
        out.mkdir(parents=True)
        (out / "made.txt").write_text("ok")
        return {"file": str(out / "made.txt")}

    _fake_optional_demo(monkeypatch, run_demo)
    code, out, err = run(capsys, "demo", "-o", tmp_path, "--quick")
    assert code == 0, err
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["hooks"] == {"fake": "ok"}
    assert summary["hook_outputs"]["fake"]["file"] == str(tmp_path / "fake" / "made.txt")


@pytest.mark.slow
def test_demo_hook_error_is_recorded_and_raised(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def run_demo(out: Path) -> None:
        raise ValueError("boom")

    _fake_optional_demo(monkeypatch, run_demo)
    with pytest.raises(RuntimeError, match="demo hook failed") as info:
        main(["demo", "-o", str(tmp_path), "--quick"])
    assert isinstance(info.value.__cause__, ValueError)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["hooks"] == {"fake": "failed: ValueError: boom"}
    assert summary["success"] is False


def test_optional_demo_skips_only_what_is_optional(tmp_path: Path) -> None:
    def needs_optional_dependency(out: Path) -> None:
        import softrod_test_no_such_dependency  # noqa: F401

    def has_internal_bug(out: Path) -> None:
        import softrod._no_such_internal_module  # noqa: F401

    status, _ = _demo._run_optional("x", needs_optional_dependency, tmp_path)
    assert status.startswith("skipped: ModuleNotFoundError")
    with pytest.raises(ModuleNotFoundError):
        _demo._run_optional("x", has_internal_bug, tmp_path)


@pytest.mark.parametrize(
    ("args", "module", "extra"),
    [
        (["mjcf", "tdcr3", "--links", "5"], "mujoco", "mujoco"),
        (["train", "Reach-v0", "--steps", "10"], "gymnasium", "rl"),
    ],
)
def test_a_missing_extra_is_one_line_naming_it(
    args: list[str], module: str, extra: str, tmp_path: Path, run_script
) -> None:
    # A core-only install (`pip install softrod`): the command names the extra to install.
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if name.partition('.')[0] == {module!r}:\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "from softrod.cli import main\n"
        f"sys.exit(main({args!r}))\n"
    )
    res = run_script(["-c", code], tmp_path, 120)
    assert res.returncode == 2, res.stderr
    assert (
        res.stderr
        == f"softrod: error: this command needs {module} (pip install 'softrod[{extra}]')\n"
    )


def test_the_extras_the_cli_names_exist() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    from softrod.cli import EXTRAS

    project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert set(EXTRAS.values()) <= set(project["project"]["optional-dependencies"])


#: The commands a core-only install runs (README, "Install without make"), each with its output
#: in the scratch folder.
CORE_COMMANDS = [
    ["solve", "tdcr3", "--tensions", TDCR3_PULL, "--json"],
    ["info", "tdcr3"],
    ["plot", "tdcr3", "--tensions", TDCR3_PULL, "--compare-pcc", "-o", "shape.png"],
    ["simulate", "tpu_rod", "--duration", "0.02"],
    ["track", "circle", "--loops", "0.05", "--json"],
    ["workspace", "tdcr3", "--samples", "20", "-o", "ws.png"],
    ["demo", "--quick", "-o", "demo"],
]


def test_core_commands_run_without_any_extra(tmp_path: Path, run_script) -> None:
    # Every optional module (softrod.cli.EXTRAS) made unimportable, as on `pip install softrod`.
    code = (
        "import sys\n"
        "from softrod.cli import EXTRAS, main\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.partition('.')[0] in EXTRAS:\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "for m in [m for m in sys.modules if m.partition('.')[0] in EXTRAS]:\n"
        "    del sys.modules[m]\n"
        f"for args in {CORE_COMMANDS!r}:\n"
        "    code = main(args)\n"
        "    assert code == 0, (args, code)\n"
    )
    res = run_script(["-c", code], tmp_path, 600)
    assert res.returncode == 0, res.stderr[-3000:]
    assert (tmp_path / "shape.png").exists() and (tmp_path / "ws.png").exists()
