"""LLM trials of one arm: all episodes advance in lockstep, one batched vLLM call per step."""

from __future__ import annotations

import hashlib
import json
import sys

from edgebench.agent.action_schema import action_pattern, action_schema
from edgebench.agent.episode import Episode, _device, result_row, run_lockstep, step_budget
from edgebench.agent.guided import History, guided_prompt, routes
from edgebench.agent.policies import check_prompt, first_json_object, llm_prompt, prompt_elements
from edgebench.agent.tasks import Task
from edgebench.agent.verify import scores, verify_prompt
from edgebench.engines.base import failure_text

# Strategies that decode each action under the screen's action space (a JSON schema; `guided`'s is
# a pattern, agent/guided.py); `check`, `verify` and `guided` also ask, after every action, whether
# the screen shows the goal done (a yes ends the episode as complete): `check` samples a JSON
# yes/no, `verify` and `guided` read a calibrated score (agent/verify.py).
STRUCTURED = ("structured", "check", "verify", "guided")
VERIFIED = ("verify", "guided")  # the strategies whose completion check is verify's calibrated score
CHECK_SCHEMA = {
    "type": "object",
    "properties": {"done": {"enum": ["yes", "no"]}},
    "required": ["done"],
    "additionalProperties": False,
}
CHECK_TOKENS = 16  # {"done":"yes"} is about six tokens in a real tokenizer; the grammar ends it
COMPLETE = {"action": "status", "goal_status": "complete"}

# The reply is started for the model: a 135M model rarely opens a JSON object on its own, and
# the first "}" ends the action (one flat object), so generation stops there.
REPLY_PREFIX = '{"action": "'


def trial_seed(task_seed: int, trial: int) -> int:
    return int(hashlib.sha256(f"{task_seed}:{trial}".encode()).hexdigest()[:8], 16)


def run_llm_trials(
    engine, tasks: list[Task], trials: int, sampling: dict, progress=print, only_trial: int | None = None
) -> list[dict]:
    """Episodes for every (task, trial) (or only trial `only_trial`), all in one lockstep batch;
    sampling uses a recorded per-trial seed, so repeats differ and every one can be replayed."""
    episodes = [
        Episode(task, trial, step_budget(task), _device(task))
        for task in tasks
        for trial in range(trials)
        if only_trial is None or trial == only_trial
    ]
    seeds = {id(e): trial_seed(e.task.seed, e.trial) for e in episodes}
    step = {"n": 0}
    strategy = sampling.get("strategy", "free")
    structured = strategy in STRUCTURED
    history = History() if strategy == "guided" else None

    def decide(batch):
        step["n"] += 1
        active = [e for e in episodes if e.active]  # the same order run_lockstep built the batch in
        done = finished(strategy, active, batch, engine, seeds, sampling)
        routed = routes(engine, active, batch, history) if history is not None else {}
        prompts = [action_prompt(e, item, history) for e, item in zip(active, batch, strict=True)]
        live = [i for i, p in enumerate(prompts) if p is not None and i not in done and i not in routed]
        schemas = [action_space(active[i], batch[i][1], history) for i in live] if structured else None
        replies = chat_each(
            [prompts[i] for i in live], [active[i] for i in live], engine, seeds, sampling, schemas
        )
        progress(f"step {step['n']}: {len(batch)} active episodes, {len(done)} checked done")
        decisions: list = [dict(COMPLETE) if i in done else routed.get(i) for i in range(len(batch))]
        for i, reply in zip(live, replies, strict=True):
            decisions[i] = first_json_object(reply) if reply is not None else None
        if history is not None:
            for e, item, decision in zip(active, batch, decisions, strict=True):
                history.acted(id(e), item[1], decision)
        return decisions

    run_lockstep(episodes, decide)
    rows = []
    for episode in episodes:
        row = result_row(episode, "llm")
        row["sampling_seed"] = seeds[id(episode)]
        rows.append(row)
    return rows


