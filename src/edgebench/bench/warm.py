"""The warm session as a job: specs for every session arm, the coordinator, provenance on each row."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from edgebench.arm_refusal import refusal
from edgebench.bench.session import SessionSettings, run_session
from edgebench.bench.spec import engine_spec
from edgebench.rows import arm_row
from edgebench.studies import session_arms


def duet_pairs(config: dict) -> list[tuple[str, str]]:
    """The duets of every round: `bench.warm_pairs` if given, else every pair of benchmarked arms
    plus the gate baseline beside each calibration arm."""
    if config["bench"].get("warm_pairs"):
        return [tuple(pair) for pair in config["bench"]["warm_pairs"]]
    benched = [a for a, spec in config["arms"].items() if spec["bench"]]
    pairs = [(a, b) for i, a in enumerate(benched) for b in benched[i + 1 :]]
    baseline = config["gates"]["baseline"]
    return pairs + [(baseline, arm) for arm in session_arms(config) if arm not in benched]


# Seeds of independent sessions lie this far apart, so no two sessions share a round order.
SESSION_SEED_STRIDE = 1000


def settings_from(config: dict, session: int = 0) -> SessionSettings:
    bench = config["bench"]
    design = bench["warm_design"]
    return SessionSettings(
        rounds=int(bench["warm_rounds"]),
        seed=int(bench["warm_seed"]) + SESSION_SEED_STRIDE * session,
        cores=bench.get("cpus") or sorted(os.sched_getaffinity(0)),
        timeout_s=float(bench["timeout_s"]),
        contention_limit=float(bench["contention_limit"]),
        design=design,
        pairs=duet_pairs(config) if design in ("duet", "interleaved") else [],
        burst_tokens=int(bench["burst_tokens"]),
        restart_rounds=int(bench["restart_rounds"]),
    )


def measure_session(
    config: dict, build_dirs: dict[str, str], code_digest: str, session: int = 0
) -> list[dict]:
    """Run one warm session over the study's session arms; `build_dirs` maps build name to folder.
    Session k's rounds are numbered after session k-1's, so pairs never straddle two sessions."""
    arms = session_arms(config)
    specs = {name: engine_spec(config, name, build_dirs[config["arms"][name]["build"]]) for name in arms}
    settings = settings_from(config, session)
    refused = {name: why for name in arms if (why := refusal(config, name))}
    print(
        f"warm session {session} ({settings.design}): {len(arms)} arms x {settings.rounds} rounds on cores "
        f"{settings.cores}; duets: {settings.pairs}",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="edgebench-warm-") as workdir:
        samples = run_session(specs, settings, Path(workdir), progress=_progress, refused=refused)
        for arm in arms:  # every engine's own log goes to the rule's log
            log = Path(workdir) / f"{arm.replace('/', '_')}.log"
            if log.exists():
                print(f"----- {arm} engine log -----\n{log.read_text(errors='replace')[-4000:]}", flush=True)
    rows = []
    for sample in samples:
        sample = {**sample, "session": session, "round": sample["round"] + session * settings.rounds}
        row = arm_row(
            config,
            sample["arm"],
            code_digest=code_digest,
            rep=sample["round"],
            order_position=sample["order_position"],
            cpus=config["bench"].get("cpus"),
        )
        row.update(sample)
        rows.append(row)
    return rows


def _progress(message: str) -> None:
    print(message, flush=True)
