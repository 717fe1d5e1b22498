"""Sweeps (issue 8, part 3): typed sweep files, stable point ids, Parquet results that survive a
kill and resume to exactly the full set of points, failing points recorded, process and Ray
backends giving the same results."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import softrod
import softrod.description
from softrod.sweep import (
    count_points,
    generate_points,
    load_sweep,
    point_id,
    read_results,
    run_sweep,
)

#: Running sweeps writes Parquet (pyarrow, extra `dist`); spec tests run without it.
needs_pyarrow = pytest.mark.skipif(
    importlib.util.find_spec("pyarrow") is None, reason="pyarrow not installed"
)

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "sweeps" / "static_grid.yaml"
#: Tip agreement between a sweep row and a direct solve [m]: the same solver on the same
#: inputs, so only round-off differs.
SAME_TIP = 1e-12


def _small_spec(n_e: int = 2, n_t: int = 6) -> dict:
    return {
        "name": "small",
        "robot": "tdcr3",
        "task": "static_tip",
        "inputs": {"tensions": [0.0] * 9},
        "design": {
            "kind": "grid",
            "parameters": {
                "backbone.youngs_modulus": {"values": [5.0e10, 7.0e10][:n_e]},
                "inputs.tensions.0": {"start": 0.0, "stop": 1.0, "num": n_t},
            },
        },
    }


def _write_task(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "tasks.py"
    path.write_text(textwrap.dedent(body))
    return path


def test_example_has_at_least_200_points_and_round_trips(tmp_path):
    spec = load_sweep(EXAMPLE)
    assert count_points(EXAMPLE) >= 200
    again = load_sweep(spec.model_dump(mode="json"))
    assert again == spec
    spec.to_yaml(tmp_path / "copy.yaml")
    assert load_sweep(tmp_path / "copy.yaml") == spec
    # "4.0e+10" and "60.0e9" (a string to YAML 1.1) are both numbers in a values list.
    values = load_sweep(
        {
            **_small_spec(),
            "design": {
                "kind": "grid",
                "parameters": {"backbone.youngs_modulus": {"values": ["60.0e9"]}},
            },
        }
    ).design.parameters
    assert values["backbone.youngs_modulus"].values == [6.0e10]  # type: ignore[union-attr]


def test_point_ids_are_stable_and_order_free():
    a = generate_points(load_sweep(EXAMPLE))
    b = generate_points(load_sweep(EXAMPLE))
    assert [p.point_id for p in a] == [p.point_id for p in b]
    assert len({p.point_id for p in a}) == len(a)
    assert point_id({"x": 1.0, "y": 2}) == point_id({"y": 2, "x": 1.0})
    assert point_id({"x": 1.0}) != point_id({"x": 1.0000001})
    # Spans: `step` includes `stop`; random designs repeat with their seed.
    span = load_sweep(
        {
            **_small_spec(),
            "design": {
                "kind": "grid",
                "parameters": {"inputs.tensions.0": {"start": 0.07, "stop": 0.18, "step": 0.005}},
            },
        }
    )
    assert count_points(span) == 23
    rnd = {
        **_small_spec(),
        "design": {
            "kind": "random",
            "n": 7,
            "parameters": {"inputs.tensions.0": {"low": 0.0, "high": 1.0}},
        },
    }
    assert [p.params for p in generate_points(load_sweep(rnd))] == [
        p.params for p in generate_points(load_sweep(rnd))
    ]


@pytest.mark.parametrize(
    ("patch", "needle"),
    [
        ({"design": {"kind": "grid", "parameters": {}}}, "at least one parameter"),
        ({"design": {"kind": "grid", "parameters": {"x": {"start": 0, "stop": 1}}}}, "num"),
        (
            {"design": {"kind": "random", "n": 0, "parameters": {"x": {"low": 0, "high": 1}}}},
            "n must be >= 1",
        ),
        ({"task_optionz": {}}, "task_optionz"),
    ],
)
def test_bad_sweep_files_name_the_field(patch, needle):
    with pytest.raises(ValueError, match=needle):
        load_sweep({**_small_spec(), **patch})


def test_with_fields_leaves_the_base_description_unchanged():
    """`with_fields` edits `model_dump()`'s dict in place without a deep copy: the dump must
    share no container with the description (tuples, segment lists, optional blocks)."""
    from softrod.description import find_robot, load_robot, with_fields

    base = load_robot(find_robot("tdcr3"))
    before = base.model_dump()
    new = with_fields(
        base,
        {
            "backbone.youngs_modulus": 6.0e10,
            "backbone.precurvature.0": 1.5,
            "segments.1.length": 0.07,
            "segments.0.tendons.2.offset": 0.004,
            "segments.1.backbone.youngs_modulus": 3.0e10,
        },
    )
    assert base.model_dump() == before
    assert new.backbone.youngs_modulus == 6.0e10 and new.backbone.precurvature[0] == 1.5
    assert new.segments[1].length == 0.07 and new.segments[0].tendons[2].offset == 0.004
    assert new.segments[1].backbone.youngs_modulus == 3.0e10


@needs_pyarrow
def test_process_sweep_matches_direct_solves(tmp_path):
    out = tmp_path / "r.parquet"
    summary = run_sweep(_small_spec(), out, workers=2, progress=False)
    assert summary.n_run == summary.n_points == 12 and summary.n_errors == 0
    rows = read_results(out).to_pylist()
    assert sorted(r["point_id"] for r in rows) == sorted(
        p.point_id for p in generate_points(load_sweep(_small_spec()))
    )
    robot = softrod.load_robot(ROOT / "examples" / "robots" / "tdcr3.yaml")
    row = max(rows, key=lambda r: (r["backbone.youngs_modulus"], r["inputs.tensions.0"]))
    direct = softrod.solve_static(
        softrod.description.with_fields(robot, {"backbone.youngs_modulus": 7.0e10}),
        tensions=[1.0] + [0.0] * 8,
    )
    tip = np.array([row["tip_x"], row["tip_y"], row["tip_z"]])
    np.testing.assert_allclose(tip, direct.tip_position, atol=SAME_TIP)


@needs_pyarrow
def test_failing_points_are_recorded_and_the_sweep_goes_on(tmp_path):
    task = _write_task(
        tmp_path,
        """
        def task(point):
            x = point.inputs["x"]
            if x % 3 == 0:
                raise RuntimeError(f"x = {x} is a multiple of 3")
            return {"y": x * x, "vec": [x, 2 * x]}
    """,
    )
    spec = {
        "name": "errs",
        "task": f"{task.name}:task",
        "inputs": {"x": 0},
        "design": {"kind": "grid", "parameters": {"inputs.x": {"values": list(range(10))}}},
    }
    out = tmp_path / "e.parquet"
    summary = run_sweep(spec, out, workers=1, progress=False, spec_dir=tmp_path)
    assert summary.n_run == 10 and summary.n_errors == 4
    rows = {r["inputs.x"]: r for r in read_results(out).to_pylist()}
    assert rows[3]["status"] == "error" and "multiple of 3" in rows[3]["error"]
    assert rows[3]["y"] is None
    assert rows[4]["status"] == "ok" and rows[4]["y"] == 16 and rows[4]["vec"] == [4, 8]
    # Resume runs nothing; --retry-errors runs only the failed ones again.
    again = run_sweep(spec, out, resume=True, workers=1, progress=False, spec_dir=tmp_path)
    assert again.n_run == 0 and again.n_skipped == 10
    retry = run_sweep(
        spec, out, resume=True, retry_errors=True, workers=1, progress=False, spec_dir=tmp_path
    )
    assert retry.n_run == 4 and len(read_results(out)) == 10


@needs_pyarrow
def test_a_point_that_kills_its_worker_fails_alone_and_the_sweep_goes_on(tmp_path):
    # A point that ends its worker process (a segfault in native code, an OOM kill) breaks the
    # whole process pool: the points in flight are run again one at a time, so only the culprit
    # is recorded as failed, and every point appears exactly once.
    task = _write_task(
        tmp_path,
        """
        import os

        def task(point):
            x = point.inputs["x"]
            if x == 7:
                os._exit(3)
            return {"y": x * x}
    """,
    )
    spec = {
        "name": "dies",
        "task": f"{task.name}:task",
        "inputs": {"x": 0},
        "design": {"kind": "grid", "parameters": {"inputs.x": {"values": list(range(20))}}},
        "chunk_size": 4,
    }
    out = tmp_path / "d.parquet"
    summary = run_sweep(spec, out, workers=2, progress=False, spec_dir=tmp_path)
    assert summary.n_run == 20 and summary.n_errors == 1
    rows = read_results(out).to_pylist()
    assert sorted(r["inputs.x"] for r in rows) == list(range(20))
    by_x = {r["inputs.x"]: r for r in rows}
    assert by_x[7]["status"] == "error" and by_x[7]["error"].startswith("WorkerDied")
    assert all(by_x[x]["status"] == "ok" and by_x[x]["y"] == x * x for x in by_x if x != 7)


def test_a_worker_that_dies_between_tasks_does_not_stop_the_sweep():
    # The pool breaks with nothing of this sweep in flight (a worker killed while idle, e.g. by
    # the OOM killer): the next chunk goes to a fresh pool. White-box: the backend's pool.
    from softrod.sweep._run import _job, _ProcessBackend

    sweep = load_sweep(_small_spec(1, 3))
    job = _job(sweep, ROOT)
    backend = _ProcessBackend(1)
    try:
        for pid in list(backend.pool._processes):
            os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 30.0
        while not backend.pool._broken and time.monotonic() < deadline:
            time.sleep(0.01)
        assert backend.pool._broken
        chunk = [(p.index, p.point_id, p.params) for p in generate_points(sweep)]
        rows, rest = backend.wait({backend.submit(job, chunk)}, timeout=60.0)
        assert not rest and [r["status"] for r in rows[0]] == ["ok"] * 3
    finally:
        backend.close(cancel=True)


@needs_pyarrow
def test_a_script_without_a_main_guard_gets_one_clear_error(tmp_path, run_script):
    # Pool workers start by importing the main script; one that sweeps at import time would
    # start the sweep again in every worker. The user gets the cause, not a broken pool.
    script = tmp_path / "sweep_script.py"
    script.write_text(
        "from softrod.sweep import run_sweep\n"
        f"run_sweep({_small_spec(1, 2)!r}, 'out.parquet', workers=2, progress=False)\n"
    )
    proc = run_script([script], tmp_path, 120)
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("RuntimeError: sweep: the worker processes ended while starting")
    assert 'if __name__ == "__main__":' in last
    # The workers ended quietly: the parent's traceback is the only one.
    assert proc.stderr.count("Traceback") == 1
    assert not (tmp_path / "out.parquet").exists()


#: Interpreters that read a results file and exit: reading through a Python file object let
#: pyarrow's reader threads abort the interpreter at exit in about half of the runs
#: (apache/arrow#34314), so 10 clean exits in a row would happen by chance with p < 1e-3.
CLEAN_EXITS = 10


@needs_pyarrow
def test_reading_results_leaves_a_clean_interpreter_exit(tmp_path, run_script):
    out = tmp_path / "r.parquet"
    run_sweep(_small_spec(1, 2), out, workers=1, progress=False)
    code = f"from softrod.sweep import read_results; assert len(read_results({str(out)!r})) == 2"
    for _ in range(CLEAN_EXITS):
        proc = run_script(["-c", code], tmp_path)
        assert proc.returncode == 0, proc.stderr[-500:]


@needs_pyarrow
def test_existing_output_is_never_overwritten(tmp_path):
    out = tmp_path / "r.parquet"
    run_sweep(_small_spec(1, 2), out, workers=1, progress=False)
    with pytest.raises(ValueError, match="--resume"):
        run_sweep(_small_spec(1, 2), out, workers=1, progress=False)
    other = {**_small_spec(1, 2), "inputs": {"tensions": [0.1] * 9}}
    with pytest.raises(ValueError, match="different sweep"):
        run_sweep(other, out, resume=True, workers=1, progress=False)
    # Extending the design of the same sweep is a resume: only new points run.
    more = run_sweep(_small_spec(2, 2), out, resume=True, workers=1, progress=False)
    assert more.n_skipped == 2 and more.n_run == 2


@needs_pyarrow
def test_killed_sweep_resumes_to_exactly_all_points(tmp_path):
    """SIGKILL the whole sweep (driver and workers) mid-run, then --resume: every point once."""
    task = _write_task(
        tmp_path,
        """
        import time
        def task(point):
            time.sleep(0.03)
            return {"y": point.inputs["x"] ** 2}
    """,
    )
    spec_path = tmp_path / "slow.yaml"
    spec_path.write_text(
        textwrap.dedent(f"""
        name: slow
        task: {task.name}:task
        inputs: {{x: 0}}
        chunk_size: 2
        design:
          kind: grid
          parameters:
            inputs.x: {{start: 0, stop: 119, num: 120, integer: true}}
    """)
    )
    out = tmp_path / "slow.parquet"
    code = (
        "import sys; import softrod.cli._sysid_cmds; from softrod.cli import main; "
        f"sys.exit(main(['sweep', {str(spec_path)!r}, '-o', {str(out)!r}, '--workers', '2', "
        "'--no-progress']))"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        n_before = 0
        while time.monotonic() < deadline and proc.poll() is None:
            if out.exists():
                n_before = len(read_results(out))
                if n_before >= 10:
                    break
            time.sleep(0.05)
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert 10 <= n_before < 120
    kept = read_results(out).to_pylist()
    assert len(kept) < 120
    summary = run_sweep(spec_path, out, resume=True, workers=2, progress=False)
    rows = read_results(out).to_pylist()
    ids = [r["point_id"] for r in rows]
    expected = {p.point_id for p in generate_points(load_sweep(spec_path))}
    assert len(ids) == len(set(ids)) == 120
    assert set(ids) == expected
    assert summary.n_skipped == len(kept) and summary.n_run == 120 - len(kept)
    # Rows written before the kill are kept as they were.
    by_id = {r["point_id"]: r for r in rows}
    assert all(by_id[r["point_id"]]["worker"] == r["worker"] for r in kept)
    assert all(r["y"] == r["inputs.x"] ** 2 for r in rows)


def test_cli_sweep_count_and_errors(tmp_path, capsys):
    import softrod.cli._sysid_cmds  # noqa: F401
    from softrod.cli import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["sweep", str(EXAMPLE), "--count"]) == 0
    assert int(buf.getvalue()) == count_points(EXAMPLE)
    assert main(["sweep", str(EXAMPLE)]) == 2
    assert "--output" in capsys.readouterr().err
    assert (
        main(["sweep", str(EXAMPLE), "-o", str(tmp_path / "x.parquet"), "--backend", "dask"]) == 2
    )
    assert "--backend" in capsys.readouterr().err
    assert main(["sweep", str(EXAMPLE), "-o", str(tmp_path / "x.csv")]) == 2
    assert ".parquet" in capsys.readouterr().err


@needs_pyarrow
def test_ray_backend_matches_process_backend(tmp_path):
    ray = pytest.importorskip("ray")
    spec = _small_spec(1, 6)
    run_sweep(spec, tmp_path / "p.parquet", workers=2, progress=False)
    # address="local": a fresh instance of this test's own. ray.init() alone joins the cluster
    # named in /tmp/ray/ray_current_cluster (the last `ray start` of any user of the machine);
    # `make test` runs two workers, so other Ray clusters may be up meanwhile.
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        summary = run_sweep(spec, tmp_path / "r.parquet", backend="ray", progress=False)
    finally:
        ray.shutdown()
    assert summary.backend == "ray" and summary.n_run == 6 and summary.n_errors == 0
    p = {r["point_id"]: r for r in read_results(tmp_path / "p.parquet").to_pylist()}
    r = {r["point_id"]: r for r in read_results(tmp_path / "r.parquet").to_pylist()}
    assert p.keys() == r.keys()
    for pid in p:
        assert p[pid]["tip_x"] == pytest.approx(r[pid]["tip_x"], abs=SAME_TIP)
    assert json.dumps(summary.to_dict())


PINCH_EXAMPLE = ROOT / "examples" / "sweeps" / "pinch_grasp.yaml"


def test_pinch_grasp_example_is_somos_grid():
    """SoMo's study axes (ALGORITHMS §B.5): DSR 0-0.5 by 0.05, six widths, centring 70-180 mm
    by 5 mm."""
    points = generate_points(load_sweep(PINCH_EXAMPLE))
    assert len(points) == 11 * 6 * 23 == count_points(PINCH_EXAMPLE)
    axes = {
        k: sorted({round(p.params[f"inputs.{k}"], 6) for p in points})
        for k in ("distal_ratio", "object_width", "centering")
    }
    assert axes["distal_ratio"] == pytest.approx(np.arange(11) * 0.05)
    assert axes["object_width"] == pytest.approx([0.01, 0.02, 0.04, 0.06, 0.10, 0.12])
    assert axes["centering"] == pytest.approx(0.07 + np.arange(23) * 0.005)


@needs_pyarrow
def test_grasp_trial_task_runs_in_a_sweep(tmp_path):
    """Two points of the pinch-grasp study through the sweep runner: one row each, with the
    grasp columns (the classification itself is tested in tests/test_somo.py)."""
    pytest.importorskip("mujoco")
    spec = load_sweep(PINCH_EXAMPLE).model_dump(mode="json")
    spec["design"]["parameters"] = {
        "inputs.distal_ratio": {"values": [0.4]},
        "inputs.object_width": {"values": [0.02]},
        "inputs.centering": {"values": [0.12, 0.18]},
    }
    out = tmp_path / "pinch.parquet"
    summary = run_sweep(spec, out, workers=1, progress=False)
    assert summary.n_run == 2 and summary.n_errors == 0
    rows = sorted(read_results(out).to_pylist(), key=lambda r: r["inputs.centering"])
    assert [r["grasp"] for r in rows] == ["pinch", "none"]
    assert rows[0]["lifted"] and rows[0]["object_rise"] > 0.8 * 0.075


def test_huge_designs_are_refused_at_once_with_their_size(tmp_path, capsys):
    # A 1e9-point grid once hung `--count` (9.4 GB in 30 s): it is refused before anything is built.
    huge = {
        "robot": "tdcr3",
        "design": {
            "kind": "grid",
            "parameters": {
                "inputs.tensions.0": {"start": 0.0, "stop": 1.0, "num": 1000},
                "inputs.tensions.1": {"start": 0.0, "stop": 1.0, "num": 1000},
                "inputs.tensions.2": {"start": 0.0, "stop": 1.0, "num": 1000},
            },
        },
    }
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="1,000,000,000 points"):
        load_sweep(huge)
    with pytest.raises(ValueError, match="n must be <="):
        load_sweep({"design": {"kind": "random", "n": 10**9, "parameters": {"a": {"values": [1]}}}})
    assert time.perf_counter() - t0 < 5.0
    import softrod.cli._sysid_cmds  # noqa: F401
    from softrod.cli import main

    path = tmp_path / "huge.yaml"
    import yaml

    path.write_text(yaml.safe_dump(huge))
    assert main(["sweep", str(path), "--count"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "1,000,000,000" in err[0]


def test_count_is_computed_without_building_the_points(capsys):
    # Duplicated values (1 and 1.0 are different points, 0.5 twice is one) and random designs
    # whose choices repeat: the count agrees with the built points.
    grid = {
        "design": {
            "kind": "grid",
            "parameters": {
                "inputs.a": {"values": [1, 1.0, 0.5, 0.5, "x"]},
                "inputs.b": {"start": 0.0, "stop": 1.0, "step": 0.25},
            },
        }
    }
    rand = {
        "design": {
            "kind": "random",
            "n": 200,
            "parameters": {
                "inputs.a": {"values": [1, 2, 2, 3]},
                "inputs.b": {"low": 0, "high": 3, "integer": True},
            },
        }
    }
    for spec in (grid, rand):
        assert count_points(spec) == len(generate_points(load_sweep(spec)))
    # The largest design a sweep takes is counted at once (building it took ~20 s).
    big = {
        "design": {
            "kind": "grid",
            "parameters": {
                f"inputs.t{k}": {"start": 0.0, "stop": 1.0, "num": 100} for k in range(3)
            },
        }
    }
    t0 = time.perf_counter()
    assert count_points(big) == 1_000_000
    assert time.perf_counter() - t0 < 2.0


def test_random_design_extended_runs_only_new_points(tmp_path):
    def spec(n: int) -> dict:
        return {
            "name": "rnd",
            "task": "static_tip",
            "robot": "tdcr3",
            "inputs": {"tensions": [0.0] * 9},
            "design": {
                "kind": "random",
                "n": n,
                "parameters": {
                    "inputs.tensions.0": {"low": 0.0, "high": 1.0},
                    "backbone.youngs_modulus": {"values": [5.0e10, 6.0e10, 7.0e10]},
                },
            },
        }

    small = generate_points(load_sweep(spec(4)))
    large = generate_points(load_sweep(spec(9)))
    assert [p.params for p in large[:4]] == [p.params for p in small]
    if importlib.util.find_spec("pyarrow") is None:
        return
    out = tmp_path / "r.parquet"
    run_sweep(spec(4), out, workers=1, progress=False)
    more = run_sweep(spec(9), out, resume=True, workers=1, progress=False)
    assert (more.n_skipped, more.n_run) == (4, 5)
    index = read_results(out).column("index").to_pylist()
    assert sorted(index) == list(range(9))


@needs_pyarrow
def test_a_column_that_changes_type_is_kept_and_resumable(tmp_path, capsys):
    task = _write_task(
        tmp_path,
        """
        def task(point):
            x = point.inputs["x"]
            return {"y": "small" if x < 2 else x * 1.5}
    """,
    )

    def spec(values: list[int]) -> dict:
        return {
            "name": "mixed",
            "task": f"{task.name}:task",
            "inputs": {"x": 0},
            "design": {"kind": "grid", "parameters": {"inputs.x": {"values": values}}},
        }

    # Text then numbers within one run, and numbers appended to a text column on resume.
    out = tmp_path / "m.parquet"
    s1 = run_sweep(spec([0, 1, 2]), out, workers=1, progress=False, spec_dir=tmp_path)
    assert s1.n_errors == 0
    s2 = run_sweep(
        spec([0, 1, 2, 3, 4]), out, resume=True, workers=1, progress=False, spec_dir=tmp_path
    )
    assert (s2.n_run, s2.n_errors) == (2, 0)
    rows = {r["inputs.x"]: r["y"] for r in read_results(out).to_pylist()}
    assert rows == {0: "small", 1: "small", 2: "3.0", 3: "4.5", 4: "6.0"}
    # Numbers first, then text appended on resume: the same.
    out2 = tmp_path / "n.parquet"
    run_sweep(spec([2, 3]), out2, workers=1, progress=False, spec_dir=tmp_path)
    run_sweep(spec([2, 3, 0]), out2, resume=True, workers=1, progress=False, spec_dir=tmp_path)
    rows2 = {r["inputs.x"]: r["y"] for r in read_results(out2).to_pylist()}
    assert rows2 == {2: "3.0", 3: "4.5", 0: "small"}


@needs_pyarrow
def test_cli_sweep_where_every_point_failed_exits_1(tmp_path, capsys):
    task = _write_task(
        tmp_path,
        """
        def task(point):
            raise RuntimeError("always")
    """,
    )
    spec = tmp_path / "fail.yaml"
    import yaml

    spec.write_text(
        yaml.safe_dump(
            {
                "name": "fail",
                "task": f"{task.name}:task",
                "inputs": {"x": 0},
                "design": {"kind": "grid", "parameters": {"inputs.x": {"values": [1, 2]}}},
            }
        )
    )
    import softrod.cli._sysid_cmds  # noqa: F401
    from softrod.cli import main

    out = tmp_path / "f.parquet"
    assert main(["sweep", str(spec), "-o", str(out), "--workers", "1", "--no-progress"]) == 1
    assert "all 2 points failed" in capsys.readouterr().err
    assert len(read_results(out)) == 2


@needs_pyarrow
def test_sweep_bench_reports_rate_and_efficiency():
    from softrod.bench import run_sweep_bench

    out = run_sweep_bench(n_points=20, workers=[1])
    assert out["sweep.process.w1.points_per_s"] > 0 and out["sweep.process.w1.errors"] == 0
    assert 0.0 < out["sweep.process.w1.efficiency"] <= 1.0


def test_chunk_size_follows_the_measured_point_cost():
    from softrod.sweep._run import CHUNK_SECONDS, _ChunkSizer

    sizer = _ChunkSizer(None, workers=2)
    assert sizer.size(10_000) == 1  # a probe before any cost is known
    sizer.observe([{"elapsed_s": 1.0}] + [{"elapsed_s": 1e-3}] * 4)  # warm-up outlier first
    assert sizer.size(100_000) == round(CHUNK_SECONDS / 1e-3)  # ~0.5 s of work
    assert sizer.size(800) == 100  # a quarter of each worker's share of what is left
    assert sizer.size(10) == 10  # never less than 0.05 s of work (here: all that is left)
    assert _ChunkSizer(7, workers=2).size(10_000) == 7  # the sweep's chunk_size wins
