"""Calibration of the gate in the study itself: its false-alarm rate on an A/A twin and its power
against injected throughput losses (a sleep and a busy-wait), each over disjoint blocks of rounds of
the warm session, with Wilson intervals.

Every block runs the same sequential gate the study uses, with the block as its maximum, so the
rates describe a gate at `block_rounds` rounds (the study's own gates see more rounds, so they are at
least as sensitive). Each engine process has a fixed speed offset of its own (the pilot,
`edgebench.bench.pilot`, measures its size). Blocks that share their processes do not resample
it, so their rates would describe one draw of the twins; with `bench.restart_rounds` equal to
`block_rounds` every block runs on fresh engines, and the whole-session interval is taken over the
epochs' means. An injected arm that alternates its loss by round (`inject_alternate`,
edgebench.bench.alternation) is read instead as its rounds with the loss over its rounds without
it, both beside the same reference: one process on both sides, so its offset cancels.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from edgebench.bench.alternation import injection_rounds
from edgebench.bench.compare import aligned_pairs, is_duet, paired_log_ratios, swapped
from edgebench.stats import (
    PairedEstimate,
    contrast_estimate,
    gate_outcome,
    paired_estimate,
    sequential_paired,
    wilson_interval,
)


def blocks_of(rounds: list[int], block_rounds: int) -> list[list[int]]:
    """Disjoint consecutive blocks of `block_rounds` rounds; a short tail is left out."""
    if block_rounds < 2:
        raise ValueError(f"a block needs at least 2 rounds, got {block_rounds}")
    rounds = sorted(rounds)
    return [rounds[i : i + block_rounds] for i in range(0, len(rounds) - block_rounds + 1, block_rounds)]


def block_outcomes(
    frame: pd.DataFrame, baseline: str, candidate: str, name: str, block_rounds: int, gates: dict
) -> list[str]:
    """The gate's status on every disjoint block of rounds."""
    rounds = sorted(set(frame["round"]))
    tolerance = float(gates["tolerance"])
    outcomes = []
    planned = block_rounds // 2 if swapped(frame) else block_rounds  # duets: one value per swap
    if planned < 2:
        raise ValueError(f"a block of {block_rounds} rounds gives {planned} paired value(s); it needs two")
    for block in blocks_of(rounds, block_rounds):
        part = frame[frame["round"].isin(block)]
        logs = paired_log_ratios(part, name, baseline, candidate)
        look_every = min(int(gates["look_every"]), planned)
        result = sequential_paired(logs, tolerance, look_every, planned, equivalence_first=True)
        outcomes.append(gate_outcome(result, tolerance))
    return outcomes


def epoch_means(frame: pd.DataFrame, name: str, baseline: str, candidate: str) -> np.ndarray:
    """One mean paired log ratio per process epoch (engines restarted): values within an epoch
    share their processes' speed offsets, so only the epochs are independent."""
    means = [paired_log_ratios(part, name, baseline, candidate) for _, part in frame.groupby("epoch")]
    return np.array([values.mean() for values in means if len(values)])


def rate_fields(outcomes: list[str]) -> dict:
    """The blocks' gate outcomes as a rate of failed gates with its Wilson interval, and counts."""
    fails = outcomes.count("fail")
    low, high = wilson_interval(fails, len(outcomes))
    return {
        "blocks": len(outcomes),
        "fails": fails,
        "rate": fails / len(outcomes) if outcomes else float("nan"),
        "rate_low": low,
        "rate_high": high,
        "passes": outcomes.count("pass"),
        "inconclusive": outcomes.count("inconclusive"),
        "ungateable": outcomes.count("ungateable"),
    }


def session_estimates(
    frame: pd.DataFrame, name: str, baseline: str, candidate: str, epochs: int
) -> tuple[PairedEstimate, float]:
    """The whole session's estimate (over epoch means when the engines were restarted) and the
    paired SD per value, whatever the epochs."""
    values = paired_log_ratios(frame, name, baseline, candidate)
    whole = paired_estimate(epoch_means(frame, name, baseline, candidate) if epochs > 1 else values)
    return whole, paired_estimate(values).sd_log


def cpu_ratio(frame: pd.DataFrame, baseline: str, candidate: str) -> float:
    """Geometric mean of paired CPU-seconds ratios: a busy-wait raises it, a sleep does not."""
    base, cand = aligned_pairs(frame, "cpu_s", baseline, candidate)
    return float(np.exp(np.mean(np.log(cand / base)))) if len(base) else float("nan")


def reference_partner(frame: pd.DataFrame, calibration: dict, arm: str) -> str:
    """The reference process an injected arm is compared with: the baseline, or, when the arm was
    paired with the twin instead (so that two pairs can run at once), the twin, which is the
    baseline under another name."""
    if is_duet(frame) and "partner" in frame.columns:
        partners = set(frame.loc[frame["arm"] == arm, "partner"].dropna())
        if calibration["baseline"] not in partners and calibration["twin"] in partners:
            return calibration["twin"]
    return calibration["baseline"]


