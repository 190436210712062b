"""The `guided` strategy's action prompt: demonstrations of other tasks, and a history a model can
read. Its completion check is `verify`'s (agent/verify.py).

Once `verify` ended episodes on done screens, navigation was the limit. Trajectories of Qwen 1.5B
under `verify` showed why: navigate_home fifteen times, a row opened and closed again and again,
because the history said "click 4" without what 4 was or that nothing had changed. The levers:
- demonstrations: the scripted solutions of other task kinds (never the task's own), run on
  held-out seeds, each step written as the app, the action and the element it acted on; the ones
  whose goals share the most words with the task's goal;
- a history that names the element each past action acted on, and says when the screen stayed
  the same; an action already taken on a screen is not offered on it again;
- on the home screen, the app is the one the model ranks first for the goal (one forward pass over
  the launcher's app names), not a sampled click: sampled, the model opened the first icon listed
  for most goals.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from edgebench.agent.action_schema import LAUNCHER_APPS, action_key
from edgebench.agent.actions import open_app
from edgebench.agent.episode import run_scripted
from edgebench.agent.policies import ACTION_FORMS, app_name, prompt_elements
from edgebench.agent.tasks import Task, suite
from edgebench.agent.uixml import Element, format_elements

DEMONSTRATION_SUITE = "demonstrations"  # held-out seeds: none of the study's or calibration's
DEMONSTRATIONS = 2  # per prompt: a 2,048-token context holds two beside a long Settings screen
LAST_ACTIONS = 4
UNCHANGED = " (nothing changed)"
HOME = "Home screen"
STOP_WORDS = {"a", "an", "the", "for", "with", "named", "turn", "set", "add", "open"}


def action_line(elements: list[Element], action: dict | None) -> str:
    """One action as the app, the action and the element it acted on, e.g.
    'Settings: click [4] Switch "Wi-Fi" checked=false'."""
    if action is None:
        return f"{app_name(elements)}: a reply that was not an action"
    kind = action.get("action")
    if "index" in action:
        target = [e for e in elements if e.index == action["index"]]
        what = format_elements(target).removesuffix(" clickable") if target else f"[{action['index']}]"
        typed = f' text "{action["text"]}"' if "text" in action else ""
        return f"{app_name(elements)}: {kind} {what}{typed}"
    args = [str(action[key]) for key in ("name", "direction", "goal_status") if key in action]
    return f"{app_name(elements)}: {' '.join([str(kind), *args])}"


@dataclass(frozen=True)
class Demonstration:
    template: str
    seed: int
    goal: str
    lines: tuple[str, ...]

    def text(self) -> str:
        return f"Goal: {self.goal}\n" + "\n".join(self.lines)


def _demonstration(task: Task) -> Demonstration:
    """The task's scripted solution, run as any episode is, written one line per step."""
    lines = []

    def watch(episode, elements, history, action):
        lines.append(action_line(elements, action))

    run_scripted(task, watch)
    return Demonstration(task.template, task.seed, task.goal, tuple(lines))


@lru_cache(maxsize=1)
def demonstrations() -> tuple[Demonstration, ...]:
    """One demonstration per task kind, of its first variant that needs a change; a solution of a
    single step (a status) shows no path, so it is left out."""
    shown, kept = set(), []
    for task in suite(1, DEMONSTRATION_SUITE):
        if task.template in shown or task.already_satisfied:
            continue
        shown.add(task.template)
        demo = _demonstration(task)
        if len(demo.lines) > 1:
            kept.append(demo)
    return tuple(kept)


def goal_words(goal: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9:-]+", goal.lower()) if w not in STOP_WORDS}


def chosen(task: Task, count: int = DEMONSTRATIONS) -> list[Demonstration]:
    """The demonstrations of other task kinds whose goals share the most words with this one's
    (ties in suite order)."""
    words = goal_words(task.goal)
    others = [d for d in demonstrations() if d.template != task.template]
    return sorted(others, key=lambda d: -len(words & goal_words(d.goal)))[:count]


