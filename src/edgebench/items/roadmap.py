"""config/roadmap.yaml: validated against its schema; an item without `verify` is refused by name."""

from __future__ import annotations

from pathlib import Path

import yaml

from edgebench.agent.policies import BASELINES
from edgebench.config import ConfigError, check_finite, read_config_file, schema_errors
from edgebench.metrics import METRICS
from edgebench.tables import TABLES

SCHEMA = Path(__file__).resolve().parents[1] / "schemas" / "roadmap.schema.yaml"  # package data


def roadmap_schema() -> dict:
    """The schema file, with its table and method enums filled from the registries (the table
    registry, and the verify methods), so that neither is kept by hand."""
    from edgebench.items.verify import METHODS  # verify reads tables; import it only when asked

    schema = yaml.safe_load(SCHEMA.read_text())
    item = schema["properties"]["items"]["items"]["properties"]
    item["starts_from"]["properties"]["table"]["enum"] = sorted(TABLES)
    item["verify"]["properties"]["method"]["enum"] = sorted(METHODS)
    return schema


def validate_roadmap(roadmap: object, arms: dict | None = None) -> list[dict]:
    if not isinstance(roadmap, dict):
        raise ConfigError(f"roadmap: expected a mapping with `items`, got {type(roadmap).__name__}")
    for i, item in enumerate(roadmap.get("items") or []):
        if isinstance(item, dict) and "verify" not in item and item.get("reproducible", True):
            raise ConfigError(
                f"roadmap.items[{i}] ({item.get('id', '?')}): no `verify` method; an item without a "
                "verification method is not on the roadmap"
            )
    check_finite(roadmap, "roadmap")
    problems = schema_errors(roadmap, roadmap_schema(), "roadmap")
    if problems:
        raise ConfigError(f"invalid roadmap: {problems}")
    items = roadmap["items"]
    ids = [item["id"] for item in items]
    if len(set(ids)) != len(ids):
        raise ConfigError(f"roadmap: item ids repeat: {sorted(i for i in ids if ids.count(i) > 1)}")
    for item in items:
        if not reproducible(item):
            continue
        known = set(arms or ()) | {f"baseline/{name}" for name in BASELINES}  # the checker baselines
        unknown = [a for a in item["starts_from"]["arms"] if arms is not None and a not in known]
        if unknown:
            raise ConfigError(f"roadmap item {item['id']}: arms {unknown} are not in the config")
        check_item_measures(item, arms)
    return items


def check_item_measures(item: dict, arms: dict | None) -> None:
    """An item's metric must be one its table has, and a fidelity item's arms must be scored: both
    would otherwise fail late, inside the verdict job."""
    table, metric = item["starts_from"]["table"], item["starts_from"].get("metric")
    known = TABLES[table].value_columns
    for name in [metric, *item.get("verify", {}).get("metrics", [])]:
        if name is not None and name not in known:
            raise ConfigError(
                f"roadmap item {item['id']}: metric {name!r} is not a column of table {table!r}"
            )
    verify = item.get("verify", {})
    for name in [verify.get("choose"), *verify.get("within", [])]:
        if name is not None and name not in METRICS:
            raise ConfigError(
                f"roadmap item {item['id']}: {name!r} is not a metric (known: {', '.join(METRICS)})"
            )
    if table == "fidelity" and arms is not None:
        off = [a for a in item["starts_from"]["arms"] if a in arms and not arms[a].get("fidelity", True)]
        if off:
            raise ConfigError(f"roadmap item {item['id']}: arms {off} have fidelity: false")


def load_roadmap(path: str | Path, arms: dict | None = None) -> list[dict]:
    return validate_roadmap(read_config_file(path), arms)


def reproducible(item: dict) -> bool:
    return item.get("reproducible", True)


def in_study(item: dict, sections: set[str]) -> bool:
    """A non-reproducible item is in every study (its verdict is its reason); another is when the
    study makes its table: `sections` are the config sections the study's files give (a section
    filled in with schema defaults makes no table)."""
    if not reproducible(item):
        return True
    section = TABLES[item["starts_from"]["table"]].section  # "" = a table every study makes
    return not section or section in sections


def items_in_study(items: list[dict], sections: set[str]) -> dict[str, dict]:
    """Items whose evidence this study produces, by id."""
    return {item["id"]: item for item in items if in_study(item, sections)}


def items_elsewhere(items: list[dict], sections: set[str]) -> list[dict]:
    """Items another study reproduces: each still gets a row in this study's verdicts, naming it."""
    return [item for item in items if not in_study(item, sections)]
