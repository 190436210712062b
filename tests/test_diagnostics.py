"""Import-time parsing, tensor dedup by storage, the ledger's arithmetic, and kernel correctness."""

import mmap
import os
import signal

import numpy as np
import pandas as pd
import pytest
import torch

from edgebench.diagnostics.attribution import decode_attribution
from edgebench.diagnostics.imports import entry_total_s, import_summary, measure_entry, parse_importtime
from edgebench.diagnostics.kernels import (
    ENGINE_KERNEL,
    KERNELS,
    Shape,
    kernel_rows,
    model_shapes,
    prepare,
    relative_error,
    tolerance,
)
from edgebench.diagnostics.ledger import MALLOC_HELD, parse_llamacpp_buffers, process_rows
from edgebench.diagnostics.omp_regions import PROBE_REGIONS, REGIONS, RUN_TARGET_S, regions_per_run
from edgebench.diagnostics.tensors import PAGE, StorageLedger, component_of, resident_bytes
from edgebench.isa import UnsupportedArm, missing_flags
from edgebench.procfs import cpu_flags

IMPORTTIME = """\
import time: self [us] | cumulative | imported package
import time:       120 |        120 |   _io
import time:       300 |        300 |     encodings.aliases
import time:       500 |        800 |   encodings
import time:      1000 |       2900 | json
noise that is not an importtime line
import time:        50 |         50 | re
"""


def test_parse_importtime_depths_and_seconds():
    rows = parse_importtime(IMPORTTIME)
    assert [r["module"] for r in rows] == ["_io", "encodings.aliases", "encodings", "json", "re"]
    assert [r["depth"] for r in rows] == [1, 2, 1, 0, 0]
    assert rows[3]["self_s"] == pytest.approx(0.001) and rows[3]["cumulative_s"] == pytest.approx(0.0029)
    # Only the statement's direct imports add up: nested cumulative times are inside them.
    assert entry_total_s(rows) == pytest.approx(0.00295)


def test_measure_entry_runs_a_fresh_interpreter_and_reports_failures():
    good = measure_entry("import json")
    assert good["error"] == "" and any(r["module"] == "json" for r in good["rows"])
    bad = measure_entry("import edgebench_no_such_module")
    assert "ModuleNotFoundError" in bad["error"] and "edgebench_no_such_module" in bad["error"]


def test_storage_ledger_counts_views_and_tied_weights_once():
    weight = torch.zeros(256, 64, dtype=torch.bfloat16)
    ledger = StorageLedger()
    ledger.add_named([("model.embed_tokens.weight", weight), ("lm_head.weight", weight)])
    ledger.add("other live tensors", weight[:10])  # a view of the same storage
    ledger.add("other live tensors", torch.ones(3))
    rows = {r["component"]: r for r in ledger.rows()}
    assert rows["embeddings"]["allocated_mb"] == pytest.approx(weight.numel() * 2 / 2**20)
    assert "lm_head" not in rows  # tied: its storage was already counted under embeddings
    assert rows["other live tensors"]["tensors"] == 1


def test_component_names():
    assert component_of("model.layers.0.self_attn.rotary_emb.cos_sin_cache") == "rope cache"
    assert component_of("model.layers.3.self_attn.attn.kv_cache") == "kv cache"
    assert component_of("model.layers.3.mlp.gate_up_proj.weight_packed") == "mlp"
    assert component_of("model.layers.3.post_attention_layernorm.weight") == "norms"
    assert component_of("model.layers.3.self_attn.qkv_proj.scales") == "attention"


def test_resident_bytes_sees_untouched_and_file_backed_pages(tmp_path):
    untouched = torch.empty(64 * 2**20, dtype=torch.uint8)  # above any mmap threshold: fresh pages
    storage = untouched.untyped_storage()
    anon, file = resident_bytes(storage.data_ptr(), storage.nbytes())
    assert anon < storage.nbytes() // 2 and file == 0
    untouched.fill_(1)
    assert resident_bytes(storage.data_ptr(), storage.nbytes())[0] == storage.nbytes()
    path = tmp_path / "weights.bin"
    path.write_bytes(b"\x01" * (16 * PAGE))
    with open(path, "rb") as handle:
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        array = np.frombuffer(mapped, dtype=np.uint8)
        assert int(array.sum()) == 16 * PAGE  # touch every page
        anon, file = resident_bytes(array.ctypes.data, array.nbytes)
        assert anon == 0 and file == array.nbytes
        del array
        mapped.close()


