"""The agent's calls on a real vLLM engine (tiny random weights): a batch survives the prompts a
real tokenizer refuses, and structured outputs make every reply a valid action on its screen."""

import json
import os

import jsonschema
import pytest

from edgebench.agent.action_schema import action_schema
from edgebench.agent.actions import action_error
from edgebench.agent.llm import chat_each, run_llm_trials
from edgebench.agent.policies import first_json_object
from edgebench.agent.tasks import suite

SAMPLING = {"temperature": 0.7, "top_p": 0.95, "max_new_tokens": 96}  # tiny vocabulary: ~1 token a character


@pytest.fixture(scope="module")
def engine(tiny_model):
    """One in-process engine for the module. Loading it sets this process's environment (single
    process, one thread), which every later subprocess of the suite would inherit: restored after."""
    from edgebench.engines.vllm_engine import VllmEngine

    saved = dict(os.environ)
    engine = VllmEngine()
    engine.load(
        str(tiny_model),
        {"threads": 1, "threads_bind": "nobind", "single_process": True},
        max_model_len=2048,
        max_num_seqs=8,
        prefix_caching=True,
        block_size=32,
        whole_prefills=True,
    )
    yield engine
    engine.close()
    os.environ.clear()
    os.environ.update(saved)


class Episode:
    error = ""


def test_a_prompt_the_real_tokenizer_refuses_fails_alone(engine):
    """A lone surrogate reaches the engine: the batched call raises, each prompt is retried alone,
    and only that one episode gets no reply (with the engine's error in its row)."""
    prompts = ["Reply with a JSON action.", "Bad \udc80 prompt", "Another prompt"]
    episodes = [Episode(), Episode(), Episode()]
    seeds = {id(e): i for i, e in enumerate(episodes)}
    replies = chat_each(prompts, episodes, engine, seeds, SAMPLING)
    assert replies[1] is None and "refused" in episodes[1].error
    assert isinstance(replies[0], str) and isinstance(replies[2], str) and not episodes[0].error


class Poisoning:
    """The real engine, with one episode's first reply replaced by a reproducer of a batch sinker."""

    def __init__(self, engine, poison: str) -> None:
        self.engine, self.poison, self.calls = engine, poison, 0

    def chat(self, prompts, seeds, sampling, reply_prefix="", schemas=None):
        replies = self.engine.chat(prompts, seeds, sampling, reply_prefix, schemas)
        self.calls += 1
        if self.calls == 1:
            replies[0] = reply_prefix + self.poison
        return replies


@pytest.mark.parametrize(
    "poison",
    ['input_text", "index": 3, "text": "\\udc80x"}', 'wait", "extra": ' + "[" * 990 + "]" * 990 + "}"],
    ids=["lone surrogate", "deep nesting"],
)
def test_the_batch_survives_both_reproducers_on_a_real_engine(engine, poison):
    tasks = suite(1)[:3]
    rows = run_llm_trials(Poisoning(engine, poison), tasks, 2, {**SAMPLING, "max_new_tokens": 24}, print)
    assert len(rows) == 6 and all(row["episode_error"] == "" for row in rows)
    assert all(row["steps"] >= 1 for row in rows)


def test_structured_outputs_give_only_valid_actions_on_the_screen(engine):
    """Random weights, yet every reply decoded under the screen's schema is a well-formed action
    with an index that screen shows."""
    schemas = [action_schema([2, 5, 9], [5]), action_schema([])]
    prompts = ["Operate the phone. Reply with one JSON action.", "Reply with one JSON action."]
    replies = engine.chat(prompts * 2, [1, 2, 3, 4], SAMPLING, "", schemas * 2)
    for reply, schema in zip(replies, schemas * 2, strict=True):
        action = json.loads(reply, strict=False)  # xgrammar's strings may hold a raw control character
        # structure, actions and enums are enforced; a text's maxLength only roughly (it counts
        # what it decodes, not characters), and the episode cleans and cuts every text anyway
        jsonschema.validate(
            {**action, "text": action.get("text", "")[:10]} if "text" in action else action, schema
        )
        assert action_error(action) == "" and first_json_object(reply) == action


