import pytest

from edgebench.models.gptq import BuildError, bits_per_weight, calibration_texts, check_group_size

SMOLLM2 = {"hidden_size": 576, "intermediate_size": 1536}


def test_group_size_128_is_refused_naming_size_and_width():
    with pytest.raises(BuildError) as error:
        check_group_size(128, SMOLLM2)
    assert "group_size 128" in str(error.value) and "576" in str(error.value)


@pytest.mark.parametrize("group_size", [32, 64, 192])
def test_divisors_are_accepted(group_size):
    check_group_size(group_size, SMOLLM2)


def test_bits_per_weight_counts_scales_and_zeros():
    assert bits_per_weight(4, 64) == pytest.approx(4 + 20 / 64)
    assert bits_per_weight(4, 32) > bits_per_weight(4, 64)


def test_calibration_texts_ship_with_the_package():
    texts = calibration_texts(1000)
    assert len(texts) >= 20 and all(len(t) > 20 for t in texts)
