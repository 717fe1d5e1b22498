"""Robot descriptions: validated YAML/JSON/dict specs in SI units."""

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
    DescriptionError,
    PneumaticActuatorSpec,
    PneumaticChamberSpec,
    RobotSpec,
    SegmentSpec,
    TendonSpec,
    load_robot,
    robot_json_schema,
)

__all__ = [
    "ROBOT_SUFFIXES",
    "BackboneOverride",
    "BackboneSpec",
    "BaseSpec",
    "DescriptionError",
    "PneumaticActuatorSpec",
    "PneumaticChamberSpec",
    "RobotSpec",
    "SegmentSpec",
    "TendonSpec",
    "find_robot",
    "load_robot",
    "robot_json_schema",
    "shipped_robot_path",
    "shipped_robots",
]
