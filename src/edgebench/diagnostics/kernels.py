"""The int4 kernel study: each CPU GEMM path at this model's shapes, checked against a dequantized
reference before it is timed, hot (weights cache-resident) and cold (caches flushed first).

Kernels are driven through the engines' own code: vLLM's kernel classes prepare the weights exactly
as vLLM does when it loads a checkpoint, then their apply_weights runs; tinygemm through the
aten ops torch ships for CPU.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

import numpy as np
import torch

from edgebench.isa import require_kernel
from edgebench.procfs import cpu_flags
from edgebench.quant.export import pack_rows
from edgebench.quant.rtn import QuantizedWeight, quantize_int8_per_channel, quantize_rtn

KERNELS = ("bf16_matmul", "vllm_bf16", "tinygemm", "vllm_wna16", "vllm_w4a8", "vllm_int8")
# Relative Frobenius error allowed against x @ dequantized(W).T: bf16 rounding of outputs, plus
# int8 rounding of activations for the W4A8/W8A8 paths.
TOLERANCE = {"vllm_w4a8": 0.03, "vllm_int8": 0.03}
DEFAULT_TOLERANCE = 0.01
# Without AVX-512 VNNI the int8 GEMM runs another instruction path (u8 x s8 pair sums through
# 16-bit intermediates, which can saturate), and its error against the dequantized weights is larger.
NO_VNNI_TOLERANCE = {"vllm_int8": 0.05}


def tolerance(kernel: str, flags: set[str]) -> float:
    """How far a kernel may be from its dequantized reference on this CPU."""
    if "avx512_vnni" not in flags and kernel in NO_VNNI_TOLERANCE:
        return NO_VNNI_TOLERANCE[kernel]
    return TOLERANCE.get(kernel, DEFAULT_TOLERANCE)


@dataclass(frozen=True)
class Shape:
    name: str
    n: int  # output features
    k: int  # input features


def model_shapes(config: dict) -> list[Shape]:
    """One decoder layer's GEMMs and the lm_head, from a Hugging Face Llama config.json."""
    hidden, inter = config["hidden_size"], config["intermediate_size"]
    head_dim = config.get("head_dim") or hidden // config["num_attention_heads"]
    kv = config.get("num_key_value_heads", config["num_attention_heads"]) * head_dim
    return [
        Shape("q_proj", config["num_attention_heads"] * head_dim, hidden),
        Shape("k_proj", kv, hidden),
        Shape("v_proj", kv, hidden),
        Shape("o_proj", hidden, config["num_attention_heads"] * head_dim),
        Shape("gate_proj", inter, hidden),
        Shape("up_proj", inter, hidden),
        Shape("down_proj", hidden, inter),
        Shape("lm_head", config["vocab_size"], hidden),
    ]


def weight_bytes(kernel: str, n: int, k: int, group: int) -> int:
    """Bytes a call must read for the weight: codes plus scales (and zero points where stored)."""
    if kernel in ("bf16_matmul", "vllm_bf16"):
        return 2 * n * k
    if kernel == "vllm_int8":
        return n * k + 4 * n
    groups = k // group
    if kernel == "tinygemm":
        return n * k // 2 + 2 * 2 * n * groups  # bf16 scale and zero per group
    if kernel == "vllm_w4a8":
        return n * k // 2 + 2 * n * groups + n * groups // 2  # + packed int4 zero points
    return n * k // 2 + 2 * n * groups


class _Layer(torch.nn.Module):
    """The attributes vLLM's linear kernels read from a layer."""

    def __init__(self) -> None:
        super().__init__()
        self.bias = None
        self.logical_widths = []


def _param(tensor: torch.Tensor, **dims: int) -> torch.nn.Parameter:
    param = torch.nn.Parameter(tensor, requires_grad=False)
    for key, value in dims.items():
        setattr(param, key, value)
    return param


def _bf16_reference(w: np.ndarray) -> np.ndarray:
    """The weight a bf16 kernel multiplies by: w rounded to bf16."""
    return torch.from_numpy(w).to(torch.bfloat16).float().numpy()


def _int4_reference(qw: QuantizedWeight) -> np.ndarray:
    """The weight an int4 kernel multiplies by: the codes with their scales rounded to bf16."""
    scales = torch.from_numpy(qw.scales).to(torch.bfloat16).float().numpy()
    return QuantizedWeight(qw.q, scales, qw.zeros, 4, qw.group_size).dequantize()


def _prepare_bf16_matmul(qw, w):
    weight_t = torch.from_numpy(w).to(torch.bfloat16).T.contiguous()
    return (lambda x: torch.matmul(x, weight_t)), _bf16_reference(w)


