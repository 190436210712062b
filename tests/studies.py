"""Tiny synthetic studies for the cross-study tests: results folders with the tables compare and
history read, their samples drawn with known rates, so every expected label follows from them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from edgebench.bench.compare import compare_rows


def warm_rows(
    rates: dict[str, float], rounds: int, noise: float, seed: int, sessions: int = 1
) -> pd.DataFrame:
    """Interleaved-pair samples of every arm beside vllm/bf16, one pair per round: each sample
    lognormal around its arm's rate, with a shared per-round factor that pairing cancels."""
    rng = np.random.default_rng(seed)
    rows = []
    for session in range(sessions):
        session_factor = np.exp(rng.normal(0, noise))
        for r in range(rounds):
            round_index = session * rounds + r
            drift = np.exp(rng.normal(0, 0.05)) * session_factor
            for arm, rate in rates.items():
                value = rate * drift * np.exp(rng.normal(0, noise))
                rows.append(
                    {
                        "arm": arm,
                        "status": "ok",
                        "round": round_index,
                        "session": session,
                        "decode_tok_s": value,
                        "prefill_tok_s": 20 * value,
                        "partner": None,
                    }
                )
    return pd.DataFrame(rows)


def write_study(
    root: Path,
    rates: dict[str, float],
    *,
    seed: int,
    noise: float = 0.01,
    rounds: int = 10,
    commit: str = "a" * 40,
    versions: dict | None = None,
    machine: dict | None = None,
    sessions: int = 1,
) -> Path:
    """A results folder with warm, compare and (optionally) machine tables."""
    tables = root / "tables"
    tables.mkdir(parents=True, exist_ok=True)
    warm = warm_rows(rates, rounds, noise, seed, sessions)
    stamp = pd.Timestamp("2026-12-01T00:00:00Z") + pd.Timedelta(days=seed)
    provenance = {
        "run_id": root.name,
        "git_commit": commit,
        "git_dirty": False,
        "model": "tiny",
        "machine_digest": (machine or {}).get("digest", "m0"),
        "config_digest": "c0",
        "code_digest": "k0",
        "host": "h",
        "cpu_model": "cpu",
        "isa_flags": "[]",
        "versions": json.dumps(versions or {"vllm": "0.32.0"}),
        "cpus_used": "0",
        "threads": 1,
        "started_at": stamp.isoformat(),
        "wall_s": 1.0,
    }
    warm = warm.assign(**provenance)
    warm.to_parquet(tables / "warm.parquet")
    compare = pd.DataFrame(compare_rows(warm, "vllm/bf16", ["decode_tok_s", "prefill_tok_s"]))
    compare.to_parquet(tables / "compare.parquet")
    if machine:
        machine_lines(machine).to_parquet(tables / "machine.parquet")
    return root


def machine_lines(machine: dict) -> pd.DataFrame:
    """A machine table: one line per fingerprint entry, numbers measured and text static."""
    return pd.DataFrame(
        [
            {
                "machine_digest": machine["digest"],
                "line": k,
                "value": str(v),
                "number": float(v) if isinstance(v, int | float) else float("nan"),
                "unit": "",
                "kind": "measured" if isinstance(v, int | float) else "static",
                "method": "",
            }
            for k, v in machine["lines"].items()
        ]
    )
