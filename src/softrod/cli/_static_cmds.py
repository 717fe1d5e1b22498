"""Static-model commands: `softrod solve`, `info`, `plot`, `schema` and `demo`.

Heavy imports (matplotlib, mujoco) happen inside the commands that need them, so that
`softrod solve ... --json` starts fast.
"""

from __future__ import annotations

import json
import math
import sys
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import numpy as np
import typer

from softrod.cli._app import CliError, app
from softrod.cli._outputs import prepare_output
from softrod.cli._resolve import find_robot, parse_point_load, parse_vector, shipped_robots
from softrod.description import RobotSpec, json_safe, load_robot, robot_json_schema
from softrod.rods import (
    METHODS,
    RodModel,
    StaticResult,
    compile_model,
    robot_properties,
    solve_static,
)

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["DEMO_HOOKS", "describe_loads", "json_safe", "load_spec", "robot_info"]

# ---------------------------------------------------------------------------------------------
# Options shared by `solve` and `plot`

RobotArg = Annotated[
    str,
    typer.Argument(
        metavar="ROBOT",
        help="Robot description (.yaml/.json), or the name of a shipped example: "
        + ", ".join(shipped_robots())
        + ".",
        show_default=False,
    ),
]
TensionsOpt = Annotated[
    str | None,
    typer.Option(
        "--tensions",
        metavar="T1,T2,...",
        help="Tendon tensions [N] >= 0, one per tendon, segment by segment.",
    ),
]
LengthsOpt = Annotated[
    str | None,
    typer.Option(
        "--lengths",
        metavar="L1,L2,...",
        help="Commanded tendon lengths [m] (elastic tendons; instead of --tensions).",
    ),
]
TipForceOpt = Annotated[
    str | None,
    typer.Option("--tip-force", metavar="FX,FY,FZ", help="World-frame force at the tip [N]."),
]
TipMomentOpt = Annotated[
    str | None,
    typer.Option("--tip-moment", metavar="MX,MY,MZ", help="World-frame moment at the tip [N m]."),
]
DistributedOpt = Annotated[
    str | None,
    typer.Option(
        "--distributed-force",
        metavar="FX,FY,FZ",
        help="Uniform world-frame load per unit length [N/m].",
    ),
]
GravityOpt = Annotated[
    str | None,
    typer.Option(
        "--gravity",
        metavar="GX,GY,GZ",
        help="Gravity [m/s^2]; adds the weight of backbone and disks.",
    ),
]
PointLoadOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--point-load",
        metavar="S,FX,FY,FZ[,MX,MY,MZ]",
        help="World-frame point load at arc length S [m] (force [N], moment [N m]); repeatable.",
    ),
]
MethodOpt = Annotated[
    str,
    typer.Option(
        "--method",
        help=f"Static method: {', '.join(METHODS)} (pcc: constant curvature, no external loads).",
    ),
]
StepsOpt = Annotated[
    int | None, typer.Option("--steps", help="Integration steps along the backbone.")
]
RtolOpt = Annotated[
    float | None, typer.Option("--rtol", help="Tolerance on the scaled boundary residual.")
]
MaxIterOpt = Annotated[
    int | None, typer.Option("--max-iter", help="Newton iterations before load continuation.")
]


@dataclass
class _SolveRequest:
    """A validated `solve`/`plot` invocation: the robot and the keyword arguments of
    `solve_static` (lists in SI units)."""

    path: Path
    spec: RobotSpec
    method: str
    loads: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)

    def solve(self, method: str | None = None) -> tuple[StaticResult, float]:
        """Run `solve_static`; returns the result and its wall time [s].

        An unloaded solve runs first, untimed: the first call in a process loads the compiled
        kernels (~0.3 s), which would otherwise swamp the solver's own time (~1 ms).
        """
        method = method or self.method
        solve_static(self.spec, method=method, steps=self.options.get("steps"))
        start = time.perf_counter()
        result = solve_static(self.spec, method=method, **self.loads, **self.options)
        return result, time.perf_counter() - start


def load_spec(robot: str) -> tuple[Path, RobotSpec]:
    """Resolve ROBOT (path or shipped name) and load it; errors are one line."""
    path = find_robot(robot)
    return path, load_robot(path)


