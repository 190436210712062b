"""Which arms each study measures: cold reps in a rotated chain, and the warm session."""

from __future__ import annotations

from edgebench.schedule import Slot, schedule

STUDIES = ("bench",)


def study_plan(config: dict, study: str) -> tuple[list[str], int]:
    """(arms in config order, rounds) of the cold-rep study."""
    if study == "bench":
        return [a for a, spec in config["arms"].items() if spec["bench"]], int(config["bench"]["rounds"])
    raise KeyError(f"unknown study {study!r}; known: {STUDIES}")


def study_schedule(config: dict, study: str) -> list[Slot]:
    arms, rounds = study_plan(config, study)
    return schedule(arms, rounds)


def session_arms(config: dict) -> list[str]:
    """Arms of the warm session: every benchmarked arm plus the calibration twin and injected arms."""
    arms = [a for a, spec in config["arms"].items() if spec["bench"]]
    cal = config.get("calibration")
    if cal:
        arms += [a for a in [cal["twin"], *cal["injected"]] if a not in arms]
    return arms


def rep_path(study: str, arm: str, rep: int) -> str:
    return f"results/raw/{study}/{arm}/rep{rep}.parquet"
