"""LLM trials of one arm: all episodes advance in lockstep, one batched vLLM call per step."""

from __future__ import annotations

import hashlib

from edgebench.agent.episode import Episode, _device, result_row, run_lockstep, step_budget
from edgebench.agent.policies import first_json_object, llm_prompt
from edgebench.agent.tasks import Task

# The reply is started for the model: a 135M model rarely opens a JSON object on its own, and
# the first "}" ends the action (one flat object), so generation stops there.
REPLY_PREFIX = '{"action": "'


def trial_seed(task_seed: int, trial: int) -> int:
    return int(hashlib.sha256(f"{task_seed}:{trial}".encode()).hexdigest()[:8], 16)


def run_llm_trials(engine, tasks: list[Task], trials: int, sampling: dict, progress=print) -> list[dict]:
    """Episodes for every (task, trial); sampling uses a recorded per-trial seed, so repeats differ
    and every one can be replayed."""
    episodes = [
        Episode(task, trial, step_budget(task), _device(task)) for task in tasks for trial in range(trials)
    ]
    seeds = {id(e): trial_seed(e.task.seed, e.trial) for e in episodes}
    step = {"n": 0}

    def decide(batch):
        step["n"] += 1
        prompts = [llm_prompt(task.goal, elements, history) for task, elements, history in batch]
        active = [e for e in episodes if e.active]  # the same order run_lockstep built the batch in
        replies = engine.chat(
            prompts, [seeds[id(e)] for e in active], {**sampling, "stop": ["}"]}, REPLY_PREFIX
        )
        progress(f"step {step['n']}: {len(batch)} active episodes")
        return [first_json_object(reply) for reply in replies]

    run_lockstep(episodes, decide)
    rows = []
    for episode in episodes:
        row = result_row(episode, "llm")
        row["sampling_seed"] = seeds[id(episode)]
        rows.append(row)
    return rows


def batching_speedup(engine, tasks: list[Task], sampling: dict, episodes: int = 4) -> dict:
    """Trials per minute in one lockstep batch vs one episode at a time, same arm, same tasks."""
    import time

    chosen = tasks[:episodes]
    start = time.perf_counter()
    run_llm_trials(engine, chosen, 1, sampling, progress=_quiet)
    batched_s = time.perf_counter() - start
    start = time.perf_counter()
    for task in chosen:
        run_llm_trials(engine, [task], 1, sampling, progress=_quiet)
    single_s = time.perf_counter() - start
    return {
        "episodes": len(chosen),
        "batched_s": batched_s,
        "one_at_a_time_s": single_s,
        "batched_trials_per_min": 60 * len(chosen) / batched_s,
        "single_trials_per_min": 60 * len(chosen) / single_s,
        "speedup": single_s / batched_s,
    }


def _quiet(message: str) -> None:
    return None
