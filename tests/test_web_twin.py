"""The browser twin's state class (softrod.web.RobotTwin) without a browser or viser."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

from softrod.web import RobotTwin, _twin, disk_circles, tendon_paths, tube_mesh

#: Tip agreement of PCC and the exact rod under tendon loads alone [m]: both are constant
#: curvature there, so only the solver tolerance separates them.
TIP_MATCH = 1e-6
#: MuJoCo chain (10 links) vs the exact tip at a moderate bend [m] (O(1/N^2) discretization).
CHAIN_MATCH = 1e-3
#: A chain solve warm-started with the previous Jacobian vs a cold one [m]: both converge to
#: the same Newton step tolerance (1e-10 rad per joint).
WARM_MATCH = 1e-9
#: How close the Jacobian drag brings the tip to a reachable target [m].
DRAG_MATCH = 1e-3


@pytest.fixture(scope="module")
def twin() -> RobotTwin:
    return RobotTwin("tdcr3", models=("exact", "pcc"))


def test_rest_and_a_pull_agree_with_constant_curvature(twin):
    twin.tensions[:] = 0.0
    frame = twin.solve()
    L = twin.spec.total_length
    for view in frame.views.values():
        assert view.success
        np.testing.assert_allclose(view.tip_position, [0.0, 0.0, L], atol=TIP_MATCH)
    twin.set_tension(0, 5.0)
    frame = twin.solve()
    exact, pcc = frame.views["exact"], frame.views["pcc"]
    assert exact.tip_position[0] > 0.05  # tendon 1 (angle 0) bends toward +x
    np.testing.assert_allclose(exact.tip_position, pcc.tip_position, atol=TIP_MATCH)
    assert frame.tip_distance[("exact", "pcc")] < TIP_MATCH
    assert exact.tendon_tension[0] == pytest.approx(5.0)
    assert exact.stable is True


def test_a_failed_solve_is_shown_failed_and_not_warm_started(twin, monkeypatch):
    twin.set_tension(0, 2.0)
    good = twin.solve().views["exact"]
    warm = twin._warm["exact"]

    solve = _twin.solve_static

    def failing(*args, **kwargs):
        sol = solve(*args, **kwargs)
        return dataclasses.replace(sol, success=False, message="did not converge")

    monkeypatch.setattr(_twin, "solve_static", failing)
    twin.set_tension(0, 3.0)
    bad = twin.solve().views["exact"]
    assert not bad.success and bad.message == "did not converge"
    # Its own shape (tension 3 N), not the last good one, and the warm start is kept.
    assert not np.allclose(bad.tip_position, good.tip_position)
    assert twin._warm["exact"] is warm


def test_inputs_are_checked(twin):
    with pytest.raises(ValueError, match="finite"):
        twin.set_tension(0, float("nan"))
    with pytest.raises(ValueError, match="models"):
        twin.set_models(["exact", "fem"])
    with pytest.raises(ValueError, match="tip force"):
        twin.set_tip_load(force=[0.0, 1.0])
    with pytest.raises(ValueError, match="links"):
        twin.set_links(0)
    twin.set_tension(0, 1e9)
    assert twin.tensions[0] == twin.tension_max[0]


def test_drag_moves_the_tip_to_a_reachable_target(twin):
    # The target is the tip at known tensions, so it is reachable within the limits.
    twin.tensions[:] = 0.0
    twin.set_tension(1, 3.0)
    target = twin.solve().views["exact"].tip_position.copy()
    twin.tensions[:] = 0.0
    twin.set_tension(0, 1.0)
    twin.solve()
    frame = twin.drag_tip(target, steps=20)
    assert frame.views["exact"].success
    np.testing.assert_allclose(frame.views["exact"].tip_position, target, atol=DRAG_MATCH)
    assert np.all(twin.tensions >= 0.0) and np.all(twin.tensions <= twin.tension_max)


def test_drawing_geometry(twin):
    twin.tensions[:] = 0.0
    view = twin.solve().views["exact"]
    n = len(view.positions)
    verts, faces = tube_mesh(view.positions, 0.001, view.rotations, sides=8)
    assert verts.shape == (8 * n, 3) and faces.shape == (2 * 8 * (n - 1), 3)
    assert faces.max() == 8 * n - 1
    # Straight rod: every tendon runs parallel to z at its offset, from the base to its anchor.
    paths = tendon_paths(twin, view)
    n_disks = [s.disks for s in twin.properties.segments]
    assert len(paths) == sum(sum(n_disks[: t.segment + 1]) for t in twin.properties.tendons)
    t0 = twin.properties.tendons[0]
    np.testing.assert_allclose(paths[0, 0], [t0.offset, 0.0, 0.0], atol=1e-12)
    assert disk_circles(twin, view, sides=16).shape == (16 * sum(n_disks), 2, 3)


def test_mujoco_chain_overlay():
    pytest.importorskip("mujoco")
    chain = RobotTwin("tdcr3", models=("exact", "mujoco"), links=10)
    chain.set_tension(0, 5.0)
    frame = chain.solve()
    assert frame.views["mujoco"].success
    assert frame.tip_distance[("exact", "mujoco")] < CHAIN_MATCH


def test_mujoco_chain_reuses_its_jacobian_and_lands_on_the_cold_answer(monkeypatch):
    pytest.importorskip("mujoco")
    from softrod.mujoco import _equilibrium

    built = []
    jacobian = _equilibrium._jacobian
    monkeypatch.setattr(_equilibrium, "_jacobian", lambda *a: built.append(1) or jacobian(*a))
    warm = RobotTwin("tdcr3", models=("mujoco",), links=8)
    warm.solve()
    assert warm._warm["mujoco"].jacobian.shape == (24, 24)
    built.clear()
    # A dragged slider: small steps reuse the last Jacobian (Broyden), no finite differences.
    for value in (0.2, 0.4, 0.6):
        warm.set_tension(0, value)
        view = warm.solve().views["mujoco"]
        assert view.success
    assert len(built) <= 1
    cold = RobotTwin("tdcr3", models=("mujoco",), links=8)
    cold.set_tension(0, 0.6)
    np.testing.assert_allclose(
        view.tip_position, cold.solve().views["mujoco"].tip_position, atol=WARM_MATCH
    )


def test_export_is_one_self_contained_file(tmp_path):
    pytest.importorskip("viser")
    from softrod.web import export_page

    html = export_page("tdcr3", tmp_path / "page.html", frames=3).read_text()
    # viser's client and the recorded scene are inline: no script or style fetched from elsewhere.
    assert "window.__VISER_EMBED_DATA__=" in html
    assert not re.search(r"<(script|link)[^>]+(src|href)=\"(https?:)?//", html)


def test_view_web_without_viser_is_one_line_with_the_install_hint(monkeypatch, capsys):
    import sys

    from softrod.cli import main

    monkeypatch.setitem(sys.modules, "viser", None)  # import viser raises ImportError
    assert main(["view", "tdcr3", "--web"]) == 2
    err = capsys.readouterr().err
    assert "pip install softrod[web]" in err and err.count("\n") == 1


def test_length_control_bends_toward_the_shortened_tendon():
    twin = RobotTwin("tdcr3", control="length")
    rest = twin.solve().views["exact"]
    assert rest.success
    np.testing.assert_allclose(rest.tip_position, [0, 0, twin.spec.total_length], atol=TIP_MATCH)
    twin.set_length(0, 0.5 * (twin.length_min[0] + twin.length_max[0]))
    view = twin.solve().views["exact"]
    assert view.success and view.tip_position[0] > 0.01 and view.tendon_tension[0] > 0
    with pytest.raises(ValueError, match="tension control"):
        twin.set_models(["exact", "mujoco"])
