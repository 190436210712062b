"""OpenVINO GenAI and ONNX Runtime GenAI end to end through Snakemake on a tiny random model: their
converters build from the reference under the engines' own environments, and each engine's cold rep,
warm stamps (interleaved with the other on one core), fidelity from its own logits and memory ledger
run there; rows say what each engine chose to run. Then, on those builds: the interleaved stream
computes nothing between pulls, and an engine whose tokenizer differs from the reference's is refused.
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest
import yaml

from edgebench.engines.token_parity import reference_ids

from .conftest import ROOT, TINY_MODEL

pytestmark = pytest.mark.workflow

SNAKEMAKE = [sys.executable, "-m", "snakemake", "--snakefile", str(ROOT / "workflow" / "Snakefile")]
TIMEOUT_S = 1800  # a first environment downloads its packages into uv's cache
ARMS = ["openvino/int4", "ortgenai/int4", "openvino/int8", "ortgenai/fp32"]
TARGETS = [
    *(f"results/tables/{t}.parquet" for t in ("bench", "warm", "fidelity", "builds")),
    "results/raw/memory/openvino/int4.parquet",
    "results/raw/memory/ortgenai/int4.parquet",
]


def study_config() -> dict:
    return {
        "run_id": "engines-tiny",
        "roadmap": "none",
        "model": TINY_MODEL,
        "builds": {
            "ov-int4": {"method": "openvino", "bits": 4, "group_size": 32, "sym": True},
            "ov-int8": {"method": "openvino", "bits": 8},
            "ort-int4": {"method": "ortgenai", "bits": 4, "group_size": 32, "sym": False},
            "ort-fp32": {"method": "ortgenai", "bits": 32},
        },
        "arms": {
            "openvino/int4": {"engine": "openvino", "build": "ov-int4", "threads": 1},
            "ortgenai/int4": {"engine": "ortgenai", "build": "ort-int4", "threads": 1},
            "openvino/int8": {"engine": "openvino", "build": "ov-int8", "threads": 1, "bench": False},
            "ortgenai/fp32": {"engine": "ortgenai", "build": "ort-fp32", "threads": 1, "bench": False},
        },
        "bench": {
            "rounds": 1,
            "warm_rounds": 2,
            "prefill_tokens": 16,
            "decode_tokens": 16,
            "max_model_len": 64,
            "warm_design": "interleaved",
            "contention_limit": 0.5,
            "warm_pairs": [["openvino/int4", "ortgenai/int4"]],
        },
        "gates": {"baseline": "openvino/int4", "tolerance": 0.1},
        "fidelity": {"min_positions": 64, "window_tokens": 32, "context_tokens": 8, "topk": 8},
    }


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> Path:
    workdir = tmp_path_factory.mktemp("engines")
    (workdir / "config").mkdir()
    (workdir / "config" / "config.yaml").write_text(yaml.safe_dump(study_config()))
    run = subprocess.run(
        [*SNAKEMAKE, "--directory", str(workdir), "--cores", "2", *TARGETS],
        capture_output=True,
        text=True,
        env={**os.environ, "OMP_WAIT_POLICY": "PASSIVE"},
        timeout=TIMEOUT_S,
    )
    if run.returncode != 0:
        logs = "\n".join(
            f"== {p}\n{p.read_text()[-3000:]}" for p in sorted((workdir / "results").rglob("*.log"))
        )
        pytest.fail(f"snakemake failed:\n{run.stderr[-5000:]}\n{logs}")
    return workdir


def table(study: Path, name: str) -> pd.DataFrame:
    return pd.read_parquet(study / "results" / "tables" / f"{name}.parquet")


def environment(study: Path, engine: str) -> dict:
    for path in (study / "results" / "envs").glob("*/environment.json"):
        record = json.loads(path.read_text())
        if record.get("name") == engine:
            return {**record, "python": str(path.parent / "bin" / "python")}
    raise AssertionError(f"no environment {engine} was created")


def test_each_converter_builds_under_its_engine_environment(study):
    builds = table(study, "builds").set_index("build")
    for build, engine, fmt in [
        ("ov-int4", "openvino", "openvino-ir"),
        ("ort-int4", "ortgenai", "onnx-genai"),
    ]:
        record = json.loads((study / "results" / "models" / build / "build.json").read_text())
        assert record["format"] == fmt and record["environment"] == environment(study, engine)["digest"]
        assert all(v != "unknown" for v in record["tool_versions"].values()), record["tool_versions"]
        assert record["bits"] == 4 and record["group_size"] == 32
    # bits per weight count scales, zero points and whatever else the weight files hold (on a model
    # this small, the rotary tables): above the nominal bits, and the 4-bit builds below the wider
    bpw = builds["bits_per_weight"]
    assert 4 < bpw["ov-int4"] < bpw["ov-int8"] and 8 < bpw["ov-int8"]
    assert 4 < bpw["ort-int4"] < bpw["ort-fp32"] and 32 < bpw["ort-fp32"]


def test_cold_reps_and_warm_stamps_of_both_engines(study):
    bench, warm = table(study, "bench"), table(study, "warm")
    for engine in ("openvino", "ortgenai"):
        digest = environment(study, engine)["digest"]
        cold = bench[bench["engine"] == engine]
        assert len(cold) and cold["status"].isin(["ok", "contended"]).all(), cold[["status", "error"]]
        assert (cold["environment"] == digest).all()
        assert (
            (cold[["import_s", "ready_s", "ttft_s", "peak_rss_anon_mb", "rss_anon_filled_ctx_mb"]] > 0)
            .all()
            .all()
        )
        samples = warm[warm["engine"] == engine]
        assert len(samples) == 2 and (samples["design"] == "interleaved").all()
        assert (samples[samples["status"] == "ok"]["decode_tok_s"] > 0).all()
        assert (samples["window_tokens"] == 15).all()  # every decode step stamped
        # each round's pair on another core: the engine's threads follow the coordinator's pin
        assert not samples["error"].fillna("").str.contains("left its cores").any(), samples["error"].tolist()
    openvino = bench[bench["engine"] == "openvino"].iloc[0]
    kernels = json.loads(openvino["layer_kernels"])
    assert {"inference_precision", "kv_cache_precision", "linear"} <= set(kernels)
    assert kernels["linear"].startswith("FullyConnected:")
    ort_kernels = json.loads(bench[bench["engine"] == "ortgenai"].iloc[0]["layer_kernels"])
    assert "accuracy_level=" in ort_kernels["linear"] and "bits=4" in ort_kernels["linear"]
    # OpenVINO GenAI's own timer beside edgebench's stamps of the same generation
    assert openvino["timer_tpot_ratio"] > 0 and openvino["engine_tpot_s"] > 0


def test_fidelity_comes_from_each_engine_whole_distribution(study):
    fidelity = table(study, "fidelity").set_index("arm")
    assert set(ARMS) <= set(fidelity.index)
    for arm in ARMS:
        row = fidelity.loc[arm]
        assert row["status"] == "ok" and row["positions"] >= 64 and row["kl_method"] == "exact", row
        assert row["kl_mean"] >= 0
    # fp32 weights track the bf16 reference more closely than 4-bit ones do
    assert fidelity.loc["ortgenai/fp32", "kl_mean"] < fidelity.loc["ortgenai/int4", "kl_mean"]


def test_the_memory_ledgers_attribute_the_kv_cache(study):
    for engine in ("openvino", "ortgenai"):
        rows = pd.read_parquet(study / "results" / "raw" / "memory" / engine / "int4.parquet")
        assert (rows["kind"] == "measured").any() and (rows["kind"] == "baseline").any()
        kv = rows[rows["component"].str.contains("KV cache")]
        assert len(kv) == 1 and kv["mb"].iloc[0] > 0


PULLS = textwrap.dedent(
    """
    import json, sys, time
    from edgebench.engines.base import apply_env
    from edgebench.engines.registry import make_engine
    apply_env({})
    engine = make_engine(sys.argv[1]); engine.import_engine()
    engine.load(sys.argv[2], {"threads": 1}, 64)
    prompt = list(range(300, 310))
    whole = engine.generate(prompt, 8)
    stream = engine.decode_stream(prompt, 8)
    first = [next(stream) for _ in range(3)]
    paused = time.perf_counter()
    time.sleep(0.3)  # the engine must not decode ahead while nobody pulls
    rest = list(stream)
    # where the engine keeps a clock of its own (OpenVINO's PerfMetrics, in milliseconds of the
    # same monotonic clock), when it says it made each token
    perf = getattr(engine, "last_perf", None)
    own = [t / 1e3 for t in perf.raw_metrics.m_new_token_times] if perf is not None else []
    print(json.dumps({"whole": whole, "first": first, "rest": rest, "paused": paused, "own": own}))
    """
)


@pytest.mark.parametrize(("engine", "build"), [("openvino", "ov-int4"), ("ortgenai", "ort-int4")])
def test_the_stream_takes_a_token_only_when_pulled(study, engine, build):
    build_dir = study / "results" / "models" / build
    run = subprocess.run(
        [environment(study, engine)["python"], "-c", PULLS, engine, str(build_dir)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert len(result["whole"]) == 8 and len(result["first"]) + len(result["rest"]) == 8
    # the fourth token was computed after the pause: its stamp is at least the pause after the third
    assert result["rest"][0] - result["first"][-1] >= 0.3
    if result["own"]:  # and by the engine's own clock, which a decode running ahead would betray
        assert len(result["own"]) == 8 and result["own"][3] >= result["paused"] + 0.3


PARITY = textwrap.dedent(
    """
    import sys
    from edgebench.engines.base import apply_env
    from edgebench.engines.registry import make_engine
    from edgebench.engines.token_parity import TokenizerMismatch
    apply_env({})
    engine = make_engine(sys.argv[1]); engine.import_engine()
    try:
        engine.load(sys.argv[2], {"threads": 1}, 64)
    except TokenizerMismatch as refused:
        print("REFUSED", refused)
    else:
        print("LOADED")
    """
)


@pytest.mark.parametrize(("engine", "build"), [("openvino", "ov-int4"), ("ortgenai", "ort-int4")])
def test_an_engine_whose_tokenizer_differs_is_refused(study, engine, build, tmp_path):
    """The build keeps the reference's tokenizer it was made from; one that writes other ids (two
    vocabulary entries of the probe text swapped, as a differently trained tokenizer would) makes
    the engine's own tokenizer disagree with it, and the load is refused."""
    import shutil

    copy = tmp_path / build
    shutil.copytree(study / "results" / "models" / build, copy)
    python = environment(study, engine)["python"]
    loaded = subprocess.run(
        [python, "-c", PARITY, engine, str(copy)], capture_output=True, text=True, timeout=600
    )
    assert loaded.stdout.strip().splitlines()[-1] == "LOADED", loaded.stderr[-2000:]
    kept = copy / "reference_tokenizer.json"
    spec = json.loads(kept.read_text())
    vocab = spec["model"]["vocab"]
    by_id = {index: token for token, index in vocab.items()}
    used = list(dict.fromkeys(i for i in reference_ids(str(copy)) if i in by_id))  # tokens the probe writes
    a, b = by_id[used[0]], by_id[used[1]]
    vocab[a], vocab[b] = vocab[b], vocab[a]
    kept.write_text(json.dumps(spec))
    refused = subprocess.run(
        [python, "-c", PARITY, engine, str(copy)], capture_output=True, text=True, timeout=600
    )
    last = refused.stdout.strip().splitlines()[-1]
    assert last.startswith("REFUSED") and f"{engine}'s tokenizer" in last, refused.stderr[-2000:]


