"""What the phone-agent suite asks of an engine besides decoding token ids, for engines that serve
it one request at a time (OpenVINO GenAI, ONNX Runtime GenAI): the build's own chat template,
rendered by transformers as vLLM renders it, so every engine is shown the same text; a choice's
log-probability from one forward pass; and a reply cut at its stop string."""

from __future__ import annotations

import numpy as np


class ChatTemplate:
    """The build's tokenizer and chat template (transformers, no remote code)."""

    def __init__(self, build_dir: str) -> None:
        from transformers import AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(build_dir, trust_remote_code=False)

    def text(self, prompt: str, reply_prefix: str) -> str:
        rendered = self.tokenizer.apply_chat_template(
            [{"role": "user", "content": prompt}], tokenize=False, add_generation_prompt=True
        )
        return rendered + reply_prefix

    def ids(self, prompt: str, reply_prefix: str) -> list[int]:
        """The rendered text's ids (the template carries its own special tokens)."""
        return self.tokenizer.encode(self.text(prompt, reply_prefix), add_special_tokens=False)

    def first_tokens(self, choices: list[str]) -> list[int]:
        ids = [self.tokenizer.encode(choice, add_special_tokens=False)[0] for choice in choices]
        if len(set(ids)) != len(ids):
            raise ValueError(f"choices {choices} share their first token")
        return ids


def choice_scores(logits: np.ndarray, choice_ids: list[int]) -> list[float]:
    """Each choice's log-probability as the next token, from one position's logits."""
    logits = np.asarray(logits, dtype=np.float64)
    logprobs = logits - np.logaddexp.reduce(logits)
    return [float(logprobs[i]) for i in choice_ids]


def cut_at_stop(text: str, stops: list[str]) -> tuple[str, bool]:
    """The text up to and including its first stop string, and whether one was found."""
    found = [(text.find(s) + len(s)) for s in stops if s and s in text]
    return (text[: min(found)], True) if found else (text, False)


def sampled(sampling: dict) -> bool:
    """Temperature 0 is greedy decoding."""
    return float(sampling["temperature"]) > 0


class OneRequestChat:
    """The agent suite's `chat` for engines that serve one request at a time: each prompt through the
    build's chat template (`self.build_dir`), decoded by the engine's `_reply(ids, seed, sampling,
    schema)` under its own constrained generation."""

    template: ChatTemplate | None = None

    def _chat_template(self) -> ChatTemplate:
        if self.template is None:
            self.template = ChatTemplate(self.build_dir)
        return self.template

    def chat(
        self, prompts: list[str], seeds: list[int], sampling: dict, reply_prefix: str = "", schemas=None
    ) -> list[str]:
        """The replies in order, each started with `reply_prefix` and sampled with its own seed."""
        schemas = schemas or [None] * len(prompts)
        return [
            reply_prefix
            + self._reply(self._chat_template().ids(prompt, reply_prefix), seed, sampling, schema)
            for prompt, seed, schema in zip(prompts, seeds, schemas, strict=True)
        ]

    def reset_prefix_cache(self) -> None:
        """Nothing to forget: each request starts from an empty KV cache."""
