"""Seed 004's magnetic set-ups (ALGORITHMS.md E.7, Tables 6-7) as description files."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import softrod
from softrod.dynamics import Magnet, MagneticField, simulate_dynamic
from softrod.rods import compile_model

SEED004 = Path(__file__).resolve().parents[1] / "examples" / "seed004"
#: The tables print 3-4 significant digits, some truncated (Table 6's EA = 4.5867 N is printed
#: 4.58): the description's values agree with the printed ones to 0.2 %.
TABLE_RTOL = 2e-3
#: The description run and the API run are the same discrete model (magnet mass lumped on the
#: tip node either way); they agree to round-off [m].
SAME_MODEL_ATOL = 1e-12

#: Table (file, M [kg/m], EA [N], EI [N m^2]) in the SI of ALGORITHMS.md E.7.
TABLES = [
    ("table6_pdms_tip_magnet.yaml", 1.383e-2, 4.58, 4.59e-6),
    ("table7_square_two_magnets.yaml", 4.40e-3, 14.6, 4.87e-6),
]


@pytest.mark.parametrize(("name", "M", "EA", "EI"), TABLES)
def test_description_reproduces_the_table(name, M, EA, EI):
    model = compile_model(softrod.load_robot(SEED004 / name))
    np.testing.assert_allclose(model.rho_A, M, rtol=TABLE_RTOL)
    np.testing.assert_allclose(model.K_se[:, 2], EA, rtol=TABLE_RTOL)
    np.testing.assert_allclose(model.K_bt[:, 0], EI, rtol=TABLE_RTOL)


def test_table6_tip_magnet_is_seed004s_cylinder_and_runs_from_the_description():
    robot = softrod.load_robot(SEED004 / "table6_pdms_tip_magnet.yaml")
    cyl = Magnet.cylinder(s=0.06055, diameter=2e-3, height=4e-3, remanence=1.32, mass=9.6e-5)
    (_, s_mag, mag) = robot.magnet_list()[0]
    assert s_mag == pytest.approx(cyl.s, abs=1e-15)
    np.testing.assert_allclose(mag.moment, cyl.moment, rtol=1e-3)  # 1.32e-2 as written
    # The same run from the description and from seed 004's API (magnet passed in, its mass
    # on the magnet): gravity across the rod, a field lifting the tip.
    field = MagneticField(uniform=[0.0, 7.75e-3, 0.0])
    kw = dict(gravity=[0.0, -9.81, 0.0], field=field, elements=10, damping=2e-3, dt=9e-5)
    described = simulate_dynamic(robot, 0.05, **kw)
    bare = robot.to_dict()
    bare["segments"][0].update(disks=0, disk_mass=0.0, magnets=[])
    api = Magnet(s=cyl.s, moment=np.array(mag.moment), mass=9.6e-5)
    passed = simulate_dynamic(softrod.load_robot(bare), 0.05, magnets=[api], **kw)
    assert described.success and passed.success
    np.testing.assert_allclose(described.positions, passed.positions, atol=SAME_MODEL_ATOL)
    assert abs(described.tip_position[-1, 1]) > 1e-4  # it moved


def test_table7_magnets_sit_where_seed004_puts_them():
    robot = softrod.load_robot(SEED004 / "table7_square_two_magnets.yaml")
    mags = robot.magnet_list()
    assert [round(s, 12) for _, s, _ in mags] == [round(0.0855 - 0.0361, 12), 0.0855]
    assert math.isclose(robot.total_length, 0.0855, rel_tol=1e-12)
