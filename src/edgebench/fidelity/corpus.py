"""The shipped evaluation corpus, tokenized once into fixed windows that every arm scores."""

from __future__ import annotations

from pathlib import Path

CORPUS_DIR = Path(__file__).resolve().parents[1] / "data" / "corpus"


def corpus_documents(corpus_dir: Path = CORPUS_DIR) -> dict[str, str]:
    docs = {p.stem: p.read_text() for p in sorted(corpus_dir.glob("*.txt"))}
    if not docs:
        raise FileNotFoundError(f"no corpus documents (*.txt) in {corpus_dir}")
    return docs


def make_windows(doc_tokens: dict[str, list[int]], window_tokens: int, context_tokens: int) -> list[dict]:
    """Cut each document into non-overlapping windows; positions before `context_tokens` in a window
    are context only (scored positions always have a prefix, as llama.cpp's perplexity does)."""
    if context_tokens >= window_tokens - 1:
        raise ValueError(
            f"context_tokens {context_tokens} leaves nothing to score in windows of {window_tokens}"
        )
    windows = []
    for doc, tokens in doc_tokens.items():
        for start in range(0, len(tokens) - context_tokens - 1, window_tokens):
            ids = tokens[start : start + window_tokens]
            if len(ids) > context_tokens + 1:
                windows.append({"doc": doc, "start": start, "ids": ids, "context": context_tokens})
    return windows


def scored_positions(windows: list[dict]) -> int:
    """Predicted positions are 1..n-1 of a window; those at index >= context are scored."""
    return sum(len(w["ids"]) - 1 - w["context"] for w in windows)


def tokenize_corpus(
    tokenizer_dir: str, window_tokens: int, context_tokens: int, min_positions: int
) -> list[dict]:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir, trust_remote_code=False)
    doc_tokens = {
        doc: tokenizer(text, add_special_tokens=False)["input_ids"]
        for doc, text in corpus_documents().items()
    }
    windows = make_windows(doc_tokens, window_tokens, context_tokens)
    found = scored_positions(windows)
    if found < min_positions:
        raise ValueError(
            f"the corpus yields {found} scored positions, fewer than fidelity.min_positions={min_positions}; "
            f"add text under {CORPUS_DIR} or lower the setting"
        )
    return windows


GREEDY_PROMPTS = CORPUS_DIR.parent / "greedy_prompts.txt"


def greedy_prompts(tokenizer_dir: str) -> list[list[int]]:
    """The legacy check's 12 prompts as token ids (kept to show that it saturates)."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir, trust_remote_code=False)
    lines = [line.replace("\\n", "\n") for line in GREEDY_PROMPTS.read_text().splitlines() if line.strip()]
    return [tokenizer(line, add_special_tokens=False)["input_ids"] for line in lines]
