"""Run episodes in lockstep batches: every active episode observes, one batched decision, every
episode acts. Malformed output is an invalid action: it costs a step and is counted, never a crash."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from edgebench.agent.actions import action_error, sanitized
from edgebench.agent.device import Device
from edgebench.agent.simulator import SimulatedDevice
from edgebench.agent.tasks import Task, judge
from edgebench.agent.uixml import Element, parse_hierarchy

Decision = dict | None  # None = the policy's output could not be parsed into an action
DecideBatch = Callable[[list[tuple[Task, list[Element], list[dict]]]], list[Decision]]


@dataclass
class Episode:
    task: Task
    trial: int
    budget: int
    device: Device
    history: list[dict] = field(default_factory=list)
    steps: int = 0
    invalid: int = 0
    final_status: str | None = None
    started: float = field(default_factory=time.perf_counter)
    wall_s: float = 0.0
    error: str = ""  # why this episode alone stopped (its prompt could not be built or sent)

    @property
    def active(self) -> bool:
        return not self.error and self.final_status is None and self.steps < self.budget


def run_scripted(task: Task, watch: Callable | None = None) -> Episode:
    """One episode of the task's scripted solution on a fresh device; `watch(episode, elements,
    history, action)` sees each step before it is applied (to record screens or lines)."""
    from edgebench.agent.policies import ScriptedPolicy

    episode, policy = Episode(task, 0, 100, _device(task)), ScriptedPolicy(task)

    def decide(batch):
        _, elements, history = batch[0]
        action = policy(elements, history)
        if watch is not None:
            watch(episode, elements, history, action)
        return [action]

    run_lockstep([episode], decide)
    return episode


def scripted_length(task: Task) -> int:
    episode = run_scripted(task)
    if episode.final_status is None:
        raise RuntimeError(f"the scripted policy did not finish {task.task_id}")
    return episode.steps


def step_budget(task: Task) -> int:
    return max(10, 3 * scripted_length(task))


def _device(task: Task, make_device: Callable[[], Device] = SimulatedDevice) -> Device:
    device = make_device()
    device.reset(task.initial, task.seed)
    return device


def single(policy: Callable) -> DecideBatch:
    """A batch decider for one episode driven by a plain policy."""

    def decide(batch):
        return [policy(elements, history) for _, elements, history in batch]

    return decide


def apply(episode: Episode, action: Decision) -> None:
    """One step: a well-formed action is applied; anything else costs the step and is counted."""
    episode.steps += 1
    if action is None or action_error(action):
        episode.invalid += 1
        episode.device.step += 1
        return
    action = sanitized(action)
    episode.history.append(action)
    if action["action"] == "status":
        episode.final_status = action["goal_status"]
        return
    try:
        episode.device.act(action)
    except ValueError:  # well formed but impossible here: no such element, not editable, no such app
        episode.invalid += 1


def run_lockstep(episodes: list[Episode], decide: DecideBatch) -> None:
    while active := [e for e in episodes if e.active]:
        batch = [(e.task, parse_hierarchy(e.device.observe()), e.history) for e in active]
        for episode, action in zip(active, decide(batch), strict=True):
            apply(episode, action)
            if not episode.active:
                episode.wall_s = time.perf_counter() - episode.started


def result_row(episode: Episode, policy: str) -> dict:
    task = episode.task
    verdict = judge(
        task, episode.device.snapshot(), episode.device.changes, episode.final_status, episode.device.visited
    )
    return {
        "policy": policy,
        "task_id": task.task_id,
        "template": task.template,
        "variant": task.variant,
        "already_satisfied": task.already_satisfied,
        "instance": task.instance,
        "trial": episode.trial,
        "seed": task.seed,
        "success": verdict.success,
        "goal_met": verdict.goal_met,
        "untouched_if_satisfied": verdict.untouched_if_satisfied,
        "unrelated_unchanged": verdict.unrelated_unchanged,
        "exact_change": verdict.exact_change,
        "status_ok": verdict.status_ok,
        "reached": verdict.reached,
        "final_status": episode.final_status or "none",
        "steps": episode.steps,
        "budget": episode.budget,
        "invalid_actions": episode.invalid,
        "wall_s": episode.wall_s,
        "changes": json.dumps([[c.step, c.key, c.old, c.new] for c in episode.device.changes]),
        "episode_error": episode.error,
    }


def run_policy(
    tasks: list[Task], policy_name: str, trials: int = 1, make_device: Callable[[], Device] = SimulatedDevice
) -> list[dict]:
    """Run a baseline policy over the tasks it applies to; each trial is a fresh episode with a
    fresh policy, on a fresh device from `make_device`."""
    from edgebench.agent.policies import BASELINES

    policy = BASELINES[policy_name]
    rows = []
    for task in tasks:
        if policy.applies_to is not None and task.template not in policy.applies_to:
            continue
        budget = step_budget(task)
        for trial in range(trials):
            episode = Episode(task, trial, budget, _device(task, make_device))
            run_lockstep([episode], single(policy(task)))
            rows.append(result_row(episode, policy_name))
    return rows
