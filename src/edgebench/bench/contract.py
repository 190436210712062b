"""The contract between a parent and the process that measures an arm: one dataclass for the cold
rep's worker, the warm session's resident engine (and the cross-check and pilot that reuse it), and
the memory ledger. It travels as JSON; this module imports nothing heavy, since the worker times its
own imports."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace

from edgebench.bench.prompts import synthetic_prompt
from edgebench.envs.record import record_python, require_runnable


@dataclass(frozen=True)
class EngineSpec:
    engine: str  # a name of the engine registry
    build_dir: str  # absolute folder of the build the arm loads
    options: dict  # the arm's options from the config (threads, int4_w4a8, inject_slowdown, ...)
    vocab_size: int
    bench: dict  # shapes and limits: prefill_tokens, decode_tokens, max_model_len, ...
    fault: dict | None = None  # reliability tests: crash, oom, hang or re-pin on purpose
    # The record of the environment the arm runs in (edgebench.envs.record; None: the main one).
    environment: dict | None = None

    @property
    def python(self) -> str:
        """The interpreter every process of the arm runs."""
        return record_python(self.environment)

    def require_environment(self) -> None:
        """Refuse, by the CPU rule that refused its environment, an arm whose environment this CPU
        cannot run (its process runs only to say so, as a refused kernel's does)."""
        require_runnable(self.environment)

    @property
    def max_model_len(self) -> int:
        return int(self.bench["max_model_len"])

    def filled_context_prompt(self) -> list[int]:
        """The prompt that fills the context (what rss_anon_filled_ctx_mb and the ledger measure)."""
        return synthetic_prompt(self.max_model_len - 2, self.vocab_size, seed=4)

    def with_options(self, **options) -> EngineSpec:
        return replace(self, options={**self.options, **options})

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, value: dict) -> EngineSpec:
        """From a JSON object (keys beyond the contract, such as the worker's t_parent, ignored)."""
        return cls(**{f.name: value[f.name] for f in fields(cls) if f.name in value})
