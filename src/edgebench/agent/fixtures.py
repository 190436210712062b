"""Record a device's screens as fixtures and diff them against the simulator's screens, so the
first real run says exactly where the simulator is wrong (ids, texts, bounds)."""

from __future__ import annotations

from pathlib import Path

from edgebench.agent.uixml import Element, parse_hierarchy


def record(device, name: str, out_dir: Path) -> Path:
    """Save the device's current screen as `{name}.xml` (works for AdbDevice and the simulator)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{name}.xml"
    path.write_text(device.observe())
    return path


def _key(e: Element) -> tuple[str, str]:
    return (e.resource_id.rsplit("/", 1)[-1], e.label)


def compare_screens(recorded_xml: str, simulated_xml: str, tolerance_px: int = 40) -> list[str]:
    """Differences a person can act on: elements only one side has, and bounds that moved."""
    recorded = {_key(e): e for e in parse_hierarchy(recorded_xml)}
    simulated = {_key(e): e for e in parse_hierarchy(simulated_xml)}
    problems = [f"only on device: id={k[0]!r} text={k[1]!r}" for k in recorded if k not in simulated]
    problems += [f"only in simulator: id={k[0]!r} text={k[1]!r}" for k in simulated if k not in recorded]
    for key in recorded.keys() & simulated.keys():
        a, b = recorded[key].centre, simulated[key].centre
        if abs(a[0] - b[0]) > tolerance_px or abs(a[1] - b[1]) > tolerance_px:
            problems.append(f"moved: id={key[0]!r} text={key[1]!r} device centre {a} vs simulator {b}")
    return sorted(problems)
