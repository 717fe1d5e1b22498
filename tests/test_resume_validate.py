"""`softrod validate --resume`: a validation killed mid-run (SIGKILL) computes only the records
missing from its journal and reports exactly what an uninterrupted run reports."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time

import pytest

#: A tiny SoRoSim study: 3 shapes of the steel rod, static solver and a 10-link chain.
ARGS = ["validate", "sorosim", "--limit", "3", "--links", "10", "--releases", "0",
        "--lgvi-releases", "0", "--material", "steel", "--json"]  # fmt: skip
N_RECORDS = 6


def _run(args: list[str]) -> tuple[int, dict]:
    from softrod.cli import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main(args)
    return rc, (json.loads(buf.getvalue()) if rc == 0 else {})


def _records(path) -> list[str]:
    lines = path.read_text().splitlines()[1:]
    return [json.loads(line)["key"] for line in lines]


def test_killed_validation_resumes_with_only_missing_records(tmp_path):
    out = tmp_path / "killed"
    journal = out / "sorosim.records.jsonl"
    # The child's static solves sleep so the kill lands between records.
    code = (
        "import sys, time; import softrod.validate._sorosim as m; f = m.solve_static\n"
        "def slow(*a, **k):\n    time.sleep(0.3)\n    return f(*a, **k)\n"
        "m.solve_static = slow\nfrom softrod.cli import main\n"
        f"sys.exit(main({[*ARGS, '-o', str(out)]!r}))"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if journal.exists() and journal.read_text().count('"key"') >= 2:
                break
            time.sleep(0.02)
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    kept = _records(journal)
    assert 2 <= len(kept) < N_RECORDS
    assert not (out / "sorosim.json").exists()
    assert not [p for p in out.iterdir() if "partial" in p.name]

    rc, resumed = _run([*ARGS, "-o", str(out), "--resume"])
    assert rc == 0
    keys = _records(journal)
    # Every record once: the kept ones first, unchanged, then only the missing ones.
    assert len(keys) == len(set(keys)) == N_RECORDS and keys[: len(kept)] == kept

    rc, whole = _run([*ARGS, "-o", str(tmp_path / "whole")])
    assert rc == 0
    for obj in (resumed, whole):
        obj.pop("seconds"), obj.pop("report")
    assert resumed == whole
    assert json.loads((out / "sorosim.json").read_text())["summary"] == whole["summary"]


def test_validate_without_resume_starts_over(tmp_path):
    out = tmp_path / "v"
    args = ["validate", "sorosim", "--limit", "1", "--links", "10", "--releases", "0",
            "--lgvi-releases", "0", "--material", "steel", "--json", "-o", str(out)]  # fmt: skip
    assert _run(args)[0] == 0
    journal = out / "sorosim.records.jsonl"
    assert len(_records(journal)) == 2
    # A cut last record is repaired on --resume (recomputed), never read.
    journal.write_text(journal.read_text()[:-20])
    with pytest.warns(UserWarning, match="records.jsonl: dropped a record cut short"):
        assert _run([*args, "--resume"])[0] == 0
    assert len(_records(journal)) == 2
    # A bad argument leaves the journal alone.
    assert _run([*args[:-2], "--material", "gold", "-o", str(out)])[0] == 2
    assert len(_records(journal)) == 2