def _tendon_vector(option: str, text: str, spec: RobotSpec) -> list[float]:
    n_t = spec.n_tendons
    if n_t == 0:
        raise CliError(f"{option}: robot {spec.name!r} has no tendons, got {text!r}")
    per_seg = "+".join(str(len(s.tendons)) for s in spec.segments)
    what = f"one per tendon, segment by segment; {spec.name} has {per_seg}"
    return parse_vector(option, text, n_t, what)


def _solve_request(
    robot: str,
    tensions: str | None,
    lengths: str | None,
    tip_force: str | None,
    tip_moment: str | None,
    distributed_force: str | None,
    gravity: str | None,
    point_load: list[str] | None,
    method: str,
    steps: int | None,
    rtol: float | None,
    max_iter: int | None,
) -> _SolveRequest:
    """Parse and check the shared solve options; every error names its option and value."""
    if method not in METHODS:
        raise CliError(f"--method must be one of {', '.join(METHODS)}, got {method!r}")
    if steps is not None and steps < 1:
        raise CliError(f"--steps must be >= 1, got {steps}")
    if rtol is not None and not (rtol > 0 and math.isfinite(rtol)):
        raise CliError(f"--rtol must be a positive number, got {rtol}")
    if max_iter is not None and max_iter < 0:
        raise CliError(f"--max-iter must be >= 0, got {max_iter}")
    if tensions is not None and lengths is not None:
        raise CliError("give --tensions or --lengths, not both")
    path, spec = load_spec(robot)

    loads: dict[str, Any] = {}
    if tensions is not None:
        tau = _tendon_vector("--tensions", tensions, spec)
        for i, value in enumerate(tau):
            if value < 0:
                raise CliError(
                    f"--tensions: value {i + 1} of {tensions!r} must be >= 0 "
                    f"(tendons only pull), got {value:g}"
                )
        loads["tensions"] = tau
    if lengths is not None:
        lens = _tendon_vector("--lengths", lengths, spec)
        for i, value in enumerate(lens):
            if value <= 0:
                raise CliError(
                    f"--lengths: value {i + 1} of {lengths!r} must be > 0 [m], got {value:g}"
                )
        loads["lengths"] = lens
    vectors = (
        ("tip_force", "--tip-force", tip_force, "fx,fy,fz"),
        ("tip_moment", "--tip-moment", tip_moment, "mx,my,mz"),
        ("distributed_force", "--distributed-force", distributed_force, "fx,fy,fz"),
        ("gravity", "--gravity", gravity, "gx,gy,gz"),
    )
    for key, option, text, what in vectors:
        if text is not None:
            loads[key] = parse_vector(option, text, 3, what)
    if point_load:
        length = spec.total_length
        parsed = []
        for text in point_load:
            s, force, moment = parse_point_load(text)
            if not 0.0 < s <= length * (1.0 + 1e-12):
                raise CliError(
                    f"--point-load {text!r}: s must be in (0, {length:g}] m (the robot's "
                    f"length), got {s:g}"
                )
            parsed.append((s, force, moment))
        loads["point_loads"] = parsed

    options: dict[str, Any] = {}
    if steps is not None:
        options["steps"] = steps
    if rtol is not None:
        options["rtol"] = rtol
    if max_iter is not None:
        options["max_iter"] = max_iter
    return _SolveRequest(path=path, spec=spec, method=method, loads=loads, options=options)


def _fmt_vec(values: Any, unit: str = "", fmt: str = "{:g}") -> str:
    text = ", ".join(fmt.format(float(v)) for v in values)
    return f"({text})" + (f" {unit}" if unit else "")


def describe_loads(spec: RobotSpec, loads: dict[str, Any]) -> str:
    """One line naming the inputs that are set, e.g. `τ1 = 1 N; tip force (0, 0.1, 0) N`
    (tendons are numbered from 1 in input order)."""
    parts = []
    if "lengths" in loads:
        parts.append("tendon lengths " + _fmt_vec(1e3 * np.asarray(loads["lengths"]), "mm"))
    elif spec.n_tendons:
        tau = loads.get("tensions", [])
        pulled = [f"τ{i + 1} = {t:g}" for i, t in enumerate(tau) if t > 0]
        parts.append(", ".join(pulled) + " N" if pulled else "no tendon tension")
    names = (
        ("tip_force", "tip force", "N"),
        ("tip_moment", "tip moment", "N m"),
        ("distributed_force", "distributed", "N/m"),
        ("gravity", "gravity", "m/s²"),
    )
    for key, name, unit in names:
        if key in loads and any(v != 0 for v in loads[key]):
            parts.append(f"{name} {_fmt_vec(loads[key], unit)}")
    for s, force, moment in loads.get("point_loads", []):
        text = f"point load at {1e3 * s:g} mm {_fmt_vec(force, 'N')}"
        if any(m != 0 for m in moment):
            text += f", {_fmt_vec(moment, 'N m')}"
        parts.append(text)
    return "; ".join(parts) if parts else "no load"


