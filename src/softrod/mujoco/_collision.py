"""The collision-bit convention of every softrod MuJoCo model (chains, scenes, envs, SoMo).

| who | contype | conaffinity | touches |
|---|---|---|---|
| objects, floor | `CONTYPE_OBJECT` (bit 0) | `CONTYPE_OBJECT` or `OBJECT_AFFINITY` | everything |
| rigid robots | `CONTYPE_RIGID` (bit 1) | `RIGID_AFFINITY` (bit 0) | objects only |
| soft robot k | bit 2 + k | bit 0 and every other soft bit | objects, other soft robots |

So a soft robot never collides with itself or with the rigid robot it is mounted on.
`soft_collision_bits(k)` gives the pair of soft robot k; `softrod.scene` re-exports all names.
"""

from __future__ import annotations

__all__ = [
    "CONTYPE_OBJECT",
    "CONTYPE_RIGID",
    "OBJECT_AFFINITY",
    "RIGID_AFFINITY",
    "MAX_SOFT_ROBOTS",
    "soft_collision_bits",
]

#: contype of objects and the floor (bit 0; every conaffinity below includes it).
CONTYPE_OBJECT = 1
#: contype of rigid robots (bit 1).
CONTYPE_RIGID = 2
#: conaffinity that makes an object collide with every group (bits 0..30).
OBJECT_AFFINITY = (1 << 31) - 1
#: conaffinity of rigid robots: objects only (never themselves or soft robots).
RIGID_AFFINITY = CONTYPE_OBJECT
#: Soft robots per model (bits 2..30).
MAX_SOFT_ROBOTS = 29
_SOFT_BIT0 = 2
_ALL_SOFT = sum(1 << (_SOFT_BIT0 + i) for i in range(MAX_SOFT_ROBOTS))


def soft_collision_bits(index: int) -> tuple[int, int]:
    """(contype, conaffinity) of the soft robot with this index in a scene (0-based)."""
    if not 0 <= index < MAX_SOFT_ROBOTS:
        raise ValueError(f"at most {MAX_SOFT_ROBOTS} soft robots per scene, got index {index}")
    own = 1 << (_SOFT_BIT0 + index)
    return own, CONTYPE_OBJECT | (_ALL_SOFT & ~own)
