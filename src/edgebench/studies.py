"""Which arms run in which rotated chain: the benchmark study and the calibration study."""

from __future__ import annotations

from edgebench.schedule import Slot, schedule

STUDIES = ("bench", "calibration")


def study_plan(config: dict, study: str) -> tuple[list[str], int]:
    """(arms in config order, rounds) of a study."""
    if study == "bench":
        return [a for a, spec in config["arms"].items() if spec["bench"]], int(config["bench"]["rounds"])
    if study == "calibration":
        cal = config.get("calibration")
        if not cal:
            raise KeyError("config has no calibration section")
        return [cal["baseline"], cal["twin"], cal["injected"]], int(cal["rounds"])
    raise KeyError(f"unknown study {study!r}; known: {STUDIES}")


def study_schedule(config: dict, study: str) -> list[Slot]:
    arms, rounds = study_plan(config, study)
    return schedule(arms, rounds)


def rep_path(study: str, arm: str, rep: int) -> str:
    return f"results/raw/{study}/{arm}/rep{rep}.parquet"
