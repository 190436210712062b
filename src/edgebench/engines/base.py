"""The Engine protocol: what a rep or a fidelity job needs from any engine."""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

import numpy as np

# Set before any engine import: passive OpenMP waits are ~10x faster on 2 shared vCPUs, and no
# engine may reach for a model hub.
BASE_ENV = {
    "OMP_WAIT_POLICY": "PASSIVE",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "VLLM_NO_USAGE_STATS": "1",
    "DO_NOT_TRACK": "1",
    "TOKENIZERS_PARALLELISM": "false",
}


class EngineFailed(RuntimeError):
    """An engine could not import, load or run a build. The message is the engine's own error as
    `Type: message`, the cause is chained: what a failure row records."""


@contextlib.contextmanager
def engine_failures() -> Iterator[None]:
    """Calls into an engine inside the block: whatever they raise (each library has its own error
    types; a refusal by the CPU rule is one) becomes EngineFailed. Edgebench's own work stays
    outside the block, so a bug there stops the job with its traceback instead of becoming a row."""
    try:
        yield
    except Exception as error:  # noqa: BLE001 - typed here, at the engine's boundary
        raise EngineFailed(f"{type(error).__name__}: {error}") from error


class EngineBoundary:
    """An engine whose every method call fails as EngineFailed: code that drives an engine through
    many calls (the agent's episodes) needs no try around each, and its own bugs stay bugs."""

    def __init__(self, engine) -> None:
        self._engine = engine

    def __getattr__(self, name: str):
        value = getattr(self._engine, name)
        if not callable(value):
            return value

        @functools.wraps(value)
        def call(*args, **kwargs):
            with engine_failures():
                return value(*args, **kwargs)

        return call


def failure_text(error: Exception) -> str:
    """A failure row's `error`: the engine's own `Type: message` (at most 2,000 characters)."""
    text = str(error) if isinstance(error, EngineFailed) else f"{type(error).__name__}: {error}"
    return text[-2000:]


@dataclass
class WindowLogprobs:
    """Next-token log-probabilities at positions 1..n-1 of one window, as arrays.

    top_ids/top_logprobs: [positions, k], best first; target_logprobs: [positions], the
    log-probability of the token that actually follows in the text.
    """

    top_ids: np.ndarray
    top_logprobs: np.ndarray
    target_logprobs: np.ndarray
    full: np.ndarray | None = None  # [positions, vocab] where the engine gives the whole distribution


class Engine(Protocol):
    name: str

    def import_engine(self) -> None:
        """Import the engine's packages (timed by the caller as import_s)."""

    def load(self, build_dir: str, arm: dict, max_model_len: int) -> None:
        """Load a build with the arm's options."""

    def generate(self, token_ids: list[int], max_tokens: int) -> list[int]:
        """Greedy generation ignoring EOS; returns the generated token ids."""

    def generate_stamped(self, token_ids: list[int], max_tokens: int) -> list[float]:
        """The same generation; returns when each token became available (time.perf_counter,
        the system-wide monotonic clock, so two processes' stamps share one time line)."""

    def decode_stream(self, token_ids: list[int], max_tokens: int) -> Iterator[float]:
        """The same generation, one stamp per token as each is taken, advanced only as the caller
        pulls (engines with the `interleave` feature: edgebench.engines.registry)."""
        raise NotImplementedError(f"{type(self).__name__} has no decode stream")

    def layer_kernels(self) -> dict[str, str]:
        """What the loaded model's layers run, per layer type, read from the engine itself."""

    def prompt_logprobs(self, windows: list[list[int]], topk: int) -> list[WindowLogprobs]:
        """Teacher-forced top-k next-token log-probabilities for a batch of windows."""

    def close(self) -> None:
        """Release the engine (stop its processes)."""


class TokenStream:
    """generate, generate_stamped and decode_stream from one `_decode(token_ids, max_tokens)` that
    yields (token, stamp) as each token is taken: for engines that decode one token per pull."""

    def generate(self, token_ids: list[int], max_tokens: int) -> list[int]:
        return [token for token, _ in self._decode(token_ids, max_tokens)]

    def generate_stamped(self, token_ids: list[int], max_tokens: int) -> list[float]:
        return [stamp for _, stamp in self._decode(token_ids, max_tokens)]

    def decode_stream(self, token_ids: list[int], max_tokens: int) -> Iterator[float]:
        """A stamp per token as it is taken; nothing runs between two pulls."""
        return (stamp for _, stamp in self._decode(token_ids, max_tokens))


def top_k(full: np.ndarray, k: int) -> np.ndarray:
    """Indices of each row's k largest values, largest first (a partition, then a sort of k: a
    whole sort of a 150k vocabulary per position is most of a window's scoring time)."""
    k = min(k, full.shape[1])
    part = np.argpartition(-full, k - 1, axis=1)[:, :k]
    order = np.argsort(-np.take_along_axis(full, part, axis=1), axis=1, kind="stable")
    return np.take_along_axis(part, order, axis=1)


def window_logprobs(logits: np.ndarray, window: list[int], topk: int) -> WindowLogprobs:
    """One window's log-probabilities from its logits at positions 0..n-2 ([positions, vocab]),
    each predicting the token after it: the whole distribution, its top-k and the targets'."""
    logits = np.asarray(logits, dtype=np.float64)
    full = logits - np.logaddexp.reduce(logits, axis=1, keepdims=True)
    top = top_k(full, topk)
    targets = full[np.arange(len(full)), window[1 : len(full) + 1]]
    return WindowLogprobs(top, np.take_along_axis(full, top, axis=1), targets, full=full)


def layer_kernels_of(model, kernel_of) -> dict[str, str]:
    """Per layer type (a module name's last part: qkv_proj, down_proj, lm_head, ...), the classes
    `kernel_of(module)` names for its layers (None: not a layer that counts), joined with `+`
    where layers of one type differ."""
    seen: dict[str, set[str]] = {}
    for name, module in model.named_modules():
        kernel = kernel_of(module)
        if kernel is not None:
            seen.setdefault(name.rsplit(".", 1)[-1], set()).add(kernel)
    return {layer: "+".join(sorted(kernels)) for layer, kernels in sorted(seen.items())}


# What Snakemake sets to a job's threads (MKL's pool runs beside OpenMP's when only OMP is set).
THREAD_COUNT_VARIABLES = (
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "GOTO_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)


def spawn_env(options: dict) -> dict[str, str]:
    """The environment an engine process starts with: the base, and, for an arm whose engine
    leaves its thread count to the libraries (`threads_bind: nobind`, as every paired warm
    engine), the arm's `threads` in every thread-count variable. It must be set at start: the
    pools read it once, when they load, and Snakemake sets it to the job's threads, so a
    "single-thread" engine of a two-core job ran two busy threads on its one core, at half speed."""
    env = {**os.environ, **BASE_ENV}
    if options.get("threads_bind") == "nobind" and "threads" in options:
        env.update({name: str(int(options["threads"])) for name in THREAD_COUNT_VARIABLES})
    return env


def apply_env(extra: dict[str, str]) -> None:
    """Every engine process calls this before its engine loads: the environment, and AMX tile
    permission (a process that runs AMX code without asking first dies with SIGILL)."""
    from edgebench.isa import request_amx_permission

    for key, value in {**BASE_ENV, **extra}.items():
        os.environ[key] = value
    request_amx_permission()
