"""What a measuring process needs to know about its arm: one spec for cold reps and warm sessions."""

from __future__ import annotations

from pathlib import Path

from edgebench.bench.contract import EngineSpec
from edgebench.jobs import environment_of
from edgebench.models.build_record import read_build_json
from edgebench.models.hf_config import model_config


def engine_spec(config: dict, arm_name: str, build_dir: str) -> EngineSpec:
    """Engine, absolute build folder, arm options, vocabulary size and bench shapes of one arm."""
    read_build_json(Path(build_dir))  # a clear error if the build folder holds garbage
    return EngineSpec(
        engine=config["arms"][arm_name]["engine"],
        build_dir=str(Path(build_dir).resolve()),
        options=config["arms"][arm_name],
        vocab_size=int(model_config(build_dir)["vocab_size"]),
        bench=config["bench"],
        environment=environment_of(config["arms"][arm_name]),
    )
