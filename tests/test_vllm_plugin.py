"""edgebench's vLLM plugin and the decode profile's bookkeeping, without an engine (the workflow
test runs both for real)."""

import pytest

from edgebench.diagnostics.decode_profile import part_of, step_parts
from edgebench.engines.vllm_engine import vllm_env
from edgebench.vllm_plugin.embedding import packs_gemm_copy


def test_embedding_copies_decide_which_layers_keep_a_packed_gemm_copy():
    assert packs_gemm_copy(False, 3) and packs_gemm_copy(True, 3)  # vLLM's own: both packed
    assert not packs_gemm_copy(False, 2) and packs_gemm_copy(True, 2)  # the lookup never runs a GEMM
    assert not packs_gemm_copy(False, 1) and not packs_gemm_copy(True, 1)  # one row-major copy
    with pytest.raises(ValueError, match="embedding_copies must be 1, 2 or 3, not 0"):
        packs_gemm_copy(True, 0)


def test_every_vllm_arm_sets_the_plugin_switch_so_no_engine_inherits_another_arms():
    assert vllm_env({})["EDGEBENCH_EMBEDDING_COPIES"] == "3"
    assert vllm_env({"embedding_copies": 1})["EDGEBENCH_EMBEDDING_COPIES"] == "1"


def test_the_plugin_is_registered_with_vllm():
    from importlib.metadata import entry_points

    plugins = {e.name: e.value for e in entry_points(group="vllm.general_plugins")}
    assert plugins.get("edgebench") == "edgebench.vllm_plugin:register"


def test_ops_fall_into_parts_and_the_prefill_cancels_out():
    assert (
        part_of("_C::onednn_mm") == "gemm"
        and part_of("_C::cpu_attention_with_kv_cache") == "attention_kernel"
    )
    assert part_of("vllm::unified_attention_with_output") == "attention_wrapper"
    assert part_of("_C::rotary_embedding") == "rotary" and part_of("aten::rsqrt") == "norm"
    assert part_of("aten::copy_") == "tensor_glue" and part_of("my::op") == "other_ops"
    long = {"_C::onednn_mm": (1100.0, 130), "aten::copy_": (50.0, 40)}
    short = {"_C::onednn_mm": (100.0, 10)}
    parts = step_parts(long, short, steps=10)
    assert parts["gemm"] == (100.0, 12.0) and parts["tensor_glue"] == (5.0, 4.0)
