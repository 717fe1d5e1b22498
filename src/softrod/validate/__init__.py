"""Every validation study: the MuJoCo chain vs the exact rod (seed-002 protocol), SoRoSim
reference solutions, hardware recordings. Studies load robots from the shipped descriptions by
name and sit above the layers they measure; no library layer imports them.
"""

from typing import TYPE_CHECKING, Any

from softrod.validate._dynamics import (
    LGVI_FINE_ELEMENTS,
    LGVI_FINE_ROTARY_INERTIA_SCALE,
    release_study,
)
from softrod.validate._hardware import (
    ROBOTS,
    HardwareFit,
    HardwareParams,
    SequenceModel,
    bootstrap_mean_interval,
    calibrate_hardware,
    calibrated_robot,
    hardware_robot,
    motion_direction,
    mujoco_predict_marker,
    predict_marker,
    replay_marker,
    standard_errors,
    tip_errors_mm,
)
from softrod.validate._hardware_io import (
    HardwareDataError,
    Recording,
    Replay,
    fit_recording,
    fit_summary,
    fitted_robot,
    read_recording,
    recording_path,
    replay_recording,
    write_fitted,
)
from softrod.validate._mujoco_sweep import LINKS, mujoco_static_study, mujoco_sweep
from softrod.validate._records import RecordCache
from softrod.validate._sorosim import StaticStudy, sorosim_robot, static_solver_study
from softrod.validate._studies import hardware_study, sorosim_study

if TYPE_CHECKING:
    from softrod.validate._chain import MATERIALS as CHAIN_MATERIALS
    from softrod.validate._chain import (
        Oscillation,
        StaticSample,
        euler_bernoulli_frequency,
        free_oscillation,
        make_model,
        material_robot,
        random_samples,
        reference_tips,
        static_errors,
        tendon_tip,
    )

#: MuJoCo-chain validation (`softrod.validate._chain`), imported on first use so that
#: `import softrod.validate` does not need MuJoCo. `__all__` lists them again literally: linters
#: and type checkers read the exported names from a literal list only.
_CHAIN_NAMES = (
    "CHAIN_MATERIALS",
    "Oscillation",
    "StaticSample",
    "euler_bernoulli_frequency",
    "free_oscillation",
    "make_model",
    "material_robot",
    "random_samples",
    "reference_tips",
    "static_errors",
    "tendon_tip",
)

__all__ = [
    "LGVI_FINE_ELEMENTS",
    "LGVI_FINE_ROTARY_INERTIA_SCALE",
    "CHAIN_MATERIALS",
    "LINKS",
    "Oscillation",
    "StaticSample",
    "euler_bernoulli_frequency",
    "free_oscillation",
    "make_model",
    "material_robot",
    "random_samples",
    "reference_tips",
    "static_errors",
    "tendon_tip",
    "ROBOTS",
    "RecordCache",
    "HardwareFit",
    "HardwareParams",
    "StaticStudy",
    "calibrate_hardware",
    "hardware_robot",
    "hardware_study",
    "mujoco_predict_marker",
    "mujoco_static_study",
    "mujoco_sweep",
    "predict_marker",
    "release_study",
    "sorosim_robot",
    "sorosim_study",
    "static_solver_study",
    "tip_errors_mm",
    "SequenceModel",
    "HardwareDataError",
    "Recording",
    "Replay",
    "bootstrap_mean_interval",
    "calibrated_robot",
    "fit_recording",
    "fit_summary",
    "fitted_robot",
    "motion_direction",
    "read_recording",
    "recording_path",
    "replay_marker",
    "replay_recording",
    "standard_errors",
    "write_fitted",
]


def __getattr__(name: str) -> Any:
    if name in _CHAIN_NAMES:
        from softrod.validate import _chain

        return _chain.MATERIALS if name == "CHAIN_MATERIALS" else getattr(_chain, name)
    raise AttributeError(f"module 'softrod.validate' has no attribute {name!r}")
