"""The Hugging Face config.json of any build: GGUF builds carry none, so they read their source's
(an existing GGUF checkpoint, the study's reference: it is scored against it, so it is that model)."""

from __future__ import annotations

import json
from pathlib import Path


def model_config(build_dir: str | Path) -> dict:
    """config.json of the build, or of the build it was made from (build.json's `source`)."""
    build_dir = Path(build_dir)
    own = build_dir / "config.json"
    if own.exists():
        return json.loads(own.read_text())
    record = json.loads((build_dir / "build.json").read_text())
    if record.get("method") == "existing":  # a GGUF checkpoint of the study's model: its reference's
        return model_config(build_dir.parent / "reference")
    source = record.get("source")
    if not source:
        raise FileNotFoundError(f"{build_dir} has no config.json and its build.json names no source build")
    return model_config(build_dir.parent / source)
