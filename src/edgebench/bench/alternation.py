"""Which warm rounds an `inject_alternate` calibration arm runs with its injected loss.

On in rounds 0-1, off in 2-3, on in 4-5, and so on. Each stretch of two rounds holds both lead
orders of an interleaved pair and both cores of a duet's swap (both change with the round's
parity), so neither is confounded with the loss. The calibration then reads the arm's rounds with
the loss against its own rounds without it, each beside the same reference: one process on both
sides, so its own speed offset cancels.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the resident arm process imports this module: pandas would only add to its memory
    import pandas as pd


def injection_on(round_index: int) -> bool:
    return (round_index // 2) % 2 == 0


def injection_rounds(frame: pd.DataFrame, arm: str) -> tuple[list[int], list[int]] | None:
    """The rounds in which `arm` ran with its loss and without it, when its rows say it
    alternated (an `injected` column with both values); None otherwise."""
    if "injected" not in frame.columns:
        return None
    rows = frame[(frame["arm"] == arm) & frame["injected"].notna()]
    flags = rows["injected"].astype(bool)
    on, off = sorted(set(rows.loc[flags, "round"])), sorted(set(rows.loc[~flags, "round"]))
    return (on, off) if on and off else None