def _console(stderr: bool = False) -> Console:
    from rich.console import Console

    return Console(stderr=stderr, highlight=False)


def _fail(result: StaticResult) -> None:
    """Report a failed solve on stderr and exit with code 1."""
    _stderr_line(f"softrod: solve failed: {result.message}")
    raise typer.Exit(1)


def _stderr_line(text: str) -> None:
    """One unwrapped line on stderr (scripts grep these; rich would wrap at 80 columns)."""
    print(" ".join(text.split()), file=sys.stderr)


# ---------------------------------------------------------------------------------------------
# solve


@app.command("solve")
def solve_cmd(
    robot: RobotArg,
    tensions: TensionsOpt = None,
    lengths: LengthsOpt = None,
    tip_force: TipForceOpt = None,
    tip_moment: TipMomentOpt = None,
    distributed_force: DistributedOpt = None,
    gravity: GravityOpt = None,
    point_load: PointLoadOpt = None,
    method: MethodOpt = "shooting",
    steps: StepsOpt = None,
    rtol: RtolOpt = None,
    max_iter: MaxIterOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    shape: Annotated[
        bool, typer.Option("--shape", help="With --json: add the backbone samples s, positions.")
    ] = False,
) -> None:
    """Static equilibrium under tendon and external loads (SI units, world frame).

    Exits 1 when the solver does not converge (the JSON says so), 2 on bad input.
    """
    req = _solve_request(
        robot,
        tensions,
        lengths,
        tip_force,
        tip_moment,
        distributed_force,
        gravity,
        point_load,
        method,
        steps,
        rtol,
        max_iter,
    )
    result, wall = req.solve()
    if as_json:
        out = {
            "robot": req.spec.name,
            **result.to_dict(shape=shape),
            "solve_time_s": wall,
            "robot_file": str(req.path),
            "inputs": req.loads,
        }
        print(json.dumps(json_safe(out)))
    else:
        _print_solution(req, result, wall)
    if not result.success:
        _fail(result)


def _print_solution(req: _SolveRequest, result: StaticResult, wall: float) -> None:
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    spec = req.spec
    console = _console()
    model_name = "Cosserat" if spec.model == "cosserat" else "Kirchhoff"
    console.print(
        f"[bold]{escape(spec.name)}[/bold]  {model_name} rod, {spec.n_segments} segment(s), "
        f"{1e3 * spec.total_length:.1f} mm, {spec.n_tendons} tendon(s)"
    )
    state = "[green]converged[/green]" if result.success else "[red]FAILED[/red]"
    console.print(
        f"{result.method}: {state} - residual {result.residual:.2e}, {result.nit} iterations, "
        f"{result.nfev} integrations, {1e3 * wall:.1f} ms"
    )
    console.print(f"loads: {describe_loads(spec, req.loads)}", markup=False)

    # Key/value rows; Text() keeps unit brackets such as [mm] out of rich markup.
    rows = [("tip position [mm]", "  ".join(f"{v:9.3f}" for v in 1e3 * result.tip_position))]
    tangent = result.tip_rotation[:, 2]
    base_axis = compile_model(spec).base_rotation[:, 2]
    bend = math.degrees(math.acos(float(np.clip(tangent @ base_axis, -1.0, 1.0))))
    rows.append(("tip tangent", "  ".join(f"{v:9.4f}" for v in tangent)))
    rows.append(("tip bend from base axis", f"{bend:.2f}°"))
    if result.tendon_tension.size:
        rows.append(("tendon tensions [N]", _by_segment(spec, result.tendon_tension, "{:g}")))
        rows.append(
            ("tendon lengths [mm]", _by_segment(spec, 1e3 * result.tendon_length, "{:.2f}"))
        )
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    for key, value in rows:
        table.add_row(Text(key), Text(value))
    console.print(table)
    if not result.success or result.message != "converged":
        console.print(f"message: {result.message}", markup=False)


