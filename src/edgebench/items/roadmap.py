"""config/roadmap.yaml: validated against its schema; an item without `verify` is refused by name."""

from __future__ import annotations

from pathlib import Path

import yaml

from edgebench.config import ConfigError, read_config_file, schema_errors

SCHEMA = Path(__file__).resolve().parents[1] / "schemas" / "roadmap.schema.yaml"  # package data


def validate_roadmap(roadmap: object, arms: dict | None = None) -> list[dict]:
    if not isinstance(roadmap, dict):
        raise ConfigError(f"roadmap: expected a mapping with `items`, got {type(roadmap).__name__}")
    for i, item in enumerate(roadmap.get("items") or []):
        if isinstance(item, dict) and "verify" not in item:
            raise ConfigError(
                f"roadmap.items[{i}] ({item.get('id', '?')}): no `verify` method; an item without a "
                "verification method is not on the roadmap"
            )
    problems = schema_errors(roadmap, yaml.safe_load(SCHEMA.read_text()), "roadmap")
    if problems:
        raise ConfigError(f"invalid roadmap: {problems}")
    items = roadmap["items"]
    ids = [item["id"] for item in items]
    if len(set(ids)) != len(ids):
        raise ConfigError(f"roadmap: item ids repeat: {sorted(i for i in ids if ids.count(i) > 1)}")
    for item in items:
        unknown = [a for a in item["starts_from"]["arms"] if arms is not None and a not in arms]
        if unknown:
            raise ConfigError(f"roadmap item {item['id']}: arms {unknown} are not in the config")
    return items


def load_roadmap(path: str | Path, arms: dict | None = None) -> list[dict]:
    return validate_roadmap(read_config_file(path), arms)


# The config section each table needs; an item resting on a table this study does not make waits
# for a study that does (for example config/agent.yaml for agent_trials).
TABLE_SECTIONS = {"agent_trials": "agent", "validity": "calibration"}


def items_in_study(items: list[dict], config: dict) -> dict[str, dict]:
    """Items whose evidence this study produces, by id."""
    return {
        item["id"]: item
        for item in items
        if config.get(TABLE_SECTIONS.get(item["starts_from"]["table"], "run_id"))
    }
