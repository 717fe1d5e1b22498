"""Tendon friction with memory (`softrod.rods.solve_sequence`, docs/friction.md).

Oracles: the static solver without friction (mu = 0 must give `solve_static`'s answers), the
capstan law on the solved wrap angle computed here from the shape (not by the library), the
moment balance at the free tip (the tip tension bends the last section), and the qualitative
laws of Coulomb friction (loops that grow with mu, return to rest, sticking).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import softrod
from softrod.description import DescriptionError, find_robot
from softrod.rods import compile_model, solve_sequence

#: mu = 0 must reproduce the frictionless solver: same kernels, same Newton path, so the
#: answers agree to round-off (well below the 1e-10 m the solver's tolerance allows).
IDENTITY_TOL_M = 1e-12
#: The capstan check compares the solved tip tension with T exp(-mu theta) on the solved
#: shape; the fixed point stops when the tension scale changes by < 1e-10, so 1e-9 relative.
CAPSTAN_RTOL = 1e-9
#: A loop is a tip difference between pulling and releasing at the same command well above
#: the solver's accuracy (1e-10 of the length): 1e-6 m is 10^3 times that.
LOOP_MIN_M = 1e-6


def _robot(
    n_seg: int = 1, stiff_first: bool = False, model: str = "kirchhoff"
) -> softrod.RobotSpec:
    """A small NiTi-like robot: n_seg segments of 0.06 m, 6 disks each, tendons at 4 mm."""
    segs = []
    for j in range(n_seg):
        seg = {
            "length": 0.06,
            "disks": 6,
            "disk_radius": 0.005,
            "tendons": [
                {"offset": 0.004, "angle_deg": a, "stiffness": 5000.0} for a in (0.0, 120.0, 240.0)
            ],
        }
        if stiff_first and j == 0:
            seg["backbone"] = {"youngs_modulus": 5e12}
        segs.append(seg)
    return softrod.load_robot(
        {
            "name": "friction_test",
            "model": model,
            "backbone": {
                "youngs_modulus": 5e10,
                "poisson_ratio": 0.3,
                "density": 6450.0,
                "radius": 0.0005,
            },
            "segments": segs,
        }
    )


def _cycle(peak: float, n: int) -> np.ndarray:
    """0 -> peak -> 0 in n steps each way ((2 n + 1,) values)."""
    up = np.linspace(0.0, peak, n + 1)
    return np.concatenate([up, up[-2::-1]])


@pytest.mark.parametrize(
    ("n_seg", "kind", "tension_rows"),
    [
        (1, "kirchhoff", [[0.5, 0.0, 0.0], [1.0, 0.2, 0.0], [0.3, 0.0, 0.4]]),
        (1, "cosserat", [[0.5, 0.0, 0.0], [1.0, 0.2, 0.0]]),
        (2, "kirchhoff", [[0.5, 0.0, 0.0, 0.0, 0.3, 0.0], [0.0, 0.6, 0.0, 0.8, 0.0, 0.0]]),
    ],
)
def test_mu_zero_is_the_frictionless_solver_under_tension_control(n_seg, kind, tension_rows):
    model = compile_model(_robot(n_seg, model=kind))
    T = np.array(tension_rows)
    seq = solve_sequence(model, tensions=T, mu=0.0, tip_force=[0.0, 0.01, 0.0], shapes=True)
    assert seq.success.all()
    assert seq.positions is not None
    for row, tau in enumerate(T):
        ref = softrod.solve_static(model, tensions=tau, tip_force=[0.0, 0.01, 0.0])
        assert np.abs(seq.positions[row] - ref.positions).max() < IDENTITY_TOL_M
    assert np.all(seq.tip_tension == T)


@pytest.mark.parametrize("robot", ["inline", "ftdcr_v4"])
def test_mu_zero_is_the_frictionless_solver_under_length_control(robot):
    spec = _robot(2) if robot == "inline" else softrod.load_robot(find_robot(robot))
    model = compile_model(spec)
    rest = model.tendon_rest_length
    n_t = model.n_tendons
    first, second = np.zeros(n_t), np.zeros(n_t)
    first[[0, n_t - 2]] = [3e-4, 2e-4]
    second[[1, n_t - 3]] = [1e-4, 4e-4]
    L = np.array([rest - first, rest - second])
    seq = solve_sequence(model, lengths=L, mu=0.0)
    assert seq.success.all()
    for row in range(L.shape[0]):
        ref = softrod.solve_static(model, lengths=L[row])
        assert np.linalg.norm(seq.tip_position[row] - ref.tip_position) < IDENTITY_TOL_M
        assert np.allclose(seq.tendon_tension[row], ref.tendon_tension, rtol=1e-9, atol=1e-12)


def _hole_wrap(model, result, i: int) -> float:
    """Total wrap angle of tendon i at its holes, from the solved shape: the base hole (the
    tendon arrives along the base z axis) and every disk before its anchor."""
    nodes = [0]
    anchor_s = model.seg_start[model.tendon_seg[i]] + model.seg_length[model.tendon_seg[i]]
    for s in model.disk_s:
        nodes.append(int(np.argmin(np.abs(result.s - s))))
        if abs(s - anchor_s) < 1e-12:
            break
    r = model.tendon_r[i]
    holes = [result.positions[k] + result.rotations[k] @ r for k in nodes]
    directions = [result.rotations[0][:, 2]] + [
        b - a for a, b in zip(holes[:-1], holes[1:], strict=True)
    ]
    total = 0.0
    for a, b in zip(directions[:-1], directions[1:], strict=True):
        cos = float(a @ b) / (np.linalg.norm(a) * np.linalg.norm(b))
        total += math.acos(min(1.0, cos))
    return total


def test_tip_tension_is_the_capstan_law_on_the_solved_wrap():
    # Straight (stiff) proximal segment, bent distal one; one tendon to the tip at +x.
    spec = _robot(2, stiff_first=True)
    model = compile_model(spec)
    T0, mu = 4.0, 0.2
    tensions = np.zeros((1, 6))
    tensions[0, 3] = T0
    seq = solve_sequence(model, tensions=tensions, mu=mu)
    assert seq.success.all()
    result = seq.state.result
    theta = _hole_wrap(model, result, 3)
    assert theta > 0.3  # a real bend
    expected = T0 * math.exp(-mu * theta)
    assert seq.tip_tension[0, 3] == pytest.approx(expected, rel=CAPSTAN_RTOL)
    # Moment balance at the free tip: EI |u(L)| = tip tension x offset.
    EI = model.K_bt[1, 0]
    tip_from_shape = EI * np.linalg.norm(result.curvature[-1]) / 0.004
    assert tip_from_shape == pytest.approx(expected, rel=CAPSTAN_RTOL)


def _loop_width(model, mu: float) -> tuple[float, np.ndarray, np.ndarray]:
    """Largest tip difference between pulling and releasing at the same command over a
    0 -> 2 N -> 0 cycle of the first tendon; also the tips at the start and at the end."""
    n = 4
    cmd = _cycle(2.0, n)
    tensions = np.zeros((cmd.size, model.n_tendons))
    tensions[:, 0] = cmd
    seq = solve_sequence(model, tensions=tensions, mu=mu)
    assert seq.success.all(), seq.message
    up = seq.tip_position[: n + 1]
    down = seq.tip_position[n:][::-1]
    return float(np.linalg.norm(up - down, axis=1).max()), seq.tip_position[0], seq.tip_position[-1]


def test_load_unload_cycle_is_a_loop_growing_with_mu_and_returns_to_rest():
    model = compile_model(_robot(1))
    widths = []
    for mu in (0.0, 0.1, 0.3):
        width, start, end = _loop_width(model, mu)
        assert np.linalg.norm(end - start) < IDENTITY_TOL_M
        widths.append(width)
    assert widths[0] < IDENTITY_TOL_M
    assert LOOP_MIN_M < widths[1] < widths[2]


def test_releasing_bends_more_than_pulling_at_the_same_command():
    # Pulled in, the tension drops distally; let out, it stays high distally: more bend.
    model = compile_model(_robot(1))
    tensions = np.zeros((3, 3))
    tensions[:, 0] = [1.0, 2.0, 1.0]
    seq = solve_sequence(model, tensions=tensions, mu=0.2)
    deflection = np.linalg.norm(seq.tip_position[:, :2], axis=1)
    assert deflection[2] > deflection[0] + LOOP_MIN_M


def test_stick_band_keeps_the_shape_on_a_small_reversal():
    model = compile_model(_robot(1))
    band = 0.3
    tensions = np.zeros((4, 3))
    tensions[:, 0] = [1.0, 2.0, 2.0 - 0.5 * band, 2.0 - 2.0 * band]
    seq = solve_sequence(model, tensions=tensions, mu=0.2, stick_band=band, shapes=True)
    assert seq.success.all()
    assert seq.positions is not None
    assert np.abs(seq.positions[2] - seq.positions[1]).max() < IDENTITY_TOL_M
    assert np.linalg.norm(seq.tip_position[3] - seq.tip_position[1]) > LOOP_MIN_M
    # Without the band the same small reversal moves the tip.
    free = solve_sequence(model, tensions=tensions, mu=0.2)
    assert np.linalg.norm(free.tip_position[2] - free.tip_position[1]) > LOOP_MIN_M


def test_state_continues_a_sequence():
    model = compile_model(_robot(1))
    tensions = np.zeros((5, 3))
    tensions[:, 0] = [0.5, 1.5, 1.0, 0.2, 0.8]
    whole = solve_sequence(model, tensions=tensions, mu=0.2)
    first = solve_sequence(model, tensions=tensions[:2], mu=0.2)
    rest = solve_sequence(model, tensions=tensions[2:], mu=0.2, state=first.state)
    joined = np.concatenate([first.tip_position, rest.tip_position])
    assert np.abs(joined - whole.tip_position).max() < 1e-10


def test_length_control_with_friction_runs_a_loop():
    model = compile_model(_robot(1))
    rest = model.tendon_rest_length
    short = _cycle(6e-4, 3)
    lengths = np.tile(rest, (short.size, 1))
    lengths[:, 0] -= short
    seq = solve_sequence(model, lengths=lengths, mu=0.2)
    assert seq.success.all(), seq.message
    up, down = seq.tip_position[:4], seq.tip_position[3:][::-1]
    assert np.linalg.norm(up - down, axis=1).max() > LOOP_MIN_M
    assert np.linalg.norm(seq.tip_position[-1] - seq.tip_position[0]) < IDENTITY_TOL_M


#: The compiled loop (check_stability=False) and the per-step solver stop on the same tests
#: (residual 1e-10, scale change 1e-10) from different iterates: their tips agree to ~1e-11 m.
COMPILED_TOL_M = 1e-9


@pytest.mark.parametrize("control", ["lengths", "tensions"])
def test_compiled_loop_is_the_per_step_solver(control):
    # Pull, a small reversal inside the stick band (tensions), release: the state after each
    # row (profile, command, direction) and the tips of both paths agree; a sequence continued
    # from a compiled state agrees with the whole one.
    model = compile_model(_robot(1))
    if control == "lengths":
        rows = np.tile(model.tendon_rest_length, (7, 1))
        rows[:, 0] -= [0.0, 2e-4, 4e-4, 6e-4, 5e-4, 2e-4, 0.0]
        rows[:, 1] -= [0.0, 0.0, 1e-4, 1e-4, 3e-4, 0.0, 0.0]
        extra: dict = {}
    else:
        rows = np.zeros((7, 3))
        rows[:, 0] = [0.5, 1.5, 2.5, 2.4, 1.5, 0.5, 0.0]
        rows[:, 1] = [0.0, 0.3, 0.3, 0.3, 0.8, 0.0, 0.0]
        extra = {"stick_band": 0.2}
    kw = {control: rows, "mu": 0.2, **extra}
    ref = solve_sequence(model, **kw)
    fast = solve_sequence(model, check_stability=False, shapes=True, **kw)
    assert ref.success.all() and fast.success.all(), fast.message
    assert np.abs(fast.tip_position - ref.tip_position).max() < COMPILED_TOL_M
    assert fast.positions is not None and fast.tip_rotation is not None
    assert np.abs(fast.positions[:, -1] - fast.tip_position).max() == 0.0
    assert np.abs(fast.tip_rotation - ref.tip_rotation).max() < COMPILED_TOL_M / 0.06
    assert np.abs(fast.tip_tension - ref.tip_tension).max() < 1e-6
    assert np.abs(fast.state.tension - ref.state.tension).max() < 1e-6
    assert np.array_equal(fast.state.direction, ref.state.direction)
    assert np.array_equal(fast.state.command, ref.state.command)
    head = solve_sequence(model, check_stability=False, **{**kw, control: rows[:3]})
    tail = solve_sequence(
        model, check_stability=False, state=head.state, **{**kw, control: rows[3:]}
    )
    joined = np.concatenate([head.tip_position, tail.tip_position])
    assert np.abs(joined - ref.tip_position).max() < COMPILED_TOL_M


def test_hole_wrap_holds_a_residual_bend_at_the_straight_command():
    # Three equal tensions hold the robot straight. Pull tendon 0 (at +x) and return: the
    # shape's own wrap vanishes on the way back to straight, so plain capstan friction returns
    # it there; the holes' own wrap keeps tendon 0's distal tension up (let out: exp(+mu
    # theta)) and the others' down (taken in again), a residual bend toward +x.
    spec = _robot(1)
    tensions = np.ones((3, 3))
    tensions[1, 0] = 2.5
    plain = solve_sequence(spec, tensions=tensions, mu=0.2)
    assert np.linalg.norm(plain.tip_position[2, :2]) < 1e-9
    held = solve_sequence(spec, tensions=tensions, mu=0.2, hole_wrap=0.05)
    assert held.success.all(), held.message
    assert held.tip_position[2, 0] > LOOP_MIN_M
    assert held.tip_tension[2, 0] > 1.0 > held.tip_tension[2, 1]
    # From the description's block: the same answers.
    block = {**spec.to_dict(), "tendon_friction": {"mu": 0.2, "hole_wrap": 0.05}}
    from_file = solve_sequence(softrod.load_robot(block), tensions=tensions)
    assert np.array_equal(from_file.tip_position, held.tip_position)


def test_friction_from_the_description():
    data = _robot(1).to_dict()
    data["tendon_friction"] = {"mu": 0.2}
    data["segments"][0]["tendons"][1]["friction"] = {"mu": 0.0}
    spec = softrod.load_robot(data)
    assert spec.tendon_friction is not None and spec.tendon_friction.mu == 0.2
    tensions = np.zeros((3, 3))
    tensions[:, 0] = [1.0, 2.0, 1.0]
    from_file = solve_sequence(spec, tensions=tensions)
    given = solve_sequence(spec, tensions=tensions, mu=[0.2, 0.0, 0.2])
    assert np.array_equal(from_file.tip_position, given.tip_position)
    # The round trip keeps the block; a file without it loads and dumps unchanged.
    assert softrod.load_robot(spec.to_dict()).tendon_friction == spec.tendon_friction
    plain = _robot(1)
    assert "tendon_friction" not in plain.to_dict()
    assert "friction" not in plain.to_dict()["segments"][0]["tendons"][0]


def test_bad_inputs_get_clear_errors():
    model = compile_model(_robot(1))
    with pytest.raises(DescriptionError, match="mu"):
        softrod.load_robot({**_robot(1).to_dict(), "tendon_friction": {"mu": -0.1}})
    with pytest.raises(ValueError, match="tensions or lengths"):
        solve_sequence(model)
    with pytest.raises(ValueError, match=r"shape \(T, 3\)"):
        solve_sequence(model, tensions=[1.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="stick_band applies to tension control"):
        solve_sequence(model, lengths=[model.tendon_rest_length], stick_band=0.1)
    with pytest.raises(ValueError, match=r"step 1: tensions\[2\] must be >= 0"):
        solve_sequence(model, tensions=[[1.0, 0.0, 0.0], [1.0, 0.0, -0.5]])
    with pytest.raises(ValueError, match=r"mu\[1\]"):
        solve_sequence(model, tensions=[[1.0, 0.0, 0.0]], mu=[0.1, -1.0, 0.0])
    with pytest.raises(ValueError, match="tip_force"):
        solve_sequence(model, tensions=[[1.0, 0.0, 0.0]], tip_force=np.zeros((2, 3)))
    other = solve_sequence(compile_model(_robot(2)), tensions=np.zeros((1, 6)))
    with pytest.raises(ValueError, match="state.tension"):
        solve_sequence(model, tensions=[[1.0, 0.0, 0.0]], state=other.state)
