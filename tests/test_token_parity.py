"""Every engine reads the prompt's token ids as the reference tokenizer writes them: an engine whose
own tokenizer writes other ids for the probe text is refused at load, naming where they differ."""

import pytest

from edgebench.engines.token_parity import PROBE, TokenizerMismatch, check_token_parity, reference_ids


def test_an_engine_tokenizer_that_agrees_passes(tiny_model):
    from tokenizers import Tokenizer

    own = Tokenizer.from_file(str(tiny_model / "tokenizer.json"))
    check_token_parity("engine", str(tiny_model), lambda text: own.encode(text, add_special_tokens=False).ids)


def test_the_probe_exercises_more_than_ascii_words(tiny_model):
    ids = reference_ids(str(tiny_model))
    assert len(ids) > len(PROBE.split())  # sub-word splits: digits, punctuation, non-ASCII bytes
    assert any(ord(ch) > 127 for ch in PROBE) and "\t" in PROBE and "  " in PROBE


@pytest.mark.parametrize("change", ["one id", "a token more"])
def test_a_tokenizer_that_differs_is_refused_naming_the_position(tiny_model, change):
    expected = reference_ids(str(tiny_model))
    wrong = list(expected)
    if change == "one id":
        wrong[3] = (wrong[3] + 1) % 512
    else:
        wrong.append(0)
    with pytest.raises(TokenizerMismatch) as refused:
        check_token_parity("someengine", str(tiny_model), lambda text: wrong)
    message = str(refused.value)
    assert "someengine's tokenizer" in message
    at = 3 if change == "one id" else len(expected)
    assert f"at token {at} of the probe text" in message
