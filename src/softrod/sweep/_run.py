"""Run a sweep on a local process pool (default) or a Ray cluster, appending results to Parquet.

Points are sent to workers in chunks sized from the measured cost of a point (`_ChunkSizer`:
~0.5 s of work per task, shrinking towards the end); finished rows are flushed to the output at
most every `flush_interval` seconds (and at the end, and on Ctrl-C / SIGTERM), each flush an
atomic rewrite (`softrod.sweep._store`). With `resume=True` the points already in the output are
skipped, so an interrupted sweep resumes to exactly the full set of points.
"""

from __future__ import annotations

import hashlib
import json
import math
import multiprocessing as mp
import statistics
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import ALL_COMPLETED, FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from softrod._jobs import end_if_importing_main, sigterm_as_interrupt, workers_cannot_start
from softrod._version import __version__
from softrod.description import find_robot, load_robot
from softrod.sweep._spec import PointSpec, SweepSpec, generate_points, load_sweep
from softrod.sweep._store import ResultStore
from softrod.sweep._tasks import (
    RESERVED_COLUMNS,
    SweepJob,
    error_rows,
    ping,
    resolve_task,
    run_chunk,
)

__all__ = ["SweepSummary", "run_sweep", "resolve_robot_path", "sweep_record", "BACKENDS"]

BACKENDS = ("process", "ray")
#: Seconds between flushes of finished rows to the output (each flush rewrites the file).
FLUSH_INTERVAL = 1.0
#: Work per chunk [s] once a point's cost is known: per-task overhead (process pool ~1 ms, Ray
#: ~2-5 ms: scheduling, object store) stays < 5 %, while progress stays live and a crash loses
#: little work.
CHUNK_SECONDS = 0.5
#: Least work per chunk [s] near the end of a sweep, where chunks shrink (overhead < 5 % on Ray).
MIN_CHUNK_SECONDS = 0.05
#: Chunks per worker over the points still to send (guided scheduling: chunks shrink towards the
#: end, so the workers finish together).
CHUNKS_PER_WORKER = 4
#: Largest automatic chunk (points).
MAX_CHUNK = 10_000
#: Per-point times [s] the chunk size is estimated from (the most recent ones; median).
COST_WINDOW = 1024
#: Ray: a chunk whose worker or node died is run again this many times (runs are idempotent:
#: only the driver writes results, so a retried chunk still yields each point once).
RAY_MAX_RETRIES = 3
INFLIGHT_PER_WORKER = 2
#: Process pool: what a point gets when its worker process died running it alone (the pool
#: breaks for every task in flight, so the points of the broken tasks are run again one at a time
#: to find the one that ends the process).
WORKER_DIED = (
    "WorkerDied: the worker process ended abruptly while running this point alone (a crash in "
    "native code, e.g. a segfault, or killed, e.g. out of memory)"
)


@dataclass(frozen=True)
class SweepSummary:
    """Outcome of `run_sweep`.

    n_points : points in the design. n_skipped : already in the output (resume). n_run : run
    now. n_errors : of those, failed. elapsed : wall time [s]. rate : n_run / elapsed [1/s].
    interrupted : stopped early (Ctrl-C, SIGTERM); resume with `resume=True`.
    """

    output: Path
    n_points: int
    n_skipped: int
    n_run: int
    n_errors: int
    elapsed: float
    rate: float
    backend: str
    workers: int
    interrupted: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "output": str(self.output),
            "n_points": self.n_points,
            "n_skipped": self.n_skipped,
            "n_run": self.n_run,
            "n_errors": self.n_errors,
            "elapsed_s": self.elapsed,
            "points_per_s": self.rate,
            "backend": self.backend,
            "workers": self.workers,
            "interrupted": self.interrupted,
        }


# ---------------------------------------------------------------------------------------------
# Spec -> job


def resolve_robot_path(name: str, spec_dir: Path) -> Path:
    """A sweep's `robot`: a file relative to the sweep file, an existing path, or a shipped name
    (`softrod.description.find_robot`); DescriptionError (a ValueError) otherwise."""
    return find_robot(name, relative_to=spec_dir)


def _job(spec: SweepSpec, spec_dir: Path) -> SweepJob:
    robot = None
    if spec.robot is not None:
        robot = load_robot(resolve_robot_path(spec.robot, spec_dir)).model_dump(mode="json")
    return SweepJob(spec.task, robot, dict(spec.inputs), dict(spec.task_options), str(spec_dir))