def _by_segment(spec: RobotSpec, values: np.ndarray, fmt: str) -> str:
    """Values grouped per segment: `1 0 0 | 0 0 0`."""
    groups, k = [], 0
    for seg in spec.segments:
        n = len(seg.tendons)
        if n:
            groups.append(" ".join(fmt.format(float(v)) for v in values[k : k + n]))
        k += n
    return " | ".join(groups)


# ---------------------------------------------------------------------------------------------
# info


def robot_info(spec: RobotSpec) -> dict[str, Any]:
    """Derived quantities of a robot as a dict (`softrod.rods.robot_properties`): stiffnesses,
    masses, lengths, tendon layout, buckling load and the 90-degree tendon tensions."""
    return robot_properties(compile_model(spec)).to_dict()


@app.command("info")
def info_cmd(
    robot: RobotArg,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Derived properties: stiffnesses, masses, lengths, tendon layout, buckling load."""
    path, spec = load_spec(robot)
    data = robot_info(spec)
    if as_json:
        print(json.dumps(json_safe({**data, "robot_file": str(path)})))
        return
    _print_info(data, path)


def _print_info(data: dict[str, Any], path: Path) -> None:
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    console = _console()
    console.print(
        f"[bold]{escape(data['robot'])}[/bold]  {data['model']} rod, "
        f"{data['n_segments']} segment(s), {data['n_tendons']} tendon(s), "
        f"length {1e3 * data['total_length']:.2f} mm"
    )
    console.print(f"file: {path}", markup=False)

    # Segments as columns, quantities as rows (fits a terminal for any number of segments).
    segs = data["segments"]
    quantities: list[tuple[str, Any]] = [
        ("length [mm]", lambda g: f"{1e3 * g['length']:.2f}"),
        ("EI [N m²]", lambda g: f"{g['EI']:.4g}"),
        ("GJ [N m²]", lambda g: f"{g['GJ']:.4g}"),
        ("EA [N]", lambda g: f"{g['EA']:.4g}"),
        ("GA [N]", lambda g: f"{g['GA']:.4g}"),
        ("mass per length [g/m]", lambda g: f"{1e3 * g['mass_per_length']:.4g}"),
        ("backbone mass [g]", lambda g: f"{1e3 * g['backbone_mass']:.4g}"),
        ("disks", lambda g: str(g["disks"])),
        (
            "disk radius [mm]",
            lambda g: "-" if g["disk_radius"] is None else f"{1e3 * g['disk_radius']:g}",
        ),
        ("disks mass [g]", lambda g: f"{1e3 * g['disks_mass']:.4g}"),
        ("tendons", lambda g: str(g["n_tendons"])),
    ]
    seg_table = Table(box=None, pad_edge=False)
    seg_table.add_column("segment", style="bold")
    for g in segs:
        seg_table.add_column(str(g["index"]), justify="right")
    for name, fmt in quantities:
        seg_table.add_row(Text(name), *[fmt(g) for g in segs])
    console.print(seg_table)

    mass = data["mass"]
    console.print(
        f"mass: backbone {1e3 * mass['backbone']:.4g} g, disks {1e3 * mass['disks']:.4g} g, "
        f"total {1e3 * mass['total']:.4g} g",
        markup=False,
    )
    console.print(
        f"buckling load (Euler, fixed-free, π² EI / 4L²): {data['buckling_load']:.4g} N",
        markup=False,
    )
    if data["tendons"]:
        t_table = Table(box=None, pad_edge=False)
        for name in (
            "tendon",
            "segment",
            "offset [mm]",
            "angle [°]",
            "stiffness [N/m]",
            "rest length [mm]",
            "τ for 90° [N]",
        ):
            t_table.add_column(Text(name), justify="right")
        for t in data["tendons"]:
            stiff = t["stiffness"]
            t_table.add_row(
                str(t["index"]),
                str(t["segment"]),
                f"{1e3 * t['offset']:g}",
                f"{t['angle_deg']:g}",
                "-" if stiff is None else f"{stiff:g}",
                f"{1e3 * t['rest_length']:.2f}",
                f"{t['tension_90deg']:.3g}",
            )
        console.print(t_table)
        console.print(
            "τ for 90°: tension of one tendon alone that turns the tip 90° (PCC)",
            markup=False,
            style="dim",
        )


# ---------------------------------------------------------------------------------------------
# plot


#: Largest --dpi: Matplotlib's raster backend stops at 2^16 pixels a side, and the default
#: 6.4 x 4.8 inch figure reaches it near 10 000 dpi; 2400 is beyond any print resolution.
MAX_DPI = 2400


def _check_image_path(path: Path) -> None:
    """Reject an output path whose suffix Matplotlib cannot write, before any work is done."""
    from matplotlib.backend_bases import FigureCanvasBase

    formats = FigureCanvasBase.get_supported_filetypes()
    suffix = path.suffix.lower().lstrip(".")
    if suffix not in formats:
        raise CliError(
            f"-o/--output must end in an image suffix ({', '.join('.' + f for f in formats)}), "
            f"got {str(path)!r}"
        )


def _save(fig: Any, path: Path, dpi: int) -> Path:
    path = Path(path)
    _check_image_path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    return path


@app.command("plot")
def plot_cmd(
    robot: RobotArg,
    tensions: TensionsOpt = None,
    lengths: LengthsOpt = None,
    tip_force: TipForceOpt = None,
    tip_moment: TipMomentOpt = None,
    distributed_force: DistributedOpt = None,
    gravity: GravityOpt = None,
    point_load: PointLoadOpt = None,
    method: MethodOpt = "shooting",
    steps: StepsOpt = None,
    rtol: RtolOpt = None,
    max_iter: MaxIterOpt = None,
    output: Annotated[
        Path, typer.Option("-o", "--output", help="Image file (.png, .pdf, .svg).")
    ] = Path("shape.png"),
    compare_pcc: Annotated[
        bool, typer.Option("--compare-pcc", help="Overlay the constant-curvature prediction.")
    ] = False,
    dpi: Annotated[
        int, typer.Option("--dpi", help=f"Resolution of raster images [dots/inch], 10-{MAX_DPI}.")
    ] = 200,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace an existing output file.")
    ] = False,
) -> None:
    """3-D equilibrium shape with disks and tendons (mm, equal axis scaling)."""
    req = _solve_request(
        robot,
        tensions,
        lengths,
        tip_force,
        tip_moment,
        distributed_force,
        gravity,
        point_load,
        method,
        steps,
        rtol,
        max_iter,
    )
    if compare_pcc and method == "pcc":
        raise CliError("--compare-pcc compares against --method pcc; use another --method")
    if not 10 <= dpi <= MAX_DPI:
        raise CliError(f"--dpi must be within 10..{MAX_DPI}, got {dpi}")
    _check_image_path(output)
    prepare_output(output, overwrite=overwrite)
    result, _ = req.solve()
    reference = req.solve("pcc")[0] if compare_pcc else None

    from softrod.viz import plot_shape

    title = f"{req.spec.name}: " + describe_loads(req.spec, req.loads)
    if not result.success:
        title += f" — NOT CONVERGED ({100 * result.load_scale:.0f}% of the load)"
    fig = plot_shape(
        compile_model(req.spec),
        result,
        reference=reference,
        tip_force=req.loads.get("tip_force"),
        title=textwrap.fill(title, 60),
    )
    path = _save(fig, output, dpi)
    print(f"wrote {path}")
    if not result.success:
        _fail(result)


# ---------------------------------------------------------------------------------------------
# schema


@app.command("schema")
def schema_cmd(
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="Write to this file instead.")
    ] = None,
) -> None:
    """JSON Schema of the robot description format."""
    text = json.dumps(robot_json_schema(), indent=2)
    if output is None:
        print(text)
        return
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text + "\n")
    print(f"wrote {output}")


# ---------------------------------------------------------------------------------------------
# demo

#: Optional demo hooks of other layers: (name, module, function taking the output folder).
DEMO_HOOKS: tuple[tuple[str, str, str], ...] = (("mujoco", "softrod.mujoco.demo", "run_demo"),)

#: SoftManiSim benchmark (seed 000, Appendix B): distributed load [1, 1, 1] N/m and tip forces
#: of 0-2 N, here at fixed directions about z so the error curves read clearly, on top of a
#: 2 N pull of tendon 1.
_SMS_DISTRIBUTED = (1.0, 1.0, 1.0)
_SMS_TENSIONS = (2.0, 0.0, 0.0, 0.0)
_TDCR_GRAVITY = (0.0, 0.0, -9.81)
#: Resolution of the demo figures [dpi].
_DEMO_DPI = 170


@dataclass(frozen=True)
class _Pull:
    """A tdcr3 panel: title, tension pattern (n_t,) [N], and the scales applied to it."""

    title: str
    pattern: tuple[float, ...]
    scales: tuple[float, ...]


def _tdcr_pulls(quick: bool) -> list[_Pull]:
    def pattern(**tau: float) -> tuple[float, ...]:
        out = [0.0] * 9
        for key, value in tau.items():
            out[int(key[1:]) - 1] = value
        return tuple(out)

    def scales(top: float) -> tuple[float, ...]:
        return tuple(float(x) for x in np.linspace(0.0, top, 2 if quick else 5))

    return [
        _Pull("distal tendon 7 (segment 3, 80°)", pattern(t7=1.0), scales(4.0)),
        _Pull("proximal tendon 1 (segment 1, 0°)", pattern(t1=1.0), scales(12.0)),
        _Pull("S-curve: tendons 1 (0°) and 8 (200°)", pattern(t1=4.0, t8=2.0), scales(3.0)),
        _Pull(
            "spatial: tendons 1 (0°), 5 (160°), 9 (320°)",
            pattern(t1=2.0, t5=1.0, t9=1.0),
            scales(4.0),
        ),
    ]


def _tension_label(tau: list[float]) -> str:
    """Legend text of a tension vector: `τ1 = 4, τ8 = 1 N`, or `no pull`."""
    pulled = [f"τ{i + 1} = {t:g}" for i, t in enumerate(tau) if t > 0]
    return ", ".join(pulled) + " N" if pulled else "no pull"


def _timed(fn: Any, *args: Any, **kwargs: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    value = fn(*args, **kwargs)
    return value, time.perf_counter() - start


def _case_record(result: StaticResult, wall: float, **extra: Any) -> dict[str, Any]:
    return {
        **extra,
        "tip_position": result.tip_position.tolist(),
        "success": result.success,
        "message": result.message,
        "residual": result.residual,
        "nit": result.nit,
        "solve_time_s": wall,
    }


def _demo_softmanisim(
    model: RodModel, quick: bool, out_dir: Path, advance: Callable[[], None]
) -> tuple[dict[str, Any], Path]:
    """(a) The SoftManiSim robot under the benchmark loads vs constant curvature."""
    from softrod.viz import plot_pcc_comparison

    magnitudes = (0.0, 1.0, 2.0) if quick else tuple(np.linspace(0.0, 2.0, 9).tolist())
    angles = (0.0, 90.0) if quick else (0.0, 90.0, 180.0, 270.0)
    pcc = solve_static(model, _SMS_TENSIONS, method="pcc")
    cases, loaded, mags, angs = [], [], [], []
    for angle in angles:
        guess = None  # warm start along each load ramp
        for mag in magnitudes:
            a = math.radians(angle)
            force = (mag * math.cos(a), mag * math.sin(a), 0.0)
            res, wall = _timed(
                solve_static,
                model,
                _SMS_TENSIONS,
                tip_force=force,
                distributed_force=_SMS_DISTRIBUTED,
                guess=guess,
            )
            guess = res if res.success else None
            err = float(np.linalg.norm(res.tip_position - pcc.tip_position))
            cases.append(
                _case_record(
                    res,
                    wall,
                    tip_force_magnitude=mag,
                    tip_force_angle_deg=angle,
                    tip_force=list(force),
                    pcc_tip_error=err,
                )
            )
            loaded.append(res)
            mags.append(mag)
            angs.append(angle)
            advance()
    errors = [c["pcc_tip_error"] for c in cases]
    record = {
        "robot": model.spec.name,
        "tensions": list(_SMS_TENSIONS),
        "distributed_force": list(_SMS_DISTRIBUTED),
        "pcc_tip_position": pcc.tip_position.tolist(),
        "cases": cases,
        "max_pcc_tip_error": max(errors),
        "mean_pcc_tip_error": float(np.mean(errors)),
        "all_success": all(c["success"] for c in cases),
    }
    fig = plot_pcc_comparison(
        model,
        loaded,
        mags,
        angs,
        pcc,
        title=f"SoftManiSim robot: τ1 = {_SMS_TENSIONS[0]:g} N, distributed load "
        f"{_fmt_vec(_SMS_DISTRIBUTED, 'N/m')}, tip force 0–{max(magnitudes):g} N",
    )
    path = _save(fig, out_dir / "softmanisim_vs_pcc.png", _DEMO_DPI)
    advance()
    return record, path


def _demo_tdcr(
    model: RodModel, quick: bool, out_dir: Path, advance: Callable[[], None]
) -> tuple[dict[str, Any], Path]:
    """(b) The 3-segment TDCR under growing tendon pulls, with gravity, vs PCC."""
    from softrod.viz import TendonPanel, plot_tendon_panels

    panels, records = [], []
    for pull in _tdcr_pulls(quick):
        results, labels, cases = [], [], []
        guess = None
        for scale in pull.scales:
            tau = (scale * np.asarray(pull.pattern)).tolist()
            res, wall = _timed(solve_static, model, tau, gravity=_TDCR_GRAVITY, guess=guess)
            guess = res if res.success else None
            results.append(res)
            labels.append(_tension_label(tau))
            cases.append(_case_record(res, wall, tensions=tau))
            advance()
        pcc = solve_static(model, cases[-1]["tensions"], method="pcc")
        panels.append(TendonPanel(pull.title, results, labels, pcc=pcc))
        records.append(
            {
                "title": pull.title,
                "cases": cases,
                "pcc_tip_position": pcc.tip_position.tolist(),
                "pcc_tip_error_at_max_pull": float(
                    np.linalg.norm(results[-1].tip_position - pcc.tip_position)
                ),
            }
        )
    record = {
        "robot": model.spec.name,
        "gravity": list(_TDCR_GRAVITY),
        "panels": records,
        "all_success": all(c["success"] for r in records for c in r["cases"]),
    }
    fig = plot_tendon_panels(
        model,
        panels,
        title="3-segment TDCR (tdcr3) under tendon pulls, with gravity "
        f"{_fmt_vec(_TDCR_GRAVITY, 'm/s²')}; dashed: constant curvature",
    )
    path = _save(fig, out_dir / "tdcr3_tendon_pulls.png", _DEMO_DPI)
    advance()
    return record, path


def _optional_missing(exc: ImportError, module: str) -> bool:
    """True when `exc` means an optional piece is not installed or not written yet: the hook
    module itself (or a parent package), or a third-party dependency. A missing softrod
    module elsewhere is a bug and is not skipped."""
    missing = getattr(exc, "name", None)
    if not isinstance(exc, ModuleNotFoundError) or not missing:
        return True
    if missing == "softrod" or missing.startswith("softrod."):
        return module == missing or module.startswith(missing + ".")
    return True


def _run_hook(name: str, module: str, func: str, out_dir: Path) -> tuple[str, Any]:
    """Run an optional demo hook `module.func(out_dir / name)`.

    Returns ("ok", its return value), or ("skipped: reason", None) when the module, the
    function or an optional dependency is missing. Any other error propagates.
    """
    import importlib

    try:
        mod = importlib.import_module(module)
    except ImportError as exc:
        if not _optional_missing(exc, module):
            raise
        return f"skipped: {type(exc).__name__}: {exc}", None
    fn = getattr(mod, func, None)
    if fn is None:
        return f"skipped: AttributeError: module {module!r} has no attribute {func!r}", None
    try:
        output = fn(out_dir / name)
    except ImportError as exc:  # an optional dependency imported lazily by the hook
        if not _optional_missing(exc, module):
            raise
        return f"skipped: {type(exc).__name__}: {exc}", None
    return "ok", output


@app.command("demo")
def demo_cmd(
    output: Annotated[Path, typer.Option("-o", "--output", help="Output folder.")] = Path(
        "runs/demo"
    ),
    quick: Annotated[
        bool, typer.Option("--quick", help="Fewer load cases (a few seconds; for tests).")
    ] = False,
    hooks: Annotated[
        bool,
        typer.Option(
            "--hooks/--no-hooks",
            help="Run the optional demos of other layers (MuJoCo) if installed.",
        ),
    ] = True,
) -> None:
    """Showcase: SoftManiSim robot vs constant curvature, 3-segment TDCR pulls, summary.json.

    Writes two figures and summary.json to the output folder, then the optional MuJoCo demo.

    Exits 1 when a solve does not converge; a failing optional demo is recorded, then raised.
    """
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    start = time.perf_counter()
    out_dir = Path(output)
    out_dir.mkdir(parents=True, exist_ok=True)
    sms = compile_model(load_spec("softmanisim")[1])
    tdcr = compile_model(load_spec("tdcr3")[1])
    # Load the compiled kernels once, so the recorded times are the solver's own.
    solve_static(sms, _SMS_TENSIONS, tip_force=(0.0, 0.1, 0.0))
    n_sms = (3 * 2 if quick else 9 * 4) + 1
    n_tdcr = sum(len(p.scales) for p in _tdcr_pulls(quick)) + 1
    n_work = n_sms + n_tdcr + len(DEMO_HOOKS)

    summary: dict[str, Any] = {"quick": quick}
    files: dict[str, str] = {}
    hook_status: dict[str, str] = {}
    hook_outputs: dict[str, Any] = {}
    hook_error: Exception | None = None
    progress = Progress(
        TextColumn("{task.description:<34}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=_console(stderr=True),
    )
    with progress:
        task = progress.add_task("softmanisim: loaded rod vs PCC", total=n_work)

        def advance() -> None:
            progress.advance(task)

        summary["softmanisim"], path = _demo_softmanisim(sms, quick, out_dir, advance)
        files["softmanisim_vs_pcc"] = str(path)
        progress.update(task, description="tdcr3: tendon pulls")
        summary["tdcr3"], path = _demo_tdcr(tdcr, quick, out_dir, advance)
        files["tdcr3_tendon_pulls"] = str(path)

        # Optional demos of other layers: skipped when absent, never silently broken.
        for name, module, func in DEMO_HOOKS:
            progress.update(task, description=f"{name} demo")
            if not hooks:
                hook_status[name] = "skipped: --no-hooks"
            else:
                try:
                    hook_status[name], value = _run_hook(name, module, func, out_dir)
                except Exception as exc:  # recorded here, raised after summary.json is written
                    hook_status[name], value = f"failed: {type(exc).__name__}: {exc}", None
                    hook_error = hook_error or exc
                if value is not None:
                    hook_outputs[name] = value
            advance()
        progress.update(task, description="done")

    summary["hooks"] = hook_status
    if hook_outputs:
        summary["hook_outputs"] = hook_outputs
    summary["success"] = bool(
        summary["softmanisim"]["all_success"]
        and summary["tdcr3"]["all_success"]
        and hook_error is None
    )
    summary["total_time_s"] = time.perf_counter() - start
    summary_path = out_dir / "summary.json"
    files["summary"] = str(summary_path)
    summary["files"] = files
    summary_path.write_text(json.dumps(json_safe(summary), indent=2, default=str) + "\n")
    _print_demo_report(summary)

    if hook_error is not None:
        raise RuntimeError(f"demo hook failed (recorded in {summary_path})") from hook_error
    if not summary["success"]:
        _stderr_line(f"softrod: demo: some solves did not converge; see {summary_path}")
        raise typer.Exit(1)


def _print_demo_report(summary: dict[str, Any]) -> None:
    """Plain lines (no wrapping) so that scripts can pick up the written paths."""
    sms = summary["softmanisim"]
    print(
        f"softmanisim: {len(sms['cases'])} loaded solves, PCC tip error up to "
        f"{1e3 * sms['max_pcc_tip_error']:.1f} mm (mean {1e3 * sms['mean_pcc_tip_error']:.1f} mm)"
    )
    panels = summary["tdcr3"]["panels"]
    n_tdcr = sum(len(p["cases"]) for p in panels)
    print(f"tdcr3: {n_tdcr} solves in {len(panels)} pull patterns")
    for name, status in summary["hooks"].items():
        print(f"{name} demo: {status}")
    for path in summary["files"].values():
        print(f"wrote {path}")
    print(f"demo took {summary['total_time_s']:.1f} s")
