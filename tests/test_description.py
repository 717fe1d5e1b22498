"""Robot description format: loading, round trips, schema and error messages."""

from __future__ import annotations

import copy
import json
import math
import re

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import softrod
from reference.robots import EXAMPLES_DIR, soft_rod_dict, tdcr3_dict
from softrod.description import DescriptionError, RobotSpec, robot_json_schema

EXAMPLE_FILES = sorted(EXAMPLES_DIR.glob("*.yaml"))
#: Hypothesis settings: a few dozen cheap cases each (pydantic validation only).
PROPERTY_SETTINGS = settings(max_examples=40, deadline=None)


def _minimal() -> dict:
    """Two segments; the second segment's tendon passes the first segment's disks."""
    return {
        "name": "mini",
        "backbone": {"youngs_modulus": 60e9, "poisson_ratio": 0.33, "radius": 0.0005},
        "segments": [
            {
                "length": 0.1,
                "disks": 5,
                "disk_radius": 0.005,
                "tendons": [{"offset": 0.004, "angle_deg": 0.0}],
            },
            {
                "length": 0.1,
                "disks": 5,
                "disk_radius": 0.006,
                "tendons": [{"offset": 0.0045, "angle_deg": 90.0}],
            },
        ],
    }


def _set(d: dict, path: tuple, value) -> dict:
    out = copy.deepcopy(d)
    node = out
    for key in path[:-1]:
        node = node[key]
    if value is _DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return out


_DELETE = object()


# ---------------------------------------------------------------------------------------------
# Loading and round trips


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.stem)
def test_examples_load_and_round_trip(path, tmp_path):
    spec = softrod.load_robot(path)
    assert isinstance(spec, RobotSpec)
    # YAML text and plain dict read back to an equal spec; so does a written file and JSON.
    assert softrod.load_robot(yaml.safe_load(spec.to_yaml())) == spec
    assert softrod.load_robot(spec.to_dict()) == spec
    out = tmp_path / "robot.yaml"
    spec.to_yaml(out)
    assert softrod.load_robot(out) == spec
    js = tmp_path / "robot.json"
    js.write_text(json.dumps(spec.to_dict()))
    assert softrod.load_robot(js) == spec
    assert softrod.load_robot(spec) is spec


def test_example_counts_and_derived_quantities():
    spec = softrod.load_robot(EXAMPLES_DIR / "tdcr3.yaml")
    assert spec.n_segments == 3 and spec.n_tendons == 9
    assert spec.total_length == pytest.approx(3 * 0.062166667)
    # Input order: segment by segment, tendons in listed order.
    assert [j for j, _ in spec.tendon_list()] == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert [t.angle_deg for _, t in spec.tendon_list()][3:6] == [40, 160, 280]
    bb = spec.backbone
    r, E, nu = 0.0005, 60e9, 0.33
    assert bb.I == pytest.approx(math.pi * r**4 / 4, rel=1e-15)
    assert bb.J == pytest.approx(math.pi * r**4 / 2, rel=1e-15)
    assert bb.A == pytest.approx(math.pi * r**2, rel=1e-15)
    assert bb.G == pytest.approx(E / (2 * (1 + nu)), rel=1e-15)


def test_defaults():
    spec = softrod.load_robot(
        {
            "backbone": {"youngs_modulus": 1e9, "shear_modulus": 4e8, "radius": 0.001},
            "segments": [{"length": 0.2}],
        }
    )
    assert spec.model == "kirchhoff"
    assert spec.base.position == (0.0, 0.0, 0.0)
    assert spec.base.quaternion == (1.0, 0.0, 0.0, 0.0)
    seg = spec.segments[0]
    assert seg.disks == 0 and seg.disk_mass == 0.0 and seg.tendons == []
    assert spec.backbone.density == 0.0
    assert spec.backbone.precurvature == (0.0, 0.0, 0.0)


