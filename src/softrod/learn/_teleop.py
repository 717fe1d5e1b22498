"""Keyboard teleoperation that records demonstrations (seed 002's data collection, App. E).

The operator jogs the robot one key press at a time; every control step is recorded as a frame
(observation, action), including the steps where no key was pressed, so the raw recording holds
the consecutive duplicate frames that seed 002's filter removes (`DemoSet.remove_duplicates`).

Key map (printed by `softrod teleop --help-keys`):

| key | curvature-rate envs (Reach, PushCube, ...) | TDCR-on-arm envs (WholeBodyGrasp, FlipSwitch) |
|---|---|---|
| `1`..`9` | select segment | select segment |
| `i` / `k` | bend the segment toward body +x / -x | same (tendons, constant-curvature map) |
| `j` / `l` | bend toward body +y / -y | same |
| `w` / `s`, `a` / `d`, `q` / `e` | - | flange +x / -x, +y / -y, +z / -z (world, IK) |
| `f` | - | freeze / unfreeze the arm (SoftManiSim's box exploration) |
| `0` | straighten (zero curvature) | straighten the TDCR |
| `n` | end the episode as successful (kept) | same |
| `x` | discard the episode | same |
| `Esc` / `Ctrl-C` | stop | stop |

Backends: `terminal` (raw key presses from the controlling terminal, no display needed),
`viewer` (MuJoCo's passive viewer with a key callback; needs a display) and `script` (keys from
a string, one per control step, `.` = no key: for tests and reproducible demos).
"""

from __future__ import annotations

import select
import sys
import time
from collections.abc import Iterable, Iterator
from typing import Any

import gymnasium as gym
import numpy as np

from softrod.control import pcc_length_matrix
from softrod.learn._demos import DemoSet

__all__ = ["KeyboardTeleop", "record_teleop", "script_keys", "terminal_keys", "KEY_HELP"]

KEY_HELP = (
    __doc__.split("Key map", 1)[1].split("\n", 1)[1].split("Backends:", 1)[0] if __doc__ else ""
)
#: Curvature change per key press [1/m] and flange step per key press [m].
KAPPA_STEP = 2.0
FLANGE_STEP = 0.01


class KeyboardTeleop:
    """Turns key presses into actions for a softrod environment (see the module's key map)."""

    def __init__(self, env: gym.Env) -> None:
        u: Any = env.unwrapped
        self.env: Any = u
        self.arm = bool(getattr(u, "arm", None) is not None and getattr(u, "tdcr", None))
        self.segment = 0
        self.frozen = False
        self.ended: str | None = None  # "success" / "discard" / "stop"
        if not self.arm and getattr(u, "kappa_rate", None) is None:
            raise ValueError(
                f"teleoperation needs a curvature-rate or TDCR-on-arm environment, got "
                f"{type(self.env).__name__}"
            )
        if self.arm:
            from softrod.learn._experts import ArmIK

            self.ik = ArmIK(u)
            self.n_seg = u.tdcr.n_segments
            self._map = pcc_length_matrix(u.tdcr)
        else:
            self.n_seg = u.robot.n_segments
        self.reset()

    def reset(self) -> None:
        self.ended = None
        self.kappa = np.zeros((self.n_seg, 2))
        if self.arm:
            self.q = self.env.joint_positions()
            self.pos, self.rot = self.ik.forward(self.q)

    def press(self, key: str | None) -> None:
        """Apply one key press (None: no key this step)."""
        if key is None:
            return
        if key.isdigit() and key != "0":
            self.segment = min(int(key) - 1, self.n_seg - 1)
        elif key == "0":
            self.kappa[:] = 0.0
        elif key in "ikjl":
            axis, sign = {"i": (0, 1), "k": (0, -1), "j": (1, 1), "l": (1, -1)}[key]
            self.kappa[self.segment, axis] += sign * KAPPA_STEP
        elif key == "f":
            self.frozen = not self.frozen
        elif key == "n":
            self.ended = "success"
        elif key == "x":
            self.ended = "discard"
        elif key in ("\x1b", "\x03"):
            self.ended = "stop"
        elif self.arm and key in "wsadqe" and not self.frozen:
            axis, sign = {
                "w": (0, 1),
                "s": (0, -1),
                "a": (1, 1),
                "d": (1, -1),
                "q": (2, 1),
                "e": (2, -1),
            }[key]
            self.pos = self.pos.copy()
            self.pos[axis] += sign * FLANGE_STEP

    def action(self) -> np.ndarray:
        """The action for the current command state."""
        space: Any = self.env.action_space
        if self.arm:
            if not self.frozen:
                self.q = self.ik.solve(self.pos, self.rot, self.q)
            tendons = -(self._map @ self.kappa.ravel())
            a = np.concatenate([self.q, tendons])
            return np.clip(a, space.low, space.high).astype(np.float32)
        # Curvature-rate envs: move the commanded curvature toward the keyed one.
        env = self.env
        goal = (self.kappa[:, :1] if env.planar else self.kappa).ravel()
        goal = np.clip(goal, -env.kappa_max, env.kappa_max)
        return np.clip((goal - env.kappa) / env.kappa_rate, -1.0, 1.0).astype(np.float32)


