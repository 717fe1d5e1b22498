"""`softrod train | eval | demos | bc | teleop` (learning, issue 6)."""

from __future__ import annotations

import json
import math
import shutil
import sys
from pathlib import Path
from typing import Any

import typer

from softrod._gl import choose_gl_backend
from softrod.cli._app import CliError, app
from softrod.cli._outputs import prepare_output

__all__ = ["resolve_env_id"]


def resolve_env_id(name: str) -> str:
    """`Reach-v0` or `softrod/Reach-v0` -> the registered id; CliError names the known ones."""
    choose_gl_backend(headless=True)
    from softrod.envs import ENV_IDS

    full = name if name.startswith("softrod/") else f"softrod/{name}"
    if full not in ENV_IDS:
        known = ", ".join(i.removeprefix("softrod/") for i in ENV_IDS)
        raise CliError(f"unknown environment {name!r}; known: {known}")
    return full


def _demos_output(out: Path, overwrite: bool) -> Path:
    """The .npz a demonstration recording will write, checked before recording (the policy of
    every output: an existing file only with --overwrite, its folder created)."""
    target = out if out.suffix == ".npz" else out.with_suffix(".npz")
    return prepare_output(target, overwrite=overwrite, option="--out")


def _lerobot_output(out: Path, overwrite: bool) -> None:
    """A LeRobot dataset folder is written only where no file or non-empty folder is, unless
    --overwrite (checked before recording)."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())) and not overwrite:
        raise CliError(f"--out {out} exists; pass --overwrite to replace it")


def _env_kwargs(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(f"--env-kwargs must be a JSON object, got {text!r} ({exc.msg})") from None
    if not isinstance(value, dict):
        raise CliError(f"--env-kwargs must be a JSON object, got {text!r}")
    return value


def _check_env_kwargs(env_id: str, kwargs: dict[str, Any]) -> None:
    """Build the environment once with `kwargs` so that an unknown name or a value of the wrong
    type is one error naming them, before a run directory is made or a policy is loaded."""
    if not kwargs:
        return
    import gymnasium as gym

    import softrod.envs  # noqa: F401  (registers the environments)

    try:
        gym.make(env_id, **kwargs).close()
    except (TypeError, ValueError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        # Gymnasium appends the env id and kwargs, which the message names already.
        first = first.split(" was raised from the environment creator")[0]
        raise CliError(f"--env-kwargs {json.dumps(kwargs)} for {env_id}: {first}") from None


def _prepare_run_dir(run: Path, *, overwrite: bool, resume: Path | None) -> None:
    """Refuse to train into a run directory that holds files (old checkpoints would mix with
    the new run's) unless `--overwrite`, which deletes it first; a run continued from its own
    model (`--resume RUN/model.zip -o RUN`) may write into it."""
    if run.exists() and not run.is_dir():
        raise CliError(f"--out must be a directory, got a file: {run}")
    if not run.is_dir() or not any(run.iterdir()):
        return
    inside = resume is not None and run.resolve() in resume.resolve().parents
    if overwrite:
        if inside:
            raise CliError(f"--overwrite would delete the --resume checkpoint {resume}")
        shutil.rmtree(run)
    elif not inside:
        raise CliError(
            f"run directory {run} exists; pass --overwrite to replace it, or another --out"
        )


def _print_summary(summary: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(summary))
        return
    for key, value in summary.items():
        if isinstance(value, float):
            print(f"{key}: {value:.6g}")
        else:
            print(f"{key}: {value}")


@app.command("train")
def train_cmd(
    env: str = typer.Argument(..., help="Environment, e.g. Reach-v0 (softrod/ prefix optional)."),
    algo: str = typer.Option(
        "sac", help="Algorithm: sac (CPU envs, SB3) or ppo (batched envs on a device, skrl)."
    ),
    steps: int = typer.Option(100_000, "--steps", "-n", help="Environment steps."),
    seed: int = typer.Option(0, help="Seed."),
    out: Path | None = typer.Option(
        None, "--out", "-o", help="Run directory [runs/<env>-sac-<seed>]."
    ),
    n_envs: int = typer.Option(1, "--n-envs", help="Parallel environments."),
    vec: str = typer.Option("dummy", help="dummy (in-process) or subproc (one process per env)."),
    batch_size: int = typer.Option(64, help="Minibatch (Table 6: 64)."),
    buffer_size: int = typer.Option(50_000, help="Replay buffer (Table 6: 50 000)."),
    learning_rate: float = typer.Option(3e-4, "--lr", help="Learning rate (Table 6: 3e-4)."),
    learning_starts: int = typer.Option(1000, help="Random-action steps before learning."),
    gradient_steps: int = typer.Option(1, help="Gradient steps per environment step."),
    target_entropy: float | None = typer.Option(
        None, help="Entropy target of the temperature [default: -action dimension]."
    ),
    expert_episodes: int = typer.Option(
        0,
        help="SAC: put this many episodes of the env's scripted expert in the replay buffer "
        "first (envs with an expert: softrod demos --help).",
    ),
    expert_ratio: float | None = typer.Option(
        None,
        help="SAC with --expert-episodes: keep the expert's transitions for the whole run and "
        "draw this fraction of every minibatch from them (RLPD: 0.5) [default: sampled "
        "uniformly with the rest, overwritten once the buffer is full].",
    ),
    critic_layer_norm: bool = typer.Option(
        False,
        "--critic-layer-norm",
        help="SAC: LayerNorm after every hidden layer of the critics (RLPD's critic; "
        "--resume must repeat it for a model trained with it).",
    ),
    checkpoint_every: int = typer.Option(50_000, help="Steps between checkpoints."),
    log_every: int = typer.Option(1000, help="Steps between CSV/TensorBoard rows."),
    env_kwargs: str | None = typer.Option(None, help="Environment kwargs as a JSON object."),
    resume: Path | None = typer.Option(
        None, help="Continue from a checkpoint: SAC .zip; PPO run directory (or its checkpoint.pt)."
    ),
    eval_episodes: int = typer.Option(0, help="Evaluate this many seeded episodes at the end."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Progress bar."),
    overwrite: bool = typer.Option(
        False, "--overwrite", help="Delete an existing run directory of the same name first."
    ),
    num_envs: int = typer.Option(
        4096, "--num-envs", help="PPO: batched worlds on the device (MuJoCo Warp)."
    ),
    device: str = typer.Option("cuda:0", help="PPO: Warp/torch device (cuda:0, cpu)."),
    timesteps: int | None = typer.Option(
        None, help="PPO: batched control steps (each is --num-envs transitions)."
    ),
    max_minutes: float | None = typer.Option(
        None,
        help="Stop training after this many minutes (then save the model, SAC's replay "
        "buffer too, and evaluate as at the end of a full run).",
    ),
    snapshot_minutes: float | None = typer.Option(
        None,
        help="PPO: save the policy every this many minutes of training (policies/policy_<step>.pt"
        "; pick one on validation episodes with examples/learning/seed_spread.py).",
    ),
    init_log_std: float = typer.Option(
        -0.5, help="PPO: initial log standard deviation of the policy's actions."
    ),
    direct_solve: bool = typer.Option(
        False,
        "--direct-solve",
        help="PPO: batched worlds without MuJoCo Warp's PCG solve (constraint-free envs only; "
        "faster, not bit-for-bit; see docs/learning.md). Evaluation uses the CPU env.",
    ),
) -> None:
    """Train a policy with SAC (Stable-Baselines3; logs, checkpoints, a curve PNG) or with PPO
    on batched worlds on a device (skrl; policy.pt, then --eval-episodes, default 100)."""
    from softrod.learn import SACConfig, evaluate, load_sb3_policy, train_sac

    if algo.lower() not in ("sac", "ppo"):
        raise CliError(f"--algo must be sac or ppo, got {algo!r}")
    env_id = resolve_env_id(env)
    # The CPU env takes the same kwargs (PPO evaluates on it): checked before anything is made.
    _check_env_kwargs(env_id, _env_kwargs(env_kwargs))
    if algo.lower() == "ppo":
        _train_ppo(
            env_id,
            seed=seed,
            out=out,
            num_envs=num_envs,
            device=device,
            timesteps=timesteps,
            max_minutes=max_minutes,
            env_kwargs=_env_kwargs(env_kwargs),
            eval_episodes=eval_episodes or 100,
            overwrite=overwrite,
            resume=resume,
            snapshot_minutes=snapshot_minutes,
            init_log_std=init_log_std,
            direct_solve=direct_solve,
        )
        return
    if snapshot_minutes is not None or direct_solve or init_log_std != -0.5:
        raise CliError(
            "--snapshot-minutes, --init-log-std and --direct-solve are PPO options (--algo ppo)"
        )
    if vec not in ("dummy", "subproc"):
        raise CliError(f"--vec must be dummy or subproc, got {vec!r}")
    if resume is not None and not resume.is_file():
        raise CliError(f"--resume: no checkpoint at {resume}")
    if max_minutes is not None and not max_minutes > 0:
        raise CliError(f"--max-minutes must be > 0, got {max_minutes}")
    if expert_episodes:
        from softrod.learn import EXPERTS

        if env_id not in EXPERTS:
            raise CliError(
                f"--expert-episodes {expert_episodes}: {env_id} has no scripted expert; "
                f"experts: {', '.join(sorted(EXPERTS))}"
            )
    config = SACConfig(
        env_id=env_id,
        env_kwargs=_env_kwargs(env_kwargs),
        steps=steps,
        seed=seed,
        n_envs=n_envs,
        vec_env="subproc" if vec == "subproc" else "dummy",
        batch_size=batch_size,
        buffer_size=buffer_size,
        learning_rate=learning_rate,
        learning_starts=learning_starts,
        gradient_steps=gradient_steps,
        target_entropy=target_entropy,
        expert_episodes=expert_episodes,
        expert_ratio=expert_ratio,
        critic_layer_norm=critic_layer_norm,
        checkpoint_every=checkpoint_every,
        log_every=log_every,
    )
    run = out or Path("runs") / f"{env_id.removeprefix('softrod/')}-sac-{seed}"
    _prepare_run_dir(run, overwrite=overwrite, resume=resume)
    result = train_sac(config, run, progress=progress, resume=resume, max_minutes=max_minutes)
    if result.interrupted:
        print(
            f"interrupted after {result.steps} steps; the model so far is {result.model_path} "
            f"(continue with --resume {result.model_path} -o OTHER_RUN)",
            file=sys.stderr,
        )
        raise typer.Exit(130)
    print(f"run: {result.run_dir}")
    print(f"steps: {result.steps}")
    if result.time_limited:
        print(f"stopped: --max-minutes {max_minutes:g} reached before --steps {steps}")
    print(f"wall_time_s: {result.wall_time:.1f}")
    print(f"steps_per_second: {result.steps_per_second:.1f}")
    if eval_episodes > 0:
        res = evaluate(
            load_sb3_policy(result.model_path),
            env_id,
            episodes=eval_episodes,
            env_kwargs=config.env_kwargs,
        )
        res.to_json(result.run_dir / "eval.json")
        _print_summary(res.summary(), False)


def _train_ppo(
    env_id: str,
    *,
    seed: int,
    out: Path | None,
    num_envs: int,
    device: str,
    timesteps: int | None,
    max_minutes: float | None,
    env_kwargs: dict[str, Any],
    eval_episodes: int,
    overwrite: bool,
    resume: Path | None = None,
    snapshot_minutes: float | None = None,
    init_log_std: float = -0.5,
    direct_solve: bool = False,
) -> None:
    """`softrod train ENV --algo ppo`: skrl PPO on `make_batched` worlds, then the CPU env's
    seeded evaluation (`softrod.learn.evaluate`). `resume`: the run directory (or its
    checkpoint.pt) of a stopped run, continued in place."""
    try:
        from softrod.envs import BATCHED_ENV_IDS
        from softrod.learn.device_ppo import (
            PPOConfig,
            PPODivergedError,
            load_ppo_policy,
            train_ppo,
        )
    except ImportError as exc:
        raise CliError(f"--algo ppo needs skrl, torch and softrod[warp]: {exc}") from None
    from softrod.learn import evaluate

    if env_id not in BATCHED_ENV_IDS:
        raise CliError(f"--algo ppo runs batched environments only: {', '.join(BATCHED_ENV_IDS)}")
    if num_envs < 1:
        raise CliError(f"--num-envs must be >= 1, got {num_envs}")
    if timesteps is not None and timesteps < 1:
        raise CliError(f"--timesteps must be >= 1, got {timesteps}")
    if max_minutes is not None and not max_minutes > 0:
        raise CliError(f"--max-minutes must be > 0, got {max_minutes}")
    if snapshot_minutes is not None and not snapshot_minutes > 0:
        raise CliError(f"--snapshot-minutes must be > 0, got {snapshot_minutes}")
    if not -20.0 <= init_log_std <= 2.0:
        raise CliError(f"--init-log-std must be in [-20, 2], got {init_log_std}")
    # Check the device before a run directory is made (Warp names what it can see).
    try:
        import warp as wp

        # Warp 1.19 has no `quiet` (older versions read it); setting it is harmless.
        wp.config.quiet = True  # type: ignore[attr-defined,unused-ignore]
        wp.config.log_level = wp.LOG_ERROR
        known = [d.alias for d in wp.get_devices()]
    except ImportError as exc:
        raise CliError(f"--algo ppo needs skrl, torch and softrod[warp]: {exc}") from None
    if device not in known:
        raise CliError(f"--device {device!r} is not available here (Warp sees: {', '.join(known)})")
    config = PPOConfig(
        env_id=env_id,
        num_envs=num_envs,
        device=device,
        timesteps=timesteps,
        max_minutes=max_minutes,
        seed=seed,
        env_kwargs=env_kwargs,
        snapshot_minutes=snapshot_minutes,
        init_log_std=init_log_std,
        direct_solve=direct_solve,
    )
    if resume is not None:
        if overwrite:
            raise CliError("--resume and --overwrite exclude each other")
        run = resume.parent if resume.suffix == ".pt" else resume
        if out is not None and out.resolve() != run.resolve():
            raise CliError(f"--resume continues {run} in place; drop --out or give the same one")
        if not (run / "checkpoint.pt").is_file():
            raise CliError(f"--resume: no PPO checkpoint in {run}")
    else:
        run = out or Path("runs") / f"{env_id.removeprefix('softrod/')}-ppo-{seed}"
        _prepare_run_dir(run, overwrite=overwrite, resume=None)
    try:
        result = train_ppo(
            config,
            run,
            log=lambda line: print(line, file=sys.stderr, flush=True),
            resume=resume is not None,
        )
    except ImportError as exc:
        raise CliError(f"--algo ppo needs skrl, torch and softrod[warp]: {exc}") from None
    except PPODivergedError as exc:
        print(f"softrod: error: {exc}", file=sys.stderr)
        raise typer.Exit(1) from None
    if result.interrupted:
        print(
            f"interrupted after {result.timesteps} steps; the policy so far is "
            f"{result.policy_path} (continue with --resume {run})",
            file=sys.stderr,
        )
        raise typer.Exit(130)
    print(f"run: {result.run_dir}")
    print(f"policy: {result.policy_path}")
    print(f"timesteps: {result.timesteps}")
    print(f"transitions: {result.transitions}")
    print(f"wall_time_s: {result.wall_time:.1f}")
    print(f"transitions_per_second: {result.transitions_per_second:.1f}")
    res = evaluate(
        load_ppo_policy(result.policy_path), env_id, episodes=eval_episodes, env_kwargs=env_kwargs
    )
    res.to_json(result.run_dir / "eval.json")
    _print_summary(res.summary(), False)


def _ppo_policy(path: Path) -> Any:
    """The policy of a `softrod train --algo ppo` run (directory or policy.pt), else None."""
    if not (path.suffix == ".pt" or (path / "policy.pt").is_file()):
        return None
    try:
        from softrod.learn.device_ppo import is_ppo_policy, load_ppo_policy
    except ImportError:  # pragma: no cover - torch missing: not a PPO run we can load
        return None
    return load_ppo_policy(path) if is_ppo_policy(path) else None


#: Prefix of a policy shipped in the package: `softrod eval shipped:Reach-v0`.
SHIPPED_PREFIX = "shipped:"


def _load_shipped(name: str) -> tuple[Any, str, dict[str, Any]]:
    """(policy, env id, env kwargs) of a shipped policy; CliError lists the shipped ones."""
    choose_gl_backend(headless=True)
    from softrod.learn import load_shipped

    try:
        pol = load_shipped(name)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    return pol, pol.env_id, dict(pol.env_kwargs)


def _load_policy(path: Path) -> tuple[Any, str | None, dict[str, Any]]:
    """(policy, env id recorded with it or None, env kwargs) from a run directory or file."""
    from softrod.learn import is_bc_policy, load_bc_policy, load_config, load_sb3_policy

    if str(path).startswith(SHIPPED_PREFIX):
        return _load_shipped(str(path).removeprefix(SHIPPED_PREFIX))
    if not path.exists():
        raise CliError(f"no policy at {path}")
    ppo = _ppo_policy(path)
    if ppo is not None:
        return ppo, ppo.env_id, ppo.env_kwargs
    if is_bc_policy(path):
        pol = load_bc_policy(path)
        return pol, pol.env_id, pol.env_kwargs
    env_id, kwargs = None, {}
    cfg = path / "config.yaml" if path.is_dir() else path.parent / "config.yaml"
    if not cfg.is_file() and path.parent.name == "checkpoints":
        cfg = path.parent.parent / "config.yaml"
    if cfg.is_file():
        c = load_config(cfg)
        env_id = getattr(c, "env_id", None)
        kwargs = dict(getattr(c, "env_kwargs", {}) or {})
    return load_sb3_policy(path), env_id, kwargs


#: `softrod bc --temporal-ensemble auto`: the ensembling weight compared with open loop (the
#: BCConfig default, seed 002's exp(-0.01 i)).
AUTO_TEMPORAL_ENSEMBLE = 0.01


def _temporal_ensemble(text: str, allow_auto: bool = False) -> float | None:
    """--temporal-ensemble: 'off' -> -1 (open-loop chunks), a weight k >= 0, or (where
    `allow_auto`) 'auto' -> None (validate both ways)."""
    if text.strip().lower() == "off":
        return -1.0
    if allow_auto and text.strip().lower() == "auto":
        return None
    try:
        k = float(text)
    except ValueError:
        k = math.nan
    if not (k >= 0 and math.isfinite(k)):
        choices = "a number >= 0, off or auto" if allow_auto else "a number >= 0 or off"
        raise CliError(f"--temporal-ensemble must be {choices}, got {text!r}")
    return k


@app.command("eval")
def eval_cmd(
    policy: Path = typer.Argument(
        ...,
        help="Run directory, SAC .zip, BC or PPO policy (.pt / dir), or shipped:ENV (a policy "
        "shipped in the package, e.g. shipped:Reach-v0).",
    ),
    env: str | None = typer.Option(None, help="Environment (default: the one the run used)."),
    episodes: int = typer.Option(100, help="Seeded episodes."),
    seed: int = typer.Option(10_000, help="Reset seed of the first episode (then +1 each)."),
    env_kwargs: str | None = typer.Option(
        None, help="Environment kwargs as a JSON object (replace those the run recorded)."
    ),
    out: Path | None = typer.Option(None, "--out", "-o", help="Write the summary JSON here."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    temporal_ensemble: str | None = typer.Option(
        None,
        help="BC policies: run the chunks with this temporal-ensembling weight k >= 0, or 'off' "
        "(each chunk open loop) [the one the policy was trained with].",
    ),
) -> None:
    """Success rate and final distance of a trained policy over seeded episodes."""
    from softrod.learn import BCPolicy, evaluate

    if episodes < 1:
        raise CliError(f"--episodes must be >= 1, got {episodes}")
    te = None if temporal_ensemble is None else _temporal_ensemble(temporal_ensemble)
    pol, run_env, kwargs = _load_policy(policy)
    if te is not None:
        if not isinstance(pol, BCPolicy):
            raise CliError(f"--temporal-ensemble applies to BC policies only, not {policy}")
        pol.set_temporal_ensemble(te)
    if env is None and run_env is None:
        raise CliError("--env is required: the policy does not record its environment")
    env_id = resolve_env_id(env) if env is not None else str(run_env)
    if env_kwargs is not None:
        kwargs = _env_kwargs(env_kwargs)
        _check_env_kwargs(env_id, kwargs)
    res = evaluate(pol, env_id, episodes=episodes, seed=seed, env_kwargs=kwargs)
    if out is not None:
        res.to_json(out)
    _print_summary(res.summary(), as_json)


@app.command("demos")
def demos_cmd(
    env: str = typer.Argument(
        ...,
        help="WholeBodyGrasp-v0, FlipSwitch-v0 or PushCube-v1 (scripted experts), or an "
        "existing demo .npz to convert (with --format lerobot).",
    ),
    episodes: int = typer.Option(50, "--episodes", "-n", help="Successful demonstrations."),
    out: Path = typer.Option(
        ..., "--out", "-o", help="Output .npz, or folder with --format lerobot (docs/learning.md)."
    ),
    fmt: str = typer.Option(
        "npz", "--format", help="npz (softrod's file) or lerobot (LeRobot v3.0 dataset folder)."
    ),
    seed: int = typer.Option(0, help="Reset seed of the first attempt (then +1 per attempt)."),
    max_attempts: int | None = typer.Option(None, help="Give up after this many [2 n]."),
    dedup: bool = typer.Option(False, help="Also drop consecutive duplicate frames (1e-9)."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Progress bar."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing output file."),
) -> None:
    """Record demonstrations with the task's scripted expert (failed attempts discarded)."""
    from softrod.learn import EXPERTS, DemoSet, record_demos

    if fmt not in ("npz", "lerobot"):
        raise CliError(f"--format must be npz or lerobot, got {fmt!r}")
    if fmt == "lerobot":
        _lerobot_output(out, overwrite)
    if env.endswith(".npz"):
        # Convert recorded demonstrations instead of recording.
        if fmt != "lerobot":
            raise CliError("converting a .npz needs --format lerobot")
        if not Path(env).is_file():
            raise CliError(f"no demonstrations at {env}")
        try:
            loaded = DemoSet.load(env)
        except ValueError as exc:
            raise CliError(str(exc)) from None
        path = loaded.save_lerobot(out, overwrite=overwrite)
        print(f"demos: {path}")
        _print_summary(loaded.stats(), False)
        return
    env_id = resolve_env_id(env)
    if env_id not in EXPERTS:
        raise CliError(
            f"no scripted expert for {env}; experts: "
            f"{', '.join(e.removeprefix('softrod/') for e in EXPERTS)}"
        )
    if episodes < 1:
        raise CliError(f"--episodes must be >= 1, got {episodes}")
    if fmt == "npz":
        out = _demos_output(out, overwrite)
    cb = None
    bar: Any = None
    if progress:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        bar = Progress(
            TextColumn(f"[bold]demos {env_id}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("attempts {task.fields[attempts]}"),
        )
        bar.start()
        task = bar.add_task("demos", total=episodes, attempts=0)

        def cb(kept: int, attempts: int) -> None:
            bar.update(task, completed=kept, attempts=attempts)

    try:
        demos = record_demos(env_id, episodes, seed=seed, max_attempts=max_attempts, progress=cb)
    finally:
        if bar is not None:
            bar.stop()
    if dedup:
        demos = demos.remove_duplicates()
    path = demos.save(out) if fmt == "npz" else demos.save_lerobot(out, overwrite=overwrite)
    print(f"demos: {path}")
    _print_summary(demos.stats(), False)


@app.command("bc")
def bc_cmd(
    demos: Path = typer.Argument(..., help="Demonstrations (.npz from `softrod demos/teleop`)."),
    out: Path = typer.Option(..., "--out", "-o", help="Run directory (policy.pt, logs)."),
    policy: str = typer.Option("mlp", help="mlp (chunking MLP) or act (CVAE transformer)."),
    iterations: int = typer.Option(10_000, help="Gradient steps."),
    chunk: int = typer.Option(10, help="Actions per chunk (1: plain BC; seed 002: 75 at 60 Hz)."),
    hidden: int = typer.Option(512, help="Hidden width."),
    layers: int = typer.Option(3, help="MLP / transformer encoder layers."),
    heads: int = typer.Option(4, help="Attention heads (act)."),
    decoder_layers: int = typer.Option(
        1, help="Transformer decoder layers (act; seed 002 Table 6: 1)."
    ),
    batch_size: int = typer.Option(256, help="Minibatch."),
    learning_rate: float = typer.Option(1e-4, "--lr", help="AdamW learning rate."),
    kl_weight: float = typer.Option(10.0, help="KL weight (act)."),
    dropout: float = typer.Option(0.1, help="Dropout in the transformer (act)."),
    obs_noise: str = typer.Option("none", help="none, or env (seed 002 Table 4 noise)."),
    time_input: bool = typer.Option(
        False, "--time-input/--no-time-input", help="Also feed the time since reset."
    ),
    temporal_ensemble: str = typer.Option(
        "0.01",
        help="How the chunks are run (validation, evaluation, and later `softrod eval`): "
        "temporal ensembling with weights exp(-k i), i = 0 the oldest (k >= 0), 'off' "
        "(query every chunk-th step and run the chunk open loop), or 'auto' (validate every "
        "candidate both ways, k = 0.01 and off, and keep the better iteration and way).",
    ),
    ema_decay: float = typer.Option(
        0.0,
        help="Average the weights (exponential moving average, this decay per step) and "
        "validate and save the average; 0: off.",
    ),
    lr_schedule: str = typer.Option(
        "constant", help="constant, or cosine (from --lr down to ~0 at the last iteration)."
    ),
    seed: int = typer.Option(0, help="Seed."),
    no_dedup: bool = typer.Option(False, "--no-dedup", help="Keep consecutive duplicate frames."),
    eval_episodes: int = typer.Option(0, help="Evaluate this many seeded episodes at the end."),
    val_episodes: int = typer.Option(
        20,
        help="Validation episodes (reset seeds --val-seed, +1, ...) per candidate; the best "
        "candidate becomes policy.pt (0: the last weights, no selection).",
    ),
    val_every: int | None = typer.Option(
        None, help="Iterations between validated candidates [iterations / 4]; the last is one."
    ),
    val_seed: int = typer.Option(
        20_000, help="Reset seed of the first validation episode (tests use 10000-10099)."
    ),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Progress bar."),
    resume: bool = typer.Option(
        False,
        "--resume",
        help="Continue the run in --out from its checkpoint.pt (with a larger --iterations: "
        "extend a run kept with --keep-checkpoint; constant learning rate only).",
    ),
    keep_checkpoint: bool = typer.Option(
        False,
        "--keep-checkpoint",
        help="Keep checkpoint.pt at the end (~10 MB for the default MLP), so that the run can be "
        "extended later with --resume --iterations N.",
    ),
    keep_candidates: bool = typer.Option(
        False,
        "--keep-candidates",
        help="Also write every validated candidate as candidates/policy_<iteration>.pt "
        "(softrod eval runs it), not only the selected one.",
    ),
    overwrite: bool = typer.Option(
        False, "--overwrite", help="Delete an existing run directory of the same name first."
    ),
) -> None:
    """Behaviour cloning with action chunking (MLP or ACT) from demonstrations."""
    from softrod.learn import BCConfig, evaluate, load_bc_policy, train_bc

    if policy not in ("act", "mlp"):
        raise CliError(f"--policy must be act or mlp, got {policy!r}")
    if obs_noise not in ("none", "env"):
        raise CliError(f"--obs-noise must be none or env, got {obs_noise!r}")
    if lr_schedule not in ("constant", "cosine"):
        raise CliError(f"--lr-schedule must be constant or cosine, got {lr_schedule!r}")
    if not demos.is_file():
        raise CliError(f"no demonstrations at {demos}")
    if val_episodes < 0:
        raise CliError(f"--val-episodes must be >= 0, got {val_episodes}")
    if val_every is not None and val_every < 1:
        raise CliError(f"--val-every must be >= 1, got {val_every}")
    te = _temporal_ensemble(temporal_ensemble, allow_auto=True)
    if te is None and val_episodes == 0:
        raise CliError("--temporal-ensemble auto chooses on validation: needs --val-episodes > 0")
    if te is None and chunk < 2:
        raise CliError(f"--temporal-ensemble auto needs --chunk > 1, got {chunk}")
    if keep_candidates and val_episodes == 0:
        raise CliError("--keep-candidates keeps the validated candidates: needs --val-episodes > 0")
    config = BCConfig(
        policy="act" if policy == "act" else "mlp",
        iterations=iterations,
        chunk=chunk,
        hidden=hidden,
        layers=layers,
        heads=heads,
        decoder_layers=decoder_layers,
        batch_size=batch_size,
        learning_rate=learning_rate,
        kl_weight=kl_weight,
        dropout=dropout,
        seed=seed,
        obs_noise="env" if obs_noise == "env" else "none",
        time_input=time_input,
        dedup_tol=None if no_dedup else 1e-9,
        feedforward=4 * hidden,
        ema_decay=ema_decay,
        temporal_ensemble=AUTO_TEMPORAL_ENSEMBLE if te is None else te,
        select_execution=te is None,
        lr_schedule="cosine" if lr_schedule == "cosine" else "constant",
    )
    if resume and overwrite:
        raise CliError("--resume and --overwrite exclude each other")
    if resume:
        if not (out / "checkpoint.pt").is_file():
            raise CliError(f"--resume: no checkpoint.pt in {out}")
    else:
        _prepare_run_dir(out, overwrite=overwrite, resume=None)
    res = train_bc(
        demos,
        config,
        out,
        progress=progress,
        resume=resume,
        val_episodes=val_episodes,
        val_every=val_every,
        val_seed=val_seed,
        keep_checkpoint=keep_checkpoint,
        keep_candidates=keep_candidates,
    )
    if res.interrupted:
        print(
            f"interrupted after {res.iterations} iterations; continue with the same command "
            "and --resume",
            file=sys.stderr,
        )
        raise typer.Exit(130)
    print(f"policy: {res.policy_path}")
    print(f"frames: {res.frames}")
    print(f"wall_time_s: {res.wall_time:.1f}")
    print(f"final_loss: {res.final_loss:.5g}")
    if val_episodes > 0:
        print(f"selected_iteration: {res.selected_iteration} (best on {val_episodes} episodes)")
        if config.select_execution:
            way = "off" if (res.temporal_ensemble or 0.0) < 0 else res.temporal_ensemble
            print(f"selected_temporal_ensemble: {way}")
    if eval_episodes > 0:
        pol = load_bc_policy(res.policy_path)
        ev = evaluate(pol, pol.env_id, episodes=eval_episodes, env_kwargs=pol.env_kwargs)
        ev.to_json(res.run_dir / "eval.json")
        _print_summary(ev.summary(), False)


@app.command("teleop")
def teleop_cmd(
    env: str = typer.Argument(..., help="Environment (curvature-rate or TDCR-on-arm task)."),
    out: Path = typer.Option(..., "--out", "-o", help="Output .npz of the recorded episodes."),
    episodes: int = typer.Option(1, "--episodes", "-n", help="Episodes to record."),
    seed: int = typer.Option(0, help="Reset seed of the first episode."),
    backend: str = typer.Option("terminal", help="terminal, viewer (needs a display) or script."),
    keys: str | None = typer.Option(None, help="Key script for --backend script ('.' = idle)."),
    help_keys: bool = typer.Option(False, "--help-keys", help="Print the key map and exit."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing output file."),
) -> None:
    """Drive a robot with the keyboard and record the episodes (raw frames, duplicates kept)."""
    from softrod.learn import (
        KEY_HELP,
        record_teleop,
        script_keys,
        terminal_keys,
        viewer_keys,
    )

    if help_keys:
        print(KEY_HELP.strip())
        return
    env_id = resolve_env_id(env)
    if backend not in ("terminal", "viewer", "script"):
        raise CliError(f"--backend must be terminal, viewer or script, got {backend!r}")
    if backend == "script" and not keys:
        raise CliError("--backend script needs --keys")
    if episodes < 1:
        raise CliError(f"--episodes must be >= 1, got {episodes}")
    out = _demos_output(out, overwrite)
    if backend == "script":
        key_iter: Any = script_keys(keys or "")
    elif backend == "terminal":
        key_iter = terminal_keys(0.05)
    else:
        import gymnasium as gym

        key_iter = viewer_keys(gym.make(env_id), 0.05)
    demos = record_teleop(
        env_id, key_iter, episodes=episodes, seed=seed, echo=backend == "terminal"
    )
    path = demos.save(out)
    print(f"\nteleop: {path}")
    _print_summary(demos.stats(), False)
    clean = demos.remove_duplicates()
    print(f"frames_after_dedup: {clean.n_frames}")