@pytest.mark.parametrize("make", [tdcr3_dict, soft_rod_dict], ids=["tdcr3", "soft_rod"])
def test_inline_robots_round_trip(make):
    spec = softrod.load_robot(make())
    again = softrod.load_robot(yaml.safe_load(spec.to_yaml()))
    assert again == spec
    assert again.to_dict() == spec.to_dict()


def test_segment_override_replaces_section():
    spec = softrod.load_robot(soft_rod_dict())
    seg1 = spec.segment_backbone(1)
    assert seg1.radius == 0.004 and seg1.youngs_modulus == 3.0e7
    assert seg1.poisson_ratio == spec.backbone.poisson_ratio  # not overridden: inherited
    assert spec.segment_backbone(0) == spec.backbone


def test_json_schema():
    schema = robot_json_schema()
    json.dumps(schema)  # serializable
    props = schema["properties"]
    assert {"name", "model", "backbone", "base", "segments"} <= props.keys()
    assert "segments" in schema["required"] and "backbone" in schema["required"]
    text = json.dumps(schema)
    for field in ("youngs_modulus", "poisson_ratio", "disk_radius", "angle_deg", "offset"):
        assert field in text
    assert "kirchhoff" in text and "cosserat" in text


# ---------------------------------------------------------------------------------------------
# Errors: one DescriptionError (a ValueError) naming the field path and the value

BAD_DESCRIPTIONS = {
    "negative length": (
        ("segments", 0, "length"),
        -0.1,
        r"segments\[0\]\.length must be > 0, got -0\.1",
    ),
    "zero length": (("segments", 1, "length"), 0.0, r"segments\[1\]\.length must be > 0, got 0\.0"),
    "NaN length": (("segments", 0, "length"), math.nan, r"segments\[0\]\.length.*finite.*nan"),
    "inf modulus": (
        ("backbone", "youngs_modulus"),
        math.inf,
        r"backbone\.youngs_modulus.*finite.*inf",
    ),
    "negative modulus": (
        ("backbone", "youngs_modulus"),
        -1.0,
        r"backbone\.youngs_modulus must be > 0, got -1\.0",
    ),
    "zero radius": (("backbone", "radius"), 0.0, r"backbone\.radius must be > 0, got 0\.0"),
    "negative disk radius": (
        ("segments", 0, "disk_radius"),
        -0.005,
        r"segments\[0\]\.disk_radius must be > 0, got -0\.005",
    ),
    "both nu and G": (
        ("backbone", "shear_modulus"),
        2e10,
        r"backbone.*exactly one of poisson_ratio and shear_modulus"
        r".*poisson_ratio=0\.33.*shear_modulus=2",
    ),
    "neither nu nor G": (
        ("backbone", "poisson_ratio"),
        _DELETE,
        r"backbone.*exactly one of poisson_ratio and shear_modulus",
    ),
    "poisson ratio out of range": (
        ("backbone", "poisson_ratio"),
        0.7,
        r"backbone\.poisson_ratio.*0\.7",
    ),
    "unknown top-level field": (("colour",), "red", r"colour.*not permitted.*red"),
    "unknown segment field": (
        ("segments", 1, "lenght"),
        0.1,
        r"segments\[1\]\.lenght.*not permitted",
    ),
    "unknown tendon field": (
        ("segments", 0, "tendons", 0, "angle"),
        10.0,
        r"segments\[0\]\.tendons\[0\]\.angle.*not permitted",
    ),
    "tendon outside its disks": (
        ("segments", 0, "tendons", 0, "offset"),
        0.006,
        r"segments\[0\]\.tendons\[0\]\.offset must be <= "
        r"segments\[0\]\.disk_radius \(0\.005\), got 0\.006",
    ),
    "tendon outside a proximal segment's disks": (
        ("segments", 1, "tendons", 0, "offset"),
        0.0055,
        r"segments\[1\]\.tendons\[0\]\.offset must be <= "
        r"segments\[0\]\.disk_radius \(0\.005\), got 0\.0055",
    ),
    "tendons without disks": (
        ("segments", 0, "disks"),
        0,
        r"segments\[0\]\.disks must be >= 1.*got 0",
    ),
    "tendons passing a disk-less segment": (
        ("segments", 0),
        {"length": 0.1},
        r"segments\[0\]\.disks must be >= 1 to guide tendon segments\[1\]\.tendons\[0\], got 0",
    ),
    "zero quaternion": (
        ("base",),
        {"quaternion": [0, 0, 0, 0]},
        r"base\.quaternion must be non-zero.*\[0\.0, 0\.0, 0\.0, 0\.0\]",
    ),
    "short quaternion": (("base",), {"quaternion": [1, 0, 0]}, r"base\.quaternion"),
    "bad model": (("model",), "euler", r"model.*'kirchhoff' or 'cosserat'.*euler"),
    "no segments": (("segments",), [], r"segments.*at least 1"),
    "negative tendon offset": (
        ("segments", 0, "tendons", 0, "offset"),
        -0.001,
        r"segments\[0\]\.tendons\[0\]\.offset must be > 0, got -0\.001",
    ),
    "zero tendon stiffness": (
        ("segments", 0, "tendons", 0, "stiffness"),
        0.0,
        r"segments\[0\]\.tendons\[0\]\.stiffness must be > 0, got 0\.0",
    ),
    "negative density": (
        ("backbone", "density"),
        -1.0,
        r"backbone\.density must be >= 0, got -1\.0",
    ),
    "negative disk mass": (
        ("segments", 0, "disk_mass"),
        -0.1,
        r"segments\[0\]\.disk_mass must be >= 0, got -0\.1",
    ),
    "NaN angle": (
        ("segments", 0, "tendons", 0, "angle_deg"),
        math.nan,
        r"segments\[0\]\.tendons\[0\]\.angle_deg.*nan",
    ),
    "text length": (("segments", 0, "length"), "long", r"segments\[0\]\.length.*'long'"),
    "bad override": (
        ("segments", 1, "backbone"),
        {"radius": -1.0},
        r"segments\[1\]\.backbone.*radius must be > 0, got -1\.0",
    ),
    "NaN precurvature": (
        ("backbone", "precurvature"),
        [0.0, math.nan, 0.0],
        r"backbone\.precurvature\[1\].*nan",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_DESCRIPTIONS))
