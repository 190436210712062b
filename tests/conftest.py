import copy
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
