"""The calibration's alternating injection: a loss turned on and off by round inside one engine
process, read as that process's rounds with the loss over its rounds without it."""

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from edgebench.bench.alternation import injection_on, injection_rounds
from edgebench.bench.validity import validity_rows
from edgebench.stats import contrast_estimate

GATES = {"tolerance": 0.025, "look_every": 2}
CALIBRATION = {
    "baseline": "base",
    "twin": "twin",
    "injected": ["slow"],
    "metric": "decode_tok_s",
    "block_rounds": 4,
}


def test_each_stretch_of_the_loss_holds_both_round_parities():
    on = [r for r in range(12) if injection_on(r)]
    off = [r for r in range(12) if not injection_on(r)]
    assert on == [0, 1, 4, 5, 8, 9] and off == [2, 3, 6, 7, 10, 11]
    # lead order and core change with the round's parity: both halves hold both parities equally
    for rounds in (on, off):
        assert sum(r % 2 for r in rounds) == len(rounds) / 2


def test_the_contrast_of_two_groups_is_welchs_interval():
    from scipy import stats

    rng = np.random.default_rng(1)
    on, off = rng.normal(-0.05, 0.02, 6), rng.normal(0.0, 0.04, 4)
    est = contrast_estimate(on, off)
    low, high = stats.ttest_ind(on, off, equal_var=False).confidence_interval(0.95)
    assert est.n == 10 and est.ratio == pytest.approx(np.exp(on.mean() - off.mean()))
    assert (est.ci_low, est.ci_high) == pytest.approx((np.exp(low), np.exp(high)))
    assert np.isnan(contrast_estimate(on, off[:1]).ci_low)


def session_frame(rounds: int, offset: float, loss: float, noise: float, seed: int) -> pd.DataFrame:
    """Interleaved warm rows: base beside twin, slow beside twin. The slow arm's process runs
    `offset` faster than the twin's, and its loss is on only in its injected rounds."""
    rng = np.random.default_rng(seed)
    rows = []
    for r in range(rounds):
        drift = rng.normal(0, 0.01)
        speed = {"base": 30.0, "twin": 30.0, "slow": 30.0 * (1 + offset)}
        if injection_on(r):
            speed["slow"] *= 1 - loss
        for arm, partner in (("base", "twin"), ("twin", "base"), ("twin", "slow"), ("slow", "twin")):
            value = speed[arm] * np.exp(drift + rng.normal(0, noise))
            rows.append(
                {
                    "arm": arm,
                    "partner": partner,
                    "round": r,
                    "slot": 0 if {arm, partner} == {"base", "twin"} else 1,
                    "design": "interleaved",
                    "status": "ok",
                    "decode_tok_s": value,
                    "cpu_s": 1.0,
                    "injected": injection_on(r) if arm == "slow" else None,
                }
            )
    return pd.DataFrame(rows)


def test_a_process_offset_cancels_when_the_arm_is_read_against_its_own_rounds():
    """The slow arm's process runs 8% faster than the twin's; its 5% loss, on in half its rounds,
    reads as 5% from its own rounds, where against the twin alone it would read as a gain."""
    frame = session_frame(rounds=40, offset=0.08, loss=0.05, noise=0.005, seed=3)
    assert injection_rounds(frame, "slow") == (
        [r for r in range(40) if injection_on(r)],
        [r for r in range(40) if not injection_on(r)],
    )
    row = next(r for r in validity_rows(frame, CALIBRATION, GATES, {"slow": 0.05}) if r["arm"] == "slow")
    assert row["covers_effect"] and row["measured_effect"] == pytest.approx(0.05, abs=0.01)
    assert row["whole_session_estimate"].startswith("slow's rounds with the loss")
    assert row["whole_session_rounds"] == 40 and row["miss_reason"] == ""
    # without the flag the same rows are read against the twin alone, offset and all
    plain = frame.assign(injected=None)
    plain.loc[(plain["arm"] == "slow") & ~plain["round"].map(injection_on), "decode_tok_s"] *= 0.95
    against_twin = next(
        r for r in validity_rows(plain, CALIBRATION, GATES, {"slow": 0.05}) if r["arm"] == "slow"
    )
    assert not against_twin["covers_effect"] and against_twin["whole_session_ratio"] > 1


def test_an_arm_that_never_alternated_is_read_against_its_reference():
    frame = session_frame(rounds=8, offset=0.0, loss=0.05, noise=0.005, seed=4).assign(injected=None)
    assert injection_rounds(frame, "slow") is None
    assert injection_rounds(frame.drop(columns="injected"), "slow") is None


