"""Every engine must read the prompt's token ids as the reference tokenizer writes them: edgebench
hands engines token ids, but an engine whose own tokenizer splits text differently would serve a
user other tokens than the ones measured. Checked per arm at load, on a probe text with words,
digits, punctuation, whitespace runs and non-ASCII characters."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

PROBE = "Turn on Wi-Fi, then open Settings > Network.  Café 3.14 - 12345 naïve «déjà vu» 你好\n\tend"


class TokenizerMismatch(RuntimeError):
    """The engine's tokenizer and the reference's write different ids for the same text."""


REFERENCE_TOKENIZER = "reference_tokenizer.json"  # a converter's build keeps the one it was made from


def reference_tokenizer(build_dir: str) -> Path:
    """The reference's tokenizer: the copy a converter's build keeps, else the build's own
    tokenizer.json (builds that edgebench writes from the reference's files)."""
    kept = Path(build_dir) / REFERENCE_TOKENIZER
    return kept if kept.is_file() else Path(build_dir) / "tokenizer.json"


def reference_ids(build_dir: str, text: str = PROBE) -> list[int]:
    """The probe's ids by the reference tokenizer, read by Hugging Face tokenizers."""
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(reference_tokenizer(build_dir))).encode(text, add_special_tokens=False).ids


def first_difference(ours: Sequence[int], reference: Sequence[int]) -> int:
    for index, (a, b) in enumerate(zip(ours, reference, strict=False)):
        if a != b:
            return index
    return min(len(ours), len(reference))


def check_token_parity(engine: str, build_dir: str, encode: Callable[[str], Sequence[int]]) -> None:
    """Raise TokenizerMismatch, naming the first differing position, when `encode` disagrees."""
    expected = reference_ids(build_dir)
    got = [int(i) for i in encode(PROBE)]
    if got != expected:
        at = first_difference(got, expected)
        shown = f"{got[at] if at < len(got) else 'end'} where the reference has "
        shown += f"{expected[at] if at < len(expected) else 'end'}"
        raise TokenizerMismatch(
            f"{engine}'s tokenizer in {build_dir} differs from the reference tokenizer at token {at} of "
            f"the probe text ({shown}; {len(got)} against {len(expected)} tokens), so its arm would "
            "serve other tokens than the ones measured"
        )
