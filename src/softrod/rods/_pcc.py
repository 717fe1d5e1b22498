"""Method "pcc": piecewise constant curvature, the load-free baseline (exact without external
loads when the precurvature has no twist). Chambers (internal tendons, `solve_static`) and
moment actuators (a shift of the rest curvature) come in through the model; a magnetic field
is refused (`_refuse_field`)."""

from __future__ import annotations

import weakref

import numpy as np
from numba import njit

from softrod.rods import so3
from softrod.rods._inputs import StaticLoads
from softrod.rods._model import RodModel
from softrod.rods._result import StaticResult, _replaced

__all__: list[str] = []


def _pcc_curvatures(model: RodModel, tau: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-segment curvature u (n_seg, 3) and axial stretch v_z (n_seg,) with no external load.

    Exact for both backbone models when the precurvature has no twist: every tendon stays
    parallel to the backbone (t = e3), so each segment balances sum tau e3 x r against K_bt u.
    """
    n_seg = model.seg_length.shape[0]
    u = model.u_star.copy()
    vz = np.ones(n_seg)
    for j in range(n_seg):
        act = model.tendon_seg >= j
        m = np.sum(tau[act, None] * np.cross([0.0, 0.0, 1.0], model.tendon_r[act]), axis=0)
        u[j] += m / model.K_bt[j]
        if model.cosserat:
            vz[j] = 1.0 - tau[act].sum() / model.K_se[j, 2]
    return u, vz


def _pcc_lengths_matrix(model: RodModel) -> tuple[np.ndarray, np.ndarray]:
    """Tendon path lengths l = l0 + A tau under constant curvature (linear in tau)."""
    n_t = model.n_tendons
    base = np.zeros(n_t)
    u0, vz0 = _pcc_curvatures(model, np.zeros(n_t))
    A = np.zeros((n_t, n_t))

    def lengths(u: np.ndarray, vz: np.ndarray) -> np.ndarray:
        out = np.zeros(n_t)
        for i in range(n_t):
            for j in range(int(model.tendon_seg[i]) + 1):
                w_z = vz[j] + np.cross(u[j], model.tendon_r[i])[2]
                out[i] += model.seg_length[j] * w_z
        return out

    base = lengths(u0, vz0)
    for k in range(n_t):
        e = np.zeros(n_t)
        e[k] = 1.0
        u, vz = _pcc_curvatures(model, e)
        A[:, k] = lengths(u, vz) - base
    return base, A


#: (l0, A) of each compiled model (constant per model): a warm-started length solve needs
#: them twice and building them in Python costs 20x the Newton solve (hardware replay).
_LENGTHS_MATRIX: weakref.WeakKeyDictionary[RodModel, tuple[np.ndarray, np.ndarray]] = (
    weakref.WeakKeyDictionary()
)


def _cached_lengths_matrix(model: RodModel) -> tuple[np.ndarray, np.ndarray]:
    """`_pcc_lengths_matrix`, built once per compiled model."""
    if model not in _LENGTHS_MATRIX:
        _LENGTHS_MATRIX[model] = _pcc_lengths_matrix(model)
    return _LENGTHS_MATRIX[model]


def _pcc_tensions(model: RodModel, L_cmd: np.ndarray) -> np.ndarray:
    """Tensions of elastic pull-only tendons under constant curvature (semismooth Newton)."""
    n_t = model.n_tendons
    if n_t == 0:
        return np.zeros(0)
    l0, A = _cached_lengths_matrix(model)
    tau = np.empty(n_t)
    _pcc_tensions_kernel(l0, A, model.tendon_k, np.asarray(L_cmd, dtype=float), tau)
    return tau


#: Iteration limit and step tolerance of the constant-curvature tension solve.
_PCC_MAX_ITER = 50
_PCC_XTOL = 1e-12
#: Length-law residual (tau - k max(l - L, 0), relative to 1 N + the largest tension) above
#: which the tension solve has not converged: a converged semismooth Newton step on this
#: piecewise-linear law is exact to round-off (~1e-15), so 1e-9 only catches a real failure.
_PCC_LAW_TOL = 1e-9


@njit(cache=True)
def _pcc_tensions_kernel(l0, A, k_t, L_cmd, tau_out):
    """Tensions (n_t,) [N] of elastic pull-only tendons under constant curvature at commanded
    lengths L_cmd (n_t,) [m], semismooth Newton from zero; l0 (n_t,), A (n_t, n_t) from
    `_pcc_lengths_matrix`, k_t (n_t,) [N/m]."""
    n_t = L_cmd.shape[0]
    Jm = np.empty((n_t, n_t))
    r = np.empty(n_t)
    for a in range(n_t):
        tau_out[a] = 0.0
    for _ in range(_PCC_MAX_ITER):
        for a in range(n_t):
            stretch = l0[a] - L_cmd[a]
            for c in range(n_t):
                stretch += A[a, c] * tau_out[c]
            active = stretch > 0.0
            r[a] = tau_out[a] - (k_t[a] * stretch if active else 0.0)
            for c in range(n_t):
                Jm[a, c] = (1.0 if a == c else 0.0) - (k_t[a] * A[a, c] if active else 0.0)
        step = np.linalg.solve(Jm, -r)
        smax = 0.0
        tmax = 0.0
        for a in range(n_t):
            tau_out[a] += step[a]
            smax = max(smax, abs(step[a]))
            tmax = max(tmax, abs(tau_out[a]))
        if smax <= _PCC_XTOL * (1.0 + tmax):
            break


def _arc(R0: np.ndarray, p0: np.ndarray, u: np.ndarray, vz: float, s: np.ndarray):
    """Positions (n, 3) [m] and rotations (n, 3, 3) along a constant-strain arc at arc lengths
    s (n,) [m] from its base (base pose R0 (3, 3), p0 (3,); curvature u (3,) [1/m], stretch vz).

    Vectorised over the nodes (a Python loop per node cost ~3 ms a segment on the web page):
    R(s) = R0 expm(s u^), p(s) = p0 + R0 int_0^s expm(t u^) dt e3 vz (Rodrigues' closed forms,
    their series below a turning angle of 1e-6 rad).
    """
    th = float(np.linalg.norm(u))
    uh = so3.hat(u)
    uh2 = uh @ uh
    s = np.asarray(s, dtype=float)
    a = th * s
    small = a < 1e-6
    # Series and closed forms of each coefficient; th_safe keeps the unused branch finite.
    th_safe = th if th > 0.0 else 1.0
    e1 = np.where(small, s, np.sin(a) / th_safe)
    e2 = np.where(small, s * s / 2.0, (1.0 - np.cos(a)) / th_safe**2)
    c1 = e2
    c2 = np.where(small, s**3 / 6.0, (a - np.sin(a)) / th_safe**3)
    expm = np.eye(3) + e1[:, None, None] * uh + e2[:, None, None] * uh2
    # Only the third column of the integral acts on the stretch vector (0, 0, vz).
    integ_e3 = (
        s[:, None] * np.array([0.0, 0.0, 1.0]) + c1[:, None] * uh[:, 2] + c2[:, None] * uh2[:, 2]
    )
    Rs = np.matmul(R0, expm)
    ps = p0 + vz * integ_e3 @ R0.T
    return ps, Rs


def _refuse_field(model: RodModel, inp: StaticLoads) -> None:
    """Constant curvature cannot carry a magnetic field: the dipole torques (R m) x B turn
    with the shape (a tangent tip dipole bends the rod into an elastica arc, theta_tip =
    (L m B / EI) cos theta_tip), so no constant-curvature arc balances them. Chambers and
    moment actuators it carries exactly (uniform moments over a segment)."""
    if model.is_magnetic and (inp.field.any() or inp.field_gradient.any()):
        raise ValueError(
            "method='pcc' cannot take a magnetic field (field / field_gradient): the dipole "
            "torques turn with the shape, so the equilibrium is not an arc of constant "
            "curvature; use method='shooting' or 'observer'"
        )


def _solve_pcc(
    model: RodModel, inp: StaticLoads, guess: StaticResult | None, rtol: float, max_iter: int
) -> StaticResult:
    model.require_straight_routing("method='pcc'")
    _refuse_field(model, inp)
    n_t = model.n_tendons
    if inp.lengths is not None:
        tau = _pcc_tensions(model, inp.lengths)
    else:
        assert inp.tensions is not None
        tau = inp.tensions
    u, vz = _pcc_curvatures(model, tau)
    n_nodes = model.n_nodes
    node_seg = np.append(model.step_seg, model.step_seg[-1])
    positions = np.empty((n_nodes, 3))
    rotations = np.empty((n_nodes, 3, 3))
    p0, R0 = model.base_position.copy(), model.base_rotation.copy()
    for j in range(model.seg_length.shape[0]):
        steps_j = np.flatnonzero(model.step_seg == j)
        idx = np.arange(steps_j[0], steps_j[-1] + 2)  # the segment's nodes, both ends included
        s_loc = model.node_s[idx] - model.seg_start[j]
        ps, Rs = _arc(R0, p0, u[j], vz[j], s_loc)
        positions[idx] = ps
        rotations[idx] = Rs
        p0, R0 = ps[-1].copy(), Rs[-1].copy()
    curvature = u[node_seg]
    strain = np.zeros((n_nodes, 3))
    strain[:, 2] = vz[node_seg]
    # Tendon path lengths and the section loads implied by the tendons alone.
    if n_t:
        l0, A = _cached_lengths_matrix(model)
        lengths = l0 + A @ tau
    else:
        lengths = np.zeros(0)
    force = np.zeros((n_nodes, 3))
    for i in range(n_t):
        act = node_seg <= model.tendon_seg[i]
        force[act] -= tau[i] * rotations[act, :, 2]
    moment = np.einsum(
        "nab,nb->na", rotations, model.K_bt[node_seg] * (curvature - model.u_star[node_seg])
    )
    ignored = inp.has_external_load
    message = "constant-curvature kinematics" + (
        "; external loads and gravity are ignored by this model" if ignored else ""
    )
    # Closed-form arcs: no discretisation error, the tip is exact to round-off for this model
    # (its error against the rod is the model error, `model_error=True`). Under length
    # control the tensions come from a Newton solve: checked against the length law.
    status = 0
    tip_error: float | None = 0.0
    if inp.lengths is not None and n_t:
        law = tau - model.tendon_k * np.maximum(lengths - inp.lengths, 0.0)
        miss = float(np.max(np.abs(law)))
        if not miss <= _PCC_LAW_TOL * (1.0 + float(np.max(np.abs(tau)))):
            status = 1
            tip_error = None
            message += (
                f"; the tension solve did not converge in {_PCC_MAX_ITER} iterations "
                f"(length law residual {miss:.2e} N)"
            )
    return StaticResult(
        method="pcc",
        success=status == 0,
        status=status,
        message=message,
        residual=0.0,
        nit=0,
        nfev=0,
        s=model.node_s.copy(),
        positions=positions,
        rotations=rotations,
        curvature=curvature,
        strain=strain,
        internal_force=force,
        internal_moment=moment,
        tendon_tension=np.asarray(tau, float).copy(),
        tendon_length=lengths,
        base_moment=np.zeros(3),
        load_scale=1.0,
        inputs=inp,
        tip_error=tip_error,
    )


def _with_model_error(result: StaticResult, reference: StaticResult) -> StaticResult:
    """The pcc `result` with its model error [m]: the distance of its tip from the tip of
    `reference`, `solve_static`'s default (shooting) answer to the same inputs and loads
    (what the rod does, to within `reference.tip_error`); None, said in the message, when
    the reference failed."""
    if not reference.success:
        note = f"; no model error (the shooting reference failed: {reference.message})"
        return _replaced(result, message=result.message + note)
    error = float(np.linalg.norm(result.tip_position - reference.tip_position))
    return _replaced(result, model_error=error)