def test_a_request_flagged_for_the_loss_keeps_it_through_vllms_batch_moves():
    from edgebench.engines.slowdown import REQUEST_FLAG, flagged_indices

    def params(on):
        return SimpleNamespace(extra_args={REQUEST_FLAG: on})

    def update(removed=(), added=(), moved=()):
        return SimpleNamespace(removed=list(removed), added=list(added), moved=list(moved))

    swap, one_way = SimpleNamespace(name="SWAP"), SimpleNamespace(name="UNIDIRECTIONAL")
    flagged = flagged_indices(set(), update(added=[(0, params(True), [], []), (1, params(False), [], [])]))
    assert flagged == {0}
    assert flagged_indices(flagged, update(moved=[(0, 1, swap)])) == {1}
    assert flagged_indices(flagged, update(moved=[(1, 0, one_way)])) == set()  # 1 replaced 0
    assert flagged_indices(flagged, update(moved=[(0, 2, one_way)])) == {2}
    assert flagged_indices(flagged, update(removed=[0])) == set()
    # a removed request's index taken by an unflagged one; extra_args may be None
    assert (
        flagged_indices(flagged, update(removed=[0], added=[(0, SimpleNamespace(extra_args=None), [], [])]))
        == set()
    )


def test_the_loss_applies_only_to_flagged_requests_when_it_alternates(monkeypatch):
    import edgebench.engines.slowdown as slowdown

    clock = {"t": 0.0}
    waited = []
    monkeypatch.setattr(slowdown.time, "perf_counter", lambda: clock["t"])
    monkeypatch.setenv(slowdown.LOSS_ENV, "0.2")
    monkeypatch.setenv(slowdown.PER_REQUEST_ENV, "1")
    processor = slowdown.InjectedSlowdown(None, None, False)
    processor.wait = waited.append

    def run(on: bool) -> int:
        before = len(waited)
        added = [(0, SimpleNamespace(extra_args={slowdown.REQUEST_FLAG: on}), [], [])]
        processor.update_state(SimpleNamespace(removed=[0], added=added, moved=[]))
        for _ in range(10):
            clock["t"] += 0.05
            processor.apply(None)
        return len(waited) - before

    assert run(False) == 0 and run(True) >= 9 and run(False) == 0
    assert all(w == pytest.approx(0.05 * 0.25) for w in waited)


PROBE = """
import json, sys, time
from edgebench.engines.vllm_engine import VllmEngine
engine = VllmEngine()
engine.load(sys.argv[1], {"threads": 1, "threads_bind": "nobind", "inject_slowdown": 0.5,
                          "inject_kind": "busy", "inject_alternate": True}, 256)
prompt = list(range(1, 17))
engine.generate_stamped(prompt, 32)  # warm-up
rates = {"on": [], "off": []}
for on in (True, False, True, False, True, False):
    engine.inject_slowdown(on)
    stamps = engine.generate_stamped(prompt, 48)
    rates["on" if on else "off"].append((len(stamps) - 1) / (stamps[-1] - stamps[0]))
import os
from edgebench.procfs import children_of
def vllm_processes():  # a zombie's cmdline is empty: only processes still running are named
    names = []
    for pid in children_of(os.getpid()):
        try:
            cmdline = open(f"/proc/{pid}/cmdline").read()
        except FileNotFoundError:  # gone since the listing
            continue
        if "VLLM" in cmdline:
            names.append(cmdline.split("\\0")[0])
    return names
print("RUNNING " + json.dumps(vllm_processes()))
ipc = os.environ["VLLM_RPC_BASE_PATH"]
print("SOCKETS " + json.dumps([ipc, len(os.listdir(ipc))]))
engine.close()
print("LEFT " + json.dumps(vllm_processes()))
print("RATES " + json.dumps(rates))
"""


def test_a_real_vllm_engine_slows_only_the_requests_that_ask(tiny_model, tmp_path):
    """vLLM's engine core in its own process, as in a study: a 50% loss turned on and off per
    request halves the flagged requests' decode rate and leaves the others' alone."""
    temp = tmp_path / "temp"  # the probe's temp folder: what vLLM leaves there is seen
    temp.mkdir()
    run = subprocess.run(
        [sys.executable, "-c", PROBE, str(tiny_model)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "TMPDIR": str(temp)},
    )
    line = next((x for x in run.stdout.splitlines() if x.startswith("RATES ")), None)
    assert run.returncode == 0 and line, run.stderr[-3000:]
    rates = json.loads(line[len("RATES ") :])
    # the close stopped vLLM's engine core and worker (seen running before it): none is left
    printed = {
        x.split(" ", 1)[0]: json.loads(x.split(" ", 1)[1])
        for x in run.stdout.splitlines()
        if x.startswith(("RUNNING ", "LEFT ", "SOCKETS "))
    }
    assert len(printed["RUNNING"]) >= 2 and printed["LEFT"] == [], printed
    # vLLM's socket files went to the process's own folder (in the probe's temp folder, or the
    # system's /tmp where that is too long for a socket path), gone at the process's exit
    folder, sockets = printed["SOCKETS"]
    assert Path(folder).parent in (temp, Path("/tmp")) and sockets > 0, printed
    assert Path(folder).name.startswith("edgebench-vllm-"), printed
    assert not Path(folder).exists() and not any(p.is_socket() for p in temp.rglob("*"))

    ratio = np.median(rates["on"]) / np.median(rates["off"])
    # a 50% loss reads 0.5; no loss (flag ignored) reads 1 and a loss on every request does too
    assert ratio < 0.75, rates