def _prepare_vllm_bf16(qw, w):
    from vllm.model_executor.layers.utils import dispatch_cpu_unquantized_gemm

    layer = _Layer()
    layer.weight = _param(torch.from_numpy(w).to(torch.bfloat16))
    dispatch_cpu_unquantized_gemm(layer, remove_weight=True)
    return (lambda x: layer.cpu_linear(x, layer.weight, None)), _bf16_reference(w)


def _prepare_tinygemm(qw, w):
    n, k = qw.q.shape
    packed = torch.ops.aten._convert_weight_to_int4pack_for_cpu(torch.from_numpy(qw.q.astype(np.int32)), 1)
    # tinygemm: w = (q - 8) * scale + zero, so zero = (8 - z) * scale reproduces (q - z) * scale.
    scales = torch.from_numpy(qw.scales.T.copy())  # [groups, n]
    zeros = torch.from_numpy(((8 - qw.zeros) * qw.scales).T.copy())
    scales_and_zeros = torch.stack([scales, zeros], dim=2).to(torch.bfloat16).contiguous()

    def call(x):
        return torch.ops.aten._weight_int4pack_mm_for_cpu(x, packed, qw.group_size, scales_and_zeros)

    return call, _int4_reference(qw)


def _prepare_vllm_wna16(qw, w, w4a8: bool = False):
    from vllm.model_executor.kernels.linear.mixed_precision.cpu import (
        CPUWNA16LinearKernel,
        MPLinearLayerConfig,
    )
    from vllm.scalar_type import scalar_types

    n, k = qw.q.shape
    config = MPLinearLayerConfig(
        full_weight_shape=(k, n),
        partition_weight_shape=(k, n),
        weight_type=scalar_types.uint4b8,  # GPTQ symmetric: codes 0..15 around 8
        act_type=torch.bfloat16,
        group_size=qw.group_size,
        zero_points=False,
    )
    ok, why = CPUWNA16LinearKernel.can_implement(config)
    if not ok:
        raise ValueError(f"vLLM CPUWNA16 cannot run n={n} k={k}: {why}")
    layer = _Layer()
    layer.weight_packed = _param(
        torch.from_numpy(pack_rows(qw.q.T, 4)), input_dim=0, packed_dim=0, output_dim=1
    )
    layer.weight_scale = _param(
        torch.from_numpy(qw.scales.T.copy()).to(torch.bfloat16), input_dim=0, output_dim=1
    )
    kernel = CPUWNA16LinearKernel(config, "weight_packed", "weight_scale", "weight_zp")
    layer.weight_zp = None
    layer.isa_hint = None
    if w4a8:
        kernel._process_gptq_weights_w4a8(layer)
    else:
        kernel._process_gptq_weights_w4a16(layer)
    layer.use_w4a8 = w4a8
    return (lambda x: kernel.apply_weights(layer, x)), _int4_reference(qw)


def _prepare_vllm_w4a8(qw, w):
    return _prepare_vllm_wna16(qw, w, w4a8=True)


def _prepare_vllm_int8(qw, w):
    from vllm.model_executor.kernels.linear.scaled_mm.cpu import CPUInt8ScaledMMLinearKernel
    from vllm.model_executor.kernels.linear.scaled_mm.ScaledMMLinearKernel import (
        Int8ScaledMMLinearLayerConfig,
    )

    q, scales = quantize_int8_per_channel(w)
    config = Int8ScaledMMLinearLayerConfig(
        is_static_input_scheme=False, is_channelwise=True, input_symmetric=True
    )
    names = ("weight", "weight_scale", "input_scale", "input_zero_point", "azp_adj")
    kernel = CPUInt8ScaledMMLinearKernel(config, names)
    layer = _Layer()
    layer.weight = _param(torch.from_numpy(q))
    layer.weight_scale = _param(torch.from_numpy(scales))
    layer.input_scale = None
    layer.input_zero_point = None
    layer.azp_adj = None
    kernel.process_weights_after_loading(layer)
    return lambda x: kernel.apply_weights(layer, x), (q.astype(np.float32) * scales)


PREPARE = {
    "bf16_matmul": _prepare_bf16_matmul,
    "vllm_bf16": _prepare_vllm_bf16,
    "tinygemm": _prepare_tinygemm,
    "vllm_wna16": _prepare_vllm_wna16,
    "vllm_w4a8": _prepare_vllm_w4a8,
    "vllm_int8": _prepare_vllm_int8,
}


# The engine kernel each study kernel is (edgebench.isa's rule refuses it where its flags are missing).
ENGINE_KERNEL = {
    "vllm_bf16": "vllm_bf16",
    "vllm_wna16": "cpu_gemm_wna16",
    "vllm_w4a8": "int4_scaled_mm_cpu",
    "vllm_int8": "onednn_int8",
}