def test_bad_description(case):
    path, value, pattern = BAD_DESCRIPTIONS[case]
    with pytest.raises(DescriptionError, match=pattern) as info:
        softrod.load_robot(_set(_minimal(), path, value))
    assert isinstance(info.value, ValueError)
    message = str(info.value)
    assert message.startswith("invalid robot description (dict): ")
    assert "\n" not in message


def test_missing_and_malformed_files(tmp_path):
    with pytest.raises(DescriptionError, match="not found.*nope.yaml"):
        softrod.load_robot(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("segments: [length: 0.1\n  oops: {")
    with pytest.raises(DescriptionError, match=re.escape(f"cannot parse {bad}")):
        softrod.load_robot(bad)
    top = tmp_path / "list.yaml"
    top.write_text("- 1\n- 2\n")
    with pytest.raises(DescriptionError, match="expected a mapping at the top level, got list"):
        softrod.load_robot(top)
    # The file's path is the source named in field errors.
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text(yaml.safe_dump(_set(_minimal(), ("segments", 0, "length"), -1.0)))
    with pytest.raises(DescriptionError, match=re.escape(f"({wrong}): segments[0].length")):
        softrod.load_robot(wrong)


def test_several_errors_are_summarized_in_one_message():
    d = _set(_minimal(), ("segments", 0, "length"), -1.0)
    d = _set(d, ("model",), "euler")
    with pytest.raises(DescriptionError) as info:
        softrod.load_robot(d)
    message = str(info.value)
    assert "\n" not in message
    assert "model" in message and "segments[0].length" in message


# ---------------------------------------------------------------------------------------------
# Property-style checks


@PROPERTY_SETTINGS
@given(
    seg=st.integers(0, 1),
    length=st.one_of(
        st.floats(max_value=0.0, allow_nan=False),
        st.just(math.nan),
        st.just(math.inf),
        st.just(-math.inf),
    ),
)
def test_any_non_positive_or_non_finite_length_is_rejected(seg, length):
    with pytest.raises(DescriptionError) as info:
        softrod.load_robot(_set(_minimal(), ("segments", seg, "length"), length))
    message = str(info.value)
    assert f"segments[{seg}].length" in message
    assert repr(float(length)) in message or str(length) in message


@PROPERTY_SETTINGS
@given(
    radius0=st.floats(1e-3, 2e-2),
    radius1=st.floats(1e-3, 2e-2),
    offset=st.floats(1e-4, 3e-2),
)
def test_offset_is_checked_against_every_disk_it_passes(radius0, radius1, offset):
    """A tendon of segment 1 needs offset <= the disk radius of segments 0 and 1."""
    d = _set(_minimal(), ("segments", 0, "disk_radius"), radius0)
    d = _set(d, ("segments", 1, "disk_radius"), radius1)
    d = _set(d, ("segments", 0, "tendons"), [])
    d = _set(d, ("segments", 1, "tendons", 0, "offset"), offset)
    if offset <= min(radius0, radius1):
        assert softrod.load_robot(d).segments[1].tendons[0].offset == offset
    else:
        holder = 0 if offset > radius0 else 1
        with pytest.raises(DescriptionError, match=re.escape(f"segments[{holder}].disk_radius")):
            softrod.load_robot(d)


_finite = st.floats(-10.0, 10.0, allow_nan=False)
_positive = st.floats(1e-4, 1.0)
_tendon = st.fixed_dictionaries(
    {"offset": st.floats(1e-4, 4e-3), "angle_deg": st.floats(-360.0, 360.0)},
    optional={"stiffness": st.floats(1.0, 1e5)},
)
_segment = st.fixed_dictionaries(
    {
        "length": _positive,
        "disks": st.integers(1, 12),
        "disk_radius": st.floats(4e-3, 1e-2),
        "disk_mass": st.floats(0.0, 0.01),
        "tendons": st.lists(_tendon, max_size=4),
    }
)
_robot = st.fixed_dictionaries(
    {
        "name": st.text(min_size=1, max_size=12),
        "model": st.sampled_from(["kirchhoff", "cosserat"]),
        "backbone": st.fixed_dictionaries(
            {
                "youngs_modulus": st.floats(1e3, 1e12),
                "poisson_ratio": st.floats(-0.9, 0.5),
                "density": st.floats(0.0, 1e4),
                "radius": st.floats(1e-4, 1e-2),
                "precurvature": st.tuples(_finite, _finite, _finite).map(list),
            }
        ),
        "base": st.fixed_dictionaries(
            {
                "position": st.tuples(_finite, _finite, _finite).map(list),
                "quaternion": st.tuples(_finite, _finite, _finite, _finite)
                .filter(lambda q: np.linalg.norm(q) > 1e-3)
                .map(list),
            }
        ),
        "segments": st.lists(_segment, min_size=1, max_size=4),
    }
)


@PROPERTY_SETTINGS
@given(robot=_robot)
def test_valid_descriptions_round_trip(robot):
    spec = softrod.load_robot(robot)
    assert spec.n_tendons == sum(len(s["tendons"]) for s in robot["segments"])
    assert softrod.load_robot(yaml.safe_load(spec.to_yaml())) == spec
    assert softrod.load_robot(json.loads(json.dumps(spec.to_dict()))) == spec
