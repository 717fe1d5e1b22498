"""Plots of continuum-robot shapes (Matplotlib, rendered with Agg; no pyplot state).

>>> import softrod
>>> from softrod.viz import plot_shape
>>> robot = softrod.load_robot("examples/robots/tdcr3.yaml")  # doctest: +SKIP
>>> sol = softrod.solve_static(robot, tensions=[1, 0, 0, 0, 0, 0, 0, 0, 0])  # doctest: +SKIP
>>> plot_shape(robot, sol).savefig("shape.png", dpi=200)  # doctest: +SKIP
"""

from softrod.viz._figures import TendonPanel, plot_pcc_comparison, plot_tendon_panels
from softrod.viz._shape import (
    MM,
    disk_circles,
    disk_nodes,
    draw_base,
    draw_robot,
    method_label,
    plot_shape,
    set_axes_equal,
    tendon_paths,
)

__all__ = [
    "MM",
    "TendonPanel",
    "disk_circles",
    "disk_nodes",
    "draw_base",
    "draw_robot",
    "method_label",
    "plot_pcc_comparison",
    "plot_shape",
    "plot_tendon_panels",
    "set_axes_equal",
    "tendon_paths",
]