def test_process_rows_add_up_and_move_malloc_held_into_the_parts():
    rows = process_rows(
        "worker",
        1,
        1000.0,
        400.0,
        "baseline",
        [{"component": "kv cache", "mb": 300.0}],
        [{"component": MALLOC_HELD, "mb": 50.0}, {"component": "malloc in use (arena + mmap)", "mb": 700.0}],
    )
    frame = pd.DataFrame(rows).set_index("component")
    assert frame.loc["unexplained", "mb"] == pytest.approx(250.0)
    assert frame.loc[MALLOC_HELD, "kind"] == "attributed"
    assert frame.loc["malloc in use (arena + mmap)", "kind"] == "view"


def test_parse_llamacpp_buffers():
    log = (
        "load_tensors:   CPU_Mapped model buffer size =   270.60 MiB\n"
        "llama_kv_cache:        CPU KV buffer size =    22.50 MiB\n"
        "llama_context:        CPU  output buffer size =     0.19 MiB\n"
        "llama_context:        CPU compute buffer size =    98.01 MiB\n"
    )
    assert parse_llamacpp_buffers(log) == {
        "CPU_Mapped model": 270.60,
        "CPU KV": 22.50,
        "CPU output": 0.19,
        "CPU compute": 98.01,
    }


def test_model_shapes_from_a_llama_config():
    config = {
        "hidden_size": 576,
        "intermediate_size": 1536,
        "num_attention_heads": 9,
        "num_key_value_heads": 3,
        "vocab_size": 49152,
    }
    shapes = {s.name: (s.n, s.k) for s in model_shapes(config)}
    assert shapes["k_proj"] == (192, 576) and shapes["down_proj"] == (576, 1536)
    assert shapes["lm_head"] == (49152, 576)


@pytest.mark.parametrize("kernel", KERNELS)
def test_each_kernel_matches_its_dequantized_reference(kernel):
    missing = missing_flags(ENGINE_KERNEL[kernel], cpu_flags()) if kernel in ENGINE_KERNEL else []
    if missing:  # refused by the flag it lacks: never a silent W4A16, never a SIGILL
        with pytest.raises(UnsupportedArm, match=f"lacks {missing[0]}"):
            prepare(kernel, np.zeros((128, 256), dtype=np.float32), 64)
        return
    rng = np.random.default_rng(1)
    weight = (rng.standard_normal((128, 256)) * 0.02).astype(np.float32)
    call, reference = prepare(kernel, weight, 64)
    x = torch.from_numpy(rng.standard_normal((4, 256)).astype(np.float32)).to(torch.bfloat16)
    assert relative_error(call, reference, x) < max(0.03, tolerance(kernel, cpu_flags()))
    # The check can fail: against the unquantized weight's transpose-mismatched neighbour it does.
    wrong = np.roll(reference, 1, axis=0)
    assert relative_error(call, wrong, x) > 0.5


def test_kernel_rows_turn_an_unsupported_shape_into_failed_rows():
    rows = kernel_rows([Shape("odd", 40, 64)], ["vllm_wna16"], [1], [1], 32, 3, flush=lambda: None)
    assert rows and all(r["status"] == "failed" for r in rows)
    missing = missing_flags("cpu_gemm_wna16", cpu_flags())
    assert (f"lacks {missing[0]}" if missing else "40") in rows[0]["error"]  # the flag first, then the shape


def test_decode_attribution_sums_layers_and_lm_head():
    kernels = pd.DataFrame(
        [
            {
                "kernel": "vllm_bf16",
                "layer": layer,
                "m": 1,
                "threads": 2,
                "status": "ok",
                "us": 10.0,
                "us_hot": 5.0,
            }
            for layer in (
                "q_proj",
                "k_proj",
                "v_proj",
                "o_proj",
                "gate_proj",
                "up_proj",
                "down_proj",
                "lm_head",
            )
        ]
    )
    bench = pd.DataFrame([{"arm": "vllm/bf16", "status": "ok", "decode_tok_s": 100.0}])
    arm = {"engine": "vllm", "build": "reference", "bench": True}
    frame = decode_attribution(kernels, bench, {"vllm/bf16": arm}, {"num_hidden_layers": 3}).set_index(
        "bound"
    )
    assert frame.loc["cold", "gemm_s"] == pytest.approx((3 * 7 * 10 + 10) / 1e6)
    assert frame.loc["hot", "gemm_share"] == pytest.approx((3 * 7 * 5 + 5) / 1e6 / 0.01)
    # an arm whose reps were all contended keeps its GEMM estimate, with no measured step
    contended = bench.assign(status="contended")
    alone = decode_attribution(kernels, contended, {"vllm/bf16": arm}, {"num_hidden_layers": 3})
    assert len(alone) == 2 and alone["gemm_s"].gt(0).all() and alone["decode_step_s"].isna().all()
    twin = {"engine": "vllm", "build": "reference", "bench": False}  # a calibration-only arm: no rows here
    both = decode_attribution(
        kernels,
        pd.concat([bench, bench.assign(arm="vllm/bf16-twin")]),
        {"vllm/bf16": arm, "vllm/bf16-twin": twin},
        {"num_hidden_layers": 3},
    )
    assert set(both["arm"]) == {"vllm/bf16"}


