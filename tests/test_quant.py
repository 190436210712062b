import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from edgebench.quant.export import (
    compressed_tensors_w4a16,
    gptq_dequantize,
    gptq_tensors,
    pack_rows,
    unpack_rows,
    w8a8_tensors,
)
from edgebench.quant.rtn import quantize_rtn


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 1000), st.sampled_from([32, 64]), st.booleans(), st.floats(0.001, 10))
def test_rtn_error_stays_within_its_step(seed, group_size, sym, scale):
    rng = np.random.default_rng(seed)
    w = (rng.standard_normal((16, 128)) * scale).astype(np.float32)
    qw = quantize_rtn(w, 4, group_size, sym)
    error = np.abs(qw.dequantize() - w).reshape(16, -1, group_size).max(axis=2)
    assert np.all(error <= qw.scales * (1.0 if sym else 0.5) + 1e-6)
    assert qw.q.min() >= 0 and qw.q.max() <= 15


def test_rtn_reproduces_values_on_the_grid_exactly():
    grid = np.arange(-8, 8, dtype=np.float32) * 0.25  # 16 evenly spaced values incl. 0
    w = np.tile(grid, (4, 4))
    qw = quantize_rtn(w, 4, 64, sym=False)
    np.testing.assert_allclose(qw.dequantize(), w, atol=1e-6)


def test_packing_round_trips_and_orders_nibbles_low_first():
    codes = np.arange(16, dtype=np.uint8).reshape(16, 1).repeat(3, axis=1)
    packed = pack_rows(codes, 4)
    assert packed.shape == (2, 3) and packed.view(np.uint32)[0, 0] == 0x76543210
    np.testing.assert_array_equal(unpack_rows(packed, 4), codes)


def test_gptq_export_dequantizes_to_the_rtn_reference():
    rng = np.random.default_rng(3)
    w = rng.standard_normal((32, 128)).astype(np.float32)
    qw = quantize_rtn(w, 4, 64, sym=True)
    tensors = gptq_tensors("layer", qw)
    assert tensors["layer.qweight"].shape == (16, 32) and tensors["layer.qzeros"].shape == (2, 4)
    assert (tensors["layer.qzeros"].numpy().view(np.uint32) == 0x77777777).all()  # zero 8 stored as 7
    np.testing.assert_allclose(
        gptq_dequantize(tensors, "layer", 4, 64), qw.dequantize(), rtol=2e-3, atol=2e-3
    )
    with pytest.raises(ValueError, match="symmetric"):
        gptq_tensors("layer", quantize_rtn(w, 4, 64, sym=False))


def test_compressed_tensors_packing_matches_the_library_unpacker():
    from compressed_tensors.compressors.pack_quantized.helpers import unpack_from_int32

    rng = np.random.default_rng(4)
    w = rng.standard_normal((16, 64)).astype(np.float32)
    qw = quantize_rtn(w, 4, 32, sym=False)
    tensors = compressed_tensors_w4a16("l", qw, sym=False)
    signed = unpack_from_int32(tensors["l.weight_packed"], 4, torch.Size(qw.q.shape)).numpy()
    np.testing.assert_array_equal(signed + 8, qw.q)
    zp = unpack_from_int32(
        tensors["l.weight_zero_point"], 4, torch.Size(qw.zeros.shape), packed_dim=0
    ).numpy()
    np.testing.assert_array_equal(zp + 8, qw.zeros)


def test_w8a8_per_channel_error_bound():
    rng = np.random.default_rng(5)
    w = rng.standard_normal((8, 32)).astype(np.float32)
    t = w8a8_tensors("l", w)
    scale = t["l.weight_scale"].float().numpy()
    error = np.abs(t["l.weight"].numpy().astype(np.float32) * scale - w)
    assert np.all(error <= scale * 0.5 + np.abs(w) * 1e-2)