def sweep_record(spec: SweepSpec, job: SweepJob) -> dict[str, Any]:
    """What a result file stores about its sweep; `identity` must match for a resume."""
    identity = {
        "task": job.task,
        "robot": job.robot,
        "inputs": job.inputs,
        "task_options": job.options,
    }
    digest = hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()[
        :16
    ]
    return {
        "name": spec.name,
        "identity": digest,
        "spec": spec.model_dump(mode="json"),
        "softrod": __version__,
    }


def _check_params(points: list[PointSpec]) -> None:
    for name in points[0].params if points else ():
        if name in RESERVED_COLUMNS:
            raise ValueError(f"parameter {name!r} clashes with a reserved column name")


# ---------------------------------------------------------------------------------------------
# Chunk size from the measured cost of a point


class _ChunkSizer:
    """Points per chunk: `fixed` (the sweep's `chunk_size`) or, from the median per-point time
    of the rows so far, CHUNK_SECONDS of work, at most 1/(CHUNKS_PER_WORKER * workers) of the
    points still to send and at least MIN_CHUNK_SECONDS of work. Before any row has come back
    a chunk is one point (a probe: a 0.2 s task is then not sent 64 at a time)."""

    def __init__(self, fixed: int | None, workers: int) -> None:
        self.fixed = fixed
        self.workers = max(workers, 1)
        self.costs: deque[float] = deque(maxlen=COST_WINDOW)

    def observe(self, rows: list[dict[str, Any]]) -> None:
        self.costs.extend(float(r.get("elapsed_s") or 0.0) for r in rows)

    def size(self, remaining: int) -> int:
        if self.fixed is not None:
            return self.fixed
        if not self.costs:
            return 1
        # Median: a worker's first point also loads compiled kernels (~0.5 s), an outlier.
        cost = max(statistics.median(self.costs), 1e-6)
        balanced = remaining / (CHUNKS_PER_WORKER * self.workers)
        n = max(min(CHUNK_SECONDS / cost, balanced), MIN_CHUNK_SECONDS / cost, 1.0)
        return max(1, min(math.ceil(n), MAX_CHUNK, remaining))


# ---------------------------------------------------------------------------------------------
# Backends: submit(chunk) -> handle; wait(handles) -> finished rows


class _ProcessBackend:
    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._chunks: dict[Future, list[tuple[int, str, dict[str, Any]]]] = {}
        self._job: SweepJob | None = None
        self._start()
        # One round trip before any point: workers that cannot start fail here with one clear
        # error, rather than as a broken pool that looks like a crashing point.
        try:
            self.pool.submit(ping).result()
        except BrokenProcessPool:
            self.pool.shutdown(wait=False, cancel_futures=True)
            raise workers_cannot_start("sweep", "nothing was run or written") from None

    def _start(self) -> None:
        ctx = mp.get_context("forkserver")
        # Workers fork from a server that has softrod imported: fast starts, no fork-with-threads.
        ctx.set_forkserver_preload(["softrod.sweep._warmup"])
        self.pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=ctx)

    def submit(self, job: SweepJob, chunk: list[tuple[int, str, dict[str, Any]]]) -> Future:
        self._job = job
        try:
            future = self.pool.submit(run_chunk, job, chunk)
        except BrokenProcessPool:  # a worker died between tasks (none of this sweep's lost)
            self.pool.shutdown(wait=False, cancel_futures=True)
            self._start()
            future = self.pool.submit(run_chunk, job, chunk)
        self._chunks[future] = chunk
        return future

    def wait(self, handles: set[Any], timeout: float) -> tuple[list[list[dict]], set[Any]]:
        done, rest = wait(handles, timeout=timeout, return_when=FIRST_COMPLETED)
        if not any(isinstance(f.exception(), BrokenProcessPool) for f in done):
            return [self._result(f) for f in done], set(rest)
        # A worker died: the pool fails every task still in flight. Keep what finished, then
        # run the lost points one at a time on a fresh pool: one that dies alone is the cause.
        wait(rest, return_when=ALL_COMPLETED)
        out, lost = [], []
        for f in (*done, *rest):
            if isinstance(f.exception(), BrokenProcessPool):
                lost.extend(self._chunks.pop(f))
            else:
                out.append(self._result(f))
        out.extend(self._isolate(lost))
        return out, set()

    def _result(self, future: Future) -> list[dict]:
        self._chunks.pop(future, None)
        return future.result()

    def _isolate(self, points: list[tuple[int, str, dict[str, Any]]]) -> list[list[dict]]:
        """Each point alone on a live pool (restarted after each death): a row each."""
        assert self._job is not None
        self.pool.shutdown(wait=False, cancel_futures=True)
        self._start()
        out = []
        for point in points:
            try:
                out.append(self.pool.submit(run_chunk, self._job, [point]).result())
            except BrokenProcessPool:
                out.append(error_rows([point], WORKER_DIED, "process"))
                self.pool.shutdown(wait=False, cancel_futures=True)
                self._start()
        return out

    def close(self, cancel: bool) -> None:
        self.pool.shutdown(wait=not cancel, cancel_futures=cancel)


