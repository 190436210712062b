"""The CPU rules: ISA level, kernel -> flags, and AMX permission, all testable on any CPU."""

import json

import pytest

from edgebench.decision import root_cause
from edgebench.isa import (
    KERNEL_FLAGS,
    UnsupportedArm,
    isa_columns,
    isa_level,
    llamacpp_kernel,
    missing_flags,
    refusal_in,
    request_amx_permission,
    require_kernel,
    vllm_kernel,
)
from edgebench.procfs import cpu_flags

AVX2 = {"sse4_2", "avx2", "fma"}
AVX512 = AVX2 | {"avx512f", "avx512_vnni", "avx512_bf16"}
AMX = AVX512 | {"amx_tile", "amx_int8", "amx_bf16"}


def test_isa_level_is_the_highest_feature_present():
    assert isa_level(set()) == "baseline"
    assert isa_level(AVX2) == "avx2"
    assert isa_level(AVX512) == "avx512_bf16"
    assert isa_level(AMX) == "amx_int8"
    columns = isa_columns(AVX512)
    assert json.loads(columns["isa_flags"]) == ["avx2", "avx512f", "avx512_vnni", "avx512_bf16"]


@pytest.mark.parametrize(
    ("arm", "build", "flags", "kernel"),
    [
        ({}, {"bits": 16}, AVX2, "vllm_bf16"),
        ({"int4_w4a8": False}, {"bits": 4}, AMX, "cpu_gemm_wna16"),
        ({"int4_w4a8": True}, {"bits": 4}, AVX2, "int4_scaled_mm_cpu"),
        ({}, {"bits": 4}, AMX, "int4_scaled_mm_cpu"),  # vLLM's default where AMX exists
        ({}, {"bits": 4}, AVX512, "cpu_gemm_wna16"),
        ({"int4_w4a8": True, "w4a8_emulated": True}, {"bits": 4}, AVX512, "w4a8_emulated"),
        ({}, {"method": "w8a8", "bits": 8}, AVX2, "onednn_int8"),
    ],
)
def test_the_kernel_follows_the_build_the_options_and_the_cpu(arm, build, flags, kernel):
    assert vllm_kernel(arm, build, flags) == kernel


def test_a_kernel_is_refused_naming_each_missing_flag():
    assert missing_flags("cpu_gemm_wna16", AVX2) == ["avx512f"]
    assert missing_flags("int4_scaled_mm_cpu", AVX512) == ["amx_int8", "amx_tile"]
    with pytest.raises(UnsupportedArm, match="vllm/x runs W4A16.*lacks avx512f"):
        require_kernel("cpu_gemm_wna16", AVX2, "vllm/x")
    require_kernel("cpu_gemm_wna16", AVX512)
    with pytest.raises(ValueError, match="unknown kernel 'nope'"):
        missing_flags("nope", AVX2)
    assert all(flags <= AMX for flags in KERNEL_FLAGS.values())  # an AMX CPU runs every kernel


def test_a_refusal_read_back_from_a_failure_ends_at_its_own_sentence():
    with pytest.raises(UnsupportedArm) as refused:
        require_kernel("cpu_gemm_wna16", AVX2, "vllm/x")
    failure = f"exit code 1; UnsupportedArm: {refused.value}; worker log tail:\nTraceback (most recent"
    assert refusal_in(failure) == str(refused.value)
    assert refusal_in("exit code 1; worker log tail:\nKilled") is None


def test_llamacpp_extra_buffers_take_the_amx_path_only_with_amx_and_are_refused_there():
    """ggml's AMX path dies with SIGILL even with tile permission, so it is refused by the flag
    that selects it; without AMX the same option repacks weights and runs."""
    extra = {"use_extra_bufts": True}
    assert llamacpp_kernel({}, {}, AMX) == "llamacpp_cpu"
    assert llamacpp_kernel(extra, {}, AVX512) == "llamacpp_cpu_repacked"
    assert llamacpp_kernel(extra, {}, AMX) == "llamacpp_cpu_amx"
    require_kernel("llamacpp_cpu_repacked", AVX512)
    require_kernel("llamacpp_cpu", AMX)
    with pytest.raises(UnsupportedArm, match="llamacpp/q4 .*this CPU has amx_tile"):
        require_kernel("llamacpp_cpu_amx", AMX, "llamacpp/q4")
    error = pytest.raises(UnsupportedArm, require_kernel, "llamacpp_cpu_amx", AMX).value
    assert root_cause(str(error)) == "refused: llamacpp_cpu_amx needs no amx_tile"


def test_amx_permission_is_skipped_without_amx_and_never_raises():
    assert request_amx_permission(AVX512) == "skipped: no amx_tile"
    outcome = request_amx_permission(cpu_flags())
    if "amx_tile" in cpu_flags():  # the real request, where the hardware exists
        assert outcome == "granted"
    else:
        assert outcome.startswith("skipped")


def test_an_existing_checkpoint_is_labelled_by_what_its_config_says(tmp_path):
    """An existing build has no `bits` in the study config: its kernel path comes from the
    checkpoint's quantization_config, never a guess of 4 bits."""
    import json

    from edgebench.rows import arm_kernel

    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    ckpt.joinpath("config.json").write_text(
        json.dumps({"quantization_config": {"quant_method": "gptq", "bits": 8}})
    )
    config = {
        "builds": {"mine": {"method": "existing", "path": str(ckpt)}},
        "arms": {"vllm/mine": {"engine": "vllm", "build": "mine"}},
    }
    assert arm_kernel(config, "vllm/mine", {"avx2"}) == "onednn_int8"
    ckpt.joinpath("config.json").write_text(
        json.dumps({"quantization_config": {"quant_method": "gptq", "bits": 4}})
    )
    assert arm_kernel(config, "vllm/mine", {"avx2", "avx512f"}) == "cpu_gemm_wna16"
