"""Readers for the external reference data of seed 002 (opencr-mujoco, MIT licence).

Formats are described in `data/opencr-mujoco/README.md`. Every reader returns SI units.

Frames: SoRoSim writes vectors with the rod along +x. `frame="mujoco"` maps them with the
seed-002 code's matrix C = [[0, 0, 1], [0, -1, 0], [1, 0, 0]] (file -> MuJoCo, rod along +z),
a proper rotation (det C = +1), so forces, moments, positions and gravity all map as v' = C v.
"""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

__all__ = [
    "SOROSIM_TO_MUJOCO",
    "SorosimStatics",
    "SorosimRelease",
    "TdcrRecording",
    "data_root",
    "load_sorosim_statics",
    "load_sorosim_release",
    "load_tdcr_recording",
    "MATERIALS",
]

#: File -> MuJoCo frame (seed-002 code): the rod's +x becomes +z.
SOROSIM_TO_MUJOCO = np.array([[0.0, 0.0, 1.0], [0.0, -1.0, 0.0], [1.0, 0.0, 0.0]])

#: Material name -> (file stem, shipped robot, rod length [m]).
MATERIALS: dict[str, tuple[str, str, float]] = {
    "steel": ("SpringSteelRodMuJoCo", "spring_steel_rod", 0.6),
    "tpu": ("TPURodMuJoCo", "tpu_rod", 0.4),
}

Frame = Literal["sorosim", "mujoco"]


def data_root(root: str | Path | None = None) -> Path:
    """Folder holding `opencr-mujoco/`: the argument, $SOFTROD_DATA, the repository's `data/`
    (vendored copy), or the shared folder beside the project, whichever exists first."""
    candidates: list[Path] = []
    if root is not None:
        candidates.append(Path(root))
    if os.environ.get("SOFTROD_DATA"):
        candidates.append(Path(os.environ["SOFTROD_DATA"]))
    here = Path(__file__).resolve()
    for parent in here.parents:
        candidates.append(parent / "data")
        candidates.append(parent.parent / "shared" / "data")
    for c in candidates:
        if (c / "opencr-mujoco").is_dir():
            return c
    raise FileNotFoundError(
        "reference data not found: expected a folder with opencr-mujoco/ (pass root=, set "
        "SOFTROD_DATA, or run from a clone of the repository)"
    )


def _material(material: str) -> tuple[str, str, float]:
    if material not in MATERIALS:
        raise ValueError(f"material must be one of {sorted(MATERIALS)}, got {material!r}")
    return MATERIALS[material]


def _to_frame(v: np.ndarray, frame: Frame) -> np.ndarray:
    if frame == "sorosim":
        return v
    if frame == "mujoco":
        return v @ SOROSIM_TO_MUJOCO.T
    raise ValueError(f"frame must be 'sorosim' or 'mujoco', got {frame!r}")


@dataclass(frozen=True)
class SorosimStatics:
    """SoRoSim static equilibria of one validation rod (clamped at s = 0).

    gravity : (k, 3) [m/s^2]. mid_force, mid_moment : (k, 3) [N], [N m] applied at s = L/2.
    tip_force, tip_moment : (k, 3) at s = L. station_s : (14,) arc length of the stations [m]
    (Gauss-Lobatto points of each half; s = L/2 appears twice). positions : (k, 14, 3) [m];
    euler : (k, 14, 3) SoRoSim's section angles [rad] (file convention, not converted).
    length : rod length [m]; material; frame.
    """

    material: str
    frame: str
    length: float
    gravity: np.ndarray
    mid_force: np.ndarray
    mid_moment: np.ndarray
    tip_force: np.ndarray
    tip_moment: np.ndarray
    station_s: np.ndarray
    positions: np.ndarray
    euler: np.ndarray

    @property
    def n_shapes(self) -> int:
        return int(self.gravity.shape[0])

    @property
    def tip_position(self) -> np.ndarray:
        """(k, 3) [m]"""
        return self.positions[:, -1]


def load_sorosim_statics(
    material: str, frame: Frame = "sorosim", root: str | Path | None = None
) -> SorosimStatics:
    """Read `sorosim_statics/<Material>RodMuJoCo_dataStatics.csv` (500 equilibria)."""
    stem, _, length = _material(material)
    path = (
        data_root(root)
        / "opencr-mujoco"
        / "data"
        / "reference"
        / "sorosim"
        / "sorosim_statics"
        / f"{stem}_dataStatics.csv"
    )
    with path.open() as fh:
        rows = list(csv.reader(fh))
    if rows[0][:4] != ["rowLabel", "gravity", "mid_wrench", "tip_wrench"]:
        raise ValueError(f"{path}: unexpected header {rows[0][:4]}")
    xi = np.array([float(x) for x in rows[1][4:]])
    n_st = xi.shape[0] // 2
    station_s = np.concatenate([0.5 * length * xi[:n_st], 0.5 * length * (1.0 + xi[n_st:])])
    body = rows[2:]
    if len(body) % 6:
        raise ValueError(f"{path}: expected 6 rows per shape, got {len(body)} rows")
    a = np.array([[float(x) for x in r[1:]] for r in body]).reshape(-1, 6, len(rows[0]) - 1)

    # Rows: EulX, EulY, EulZ, Px, Py, Pz; wrench columns hold (moment; force) down the rows.
    def vec(block: np.ndarray) -> np.ndarray:
        return _to_frame(block, frame)

    return SorosimStatics(
        material=material,
        frame=frame,
        length=length,
        gravity=vec(a[:, 3:6, 0]),
        mid_force=vec(a[:, 3:6, 1]),
        mid_moment=vec(a[:, 0:3, 1]),
        tip_force=vec(a[:, 3:6, 2]),
        tip_moment=vec(a[:, 0:3, 2]),
        station_s=station_s,
        positions=vec(np.transpose(a[:, 3:6, 3:], (0, 2, 1))),
        euler=np.transpose(a[:, 0:3, 3:], (0, 2, 1)),
    )