AGENT = textwrap.dedent(
    """
    import json, math, sys
    from edgebench.agent.action_schema import action_schema
    from edgebench.agent.actions import action_error
    from edgebench.agent.llm import run_llm_trials
    from edgebench.agent.tasks import suite
    from edgebench.engines.base import apply_env
    from edgebench.engines.registry import make_engine
    apply_env({})
    engine = make_engine(sys.argv[1]); engine.import_engine()
    engine.load(sys.argv[2], {"threads": 1}, 2048, max_num_seqs=4, prefix_caching=True)
    sampling = {"temperature": 0.7, "top_p": 0.95, "max_new_tokens": 96}
    schemas = [action_schema([2, 5, 9], [5]), action_schema([])]
    replies = engine.chat(["Reply with one JSON action."] * 2, [1, 2], sampling, "", schemas)
    errors = [action_error(json.loads(r, strict=False)) for r in replies]
    again = engine.chat(["Reply with one JSON action."], [1], sampling, "", schemas[:1])
    rows = run_llm_trials(engine, suite(1)[:2], 1, {**sampling, "strategy": "structured"}, print)
    scores = engine.choice_logprobs(["Is it done?"], "", ["Yes", "No"])
    print(json.dumps({
        "errors": errors, "same_seed_same_reply": again[0] == replies[0],
        "invalid": [r["invalid_actions"] for r in rows], "episode_errors": [r["episode_error"] for r in rows],
        "scores": scores[0], "finite": all(math.isfinite(s) and s <= 0 for s in scores[0]),
    }))
    """
)


@pytest.mark.parametrize(("engine", "build"), [("openvino", "ov-int8"), ("ortgenai", "ort-fp32")])
def test_agent_trials_decode_only_valid_actions_under_the_engine_constraints(study, engine, build):
    """Random weights, yet every action decoded under the screen's schema by the engine's own
    constrained generation is well formed, a seed replays its reply, and a structured trial has no
    invalid action; the completion check's choice scores are log-probabilities."""
    run = subprocess.run(
        [
            environment(study, engine)["python"],
            "-c",
            AGENT,
            engine,
            str(study / "results" / "models" / build),
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result["errors"] == ["", ""] and result["same_seed_same_reply"]
    assert result["invalid"] == [0, 0] and result["episode_errors"] == ["", ""]
    assert result["finite"] and len(result["scores"]) == 2
