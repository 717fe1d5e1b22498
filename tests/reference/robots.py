"""Small inline robot descriptions shared by the core tests (STYLE.md point 12)."""

from __future__ import annotations

from pathlib import Path

#: The shipped example robots (examples/robots/*.yaml).
EXAMPLES_DIR = Path(__file__).resolve().parents[2] / "examples" / "robots"


def tdcr3_dict(model: str = "kirchhoff") -> dict:
    """Three-segment TDCR like the seed-002 hardware: NiTi backbone, 10 disks per segment with
    mass, three tendons per segment at 120 deg with per-segment offsets 0/40/80 deg, stiff
    tendons (for length control), and a tilted, offset base."""
    segments = []
    for j, phase in enumerate((0.0, 40.0, 80.0)):
        segments.append(
            {
                "length": 0.062,
                "disks": 10,
                "disk_radius": 0.005,
                "disk_mass": 0.00048,
                "tendons": [
                    {"offset": 0.0045 - 0.0005 * j, "angle_deg": phase + a, "stiffness": 2.0e4}
                    for a in (0.0, 120.0, 240.0)
                ],
            }
        )
    return {
        "name": "tdcr3",
        "model": model,
        "backbone": {
            "youngs_modulus": 60.0e9,
            "poisson_ratio": 0.33,
            "density": 6450.0,
            "radius": 0.0005,
        },
        "base": {"position": [0.01, -0.02, 0.03], "quaternion": [0.9, 0.3, -0.2, 0.1]},
        "segments": segments,
    }


def soft_rod_dict(model: str = "cosserat") -> dict:
    """Two-segment soft rod (E = 20 MPa, r = 5 mm): shear and extension strains reach ~1e-3,
    so a Cosserat/Kirchhoff mix-up moves the tip by far more than the test tolerances."""
    return {
        "name": "soft_rod",
        "model": model,
        "backbone": {
            "youngs_modulus": 2.0e7,
            "poisson_ratio": 0.45,
            "density": 1100.0,
            "radius": 0.005,
            "precurvature": [0.5, -0.3, 0.2],
        },
        "segments": [
            {
                "length": 0.15,
                "disks": 3,
                "disk_radius": 0.008,
                "disk_mass": 0.002,
                "tendons": [
                    {"offset": 0.006, "angle_deg": 10.0, "stiffness": 5000.0},
                    {"offset": 0.006, "angle_deg": 130.0, "stiffness": 5000.0},
                    {"offset": 0.006, "angle_deg": 250.0, "stiffness": 5000.0},
                ],
            },
            {
                "length": 0.12,
                "backbone": {"radius": 0.004, "youngs_modulus": 3.0e7},
                "disks": 4,
                "disk_radius": 0.007,
                "disk_mass": 0.001,
                "tendons": [
                    {"offset": 0.005, "angle_deg": 70.0, "stiffness": 5000.0},
                    {"offset": 0.004, "angle_deg": 200.0, "stiffness": 5000.0},
                ],
            },
        ],
    }


def plain_rod_dict(
    length: float = 1.0,
    EI: float = 1.0,
    GJ: float = 0.7,
    EA: float = 1.0e3,
    GA: float = 5.0e2,
    model: str = "kirchhoff",
) -> dict:
    """A uniform rod without tendons with exactly these stiffnesses: E = EA, G = GA, A = 1,
    I = EI / EA, J = GJ / GA, so K_bt = (EI, EI, GJ) and K_se = (GA, GA, EA)."""
    return {
        "name": "plain_rod",
        "model": model,
        "backbone": {
            "youngs_modulus": EA,
            "shear_modulus": GA,
            "second_moment": EI / EA,
            "polar_moment": GJ / GA,
            "area": 1.0,
        },
        "segments": [{"length": length}],
    }


def rod_dict(
    name: str,
    segments: list[dict],
    *,
    youngs_modulus: float,
    radius: float,
    model: str = "kirchhoff",
    density: float | None = 1000.0,
) -> dict:
    """A uniform rod (poisson 0.5, so G = E / 3) with the given segments: the actuator tests'
    common description (chambers, magnets, moment actuators go in `segments`)."""
    backbone = {"youngs_modulus": youngs_modulus, "poisson_ratio": 0.5, "radius": radius}
    if density is not None:
        backbone["density"] = density
    return {"name": name, "model": model, "backbone": backbone, "segments": segments}


def every_actuator_dict(youngs_modulus: float = 3.0e6, radius: float = 0.005) -> dict:
    """Two 0.1 m segments: three tendons in segment 0; a chamber, a bending and a torsion
    moment actuator and a tip magnet in segment 1 (the observer, PCC and QuasiStaticSim
    actuator tests' robot)."""
    segments = [
        {
            "length": 0.1,
            "disks": 4,
            "disk_radius": 0.01,
            "disk_mass": 0.0005,
            "tendons": [{"offset": 0.008, "angle_deg": a} for a in (0.0, 120.0, 240.0)],
        },
        {
            "length": 0.1,
            "disks": 4,
            "disk_radius": 0.01,
            "chambers": [{"area": 5e-5, "offset": 0.006, "angle_deg": 90.0}],
            "moment_actuators": [{"moment": [0, 1e-3, 0]}, {"moment": [0, 0, 1e-3]}],
            "magnets": [{"s": 0.1, "moment": [0, 0, 0.05]}],
        },
    ]
    return rod_dict("every_actuator", segments, youngs_modulus=youngs_modulus, radius=radius)