@dataclass(frozen=True)
class SorosimRelease:
    """One SoRoSim tip-release time series (wrenches removed at t = 0).

    damping_ratio; gravity (3,) [m/s^2]; mid_force, mid_moment, tip_force, tip_moment (3,): the
    holding wrenches before release. t : (k,) [s]; mid_position, tip_position : (k, 3) [m];
    mid_euler, tip_euler : (k, 3) [rad] (file convention).
    """

    material: str
    index: int
    frame: str
    length: float
    damping_ratio: float
    gravity: np.ndarray
    mid_force: np.ndarray
    mid_moment: np.ndarray
    tip_force: np.ndarray
    tip_moment: np.ndarray
    t: np.ndarray
    mid_position: np.ndarray
    tip_position: np.ndarray
    mid_euler: np.ndarray
    tip_euler: np.ndarray


def load_sorosim_release(
    material: str, index: int, frame: Frame = "sorosim", root: str | Path | None = None
) -> SorosimRelease:
    """Read `sorosim_dynamics/<Material>RodMuJoCo_<index>.txt` (index 1..10)."""
    stem, _, length = _material(material)
    if not 1 <= int(index) <= 10:
        raise ValueError(f"index must be in 1..10, got {index!r}")
    path = (
        data_root(root)
        / "opencr-mujoco"
        / "data"
        / "reference"
        / "sorosim"
        / "sorosim_dynamics"
        / f"{stem}_{int(index)}.txt"
    )
    a = np.loadtxt(path)
    if a.ndim != 2 or a.shape[1] != 13:
        raise ValueError(f"{path}: expected 13 columns, got shape {a.shape}")
    w = a[1, 1:]
    series = a[2:]

    def vec(v: np.ndarray) -> np.ndarray:
        return _to_frame(v, frame)

    return SorosimRelease(
        material=material,
        index=int(index),
        frame=frame,
        length=length,
        damping_ratio=float(a[0, 0]),
        gravity=vec(a[0, 10:13]),
        mid_moment=vec(w[0:3]),
        mid_force=vec(w[3:6]),
        tip_moment=vec(w[6:9]),
        tip_force=vec(w[9:12]),
        t=series[:, 0],
        mid_euler=series[:, 1:4],
        mid_position=vec(series[:, 4:7]),
        tip_euler=series[:, 7:10],
        tip_position=vec(series[:, 10:13]),
    )


@dataclass(frozen=True)
class TdcrRecording:
    """Motion-capture recording of a physical seed-002 TDCR (3 segments, 9 tendons).

    t : (k,) [s] from the first sample. pattern : (k,) labels (e.g. `rep1_tendon0_id4_pull`).
    displacement : (k, 9) tendon displacement at the actuator [m], in tendon order (segment
    1's three tendons, then segment 2's, then segment 3's), as in the file: positive = pulled
    in, negative = let out (the single-tendon pulls release the other eight by ~10 mm).
    servo_ids : (9,) servo id per column.
    tip : (k, 3) measured marker position [m] in the tracker frame (z along the backbone).
    """

    robot: str
    split: str
    t: np.ndarray
    pattern: np.ndarray
    displacement: np.ndarray
    servo_ids: tuple[int, ...]
    tip: np.ndarray


def load_tdcr_recording(
    robot: Literal["ftdcr_v4", "ftdcr_v6"],
    split: Literal["train", "val", "tendon_pull"],
    root: str | Path | None = None,
) -> TdcrRecording:
    """Read a `*_<split>.csv` recording of ftdcr_v4 or ftdcr_v6."""
    if robot not in ("ftdcr_v4", "ftdcr_v6"):
        raise ValueError(f"robot must be 'ftdcr_v4' or 'ftdcr_v6', got {robot!r}")
    if split not in ("train", "val", "tendon_pull"):
        raise ValueError(f"split must be 'train', 'val' or 'tendon_pull', got {split!r}")
    folder = data_root(root) / "opencr-mujoco" / "data" / "sysid" / robot
    matches = sorted(folder.glob(f"*_{split}.csv"))
    if not matches:
        raise FileNotFoundError(f"no *_{split}.csv in {folder}")
    with matches[0].open() as fh:
        rows = list(csv.reader(fh))
    header = rows[0]
    servo_cols = [i for i, h in enumerate(header) if h.startswith("servo_")]
    if len(servo_cols) != 9:
        raise ValueError(f"{matches[0]}: expected 9 servo columns, got {len(servo_cols)}")
    tip_cols = [header.index(c) for c in ("tip_x", "tip_y", "tip_z")]
    body = [r for r in rows[1:] if r]
    ts = np.array([float(r[0]) for r in body])
    servo = np.array([[float(r[i]) for i in servo_cols] for r in body]) * 1e-3
    tip = np.array([[float(r[i]) for i in tip_cols] for r in body]) * 1e-3
    ids = tuple(int(header[i].split("_")[1]) for i in servo_cols)
    return TdcrRecording(
        robot=robot,
        split=split,
        t=ts - ts[0],
        pattern=np.array([r[1] for r in body]),
        displacement=servo,
        servo_ids=ids,
        tip=tip,
    )
