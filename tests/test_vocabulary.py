"""Shared vocabulary (issue 14, item 5): the `Spec` base, dotted field paths, the one robot
resolver, `json_safe` and the one GL-backend chooser."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

import softrod
from softrod._gl import choose_gl_backend
from softrod.description import DescriptionError, Spec, find_robot, json_safe, set_path
from softrod.learn import BCConfig, SACConfig
from softrod.planning import EnvironmentSpec
from softrod.scene import SceneError, SceneSpec
from softrod.sweep import SweepSpec


class _Gain(Spec):
    spec_what: ClassVar[str] = "gain file"

    k: float = 1.0
    limit: float | None = 2.0  # None replaces a non-None default: must survive the round trip
    note: str | None = None


def test_every_spec_shares_the_base():
    for cls in (softrod.RobotSpec, SceneSpec, SweepSpec, EnvironmentSpec, SACConfig, BCConfig):
        assert issubclass(cls, Spec)
        assert cls.model_config["extra"] == "forbid"
        assert cls.model_config["allow_inf_nan"] is False


def test_yaml_round_trip_keeps_an_explicit_none():
    gain = _Gain(k=3.0, limit=None)
    assert "note" not in gain.to_dict()  # None by default: left out
    assert _Gain.from_yaml(gain.to_yaml()) == gain
    cfg = BCConfig(dedup_tol=None)
    assert BCConfig.from_yaml(cfg.to_yaml()) == cfg


def test_one_error_format(tmp_path: Path):
    with pytest.raises(DescriptionError, match=r"^invalid gain file \(dict\): k: input should be"):
        _Gain.load({"k": "x"})
    with pytest.raises(DescriptionError, match="gain file not found"):
        _Gain.load(tmp_path / "missing.yaml")
    with pytest.raises(DescriptionError, match=r"invalid gain file \(yaml\): k: input should be"):
        _Gain.from_yaml("k: .inf\n")
    with pytest.raises(DescriptionError, match="expected a mapping"):
        _Gain.from_yaml("- 1\n")
    # Scene errors are DescriptionErrors too; assignments are validated.
    with pytest.raises(SceneError, match="floor"):
        SceneSpec.load({"floor": [1]})
    gain = _Gain()
    with pytest.raises(ValueError):
        gain.k = math.nan


def test_field_paths_live_in_description():
    import softrod.sysid

    assert softrod.sysid.set_path is set_path
    data = {"segments": [{"length": 0.1}]}
    set_path(data, "segments[0].backbone.radius", 0.001)
    assert data == {"segments": [{"length": 0.1, "backbone": {"radius": 0.001}}]}


def test_find_robot_relative_to(tmp_path: Path):
    own = tmp_path / "tdcr3.yaml"
    own.write_text(softrod.load_robot(find_robot("tdcr3")).to_yaml())
    assert find_robot("tdcr3.yaml", relative_to=tmp_path) == own  # beside the file wins
    assert find_robot("tdcr3.yaml").parent.name == "robots"  # else the shipped one
    with pytest.raises(DescriptionError, match="neither a file nor a shipped robot"):
        find_robot("sub/tdcr3.yaml", relative_to=tmp_path)


def test_json_safe():
    value = {1: np.float64(np.nan), "a": (np.arange(2), Path("x")), "b": [math.inf, 2]}
    assert json.dumps(json_safe(value)) == '{"1": null, "a": [[0, 1], "x"], "b": [null, 2]}'


def test_gl_backend_choice(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MUJOCO_GL", "osmesa")
    assert choose_gl_backend(headless=True) == "osmesa"  # the user's choice wins
    monkeypatch.delenv("MUJOCO_GL")
    monkeypatch.setenv("DISPLAY", ":0")
    assert choose_gl_backend() is None  # a display: MuJoCo's default
    assert choose_gl_backend(headless=True) == "egl"
