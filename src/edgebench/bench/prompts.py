"""Deterministic synthetic prompts of exact token lengths, so every arm sees the same ids."""

from __future__ import annotations

import random


def synthetic_prompt(
    length: int, vocab_size: int, seed: int, avoid: set[int] | frozenset = frozenset()
) -> list[int]:
    """`length` token ids drawn from the vocabulary (special tokens avoided) with a fixed seed."""
    if length < 1:
        raise ValueError(f"prompt length must be >= 1, got {length}")
    rng = random.Random(seed)
    low = min(256, vocab_size // 4)  # skip the first ids, where tokenizers keep specials and bytes
    ids = []
    while len(ids) < length:
        candidate = rng.randrange(low, vocab_size)
        if candidate not in avoid:
            ids.append(candidate)
    return ids