def action_prompt(episode, item: tuple, history: History | None) -> str | None:
    """The episode's action prompt: `guided`'s (demonstrations, a history naming what each action
    acted on) when there is a history to keep, else the plain one."""
    task, elements, past = item
    if history is None:
        return built_prompt(episode, llm_prompt, task.goal, elements, past)
    history.observe(id(episode), elements)
    return built_prompt(episode, guided_prompt, task, elements, history.recent(id(episode)))


def finished(strategy: str, active: list, batch: list, engine, seeds: dict, sampling: dict) -> set[int]:
    """The indices of the episodes the strategy's completion check ends as complete this step."""
    if strategy == "check":
        return completion_checks(active, batch, engine, seeds, sampling)
    if strategy in VERIFIED:
        return verified(active, batch, engine, float(sampling["verify_threshold"]))
    return set()


def verified(active: list, batch: list, engine, threshold: float) -> set[int]:
    """The `verify` strategy: every episode that has acted gets a score for "is the goal achieved
    on this screen?" in one batched forward pass; a score above the arm's threshold ends it."""
    asked = [i for i, e in enumerate(active) if e.history]
    prompts = {i: built_prompt(active[i], verify_prompt, batch[i][0].goal, batch[i][1]) for i in asked}
    asked = [i for i in asked if prompts[i] is not None]
    try:
        values = scores(engine, [prompts[i] for i in asked])
    except Exception as error:  # noqa: BLE001 - one at a time, so only a refused prompt's episode fails
        log_batch_failure("check", len(asked), error)
        values = [score_alone(engine, prompts[i], active[i]) for i in asked]
    return {i for i, value in zip(asked, values, strict=True) if value > threshold}


def log_batch_failure(what: str, size: int, error: Exception) -> None:
    """A batch the engine refused is retried one episode at a time; its own error goes to the log."""
    print(
        f"the engine refused a batch of {size} {what} prompts ({failure_text(error)[:350]}); "
        "retrying one episode at a time",
        file=sys.stderr,
        flush=True,
    )


def score_alone(engine, prompt: str, episode) -> float:
    try:
        return scores(engine, [prompt])[0]
    except Exception as error:  # noqa: BLE001 - this episode alone fails, with its error
        episode.error = f"engine refused the check prompt: {failure_text(error)[:250]}"
        return float("-inf")


def completion_checks(active: list, batch: list, engine, seeds: dict, sampling: dict) -> set[int]:
    """The `check` strategy: every episode that has acted is asked, in one batched call under a
    yes/no schema, whether its screen shows the goal done; the indices that answered yes (their
    step becomes status complete, as an agent that ends its episode itself)."""
    asked = [i for i, e in enumerate(active) if e.history]
    prompts = {i: built_prompt(active[i], check_prompt, batch[i][0].goal, batch[i][1]) for i in asked}
    asked = [i for i in asked if prompts[i] is not None]
    check_sampling = {**sampling, "max_new_tokens": CHECK_TOKENS}
    replies = chat_each(
        [prompts[i] for i in asked],
        [active[i] for i in asked],
        engine,
        seeds,
        check_sampling,
        [CHECK_SCHEMA] * len(asked),
    )
    return {i for i, reply in zip(asked, replies, strict=True) if reply is not None and said_done(reply)}


def said_done(reply: str) -> bool:
    try:
        value, _ = json.JSONDecoder(strict=False).raw_decode(reply.strip())
    except (ValueError, RecursionError):
        return False
    return isinstance(value, dict) and value.get("done") == "yes"


def built_prompt(episode, build, *parts) -> str | None:
    """The episode's next prompt, or None (and the episode fails alone, with its error) when it
    cannot be built or encoded."""
    try:
        prompt = build(*parts)
        prompt.encode("utf-8")  # strict: a lone surrogate would fail inside the engine's tokenizer
        return prompt
    except (ValueError, TypeError, RecursionError) as error:
        episode.error = f"prompt could not be built: {failure_text(error)[:250]}"
        return None


