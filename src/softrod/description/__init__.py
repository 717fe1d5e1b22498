"""Robot descriptions: validated YAML/JSON/dict specs in SI units, and their shared vocabulary.

`Spec` is the base of every typed description in softrod (strict fields, `load`, a YAML round
trip, one error format); dotted field paths (`set_path`, `with_fields`) edit a description by
name; `find_robot` is the one robot resolver; `json_safe` makes results strict JSON.
"""

from softrod.description._actuation import Actuation, check_actuation
from softrod.description._base import Spec
from softrod.description._calibration import CalibrationSpec
from softrod.description._io import MAX_FILE_BYTES, DescriptionError, json_safe
from softrod.description._paths import (
    get_field,
    normalize_path,
    numeric_fields,
    resolve_fields,
    set_path,
    with_fields,
)
from softrod.description._shipped import (
    ROBOT_SUFFIXES,
    find_robot,
    shipped_robot_path,
    shipped_robots,
)
from softrod.description._spec import (
    BackboneOverride,
    BackboneSpec,
    BaseSpec,
    ChamberSpec,
    MagnetSpec,
    MomentActuatorSpec,
    PneumaticActuatorSpec,
    PneumaticChamberSpec,
    RobotSpec,
    SegmentSpec,
    TendonFrictionSpec,
    TendonSpec,
    load_robot,
    robot_json_schema,
)

__all__ = [
    "ROBOT_SUFFIXES",
    "Actuation",
    "CalibrationSpec",
    "ChamberSpec",
    "MagnetSpec",
    "MomentActuatorSpec",
    "check_actuation",
    "BackboneOverride",
    "BackboneSpec",
    "BaseSpec",
    "DescriptionError",
    "MAX_FILE_BYTES",
    "PneumaticActuatorSpec",
    "PneumaticChamberSpec",
    "RobotSpec",
    "SegmentSpec",
    "TendonFrictionSpec",
    "TendonSpec",
    "Spec",
    "find_robot",
    "get_field",
    "json_safe",
    "load_robot",
    "normalize_path",
    "numeric_fields",
    "resolve_fields",
    "robot_json_schema",
    "set_path",
    "shipped_robot_path",
    "shipped_robots",
    "with_fields",
]