def test_import_summary_pairs_each_engine_with_the_statement_its_reps_pay():
    imports = pd.DataFrame(
        [
            {
                "entry": "from vllm import LLM",
                "module": "(total)",
                "status": "ok",
                "cumulative_s": 8.0,
                "process_wall_s": 9.0,
            },
            {
                "entry": "import transformers",
                "module": "(total)",
                "status": "ok",
                "cumulative_s": 2.0,
                "process_wall_s": 2.5,
            },
        ]
    )
    bench = pd.DataFrame(
        [
            {"engine": "vllm", "status": "ok", "import_s": 7.5, "ready_s": 30.0},
            {"engine": "vllm", "status": "failed", "import_s": 99.0, "ready_s": 99.0},
            {"engine": "llamacpp", "status": "ok", "import_s": 0.3, "ready_s": 1.0},
        ]
    )
    frame = import_summary(imports, bench).set_index("engine")
    assert list(frame.index) == ["vllm"]  # llama_cpp's statement was not profiled
    assert frame.loc["vllm", "bench_import_s"] == 7.5 and frame.loc["vllm", "share_of_ready"] == 8.0 / 30.0
    # every rep contended (a busy machine): no rows, and the columns a reader looks up are there
    empty = import_summary(imports, bench.assign(status="contended"))
    assert empty.empty and list(empty.columns) == list(import_summary(imports, bench).columns)


def test_stamp_keeps_measured_columns_such_as_a_kernels_threads():
    from edgebench.diagnostics.stamp import stamp

    frame = stamp(
        pd.DataFrame([{"kernel": "tinygemm", "threads": 1}]),
        {"run_id": "t", "model": {"kind": "tiny_random"}},
        "digest",
        threads=2,
    )
    assert frame.loc[0, "threads"] == 1 and frame.loc[0, "run_id"] == "t" and frame.loc[0, "git_commit"]


def test_baselines_run_together_and_a_module_that_fails_to_import_is_named(capfd):
    from edgebench.diagnostics.ledger import baseline_rss_anon_mbs

    plain, with_numpy, broken = baseline_rss_anon_mbs(
        [["json"], ["json", "numpy"], ["edgebench.no_such_module"]]
    )
    assert 0 < plain < with_numpy and broken > 0  # numpy's arrays and tables are anonymous memory
    err = capfd.readouterr().err
    assert "baseline: edgebench.no_such_module not imported: ModuleNotFoundError" in err


def test_baselines_started_apart_are_read_in_order_and_none_outlives_its_block():
    from edgebench.diagnostics.ledger import Baselines
    from edgebench.procfs import children_of

    with Baselines() as baselines:
        baselines.start(["json", "numpy"])
        baselines.start(["json"])  # started later, read in the order started
        assert baselines.pids() <= set(children_of(os.getpid()))  # the ledger can tell them apart
        with_numpy, plain = baselines.results()
    assert 0 < plain < with_numpy
    with Baselines() as baselines:
        baselines.start(["torch"])  # seconds of imports: still running when the block is left
        (running,) = baselines.procs
    assert running.returncode == -signal.SIGKILL


def test_omp_runs_are_sized_to_the_probed_region_cost_within_their_bounds():
    # a region probed at 1/5000 of the target fills the run with 5000 regions, unless a bound binds
    probe_us = RUN_TARGET_S * 1e6 / 5000
    assert regions_per_run(probe_us) == 5000
    assert regions_per_run(RUN_TARGET_S * 1e6) == PROBE_REGIONS
    assert regions_per_run(1e-6) == REGIONS
    assert regions_per_run(0.0) == REGIONS
