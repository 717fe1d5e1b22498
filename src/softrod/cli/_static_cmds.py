"""Static-model commands: `softrod solve`, `info`, `plot` and `schema`.

Heavy imports (matplotlib, mujoco) happen inside the commands that need them, so that
`softrod solve ... --json` starts fast.
"""

from __future__ import annotations

import json
import math
import sys
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import numpy as np
import typer

from softrod.cli._app import CliError, app
from softrod.cli._outputs import prepare_output
from softrod.cli._resolve import find_robot, parse_point_load, parse_vector, shipped_robots
from softrod.description import (
    DescriptionError,
    RobotSpec,
    check_actuation,
    json_safe,
    load_robot,
    robot_json_schema,
)
from softrod.rods import (
    METHODS,
    StaticResult,
    compile_model,
    robot_properties,
    solve_static,
)

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["describe_loads", "json_safe", "load_spec", "robot_info"]

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
PressuresOpt = Annotated[
    str | None,
    typer.Option(
        "--pressures",
        metavar="P1,P2,...",
        help="Chamber gauge pressures [Pa], one per chamber, segment by segment.",
    ),
]
MomentsOpt = Annotated[
    str | None,
    typer.Option(
        "--moments",
        metavar="T1,T2,...",
        help="Moment-actuator inputs (uniform internal moment input x moment [N m]), one per "
        "moment actuator, segment by segment.",
    ),
]
FieldOpt = Annotated[
    str | None,
    typer.Option(
        "--field",
        metavar="BX,BY,BZ",
        help="Uniform world-frame magnetic field [T] on the robot's magnets.",
    ),
]
FieldGradientOpt = Annotated[
    str | None,
    typer.Option(
        "--field-gradient",
        metavar="G11,G12,...,G33",
        help="Field gradient dB_i/dx_j [T/m], 9 values row by row (forces on the magnets).",
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
    pressures: str | None = None,
    field: str | None = None,
    field_gradient: str | None = None,
    moments: str | None = None,
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
    if pressures is not None:
        loads["pressures"] = _actuator_inputs(spec, "pressures", pressures)
    if moments is not None:
        loads["moments"] = _actuator_inputs(spec, "moments", moments)
    for option, text in (("--field", field), ("--field-gradient", field_gradient)):
        if text is not None and not spec.is_magnetic:
            raise CliError(
                f"{option}: robot {spec.name!r} has no magnets (segments[i].magnets or "
                f"magnetization), got {text!r}"
            )
    if field is not None:
        loads["field"] = parse_vector("--field", field, 3, "bx,by,bz")
    if field_gradient is not None:
        values = parse_vector("--field-gradient", field_gradient, 9, "dB_i/dx_j row by row")
        loads["field_gradient"] = [values[0:3], values[3:6], values[6:9]]
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


#: Per-actuator CLI inputs: option name -> (description field, the actuator's name).
_ACTUATOR_INPUTS = {
    "pressures": ("chambers", "chamber"),
    "moments": ("moment_actuators", "moment actuator"),
}


def _actuator_inputs(spec: RobotSpec, kind: str, text: str) -> list[float]:
    """The checked --pressures / --moments values (one per actuator, segment by segment)."""
    field, noun = _ACTUATOR_INPUTS[kind]
    per_seg_counts = [len(getattr(s, field)) for s in spec.segments]
    if sum(per_seg_counts) == 0:
        raise CliError(f"--{kind}: robot {spec.name!r} has no {field}, got {text!r}")
    per_seg = "+".join(str(n) for n in per_seg_counts)
    what = f"one per {noun}, segment by segment; {spec.name} has {per_seg}"
    values = parse_vector(f"--{kind}", text, sum(per_seg_counts), what)
    try:
        if kind == "pressures":
            check_actuation(spec, pressures=values)
        else:
            check_actuation(spec, moments=values)
    except DescriptionError as exc:
        raise CliError(f"--{kind}: {exc}") from None
    return values


def _fmt_vec(values: Any, unit: str = "", fmt: str = "{:g}") -> str:
    text = ", ".join(fmt.format(float(v)) for v in values)
    return f"({text})" + (f" {unit}" if unit else "")


def describe_loads(spec: RobotSpec, loads: dict[str, Any]) -> str:
    """One line naming the inputs that are set, e.g. `τ0 = 1 N; tip force (0, 0.1, 0) N`
    (tendons are numbered from 0 in input order, as everywhere in softrod)."""
    parts = []
    if "lengths" in loads:
        parts.append("tendon lengths " + _fmt_vec(1e3 * np.asarray(loads["lengths"]), "mm"))
    elif spec.n_tendons:
        tau = loads.get("tensions", [])
        pulled = [f"τ{i} = {t:g}" for i, t in enumerate(tau) if t > 0]
        parts.append(", ".join(pulled) + " N" if pulled else "no tendon tension")
    if any(p != 0 for p in loads.get("pressures", [])):
        parts.append("pressures " + _fmt_vec(loads["pressures"], "Pa"))
    if any(t != 0 for t in loads.get("moments", [])):
        parts.append("moment inputs " + _fmt_vec(loads["moments"]))
    if any(b != 0 for b in loads.get("field", [])):
        parts.append("field " + _fmt_vec(loads["field"], "T"))
    if any(g != 0 for row in loads.get("field_gradient", []) for g in row):
        parts.append("field gradient " + _fmt_vec(np.ravel(loads["field_gradient"]), "T/m"))
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
    pressures: PressuresOpt = None,
    field: FieldOpt = None,
    field_gradient: FieldGradientOpt = None,
    moments: MomentsOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    shape: Annotated[
        bool, typer.Option("--shape", help="With --json: add the backbone samples s, positions.")
    ] = False,
) -> None:
    """Static equilibrium under tendon, pressure, magnetic and external loads (SI, world frame).

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
        pressures,
        field,
        field_gradient,
        moments,
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
