"""Round-to-nearest quantization with per-group scales (and zero points for the asymmetric grid).

Conventions follow GPTQ's quantizer: symmetric grids use zero = 2^(b-1) and scale = 2*max|w|/(2^b-1);
asymmetric grids span [min(w, 0), max(w, 0)] with an integer zero point.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class QuantizedWeight:
    """q: unsigned codes [out, in] in 0..2^b-1; scales, zeros: [out, groups]; w = (q - zero) * scale."""

    q: np.ndarray
    scales: np.ndarray
    zeros: np.ndarray
    bits: int
    group_size: int

    def dequantize(self) -> np.ndarray:
        out, cols = self.q.shape
        groups = cols // self.group_size
        q = self.q.reshape(out, groups, self.group_size).astype(np.float32)
        w = (q - self.zeros[:, :, None]) * self.scales[:, :, None]
        return w.reshape(out, cols)


def quantize_rtn(weight: np.ndarray, bits: int, group_size: int, sym: bool) -> QuantizedWeight:
    out, cols = weight.shape
    if cols % group_size:
        raise ValueError(f"group_size {group_size} does not divide the layer width {cols}")
    maxq = 2**bits - 1
    w = weight.astype(np.float32).reshape(out, cols // group_size, group_size)
    if sym:
        xmax = np.abs(w).max(axis=2)
        scales = np.where(xmax > 0, 2 * xmax / maxq, 1.0).astype(np.float32)
        zeros = np.full_like(scales, 2 ** (bits - 1))
    else:
        xmin, xmax = np.minimum(w.min(axis=2), 0), np.maximum(w.max(axis=2), 0)
        scales = np.where(xmax > xmin, (xmax - xmin) / maxq, 1.0).astype(np.float32)
        zeros = np.round(-xmin / scales)
    q = np.clip(np.round(w / scales[:, :, None]) + zeros[:, :, None], 0, maxq).astype(np.uint8)
    return QuantizedWeight(q.reshape(out, cols), scales, zeros.astype(np.float32), bits, group_size)


def quantize_int8_per_channel(weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 codes in -127..127 with one float32 scale per output row: w ~ q * scale."""
    w = weight.astype(np.float32)
    scales = np.maximum(np.abs(w).max(axis=1, keepdims=True), 1e-12) / 127.0
    return np.clip(np.round(w / scales), -127, 127).astype(np.int8), scales