def screen_schema(elements) -> dict:
    """The action schema of the screen an episode is shown (the indices its prompt lists)."""
    shown = prompt_elements(elements)
    return action_schema([e.index for e in shown], [e.index for e in shown if e.editable])


def action_space(episode, elements, history: History | None) -> dict | str:
    """The episode's action space on this screen: the JSON schema, or under `guided` a pattern
    over the spaced JSON its prompt shows, less what the episode already tried on this screen."""
    if history is None:  # kept under `guided` only
        return screen_schema(elements)
    shown = prompt_elements(elements)
    excluded = history.excluded(id(episode), elements)
    return action_pattern([e.index for e in shown], [e.index for e in shown if e.editable], excluded=excluded)


def chat_each(
    prompts: list[str], active: list, engine, seeds: dict, sampling: dict, schemas: list | None = None
) -> list:
    """One batched chat; if the batch fails, each prompt alone, so only the episodes whose prompt
    the engine refuses fail (their replies are None), never the whole batch. Under a schema the
    grammar ends the object, so there is no reply prefix and no stop string."""
    prefix = "" if schemas else REPLY_PREFIX
    sampling = {**sampling, "stop": [] if schemas else ["}"]}
    if not prompts:
        return []
    try:
        return engine.chat(prompts, [seeds[id(e)] for e in active], sampling, prefix, schemas)
    except Exception as error:  # noqa: BLE001 - find the episode that broke it, below
        log_batch_failure("action", len(prompts), error)
    replies = []
    for i, (prompt, episode) in enumerate(zip(prompts, active, strict=True)):
        try:
            one = [schemas[i]] if schemas else None
            replies += engine.chat([prompt], [seeds[id(episode)]], sampling, prefix, one)
        except Exception as error:  # noqa: BLE001 - this episode alone fails, with its error
            episode.error = f"engine refused the prompt: {failure_text(error)[:250]}"
            replies.append(None)
    return replies


def sequential_sample(tasks: list[Task], trials: int, episodes: int) -> list[tuple[Task, int]]:
    """`episodes` (task, trial) pairs spread evenly over the arm's episodes, so the sequential
    sample has the same mix of task families as the batch it is compared with."""
    everything = [(task, trial) for task in tasks for trial in range(trials)]
    stride = max(1, len(everything) // max(episodes, 1))
    return everything[::stride][:episodes]


def batching_speedup(
    engine,
    tasks: list[Task],
    trials: int,
    sampling: dict,
    batched_rows: list[dict],
    batched_s: float,
    episodes: int,
) -> dict:
    """Trials per minute of the arm's whole lockstep batch (already run, `batched_rows` in
    `batched_s`) against a sample of the same episodes run one at a time, same engine and seeds.
    Steps per minute are given too: episodes differ in length, steps are the unit of work."""
    import time

    sample = sequential_sample(tasks, trials, episodes)
    # Same seeds as the batch, so the same prompts: with the batch's cache still warm the sample
    # would prefill almost nothing. Both runs start from an empty cache, as after loading.
    engine.reset_prefix_cache()
    steps = 0
    start = time.perf_counter()
    for task, trial in sample:
        steps += run_llm_trials(engine, [task], trial + 1, sampling, progress=_quiet, only_trial=trial)[0][
            "steps"
        ]
    single_s = time.perf_counter() - start
    batched_steps = sum(row["steps"] for row in batched_rows)
    batched_rate = 60 * len(batched_rows) / batched_s
    single_rate = 60 * len(sample) / single_s
    return {
        "batched_episodes": len(batched_rows),
        "batched_s": batched_s,
        "batched_trials_per_min": batched_rate,
        "batched_steps_per_min": 60 * batched_steps / batched_s,
        "sequential_episodes": len(sample),
        "sequential_s": single_s,
        "sequential_trials_per_min": single_rate,
        "sequential_steps_per_min": 60 * steps / single_s,
        "speedup": batched_rate / single_rate,
    }


def _quiet(message: str) -> None:
    return None