def script_keys(text: str) -> Iterator[str | None]:
    """Keys from a string, one per control step; `.` is a step without a key."""
    for ch in text:
        yield None if ch == "." else ch


def terminal_keys(period: float) -> Iterator[str | None]:
    """Key presses from the terminal in raw mode, one (or None) per control period [s]."""
    import termios
    import tty

    if not sys.stdin.isatty():
        raise ValueError("the terminal backend needs an interactive terminal (stdin is not a tty)")
    fd = sys.stdin.fileno()
    old = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd)
        while True:
            t0 = time.monotonic()
            ready, _, _ = select.select([sys.stdin], [], [], period)
            key = sys.stdin.read(1) if ready else None
            yield key
            rest = period - (time.monotonic() - t0)
            if rest > 0:
                time.sleep(rest)
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, old)


def viewer_keys(env: gym.Env, period: float) -> Iterator[str | None]:
    """Key presses from MuJoCo's passive viewer (needs a display)."""
    import mujoco.viewer

    pending: list[str] = []

    def on_key(keycode: int) -> None:
        if 32 <= keycode < 127:
            pending.append(chr(keycode).lower())
        elif keycode == 256:  # GLFW escape
            pending.append("\x1b")

    u: Any = env.unwrapped
    with mujoco.viewer.launch_passive(u.model, u.data, key_callback=on_key) as view:
        while view.is_running():
            t0 = time.monotonic()
            yield pending.pop(0) if pending else None
            view.sync()
            rest = period - (time.monotonic() - t0)
            if rest > 0:
                time.sleep(rest)


def record_teleop(
    env_id: str,
    keys: Iterable[str | None],
    *,
    episodes: int = 1,
    seed: int = 0,
    env_kwargs: dict[str, Any] | None = None,
    echo: bool = False,
) -> DemoSet:
    """Record teleoperated episodes; raw frames (duplicates kept), `source="teleop"`.

    An episode ends when the operator presses `n` (kept, success = the env's flag or the
    operator's word), `x` (discarded), when the environment ends it (kept), or on `Esc`
    (stop). Episode k resets with seed `seed + k`.
    """
    import softrod.envs  # noqa: F401

    env = gym.make(env_id, **(env_kwargs or {}))
    tele = KeyboardTeleop(env)
    key_iter = iter(keys)
    obs_l: list[np.ndarray] = []
    act_l: list[np.ndarray] = []
    succ: list[bool] = []
    seeds: list[int] = []
    k = 0
    try:
        while len(obs_l) < episodes:
            obs, info = env.reset(seed=seed + k)
            tele.reset()
            o_ep, a_ep = [], []
            done, stopped = False, False
            while not done:
                key = next(key_iter, "\x1b")
                tele.press(key)
                if tele.ended == "stop":
                    stopped = True
                    break
                if tele.ended in ("success", "discard"):
                    break
                a = tele.action()
                o_ep.append(np.asarray(obs, dtype=np.float32))
                a_ep.append(a)
                obs, _, term, trunc, info = env.step(a)
                done = term or trunc
                if echo and key is not None:
                    print(
                        f"\r{key} seg {tele.segment + 1} success={info.get('success')}   ",
                        end="",
                        flush=True,
                    )
            if tele.ended != "discard" and o_ep:
                obs_l.append(np.array(o_ep))
                act_l.append(np.array(a_ep))
                succ.append(bool(info.get("success", False)) or tele.ended == "success")
                seeds.append(seed + k)
            k += 1
            if stopped:
                break
    finally:
        env.close()
    return DemoSet(
        env_id,
        obs_l,
        act_l,
        np.array(succ, dtype=bool),
        np.array(seeds, dtype=np.int64),
        dict(env_kwargs or {}),
        float(getattr(env.unwrapped, "dt", 0.05)),
        "teleop",
        None,
    )
