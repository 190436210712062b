"""Whole episodes driven by arbitrary model text, through the screen read, on both device classes:
no reply may raise; each is applied or counted as an invalid action."""

import json
import zlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from edgebench.agent.adb_device import AdbDevice
from edgebench.agent.episode import Episode, apply, result_row
from edgebench.agent.policies import ScriptedPolicy, first_json_object
from edgebench.agent.simulator import SimulatedDevice
from edgebench.agent.tasks import suite
from edgebench.agent.uixml import parse_hierarchy
from tests.fake_adb import FakeAdb

TASKS = suite(instances=1)
ACTIONS = ["click", "long_press", "input_text", "scroll", "navigate_back", "navigate_home", "open_app"]
ACTIONS += ["wait", "status"]
ODD_VALUES = st.one_of(
    st.integers(-5, 40),
    st.integers(min_value=10**18),
    st.booleans(),
    st.floats(allow_nan=True),
    st.text(max_size=12),
    st.none(),
    st.lists(st.integers(), max_size=3),
    st.sampled_from(["Settings", "Clock", "Contacts", "complete", "infeasible", "down"]),
)
ACTION_OBJECTS = st.builds(
    lambda action, extra: json.dumps({"action": action, **extra}),
    st.sampled_from(ACTIONS),
    st.dictionaries(
        st.sampled_from(["index", "text", "name", "direction", "goal_status"]), ODD_VALUES, max_size=3
    ),
)
REPLIES = st.one_of(
    st.just("SCRIPTED"),  # a known-good step, so episodes reach the pickers and editors
    ACTION_OBJECTS,
    st.text(max_size=120),  # any characters, control characters included
    st.builds(lambda n: '{"action": "wait", "x": ' + "[" * n, st.integers(1000, 3000)),
    st.builds(lambda n: '{"action": "click", "index": ' + "9" * n + "}", st.integers(4000, 6000)),
    st.builds(
        lambda text: json.dumps({"action": "input_text", "index": 3, "text": text}),
        st.text(
            alphabet=st.characters(codec="utf-8", categories=["Cc", "Cs", "Lo", "Po", "Zs"]), max_size=20
        ),
    ),
)


# Known-good steps weigh three to one, so episodes get deep (pickers, editors) between odd replies.
SCRIPTED = st.just("SCRIPTED")
STEPS = st.lists(st.one_of(SCRIPTED, SCRIPTED, SCRIPTED, REPLIES), min_size=1, max_size=30)
TYPED = st.text(alphabet=st.characters(codec="utf-8"), max_size=40) | st.text(
    alphabet=st.characters(min_codepoint=0, max_codepoint=0x1F), max_size=10
)
# the tasks whose scripted solution types: new contacts, and new alarms (the picker's text mode)
EDITING = [
    t
    for t in TASKS
    if t.template in ("add_contact", "add_alarm") and not t.already_satisfied and t.variant != "present"
]


def run_episode(task, device, replies) -> Episode:
    device.reset(task.initial, task.seed)
    episode = Episode(task, 0, len(replies), device)
    scripted = ScriptedPolicy(task)
    for reply in replies:
        if not episode.active:
            break
        elements = parse_hierarchy(device.observe())  # the screen read must survive what was typed
        if reply == "SCRIPTED":
            apply(episode, scripted(elements, episode.history))
        else:
            apply(episode, first_json_object(reply))
    row = result_row(episode, "fuzz")
    assert row["steps"] == episode.steps <= len(replies)
    assert 0 <= row["invalid_actions"] <= row["steps"]
    return episode


FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(st.sampled_from(TASKS), STEPS)
def test_fuzzed_episodes_never_raise_on_the_simulator(task, replies):
    run_episode(task, SimulatedDevice(), replies)


def type_into_every_field(task, device, text) -> Episode:
    """Follow the scripted solution; on every screen with text fields, type `text` into each first."""
    device.reset(task.initial, task.seed)
    episode = Episode(task, 0, 60, device)
    scripted, typed = ScriptedPolicy(task), 0
    while episode.active:
        elements = parse_hierarchy(device.observe())
        fields = [e for e in elements if e.editable]
        if fields and typed < 2:
            typed += 1
            for field in fields:
                apply(episode, {"action": "input_text", "index": field.index, "text": text})
            parse_hierarchy(device.observe())  # what was typed must not break the screen read
        apply(episode, scripted(parse_hierarchy(device.observe()), episode.history))
    assert typed > 0  # the episode did reach an editor
    return episode