def _signature(elements: list[Element]) -> tuple:
    return tuple((e.index, e.label, e.checked, e.text) for e in elements)


class History:
    """Each episode's past actions as lines, marked when the screen after them was the same, and
    the actions it took on each screen it saw: on a screen seen before, an action taken there
    already is left out of the next step's action space (it led nowhere new), so a loop turns
    into trying the next thing."""

    def __init__(self) -> None:
        self.lines: dict[int, list[str]] = {}
        self.pending: dict[int, tuple[str, tuple]] = {}
        self.tried: dict[tuple[int, tuple], set[tuple]] = {}

    def observe(self, key: int, elements: list[Element]) -> None:
        """The screen after the episode's last action: that action's line is written now."""
        if key in self.pending:
            line, before = self.pending.pop(key)
            same = before == _signature(elements)
            self.lines.setdefault(key, []).append(line + (UNCHANGED if same else ""))

    def acted(self, key: int, elements: list[Element], action: dict | None) -> None:
        screen = _signature(elements)
        self.pending[key] = (action_line(elements, action), screen)
        if action is not None:
            self.tried.setdefault((key, screen), set()).add(action_key(action))

    def excluded(self, key: int, elements: list[Element]) -> frozenset[tuple]:
        return frozenset(self.tried.get((key, _signature(elements)), ()))

    def recent(self, key: int, last: int = LAST_ACTIONS) -> list[str]:
        return self.lines.get(key, [])[-last:]


def guided_prompt(task: Task, elements: list[Element], recent: list[str]) -> str:
    """Ordered for the prefix cache: instructions, demonstrations (shared by a task kind's
    episodes), the screen, then the episode's own goal and history."""
    examples = "\n".join(f"Example {i + 1}. {d.text()}" for i, d in enumerate(chosen(task)))
    return (
        "You operate an Android phone, one action per reply. Reply with exactly one JSON action, "
        f"one of:\n{ACTION_FORMS}\n"
        "Start an app with open_app. When the screen shows the goal is done, reply with status "
        "complete; if the goal cannot be done, reply with status infeasible. An action marked "
        f"{UNCHANGED.strip()} did nothing: do something else.\n"
        "Examples of other tasks, each step as the app, the action and the element it acted on:\n"
        f"{examples}\n"
        "Your task.\n"
        f"App on screen: {app_name(elements)}\n"
        f"Screen:\n{format_elements(prompt_elements(elements))}\n"
        f"Goal: {task.goal}\n"
        f"Your last actions:\n{chr(10).join(recent) or 'none'}\n"
    )


def app_prompt(goal: str) -> str:
    """Worded as what to open (asked "which app is this done in?", Qwen 1.5B named Settings for
    every alarm goal); no app is described, so the model's own knowledge picks."""
    return (
        f"On an Android phone, to do this: {goal}\n"
        f"Which app do you open? Answer with one of: {', '.join(LAUNCHER_APPS)}."
    )


def routes(engine, active: list, batch: list, history: History) -> dict[int, dict]:
    """The episodes on the home screen, each with its action: open the app the model ranks first
    for its goal among those not yet opened from this screen. An episode that tried them all is
    left to its prompt, and so is every episode when the tokenizer gives two app names one first
    token (a first-token score cannot tell them apart)."""
    home = [i for i, item in enumerate(batch) if app_name(item[1]) == HOME]
    if not home:
        return {}
    try:
        ranked = engine.choice_logprobs([app_prompt(batch[i][0].goal) for i in home], "", list(LAUNCHER_APPS))
    except ValueError:  # a tokenizer whose app names share a first token: the prompt decides
        return {}
    actions = {}
    for i, logprobs in zip(home, ranked, strict=True):
        tried = history.excluded(id(active[i]), batch[i][1])
        order = sorted(zip(logprobs, LAUNCHER_APPS, strict=True), reverse=True)
        untried = [app for _, app in order if ("open_app", app) not in tried]
        if untried:
            actions[i] = open_app(untried[0])
    return actions
