"""Robot descriptions and small helpers shared by the environments.

The environments build their MjSpecs with the composition kit of `softrod.scene` (floor,
lights, cameras, markers, robots, collision bits); the bending maps are `softrod.control`'s.
"""

from __future__ import annotations

from softrod.description import RobotSpec, find_robot, load_robot

__all__ = ["shipped_robot", "with_tendon_stiffness"]


def shipped_robot(name: str) -> RobotSpec:
    """A robot description shipped in `softrod/data/robots` by file stem."""
    return load_robot(find_robot(name))


def with_tendon_stiffness(robot: RobotSpec, stiffness: float) -> RobotSpec:
    """A copy of `robot` whose tendons all have axial stiffness `stiffness` [N/m].

    Length (position) control of the tendons needs a stiffness; descriptions made for the
    static solver (SoftManiSim's robots) have none.
    """
    data = robot.to_dict()
    for seg in data["segments"]:
        for tendon in seg.get("tendons", []):
            tendon["stiffness"] = float(stiffness)
    return load_robot(data)