def prepare(kernel: str, weight: np.ndarray, group: int):
    """(call, dequantized reference weight [n, k]) for one kernel on one float32 weight; a kernel
    this CPU cannot execute is refused by name (never a silent fallback, never a SIGILL)."""
    if kernel in ENGINE_KERNEL:
        require_kernel(ENGINE_KERNEL[kernel], cpu_flags(), f"kernel study {kernel}")
    return PREPARE[kernel](quantize_rtn(weight, 4, group, sym=True), weight)


def relative_error(call, reference: np.ndarray, x: torch.Tensor) -> float:
    """||call(x) - x @ W_ref.T|| / ||x @ W_ref.T||, in float64."""
    got = call(x).double().numpy()
    want = x.double().numpy() @ reference.astype(np.float64).T
    return float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30))


class CacheFlusher:
    """Reads a buffer of twice the last-level cache so the next call reads weights from memory.
    Reading (not writing) leaves clean lines, so the timed call pays no write-backs of ours."""

    def __init__(self, llc_bytes: int) -> None:
        self.buffer = torch.ones(2 * llc_bytes // 4)

    def __call__(self) -> None:
        self.buffer.sum()


def time_us(call, x: torch.Tensor, repeats: int, flush: CacheFlusher | None = None) -> float:
    """Median microseconds of one call; with `flush`, caches are flushed before every call."""
    call(x)
    times = []
    for _ in range(repeats):
        if flush is not None:
            flush()
        start = time.perf_counter()
        call(x)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def kernel_rows(
    shapes: list[Shape],
    kernels: list[str],
    batches: list[int],
    threads: list[int],
    group: int,
    repeats: int,
    flush: CacheFlusher,
    seed: int = 0,
) -> list[dict]:
    """Every kernel x shape x batch x threads: a correctness check, then hot and cold timings.
    A kernel that cannot run or fails the check is a `failed` row with the reason, never timed."""
    rng = np.random.default_rng(seed)
    rows, flags = [], cpu_flags()
    for shape in shapes:
        weight = (rng.standard_normal((shape.n, shape.k)) * 0.02).astype(np.float32)
        for kernel in kernels:
            base = {"kernel": kernel, "layer": shape.name, "n": shape.n, "k": shape.k, "group": group}
            try:
                call, reference = prepare(kernel, weight, group)
            except Exception as error:  # noqa: BLE001 - an unsupported kernel is a row, not a crash
                failed = {**base, "status": "failed", "error": f"{type(error).__name__}: {error}"}
                rows += [{**failed, "m": m, "threads": t} for m in batches for t in threads]
                continue
            for m in batches:
                x = torch.from_numpy(rng.standard_normal((m, shape.k)).astype(np.float32)).to(torch.bfloat16)
                error = relative_error(call, reference, x)
                limit = tolerance(kernel, flags)
                for t in threads:
                    row = {**base, "m": m, "threads": t, "rel_err": error}
                    if not error <= limit:
                        rows.append({**row, "status": "failed", "error": f"rel_err {error:.4g} > {limit}"})
                        continue
                    torch.set_num_threads(t)
                    hot, cold = time_us(call, x, repeats), time_us(call, x, repeats, flush)
                    rows.append(
                        {
                            **row,
                            "status": "ok",
                            "error": "",
                            "us": cold,
                            "us_hot": hot,
                            "weight_bytes": weight_bytes(kernel, shape.n, shape.k, group),
                        }
                    )
            print(f"kernels: {shape.name} {kernel} done", flush=True)
    return rows


def add_rates(frame, ceilings: dict[int, float], peaks: dict[int, float]):
    """gb_s and gflop_s from cold times; pct_of_ceiling against the STREAM triad of the same thread
    count; the hot variants beside them (above 100% means the weights came from cache)."""
    moved = frame["weight_bytes"] + 2 * frame["m"] * (frame["k"] + frame["n"])
    flops = 2.0 * frame["m"] * frame["n"] * frame["k"]
    frame["gb_s"] = moved / frame["us"] / 1e3
    frame["gb_s_hot"] = moved / frame["us_hot"] / 1e3
    frame["gflop_s"] = flops / frame["us"] / 1e3
    frame["pct_of_ceiling"] = 100 * frame["gb_s"] / frame["threads"].map(ceilings)
    frame["pct_of_ceiling_hot"] = 100 * frame["gb_s_hot"] / frame["threads"].map(ceilings)
    frame["pct_of_peak_flops"] = 100 * frame["gflop_s"] / frame["threads"].map(peaks)
    return frame