def alternated_estimates(frame: pd.DataFrame, name: str, baseline: str, arm: str, rounds: tuple) -> dict:
    """An `inject_alternate` arm: its rounds with the loss against its rounds without it, each
    beside the same reference, so one process is on both sides and its own offset cancels."""
    on, off = (frame[frame["round"].isin(part)] for part in rounds)
    whole = contrast_estimate(
        paired_log_ratios(on, name, baseline, arm), paired_log_ratios(off, name, baseline, arm)
    )
    return {
        "whole": whole,
        "paired_sd": whole.sd_log,
        "cpu": cpu_ratio(on, baseline, arm) / cpu_ratio(off, baseline, arm),
        "gated": on,  # the gate reads the arm as the study would: with its loss
        "own_rounds": True,  # read within its own process: no process offset in it
        "estimate": f"{arm}'s rounds with the loss over its rounds without it, each beside {baseline}; "
        "Welch 95% interval",
    }


def check_estimates(frame: pd.DataFrame, name: str, baseline: str, arm: str, epochs: int) -> dict:
    """The whole-session estimate of one check, its paired SD, CPU ratio and the rows its gate
    blocks read."""
    rounds = injection_rounds(frame, arm)
    if rounds is not None:
        return alternated_estimates(frame, name, baseline, arm, rounds)
    whole, paired_sd = session_estimates(frame, name, baseline, arm, epochs)
    return {
        "whole": whole,
        "paired_sd": paired_sd,
        "cpu": cpu_ratio(frame, baseline, arm),
        "gated": frame,
        "own_rounds": False,
        "estimate": f"{arm} beside {baseline}"
        + (", over process epochs' means" if epochs > 1 else "")
        + "; Student-t 95% interval",
    }


def validity_rows(
    frame: pd.DataFrame, calibration: dict, gates: dict, effects: dict[str, float]
) -> list[dict]:
    """One row for the A/A twin (false alarms) and one per injected arm (power)."""
    name = calibration["metric"]
    epochs = int(frame["epoch"].nunique()) if "epoch" in frame.columns else 1
    checks = [("false_alarm", calibration["twin"], 0.0)] + [
        ("power", arm, effects[arm]) for arm in calibration["injected"]
    ]
    rows, own_rounds = [], []
    for kind, arm, effect in checks:
        base = (
            calibration["baseline"] if kind == "false_alarm" else reference_partner(frame, calibration, arm)
        )
        found = check_estimates(frame, name, base, arm, epochs)
        own_rounds.append(found["own_rounds"])
        rows.append(check_row(kind, arm, base, effect, found, calibration, gates, epochs))
    smallest = smallest_detected(rows)
    twin = next(row for row in rows if row["check"] == "false_alarm")
    reason = offset_reason(twin) if epochs == 1 else ""
    # a process offset explains a miss against another process, never one read within the arm's own
    return [
        {
            **row,
            "smallest_effect_power90": smallest,
            "miss_reason": "" if row["covers_effect"] or own else reason,
        }
        for row, own in zip(rows, own_rounds, strict=True)
    ]


def check_row(
    kind: str, arm: str, base: str, effect: float, found: dict, calibration: dict, gates: dict, epochs: int
) -> dict:
    """One check's row: the gate's block outcomes and the whole session's estimate."""
    name, block_rounds, whole = calibration["metric"], int(calibration["block_rounds"]), found["whole"]
    return {
        "check": kind,
        "arm": arm,
        "baseline": base,
        "metric": name,
        "effect": effect,
        "block_rounds": block_rounds,
        **rate_fields(block_outcomes(found["gated"], base, arm, name, block_rounds, gates)),
        "tolerance": float(gates["tolerance"]),
        "whole_session_rounds": whole.n,  # paired values, or epochs when engines restarted
        "epochs": epochs,
        "whole_session_ratio": whole.ratio,
        "whole_session_ci_low": whole.ci_low,
        "whole_session_ci_high": whole.ci_high,
        "measured_effect": 1 - whole.ratio,
        "sd_log": whole.sd_log,
        "paired_sd": found["paired_sd"],
        "cpu_s_ratio": found["cpu"],
        # the light calibration: the whole session's interval holds the injected loss
        "covers_effect": bool(whole.ci_low <= 1 - effect <= whole.ci_high),
        "whole_session_estimate": found["estimate"],
        "method": "sequential gate on disjoint blocks of warm rounds; Wilson 95% interval",
    }


def offset_reason(twin: dict) -> str:
    """Why a whole-session interval can miss its known effect when every arm ran in one process
    epoch: that interval holds the rounds' noise but not each process's own speed offset, and the
    A/A twin shows the offset when two processes of one build read apart beyond their interval
    ("" when it does not: the miss is then unexplained)."""
    low, high = twin["whole_session_ci_low"], twin["whole_session_ci_high"]
    if low <= 1 <= high or not np.isfinite(low):
        return ""
    return (
        f"process offset: two processes of one build ({twin['baseline']}, {twin['arm']}) read "
        f"{twin['whole_session_ratio']:.3f} [{low:.3f}, {high:.3f}] in this session; one process epoch "
        "cannot separate an effect from such an offset (bench.restart_rounds resamples it)"
    )


POWER_TARGET = 0.9


def smallest_detected(rows: list[dict], target: float = POWER_TARGET) -> float:
    """The smallest injected effect whose gate failed in at least `target` of its blocks for every
    kind of injected loss at that size (a sleep and a busy-wait may differ), NaN when none did:
    what this machine's harness can resolve."""
    power = [r for r in rows if r["check"] == "power"]
    effects = sorted({r["effect"] for r in power})
    reached = [
        e for e in effects if all(r["blocks"] and r["rate"] >= target for r in power if r["effect"] == e)
    ]
    return min(reached) if reached else float("nan")
