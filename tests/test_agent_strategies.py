"""Agent strategies as a study dimension: the reference arm runs each of agent.other_strategies
beside the study's strategy on one engine and the same seeds; the summary has a row per arm and
strategy, and McNemar pairs an arm with the reference under the same strategy only."""

import pandas as pd
import pytest

from edgebench.agent.tables import summary_rows, throughput_rows
from edgebench.config import ConfigError, check_agent_strategies
from edgebench.items.verify import mcnemar


def trials(arm: str, strategy: str, successes: list[bool], wall_s: float = 10.0) -> pd.DataFrame:
    n = len(successes)
    return pd.DataFrame(
        {
            "arm": arm,
            "strategy": strategy,
            "status": "ok",
            "task_id": [f"t{i}" for i in range(n)],
            "template": "add_alarm",
            "already_satisfied": False,
            "trial": 0,
            "success": successes,
            "reached": successes,
            "steps": 5,
            "invalid_actions": 1,
            "strategy_wall_s": wall_s,
        }
    )


REFERENCE_CHECK = trials("vllm/bf16", "check", [True] * 8 + [False] * 2, wall_s=100.0)
REFERENCE_FREE = trials("vllm/bf16", "free", [False] * 10, wall_s=50.0)
CANDIDATE_CHECK = trials("vllm/int4", "check", [True] * 8 + [False] * 2)


def test_each_strategy_of_the_reference_arm_has_its_own_rates_and_cost_per_step():
    frame = pd.concat([REFERENCE_CHECK, REFERENCE_FREE, CANDIDATE_CHECK], ignore_index=True)
    summary = pd.DataFrame(summary_rows(frame, "vllm/bf16")).set_index(["arm", "strategy", "scope"])
    assert summary.loc[("vllm/bf16", "check", "all"), "success_rate"] == pytest.approx(0.8)
    assert summary.loc[("vllm/bf16", "free", "all"), "success_rate"] == 0.0
    assert summary.loc[("vllm/bf16", "check", "all"), "s_per_step"] == pytest.approx(100.0 / 50)
    assert summary.loc[("vllm/bf16", "free", "all"), "s_per_step"] == pytest.approx(50.0 / 50)
    # paired with the reference's check episodes only: identical outcomes, no discordant pair
    candidate = summary.loc[("vllm/int4", "check", "all")]
    assert candidate["mcnemar_vs"] == "vllm/bf16"
    assert candidate["success_only_reference"] == 0 and candidate["success_p_value"] == 1.0


def test_a_verdict_pairs_the_candidate_with_the_reference_under_its_own_strategy():
    frame = pd.concat([REFERENCE_CHECK, REFERENCE_FREE, CANDIDATE_CHECK], ignore_index=True)
    item = {
        "starts_from": {"arms": ["vllm/bf16", "vllm/int4"]},
        "verify": {"method": "mcnemar", "outcome": "success"},
        "expect": {"direction": "worse"},
    }
    _, evidence = mcnemar(frame, item)
    row = evidence.iloc[0]
    assert row["pairs"] == 10 and row["reference_rate"] == pytest.approx(0.8)
    assert row["only_reference"] == 0  # pairing across strategies would have found 8


def test_the_batching_row_comes_from_the_study_strategy_rows():
    kept = CANDIDATE_CHECK.assign(throughput_speedup=2.0, throughput_batched_s=1.0, model="m")
    other = trials("vllm/int4", "free", [False] * 3).assign(throughput_speedup=float("nan"), model="m")
    rows = throughput_rows(pd.concat([other, kept], ignore_index=True))
    assert len(rows) == 1 and rows[0]["speedup"] == 2.0


def test_the_study_strategy_cannot_also_be_another_strategy():
    config = {"agent": {"strategy": "check", "other_strategies": ["free", "check"]}}
    with pytest.raises(ConfigError, match="other_strategies: 'check' is the study's strategy"):
        check_agent_strategies(config)
    check_agent_strategies({"agent": {"strategy": "check", "other_strategies": ["free"]}})


AGENT = {
    "arms": ["vllm/bf16"],
    "instances": 1,
    "trials": 1,
    "max_model_len": 512,
    "max_new_tokens": 16,
    "sequential_episodes": 1,
    "temperature": 0.7,
    "top_p": 0.95,
}