@FUZZ
@given(st.sampled_from(EDITING), TYPED, st.booleans())
def test_any_typed_text_leaves_the_screen_readable(task, text, over_adb):
    device = AdbDevice(transport=FakeAdb(task.initial, task.seed)) if over_adb else SimulatedDevice()
    type_into_every_field(task, device, text)


@FUZZ
@given(st.sampled_from(TASKS), STEPS)
def test_fuzzed_episodes_never_raise_over_adb(task, replies):
    episode = run_episode(task, AdbDevice(transport=FakeAdb(task.initial, task.seed)), replies)
    # the adb path reads back what the phone shows: the simulator behind it agrees with it
    assert episode.device.snapshot().value("contacts") == episode.device.transport.sim.state.value("contacts")


class ScriptedReplies:
    """An engine stand-in: the reply prefix plus a seeded mix of good and broken completions."""

    def __init__(self, completions: list[str]) -> None:
        self.completions = completions
        self.calls = 0

    def chat(self, prompts, seeds, sampling, reply_prefix="", schemas=None):
        self.calls += 1
        count = len(self.completions)
        return [reply_prefix + self.completions[(seed + self.calls) % count] for seed in seeds]


def test_llm_trials_run_in_lockstep_batches_through_any_reply():
    from edgebench.agent.llm import REPLY_PREFIX, run_llm_trials

    assert REPLY_PREFIX.startswith('{"action"')
    replies = ['open_app", "name": "Clock"}', 'click", "index": true}', "\b\x01", 'wait"}', "["]
    engine = ScriptedReplies(replies)
    rows = run_llm_trials(engine, TASKS, 2, {"max_tokens": 32}, progress=lambda message: None)
    assert len(rows) == 2 * len(TASKS) and {row["trial"] for row in rows} == {0, 1}
    assert all(0 < row["invalid_actions"] < row["steps"] <= row["budget"] for row in rows)
    assert engine.calls == max(row["steps"] for row in rows)  # one batched call per lockstep step


class CachingReplies(ScriptedReplies):
    """A seeded engine stand-in with a prefix cache: it records which prompts it has seen."""

    def __init__(self, completions: list[str]) -> None:
        super().__init__(completions)
        self.seen: set[str] = set()
        self.cache_hits = 0

    def chat(self, prompts, seeds, sampling, reply_prefix="", schemas=None):
        self.cache_hits += sum(prompt in self.seen for prompt in prompts)
        self.seen.update(prompts)
        # a seeded sampler: the same prompt and seed give the same reply, in a batch or alone
        count = len(self.completions)
        return [
            reply_prefix + self.completions[zlib.crc32(f"{seed}{prompt}".encode()) % count]
            for prompt, seed in zip(prompts, seeds, strict=True)
        ]

    def reset_prefix_cache(self):
        self.seen.clear()


def test_the_sequential_sample_does_not_reuse_the_batch_cache():
    from edgebench.agent.llm import batching_speedup, run_llm_trials

    engine = CachingReplies(['wait"}', 'open_app", "name": "Clock"}'])
    rows = run_llm_trials(engine, TASKS[:4], 1, {"max_tokens": 32}, progress=lambda message: None)
    engine.cache_hits = 0
    speed = batching_speedup(engine, TASKS[:4], 1, {"max_tokens": 32}, rows, 10.0, 2)
    # the sample replays the batch's own seeds: without a reset every prompt would be a cache hit
    assert speed["sequential_episodes"] == 2 and speed["batched_episodes"] == 4
    sample_steps = speed["sequential_steps_per_min"] * speed["sequential_s"] / 60
    assert engine.cache_hits < round(sample_steps)


