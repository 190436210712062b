"""An arm the CPU rule refuses is refused before any process of it starts, with the sentence the
engine would have refused it with at load: the cold rep, the warm session (real transformers engines
beside it), the agent and the memory ledger write its failed rows without starting an engine."""

import json

import pandas as pd
import pytest

from edgebench.arm_refusal import refusal
from edgebench.bench.rep import RepJob, measure_rep
from edgebench.bench.session import SessionSettings, round_order, run_session
from edgebench.config import load_config
from edgebench.isa import refusal_in

from .conftest import ROOT, hf_spec, usable_cores

WITHOUT_AVX512 = {"avx2"}  # a CPU that runs vLLM's bf16 path but not its AVX-512 int4 GEMM
WITH_AVX512 = {"avx2", "avx512f"}
INT4 = "vllm/gptq-w4g64-w4a16"


@pytest.fixture(scope="module")
def config() -> dict:
    """The CI study's config: an int4 vLLM arm (its kernel needs avx512f) beside bf16 arms."""
    return load_config(ROOT / ".test" / "config" / "config.yaml")


@pytest.fixture
def without_avx512(monkeypatch):
    """This test's CPU lacks avx512f, whatever the machine running it has."""
    monkeypatch.setattr("edgebench.arm_refusal.cpu_flags", lambda: set(WITHOUT_AVX512))


def must_not_start(*args, **kwargs):
    raise AssertionError("an engine process was started for an arm the CPU rule refuses")


def test_the_refusal_names_the_arm_its_kernel_and_the_missing_flag(config):
    text = refusal(config, INT4, WITHOUT_AVX512)
    assert text.startswith("UnsupportedArm: ") and INT4 in text and "cpu_gemm_wna16" in text
    assert "lacks avx512f" in refusal_in(text)  # the sentence the items and the decision read
    assert refusal(config, INT4, WITH_AVX512) is None
    assert refusal(config, "vllm/bf16", WITHOUT_AVX512) is None
    assert refusal(config, "hf/bf16", set()) is None  # transformers runs on any x86-64 CPU


def test_a_refused_cold_rep_starts_no_worker_and_is_one_failed_row(
    config, tiny_model, monkeypatch, without_avx512
):
    monkeypatch.setattr("edgebench.bench.rep.run_worker", must_not_start)
    job = RepJob(config, "bench", INT4, 0, {"round": 0, "order_position": 1}, str(tiny_model), "k0")
    rows = measure_rep(job, earlier=[])
    assert len(rows) == 1  # a refusal is not a straggler: no re-run
    assert rows[0]["status"] == "failed" and "lacks avx512f" in refusal_in(rows[0]["error"])
    assert rows[0]["kernel_path"] == "cpu_gemm_wna16" and rows[0]["arm"] == INT4


def test_a_refused_agent_arm_loads_no_engine_and_fails_every_trial(
    config, tiny_model, monkeypatch, without_avx512
):
    from edgebench.agent import arm_trials

    monkeypatch.setattr(arm_trials, "_loaded_engine", must_not_start)
    frame = arm_trials.run_arm(config, INT4, str(tiny_model), "k0")
    trials = config["agent"]["instances"] * config["agent"]["trials"]
    assert len(frame) >= trials and (frame["status"] == "failed").all()
    assert frame["error"].map(lambda e: "lacks avx512f" in (refusal_in(e) or "")).all()


def test_a_refused_memory_ledger_starts_no_process(config, tiny_model, tmp_path, monkeypatch, without_avx512):
    from edgebench.diagnostics import ledger_rule

    monkeypatch.setattr(ledger_rule, "ledger_process", must_not_start)
    out = tmp_path / "ledger.parquet"
    ledger_rule.run_memory_ledger(
        config, INT4, build_json=str(tiny_model / "build.json"), out=str(out), code_digest="k0"
    )
    frame = pd.read_parquet(out)
    assert len(frame) == 1 and frame["status"].iloc[0] == "failed"
    assert "lacks avx512f" in refusal_in(frame["error"].iloc[0])


BENCH = {"prefill_tokens": 32, "decode_tokens": 16, "max_model_len": 128}


@pytest.mark.parametrize("design", ["sequential", "interleaved"])
def test_a_refused_session_arm_never_starts_and_the_others_are_measured(config, tiny_model, tmp_path, design):
    """Real engines for the arms the CPU runs; the refused one has no process (no engine log) and
    a failed row with the refusal in every round, and the round orders are those of all arms."""
    cores = usable_cores()[:2]
    if design == "interleaved" and len(cores) < 2:
        pytest.skip(f"the interleaved design runs two pairs side by side; this process may use cores {cores}")
    text = refusal(config, INT4, WITHOUT_AVX512)
    names = ["hf/a", INT4, "hf/b"]
    specs = {name: hf_spec(tiny_model, BENCH) for name in names}
    pairs = [("hf/a", INT4), ("hf/a", "hf/b")] if design == "interleaved" else []
    settings = SessionSettings(
        rounds=2, seed=5, cores=cores, timeout_s=120, contention_limit=1.0, design=design, pairs=pairs
    )
    lines = []
    rows = run_session(specs, settings, tmp_path, progress=lines.append, refused={INT4: text})
    assert not (tmp_path / f"{INT4.replace('/', '_')}.log").exists()  # its process never started
    assert f"{INT4} is refused: {refusal_in(text)}" in lines
    refused = [row for row in rows if row["arm"] == INT4]
    assert len(refused) == 2 and all(row["status"] == "failed" for row in refused)
    assert all(refusal_in(row["error"]) == refusal_in(text) for row in refused)
    measured = [row for row in rows if row["arm"] != INT4 and row.get("partner") != INT4]
    assert measured and all(row["status"] == "ok" for row in measured), [r["error"] for r in measured]
    if design == "sequential":
        for r in range(2):
            assert json.loads(next(row for row in rows if row["round"] == r)["round_order"]) == round_order(
                names, 5, r
            )
    assert (tmp_path / "hf_a.log").exists()  # the arms the CPU runs did start


def test_the_start_of_a_run_lists_every_arm_the_cpu_refuses_and_why(config):
    """The kernel rule and an environment's own CPU rule (read from its spec before it is built)."""
    from edgebench.refusal_summary import refusal_summary, refused_arms

    assert set(refused_arms(config, WITHOUT_AVX512, "AuthenticAMD")) == {INT4, "vllm/gptq-w4g64-w4a8emu"}
    assert refused_arms(config, WITH_AVX512, "AuthenticAMD") == {}
    assert refusal_summary(config, WITH_AVX512, "AuthenticAMD") == []
    with_env = {
        **config,
        "environments": {**config.get("environments", {}), "zen": {"needs_vendor": "AuthenticAMD"}},
        "arms": {**config["arms"], "hf/zen": {**config["arms"]["hf/bf16"], "env": "zen"}},
    }
    refused = refused_arms(with_env, WITH_AVX512, "GenuineIntel")
    assert list(refused) == ["hf/zen"] and "vendor_id is AuthenticAMD" in refused["hf/zen"]
    lines = refusal_summary(with_env, WITHOUT_AVX512, "GenuineIntel")
    assert lines[0].startswith(f"3 of {len(with_env['arms'])} arms are refused")
    assert any(line.strip().startswith("hf/zen: environment 'zen'") for line in lines)  # named
    assert any(line.strip().startswith(f"{INT4} runs W4A16") for line in lines)  # named once