class StrategyEngine:
    """An engine stand-in that records how each lockstep call was decoded and each cache reset."""

    def __init__(self) -> None:
        self.events: list[str] = []

    def import_engine(self) -> None:
        pass

    def load(self, *args, **kwargs) -> None:
        self.events.append("load")

    def reset_prefix_cache(self) -> None:
        self.events.append("reset")

    def chat(self, prompts, seeds, sampling, reply_prefix="", schemas=None):
        if schemas is None:
            self.events.append("free")
            return [reply_prefix + 'wait"}' for _ in prompts]
        self.events.append("schema")
        return ['{"action": "status", "goal_status": "complete"}' for _ in prompts]

    def close(self) -> None:
        self.events.append("close")


def test_the_reference_arm_runs_each_strategy_on_one_engine_from_an_empty_cache(default_config, monkeypatch):
    from edgebench.agent import arm_trials

    engine = StrategyEngine()
    monkeypatch.setattr("edgebench.engines.make_engine", lambda name: engine)
    default_config["agent"] = {**AGENT, "strategy": "structured", "other_strategies": ["free"]}
    frame = arm_trials.run_arm(default_config, "vllm/bf16", "unused", code_digest="x")
    by_strategy = frame.groupby("strategy")
    assert set(by_strategy.groups) == {"structured", "free"}
    assert (by_strategy["task_id"].nunique() == len(frame) // 2).all()  # the same tasks under each
    assert by_strategy["strategy_wall_s"].nunique().eq(1).all()
    assert frame.loc[frame["strategy"] == "structured", "final_status"].eq("complete").all()
    assert frame.loc[frame["strategy"] == "free", "final_status"].ne("complete").all()
    assert frame.loc[frame["strategy"] == "free", "throughput_speedup"].isna().all()
    assert frame.loc[frame["strategy"] == "structured", "throughput_speedup"].notna().all()
    assert engine.events.count("load") == 1 and engine.events[-1] == "close"
    first_free = engine.events.index("free")
    assert engine.events[first_free - 1] == "reset"  # the other strategy starts from an empty cache


class FailingOnFree(StrategyEngine):
    def chat(self, prompts, seeds, sampling, reply_prefix="", schemas=None):
        if schemas is None:
            raise RuntimeError("engine died")
        return super().chat(prompts, seeds, sampling, reply_prefix, schemas)


def test_a_strategy_that_fails_leaves_failed_rows_and_keeps_what_ran(default_config, monkeypatch):
    from edgebench.agent import arm_trials

    monkeypatch.setattr("edgebench.engines.make_engine", lambda name: FailingOnFree())
    default_config["agent"] = {**AGENT, "strategy": "structured", "other_strategies": ["free"]}
    frame = arm_trials.run_arm(default_config, "vllm/bf16", "unused", code_digest="x")
    status = frame.groupby("strategy")["status"].unique()
    assert list(status["structured"]) == ["ok"] and list(status["free"]) == ["failed"]
    assert frame.loc[frame["strategy"] == "free", "error"].str.contains("engine died").all()


def test_a_bug_in_the_trial_loop_stops_the_arm_instead_of_becoming_failed_rows(default_config, monkeypatch):
    from edgebench.agent import arm_trials

    def broken_trials(*args, **kwargs):
        raise KeyError("a bug in edgebench's trial loop")

    monkeypatch.setattr("edgebench.engines.make_engine", lambda name: StrategyEngine())
    monkeypatch.setattr(arm_trials, "run_llm_trials", broken_trials)
    default_config["agent"] = {**AGENT, "strategy": "structured"}
    with pytest.raises(KeyError, match="trial loop"):
        arm_trials.run_arm(default_config, "vllm/bf16", "unused", code_digest="x")


def test_a_budget_is_judged_on_the_study_strategy_only(tmp_path):
    from edgebench.decision_rule import write_decision

    frame = pd.concat(
        [REFERENCE_CHECK.assign(study_strategy=True), REFERENCE_FREE.assign(study_strategy=False)],
        ignore_index=True,
    ).assign(run_id="r", git_commit="c")
    frame.to_parquet(tmp_path / "agent_trials.parquet")
    table = tmp_path / "decision.parquet"
    requirements = {"agent_success": {"at_least": 0.5}}
    write_decision({"agent_trials": str(tmp_path / "agent_trials.parquet")}, requirements, ["vllm/bf16"],
                   [], str(table), str(tmp_path / "decision.md"))  # fmt: skip
    row = pd.read_parquet(table).iloc[0]
    assert row["n"] == 10 and row["value"] == pytest.approx(0.8)  # free's 10 failures left out


def test_an_item_reads_the_study_strategy_episodes_only(tmp_path):
    from edgebench.items.verdict import load_evidence

    path = tmp_path / "trials.parquet"
    both = [REFERENCE_CHECK.assign(study_strategy=True), REFERENCE_FREE.assign(study_strategy=False)]
    pd.concat(both, ignore_index=True).to_parquet(path)
    frame = load_evidence([str(path)], "agent_trials", [])
    assert len(frame) == 10 and set(frame["strategy"]) == {"check"}


def test_the_agent_chart_has_a_row_per_arm_and_strategy(tmp_path):
    from edgebench.charts import agent_chart

    frame = pd.concat([REFERENCE_CHECK, REFERENCE_FREE, CANDIDATE_CHECK], ignore_index=True)
    summary = pd.DataFrame(summary_rows(frame, "vllm/bf16"))
    spec = agent_chart(summary).to_dict()  # altair validates the data and the encodings here
    cells = {row["cell"] for row in spec["datasets"][next(iter(spec["datasets"]))]}
    assert cells == {"vllm/bf16 (check)", "vllm/bf16 (free)", "vllm/int4 (check)"}


def test_the_verify_threshold_is_the_lowest_that_keeps_false_yeses_under_the_cap():
    from edgebench.agent.verify import choose_threshold

    not_done = [-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0]
    done = [0.2, 0.6, 1.2, 2.2, 2.8, 3.5]
    calibration = choose_threshold(done, not_done, 0.2)  # at most 2 of 10 not-done screens say yes
    assert calibration.threshold == 2.0 and calibration.yes_on_not_done == 2
    assert calibration.yes_on_done == 3  # 2.2, 2.8, 3.5
    assert choose_threshold(done, not_done, 0.85).threshold == -1.0  # 8 of 10 allowed
    everything = choose_threshold(done, [-5.0], 0.5)
    assert everything.threshold == -5.0 and everything.yes_on_done == len(done)
    row = calibration.row()
    assert row["verify_false_yes_rate"] == pytest.approx(0.2)
    assert row["verify_hit_low"] < 0.5 < row["verify_hit_high"]


class ScoringEngine:
    """A fake engine for the verify check: the score is read from the prompt's goal; a prompt that
    holds "refuse" makes the whole call fail, as a tokenizer error would."""

    def choice_logprobs(self, prompts, prefix, choices):
        if any("refuse" in p for p in prompts):
            raise ValueError("the tokenizer refused a prompt")
        return [[float(p.split("score ")[1].split(".")[0]), 0.0] for p in prompts]


def test_verify_ends_the_episodes_over_the_threshold_and_a_refused_prompt_fails_alone():
    from types import SimpleNamespace

    from edgebench.agent.llm import verified

    def episode(acted=True):
        return SimpleNamespace(history=[{"action": "wait"}] if acted else [], error="")

    goals = ["score 3.", "score 1.", "score 5 refuse.", "score 9."]
    active = [episode(), episode(), episode(), episode(acted=False)]
    batch = [(SimpleNamespace(goal=goal), [], []) for goal in goals]
    done = verified(active, batch, ScoringEngine(), threshold=2.0)
    assert done == {0}  # 1 is under the threshold; 3 has not acted yet, so is not asked
    assert "refused" in active[2].error and not active[0].error and not active[1].error


def test_the_summary_carries_the_verify_calibration_of_its_arm():
    verify = trials("vllm/bf16", "verify", [True, False]).assign(verify_threshold=0.25, verify_hit_rate=0.7)
    frame = pd.concat([verify, REFERENCE_FREE], ignore_index=True)
    summary = pd.DataFrame(summary_rows(frame, "vllm/bf16")).set_index(["arm", "strategy", "scope"])
    assert summary.loc[("vllm/bf16", "verify", "all"), "verify_threshold"] == 0.25
    assert pd.isna(summary.loc[("vllm/bf16", "free", "all"), "verify_threshold"])
