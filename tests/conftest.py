import copy
import os
import time
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def default_config() -> dict:
    return copy.deepcopy(yaml.safe_load((ROOT / "config" / "config.yaml").read_text()))


# The smallest random-weight Llama the engines load: reps and sessions of it take seconds.
TINY_MODEL = {
    "kind": "tiny_random",
    "hidden_size": 64,
    "intermediate_size": 128,
    "layers": 1,
    "heads": 1,
    "kv_heads": 1,
    "vocab_size": 512,
}


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory):
    from edgebench.models.reference import build_reference

    out = tmp_path_factory.mktemp("models") / "reference"
    build_reference(TINY_MODEL, out)
    return out


def hf_spec(model_dir, bench: dict, **extra):
    """A measuring process's spec for the tiny model on the transformers engine, one thread."""
    from edgebench.bench.contract import EngineSpec

    return EngineSpec(
        engine="hf", build_dir=str(model_dir), options={"threads": 1}, vocab_size=512, bench=bench, **extra
    )


def set_at(config: dict, path: tuple, value) -> dict:
    """A deep copy of the config with the value at `path` (a tuple of keys) replaced."""
    import copy

    changed = copy.deepcopy(config)
    node = changed
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return changed


def usable_cores() -> list[int]:
    """The cores this process may run on (its affinity), never a hard-coded [0, 1]."""
    return sorted(os.sched_getaffinity(0))


def busy_cores(cores: list[int], seconds: float = 0.5, threshold: float = 0.2) -> dict[int, float]:
    """Cores among `cores` that something else kept busy for more than `threshold` of a short window."""
    from edgebench.procfs import read_proc_stat

    before = read_proc_stat()
    time.sleep(seconds)
    after = read_proc_stat()
    share = {}
    for c in cores:
        busy = after[c].busy - before[c].busy
        total = busy + (after[c].idle - before[c].idle) + (after[c].steal - before[c].steal)
        share[c] = busy / max(total, 1)
    return {c: round(s, 2) for c, s in share.items() if s > threshold}


def require_idle(cores: list[int]) -> None:
    """Skip, naming the busy core, a test whose precondition is an idle core it does not control."""
    busy = busy_cores(cores)
    if busy:
        pytest.skip(
            f"core(s) {sorted(busy)} busy with another process (busy share {busy}): this test needs them idle"
        )


def skip_if_still_busy(flagged: bool, cores: list[int]) -> None:
    """After a run whose control rows were flagged: skip, naming the core, when another process is
    still loading it (it came after the check before the run); a flag on a core that is idle again
    stays for the test's assertions to judge."""
    busy = busy_cores(cores) if flagged else {}
    if busy:
        pytest.skip(
            f"core(s) {sorted(busy)} became busy with another process during the test (busy share {busy})"
        )


def skip_if_disturbed(rows: list[dict], cores: list[int], limit: float, wall: str = "pair_wall_s") -> None:
    """After a run whose control rows should be clean: skip when what flagged them is outside the
    test's control. The hypervisor's steal is part of the guard's share (it rightly flags a sample);
    when every flagged row would be clean without it, skip naming it. Otherwise skip only when
    another process still loads the cores (`skip_if_still_busy`); a flag neither explains stays
    for the test's assertions. `wall` names the row's guard window, on one core."""
    flagged = [r for r in rows if not r.get("error") and r.get("stolen_frac", 0.0) > limit]
    if not flagged:
        return
    steal = {(r.get("arm"), r.get("round")): r["steal_s"] / r[wall] for r in flagged}
    if all(r["stolen_frac"] - share <= limit for r, share in zip(flagged, steal.values(), strict=True)):
        named = {key: round(share, 2) for key, share in steal.items()}
        pytest.skip(f"the hypervisor took part of the cores (/proc/stat steal share by arm, round: {named})")
    skip_if_still_busy(True, cores)


@pytest.fixture
def two_cores() -> list[int]:
    cores = usable_cores()
    if len(cores) < 2:
        pytest.skip(f"needs two usable cores; this process may use {cores}")
    return cores[:2]