def test_a_structured_trial_has_no_invalid_action(engine):
    rows = run_llm_trials(engine, suite(1)[:2], 1, {**SAMPLING, "strategy": "structured"}, print)
    assert all(row["invalid_actions"] == 0 and row["episode_error"] == "" for row in rows)


def test_a_decode_stream_runs_in_bursts_and_a_dropped_one_leaves_nothing_in_the_engine(engine):
    """The interleaved design's stream (same module: one engine load serves both)."""
    import itertools

    prompt = list(range(5, 21))
    stream = engine.decode_stream(prompt, 12)
    bursts = [list(itertools.islice(stream, 4)) for _ in range(3)]
    assert [len(b) for b in bursts] == [4, 4, 4] and next(stream, None) is None
    stamps = [s for b in bursts for s in b]
    assert all(b >= a for a, b in itertools.pairwise(stamps))
    dropped = engine.decode_stream(prompt, 12)
    assert len(list(itertools.islice(dropped, 3))) == 3
    dropped.close()  # a partner failed half-way: the request is aborted, not left running
    assert not engine.llm.llm_engine.has_unfinished_requests()
    assert len(engine.generate_stamped(prompt, 6)) == 6


def test_the_completion_check_decodes_to_yes_or_no_on_a_real_engine(engine):
    from edgebench.agent.episode import _device
    from edgebench.agent.llm import CHECK_SCHEMA, said_done
    from edgebench.agent.policies import check_prompt
    from edgebench.agent.uixml import parse_hierarchy

    task = suite(1)[0]
    device = _device(task)
    prompt = check_prompt(task.goal, parse_hierarchy(device.observe()))
    sampling = {**SAMPLING, "max_new_tokens": 40}  # tiny vocabulary: a token a character
    replies = engine.chat([prompt] * 4, [1, 2, 3, 4], sampling, "", [CHECK_SCHEMA] * 4)
    for reply in replies:
        value = json.loads(reply)
        assert value["done"] in ("yes", "no") and said_done(reply) == (value["done"] == "yes")


def test_verify_calibrates_a_threshold_and_runs_trials_on_a_real_engine(engine):
    """The `verify` strategy's scores come from one forward pass each (log P(Yes) - log P(No) of
    the first reply token); the arm's threshold keeps the calibration's false yeses under the cap,
    and trials under it end with rows as any strategy's do."""
    import math

    from edgebench.agent.verify import calibrate, calibration_screens, scores, verify_prompt

    screens = calibration_screens(1)
    values = scores(engine, [verify_prompt(goal, elements) for goal, elements, _ in screens[:6]])
    assert len(values) == 6 and all(math.isfinite(v) for v in values)
    calibration = calibrate(engine, 1, 0.2)
    assert calibration.done_screens > 0 and calibration.not_done_screens > calibration.done_screens
    assert calibration.yes_on_not_done <= 0.2 * calibration.not_done_screens
    sampling = {**SAMPLING, "strategy": "verify", "verify_threshold": calibration.threshold}
    rows = run_llm_trials(engine, suite(1)[:2], 1, sampling, print)
    assert len(rows) == 2 and all(row["episode_error"] == "" for row in rows)


def test_guided_trials_decode_under_the_spaced_pattern_on_a_real_engine(engine):
    """`guided` on a real engine: the home screen's app comes from one forward pass over the app
    names, every other step decodes under the pattern less what was tried on that screen, and the
    episodes end with rows and no invalid action (random weights: nothing is expected to succeed)."""
    from edgebench.agent.action_schema import action_pattern

    pattern = action_pattern([2, 5, 9], [5], excluded=frozenset({("click", 2)}))
    replies = engine.chat(["Reply with one JSON action."] * 3, [1, 2, 3], SAMPLING, "", [pattern] * 3)
    for reply in replies:
        action = first_json_object(reply)
        assert action is not None and action_error(action) == "" and action.get("index") != 2
    sampling = {**SAMPLING, "strategy": "guided", "verify_threshold": 100.0}  # never checked done
    rows = run_llm_trials(engine, suite(1)[:2], 1, sampling, print)
    assert len(rows) == 2 and all(row["episode_error"] == "" and row["invalid_actions"] == 0 for row in rows)
    assert all(row["steps"] == row["budget"] or row["final_status"] != "none" for row in rows)