class _RayBackend:
    def __init__(self, workers: int | None, address: str | None) -> None:
        try:
            import ray
        except ImportError:
            raise ValueError(
                "--backend ray needs ray (pip install 'softrod[dist]' or pip install ray)"
            ) from None
        self.ray = ray
        self.started = False
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
            if address:
                ray.init(address=address, **kwargs)
            else:
                ray.init(num_cpus=workers, **kwargs)
            self.started = True
        cpus = int(ray.cluster_resources().get("CPU", 1))
        self.workers = workers or max(cpus, 1)
        # Lost workers or nodes: Ray runs the chunk again elsewhere (a point's own error is a row).
        self.remote = ray.remote(num_cpus=1, max_retries=RAY_MAX_RETRIES)(run_chunk)
        self._job_ref: Any = None
        self._job: SweepJob | None = None
        self._chunks: dict[Any, list[tuple[int, str, dict[str, Any]]]] = {}

    def submit(self, job: SweepJob, chunk: list[tuple[int, str, dict[str, Any]]]) -> Any:
        if self._job is not job:  # one copy of the job in the object store
            self._job, self._job_ref = job, self.ray.put(job)
        ref = self.remote.remote(self._job_ref, chunk)
        self._chunks[ref] = chunk
        return ref

    def wait(self, handles: set[Any], timeout: float) -> tuple[list[list[dict]], set[Any]]:
        done, rest = self.ray.wait(list(handles), num_returns=1, timeout=timeout)
        if done and rest:  # and whatever else is ready by now
            more, rest = self.ray.wait(rest, num_returns=len(rest), timeout=0)
            done += more
        out = []
        for ref in done:
            chunk = self._chunks.pop(ref)
            try:
                out.append(self.ray.get(ref))
            except self.ray.exceptions.RayError as exc:
                # Retries used up (or the task could not run): its points become failed rows,
                # which `--resume --retry-errors` runs again.
                message = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                out.append(error_rows(chunk, message, "ray"))
        return out, set(rest)

    def close(self, cancel: bool) -> None:
        if cancel:
            for ref in self._chunks:
                self.ray.cancel(ref, force=True)
        self._chunks.clear()
        if self.started:
            self.ray.shutdown()


# ---------------------------------------------------------------------------------------------
# Progress


@contextmanager
def _progress(enabled: bool, total: int, done: int, name: str) -> Iterator[Callable[..., None]]:
    """A rich progress bar (rate, ETA, errors); yields update(n_new, n_errors)."""
    if not enabled:
        yield lambda advance, errors: None
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text

    class _Rate(ProgressColumn):
        def render(self, task: Any) -> Text:
            speed = task.finished_speed or task.speed
            return Text("-- pt/s" if speed is None else f"{speed:.1f} pt/s")

    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        _Rate(),
        TextColumn("errors {task.fields[errors]}"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        transient=False,
    )
    with progress:
        task = progress.add_task(name, total=total, completed=done, errors=0)
        n_err = 0

        def update(advance: int, errors: int) -> None:
            nonlocal n_err
            n_err += errors
            progress.update(task, advance=advance, errors=n_err)

        yield update


# ---------------------------------------------------------------------------------------------
# Driver


