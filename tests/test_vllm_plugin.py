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


# --- W4A8 emulation: the kernel's arithmetic, the checkpoint layouts, the guard ---------------

import numpy as np  # noqa: E402
import torch  # noqa: E402

from edgebench.quant.export import compressed_tensors_w4a16, gptq_tensors  # noqa: E402
from edgebench.quant.rtn import QuantizedWeight, quantize_rtn  # noqa: E402
from edgebench.vllm_plugin import w4a8  # noqa: E402


def test_activation_rows_round_half_away_from_zero_with_one_scale_each():
    x = torch.tensor([[1.0, -0.5, 0.25], [2.54, -1.27, 0.01]])
    codes, scale = w4a8.quantize_rows_int8(x)
    assert torch.equal(codes[0], torch.tensor([127.0, -64.0, 32.0]))  # -63.5 -> -64, 31.75 -> 32
    assert torch.equal(codes[1], torch.tensor([127.0, -64.0, 1.0]))  # -63.5 -> -64 again
    assert torch.allclose(scale.squeeze(1), torch.tensor([1 / 127, 2.54 / 127]))


def test_emulated_linear_equals_integer_sums_per_group_as_the_kernel_accumulates():
    """int32 partial sums per group, then activation scale x group scale: the kernel's order."""
    gen = torch.Generator().manual_seed(1)
    k, n, group = 128, 32, 64
    codes = torch.randint(0, 16, (k, n), generator=gen)
    zeros = torch.randint(0, 16, (k // group, n), generator=gen)
    scales = torch.rand(k // group, n, generator=gen) * 0.05
    x = torch.randn(3, k, generator=gen).to(torch.bfloat16)
    bias = torch.randn(n, generator=gen)
    out = w4a8.w4a8_linear(x, w4a8.dequantized_weight(codes, zeros, scales), bias)

    xq, xs = w4a8.quantize_rows_int8(x)
    xq = xq.to(torch.int32)
    expected = torch.zeros(3, n)
    for g in range(k // group):
        rows = slice(g * group, (g + 1) * group)
        partial = xq[:, rows] @ (codes[rows] - zeros[g]).to(torch.int32)  # exact integers
        expected += partial.float() * scales[g]
    expected = (expected * xs + bias).to(torch.bfloat16)
    assert out.dtype == torch.bfloat16
    assert torch.allclose(out.float(), expected.float(), rtol=1e-2, atol=1e-3)
    # the zero points are used: centring on 8 instead gives another answer
    other = w4a8.w4a8_linear(x, w4a8.dequantized_weight(codes, torch.full_like(zeros, 8), scales), bias)
    assert not torch.allclose(out.float(), other.float(), rtol=1e-2, atol=1e-3)


def _param(data, input_dim=None, output_dim=None):
    from types import SimpleNamespace

    return SimpleNamespace(data=data, input_dim=input_dim, output_dim=output_dim)


@pytest.mark.parametrize("sym", [True, False])
def test_the_emulation_reads_both_checkpoint_layouts_back_to_their_weights(sym):
    """GPTQ (symmetric: codes offset by 8) and compressed-tensors (zero points), as vLLM presents
    their parameters to the CPU int4 kernel after loading."""
    from types import SimpleNamespace

    from vllm.scalar_type import scalar_types

    rng = np.random.default_rng(0)
    qw = quantize_rtn(rng.standard_normal((64, 128)).astype(np.float32), 4, 64, sym)
    layer = SimpleNamespace()
    if sym:
        t = gptq_tensors("l", qw)
        layer.qweight = _param(t["l.qweight"], input_dim=0, output_dim=1)
        layer.scales = _param(t["l.scales"].to(torch.bfloat16), output_dim=1)
        config = SimpleNamespace(weight_type=scalar_types.uint4b8, zero_points=False)
        kernel = SimpleNamespace(config=config, w_q_name="qweight", w_s_name="scales", w_zp_name=None)
    else:
        t = compressed_tensors_w4a16("l", qw, sym=False)
        layer.weight_packed = _param(t["l.weight_packed"], input_dim=1, output_dim=0)
        layer.weight_scale = _param(t["l.weight_scale"], output_dim=0)
        layer.weight_zero_point = _param(t["l.weight_zero_point"], output_dim=0)
        config = SimpleNamespace(weight_type=scalar_types.uint4, zero_points=True)
        kernel = SimpleNamespace(
            config=config, w_q_name="weight_packed", w_s_name="weight_scale", w_zp_name="weight_zero_point"
        )
    weight = w4a8.read_int4_weight(kernel, layer)  # [in, out]
    stored_scales = (layer.scales.data if sym else layer.weight_scale.data.t()).float().numpy()  # [g, out]
    expected = QuantizedWeight(qw.q, stored_scales.T.copy(), qw.zeros, 4, 64).dequantize()  # [out, in]
    np.testing.assert_allclose(weight.numpy(), expected.T, rtol=1e-6, atol=1e-6)


def test_the_self_check_names_a_layer_that_reads_other_weights():
    out = torch.ones(2, 4)
    assert w4a8.self_check("QKVParallelLinear", out * 1.01, out) < 0.02
    with pytest.raises(RuntimeError, match="layer QKVParallelLinear differs from vLLM's own kernel by 0.5"):
        w4a8.self_check("QKVParallelLinear", out * 1.5, out)


def test_an_emulated_w4a8_arm_runs_without_amx_and_stays_out_of_the_timings(default_config):
    from edgebench.config import ConfigError, validate_config
    from edgebench.engines.vllm_engine import UnsupportedArm, check_supported

    arm = default_config["arms"]["vllm/rtn-w4g64-asym-w4a8emu"]
    check_supported(arm, {"avx2", "avx512f"})  # no AMX needed: torch computes it
    with pytest.raises(UnsupportedArm, match="lacks avx512f"):  # it loads through vLLM's int4 GEMM
        check_supported(arm, {"avx2"})
    assert vllm_env(arm)["EDGEBENCH_W4A8_EMULATION"] == "1"
    assert vllm_env({})["EDGEBENCH_W4A8_EMULATION"] == "0"
    with pytest.raises(UnsupportedArm):
        check_supported({**arm, "w4a8_emulated": False}, {"avx2", "avx512f"})
    arm["bench"] = True
    named = r"arms.vllm/rtn-w4g64-asym-w4a8emu: w4a8_emulated needs .*bench: false"
    with pytest.raises(ConfigError, match=named):
        validate_config(default_config)


def test_an_emulated_arm_gets_agent_trials_but_no_batching_row():
    """The batching table compares timings; an emulated W4A8 arm's are torch's, so it has no row."""
    import pandas as pd

    from edgebench.agent.tables import throughput_rows

    trials = pd.DataFrame(
        {
            "arm": ["vllm/bf16", "vllm/bf16", "vllm/rtn-w4g64-w4a8emu", "baseline/scripted"],
            "model": "m",
            "status": "ok",
            "throughput_speedup": [5.0, 5.0, float("nan"), float("nan")],
        }
    )
    assert [row["arm"] for row in throughput_rows(trials)] == ["vllm/bf16"]
    assert throughput_rows(trials)[0]["speedup"] == 5.0


@pytest.mark.parametrize("loss", [0.05, 0.2])
def test_an_injected_loss_reads_the_same_when_the_engine_waits_for_a_partner_between_turns(loss, monkeypatch):
    """Steps of 50 ms in turns of 4, an idle wait of 4 partner steps between turns: the arm's own
    rate (tokens over its own turns' time, as the interleaved design times it) falls by `loss`."""
    import edgebench.engines.slowdown as slowdown

    clock = {"t": 0.0}
    monkeypatch.setattr(slowdown.time, "perf_counter", lambda: clock["t"])
    monkeypatch.setenv(slowdown.LOSS_ENV, str(loss))
    processor = slowdown.InjectedSlowdown(None, None, False)

    def advance(seconds):
        clock["t"] += seconds

    processor.wait = advance  # the injected wait, on the fake clock
    own_time = 0.0
    for _ in range(20):
        advance(0.2)  # the partner's turn: this engine idles
        for _step in range(4):
            start = clock["t"]
            advance(0.05)
            processor.apply(None)
            own_time += clock["t"] - start
    rate = 80 / own_time
    assert rate == pytest.approx(20 * (1 - loss), rel=0.01)


def test_sleeps_that_wake_late_still_add_up_to_what_was_asked(monkeypatch):
    import edgebench.engines.slowdown as slowdown

    clock = {"t": 0.0}
    monkeypatch.setattr(slowdown.time, "perf_counter", lambda: clock["t"])

    def late_sleep(seconds):  # every wake-up 0.6 ms late
        clock["t"] += seconds + 0.0006

    monkeypatch.setattr(slowdown.time, "sleep", late_sleep)
    sleep = slowdown.CompensatedSleep()
    for _ in range(100):
        sleep(0.0015)
    assert clock["t"] == pytest.approx(100 * 0.0015, abs=0.001)
