"""Which arms each study measures: cold reps in a rotated chain, and the warm session."""

from __future__ import annotations

from edgebench.schedule import Slot, find_slot

STUDIES = ("bench",)


def study_plan(config: dict, study: str) -> tuple[list[str], int]:
    """(arms in config order, rounds) of the cold-rep study."""
    if study == "bench":
        return [a for a, spec in config["arms"].items() if spec["bench"]], int(config["bench"]["rounds"])
    raise KeyError(f"unknown study {study!r}; known: {STUDIES}")


def study_slot(config: dict, study: str, arm: str, rep: int) -> tuple[Slot, Slot | None]:
    """A rep's slot in its study's rotated schedule, and the slot that runs just before it: the
    DAG computes both once (the chain of inputs, and the rep's slot as a param)."""
    arms, rounds = study_plan(config, study)
    return find_slot(arms, rounds, arm, rep)


def session_arms(config: dict) -> list[str]:
    """Arms of the warm session: the arms of `bench.warm_pairs` when given, else every benchmarked
    arm; plus the calibration twin and injected arms."""
    pairs = config["bench"].get("warm_pairs") or []
    arms = [
        a for a, spec in config["arms"].items() if spec["bench"] and (not pairs or any(a in p for p in pairs))
    ]
    cal = config.get("calibration")
    if cal:
        arms += [a for a in [cal["twin"], *cal["injected"]] if a not in arms]
    return arms


def sections_made(config: dict, given: set[str], has_items: bool) -> set[str]:
    """The table-making sections of a study (edgebench.tables.Table.section): those its files give
    with content, and `roadmap` when some roadmap item is in the study."""
    made = {name for name in given if config.get(name)}
    return made | {"roadmap"} if has_items else made - {"roadmap"}
