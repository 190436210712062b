"""The `verify` strategy's completion check: after each action, the model is asked a short yes/no
question about a focused summary of the screen (the app, its texts, its switches as on/off), and
its answer is read as a score, log P(Yes) - log P(No) of the reply's first token, not sampled.

The score's bias differs between models and builds (a small model says "No" to most long
prompts), so each arm sets its own threshold before its trials, in a calibration of its own: the
scripted solutions of the suite's task kinds on held-out seeds (another suite name) give positive
screens (the one a solution reports complete on) and negative ones (every earlier screen on which
the goal does not hold yet). The threshold is the lowest score that keeps the share of negative
screens answered yes at or under `agent.verify_false_yes`: every check of an episode is a chance to
end it early, so false yeses cost more than missed ones.
"""

from __future__ import annotations

from dataclasses import dataclass

from edgebench.agent.episode import run_scripted
from edgebench.agent.policies import app_name, prompt_elements
from edgebench.agent.tasks import suite
from edgebench.agent.uixml import Element
from edgebench.stats import wilson_interval

ANSWERS = ["Yes", "No"]
MAX_TEXTS = 14  # the first texts of a screen: its title and the rows a task reads sit at the top
CALIBRATION_SUITE = "verify-calibration"  # held-out seeds: none of the study's episodes


def verify_prompt(goal: str, elements: list[Element]) -> str:
    """The question and a focused summary: a 1.5B model that says "No" to a goal met on a whole
    screen listing answers the same screen's texts and switch states (on/off, not checked=true)."""
    shown = prompt_elements(elements)
    switches = [f'"{e.label}" {"on" if e.checked else "off"}' for e in shown if e.checkable]
    texts = [f'"{e.label}"' for e in shown if not e.checkable and e.label][:MAX_TEXTS]
    return (
        f"Goal on an Android phone: {goal}\n"
        f"App on screen: {app_name(elements)}\n"
        f"Texts on screen: {', '.join(texts) or 'none'}\n"
        f"Switches on screen: {'; '.join(switches) or 'none'}\n"
        f'Is the goal "{goal}" achieved now? Answer Yes or No.'
    )


def scores(engine, prompts: list[str]) -> list[float]:
    """log P(Yes) - log P(No) of each prompt's reply (one forward pass each, batched)."""
    if not prompts:
        return []
    return [yes - no for yes, no in engine.choice_logprobs(prompts, "", ANSWERS)]


def calibration_screens(instances: int) -> list[tuple[str, list[Element], bool]]:
    """(goal, screen, goal done) from the scripted solutions of the held-out suite: the screen
    each reports complete on (True) and every earlier screen, after a first action, on which the
    goal does not hold (False). Tasks that end infeasible have no done screen and are left out."""
    screens = []
    for task in suite(instances, CALIBRATION_SUITE):
        if task.kind.expected_status == "complete":
            screens += _scripted_screens(task)
    return screens


def _scripted_screens(task) -> list[tuple[str, list[Element], bool]]:
    """One scripted episode of the task, run as any episode is, recording its labelled screens."""
    screens = []

    def watch(episode, elements, history, action):
        if history and action["action"] == "status":
            screens.append((task.goal, elements, True))
        elif history and not task.goal_met(episode.device.snapshot()):
            screens.append((task.goal, elements, False))

    run_scripted(task, watch)
    return screens


@dataclass
class Calibration:
    threshold: float
    done_screens: int
    yes_on_done: int  # positives over the threshold (the check's hit rate)
    not_done_screens: int
    yes_on_not_done: int  # negatives over it (its false-yes rate)

    def row(self) -> dict:
        hit, false_yes = self.yes_on_done, self.yes_on_not_done
        hit_low, hit_high = wilson_interval(hit, self.done_screens)
        false_low, false_high = wilson_interval(false_yes, self.not_done_screens)
        return {
            "verify_threshold": self.threshold,
            "verify_done_screens": self.done_screens,
            "verify_hit_rate": hit / max(self.done_screens, 1),
            "verify_hit_low": hit_low,
            "verify_hit_high": hit_high,
            "verify_not_done_screens": self.not_done_screens,
            "verify_false_yes_rate": false_yes / max(self.not_done_screens, 1),
            "verify_false_yes_low": false_low,
            "verify_false_yes_high": false_high,
        }


def choose_threshold(done: list[float], not_done: list[float], false_yes: float) -> Calibration:
    """The lowest threshold (a yes is a score above it) whose share of not-done screens answered
    yes is at most `false_yes`; thresholds are the observed not-done scores (and -inf)."""
    candidates = sorted({float("-inf"), *not_done})
    for threshold in candidates:
        wrong = sum(score > threshold for score in not_done)
        if wrong <= false_yes * len(not_done):
            break
    hits = sum(score > threshold for score in done)
    return Calibration(threshold, len(done), hits, len(not_done), wrong)


def calibrate(engine, instances: int, false_yes: float) -> Calibration:
    """This arm's threshold from its own scores on the held-out calibration screens."""
    screens = calibration_screens(instances)
    values = scores(engine, [verify_prompt(goal, elements) for goal, elements, _ in screens])
    done = [v for v, (_, _, is_done) in zip(values, screens, strict=True) if is_done]
    not_done = [v for v, (_, _, is_done) in zip(values, screens, strict=True) if not is_done]
    return choose_threshold(done, not_done, false_yes)