def run_sweep(
    spec: str | Path | SweepSpec | dict,
    output: str | Path,
    *,
    resume: bool = False,
    backend: Literal["process", "ray"] = "process",
    workers: int | None = None,
    address: str | None = None,
    retry_errors: bool = False,
    progress: bool = True,
    flush_interval: float = FLUSH_INTERVAL,
    spec_dir: str | Path | None = None,
    overwrite: bool = False,
) -> SweepSummary:
    """Run every point of a sweep that the output does not have yet.

    Parameters
    ----------
    spec : sweep file path, dict or SweepSpec. output : Parquet file.
    resume : continue an existing output (without it an existing output is an error).
    backend : "process" (local pool of `workers`, default the CPU count) or "ray" (`address`
        of a cluster, or a local instance with `workers` CPUs).
    retry_errors : on resume, run failed points again (their old rows are replaced).
    progress : show a rich progress bar. flush_interval : [s] between appends.
    spec_dir : folder that relative paths in the spec refer to (default the file's folder).
    overwrite : replace an existing output (deleted once the spec and task are checked); not
        with `resume`.

    Returns
    -------
    SweepSummary. Ctrl-C or SIGTERM stops the sweep after flushing: `interrupted` is True.
    """
    end_if_importing_main()  # a worker importing a script that sweeps at import time
    t_start = time.perf_counter()
    if isinstance(spec, str | Path):
        base_dir = Path(spec).resolve().parent
    else:
        base_dir = Path.cwd()
    base_dir = Path(spec_dir).resolve() if spec_dir is not None else base_dir
    sweep = load_sweep(spec)
    if backend not in BACKENDS:
        raise ValueError(f"--backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if workers is not None and workers < 1:
        raise ValueError(f"--workers must be >= 1, got {workers}")
    output = Path(output)
    if output.suffix.lower() != ".parquet":
        raise ValueError(f"--output must be a .parquet file, got {str(output)!r}")
    job = _job(sweep, base_dir)
    resolve_task(job.task, job.spec_dir)  # fail early on a bad task name
    points = generate_points(sweep)
    _check_params(points)
    record = sweep_record(sweep, job)
    store = ResultStore(output, record)

    if resume and overwrite:
        raise ValueError("--resume and --overwrite exclude each other")
    # Existing output: resume, replace when asked, or refuse (never clobber a user's results).
    if output.exists() and overwrite and not output.is_dir():
        output.unlink()
    if output.exists():
        if not resume:
            raise ValueError(
                f"--output {output} exists; pass --resume to continue it, or --overwrite to "
                "replace it"
            )
        old = store.load_existing()
        if old is not None and old.get("identity") != record["identity"]:
            raise ValueError(
                f"--resume: {output} was written by a different sweep ({old.get('name')!r}: "
                "robot, task, task_options or inputs differ); use another --output"
            )
        # Rows of two versions of the code would mix silently (files written before versions
        # were recorded carry none and are continued).
        written_by = None if old is None else old.get("softrod")
        if written_by is not None and written_by != __version__:
            raise ValueError(
                f"--resume: {output} was written by softrod {written_by}, this is "
                f"{__version__}; its rows may differ from new ones: use another --output"
            )
        if retry_errors:
            store.drop_errors()
    done = store.done_ids()
    todo = [p for p in points if p.point_id not in done]
    n_skipped = len(points) - len(todo)

    n_workers = workers or (mp.cpu_count() if backend == "process" else None)
    runner: _ProcessBackend | _RayBackend | None = None
    n_run = n_err = 0
    interrupted = False
    cancel = True  # stop workers at once unless the loop ends normally
    if not todo:
        store.flush()
        return SweepSummary(
            output, len(points), n_skipped, 0, 0, 0.0, 0.0, backend, n_workers or 0, False
        )
    try:
        with sigterm_as_interrupt():
            runner = (
                _ProcessBackend(n_workers or 1)
                if backend == "process"
                else _RayBackend(n_workers, address)
            )
            n_workers = runner.workers
            sizer = _ChunkSizer(sweep.chunk_size, n_workers)
            pending: set[Any] = set()
            sent = 0
            last_flush = time.monotonic()
            with _progress(progress, len(points), n_skipped, sweep.name) as update:
                while sent < len(todo) or pending:
                    # Keep INFLIGHT_PER_WORKER chunks per worker queued, each sized afresh.
                    while sent < len(todo) and len(pending) < n_workers * INFLIGHT_PER_WORKER:
                        size = sizer.size(len(todo) - sent)
                        chunk = [(p.index, p.point_id, p.params) for p in todo[sent : sent + size]]
                        pending.add(runner.submit(job, chunk))
                        sent += len(chunk)
                    finished, pending = runner.wait(pending, timeout=flush_interval)
                    for rows in finished:
                        sizer.observe(rows)
                        errors = sum(r["status"] != "ok" for r in rows)
                        store.add(rows)
                        n_run += len(rows)
                        n_err += errors
                        update(len(rows), errors)
                    if time.monotonic() - last_flush >= flush_interval:
                        store.flush()
                        last_flush = time.monotonic()
        cancel = False
    except KeyboardInterrupt:
        interrupted = True
    finally:
        store.flush()
        if runner is not None:
            runner.close(cancel=cancel)
    elapsed = time.perf_counter() - t_start
    return SweepSummary(
        output=output,
        n_points=len(points),
        n_skipped=n_skipped,
        n_run=n_run,
        n_errors=n_err,
        elapsed=elapsed,
        rate=n_run / elapsed if elapsed > 0 else 0.0,
        backend=backend,
        workers=n_workers or 0,
        interrupted=interrupted,
    )