class StrictTokenizerReplies(ScriptedReplies):
    """Like a real engine's tokenizer: a prompt that is not valid UTF-8 sinks the whole batched call."""

    refuse = ""  # a prompt holding this text is refused as well

    def chat(self, prompts, seeds, sampling, reply_prefix="", schemas=None):
        for prompt in prompts:
            prompt.encode("utf-8")  # UnicodeEncodeError on a lone surrogate, as vLLM's tokenizer raises
            if self.refuse and self.refuse in prompt:
                raise TypeError("the tokenizer refused this prompt")
        return super().chat(prompts, seeds, sampling, reply_prefix, schemas)


SURROGATE = 'input_text", "index": 3, "text": "\\udc80x"}'  # a lone-surrogate escape: valid JSON
DEEP = 'wait", "extra": ' + "[" * 990 + "]" * 990 + "}"  # nesting that breaks a repr of the history


@pytest.mark.parametrize("poison", [SURROGATE, DEEP], ids=["lone surrogate", "deep nesting"])
def test_one_poisonous_reply_never_sinks_the_batch(poison):
    from edgebench.agent.llm import run_llm_trials

    engine = StrictTokenizerReplies(['open_app", "name": "Clock"}', poison, 'wait"}'])
    rows = run_llm_trials(engine, TASKS[:6], 2, {"max_tokens": 32}, progress=lambda message: None)
    assert len(rows) == 12 and all(row["episode_error"] == "" for row in rows)
    assert all(row["steps"] == row["budget"] or row["final_status"] != "none" for row in rows)


def test_an_episode_whose_prompt_the_engine_refuses_fails_alone():
    from edgebench.agent.actions import clean_text, sanitized
    from edgebench.agent.llm import run_llm_trials

    engine = StrictTokenizerReplies(['open_app", "name": "Clock"}', 'wait"}'])
    engine.refuse = TASKS[0].goal  # the episodes of the tasks with this goal only
    rows = run_llm_trials(engine, TASKS[:6], 2, {"max_tokens": 32}, progress=lambda message: None)
    failed = [row for row in rows if row["episode_error"]]
    refused = {t.task_id for t in TASKS[:6] if t.goal == TASKS[0].goal}
    assert {row["task_id"] for row in failed} == refused and len(failed) == 2 * len(refused)
    assert all(row["steps"] > 0 for row in rows if not row["episode_error"])  # the others ran on
    assert all("refused" in row["episode_error"] for row in failed)
    assert clean_text("a\udc80b\x00c" + "x" * 500) == "abc" + "x" * 197
    assert sanitized({"action": "wait", "extra": [[[]]]}) == {"action": "wait"}


class CheckingReplies:
    """An engine stand-in for the `check` strategy: every action is a wait; the completion check
    answers `verdict`. It records which calls were checks."""

    def __init__(self, verdict: str) -> None:
        self.verdict = verdict
        self.check_prompts: list[str] = []

    def chat(self, prompts, seeds, sampling, reply_prefix="", schemas=None):
        from edgebench.agent.llm import CHECK_SCHEMA, CHECK_TOKENS

        assert schemas is not None and len(schemas) == len(prompts) and reply_prefix == ""
        if schemas[0] == CHECK_SCHEMA:
            assert sampling["max_new_tokens"] == CHECK_TOKENS and all(s == CHECK_SCHEMA for s in schemas)
            self.check_prompts += prompts
            return [f'{{"done": "{self.verdict}"}}'] * len(prompts)
        assert all(s != CHECK_SCHEMA for s in schemas)  # each action under its screen's schema
        return ['{"action": "wait"}'] * len(prompts)


@pytest.mark.parametrize("verdict", ["yes", "no"])
def test_the_completion_check_ends_an_episode_only_when_it_says_yes(verdict):
    from edgebench.agent.llm import run_llm_trials

    engine = CheckingReplies(verdict)
    sampling = {"max_new_tokens": 32, "strategy": "check"}
    rows = run_llm_trials(engine, TASKS[:4], 1, sampling, progress=lambda message: None)
    if verdict == "yes":  # asked after the first action, never before it
        assert all(row["final_status"] == "complete" and row["steps"] == 2 for row in rows)
        assert len(engine.check_prompts) == 4
    else:
        assert all(row["final_status"] == "none" and row["steps"] == row["budget"] for row in rows)
        assert len(engine.check_prompts) == sum(row["steps"] - 1 for row in rows)
    assert all("Goal:" in prompt and '{"done": "yes"}' in prompt for prompt in engine.check_prompts)
