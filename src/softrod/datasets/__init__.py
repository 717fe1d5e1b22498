"""Readers for external reference data (SoRoSim solutions, real TDCR recordings)."""

from softrod.datasets._opencr import (
    MATERIALS,
    SOROSIM_TO_MUJOCO,
    SorosimRelease,
    SorosimStatics,
    TdcrRecording,
    data_root,
    load_sorosim_release,
    load_sorosim_statics,
    load_tdcr_recording,
)

__all__ = [
    "MATERIALS",
    "SOROSIM_TO_MUJOCO",
    "SorosimRelease",
    "SorosimStatics",
    "TdcrRecording",
    "data_root",
    "load_sorosim_release",
    "load_sorosim_statics",
    "load_tdcr_recording",
]
