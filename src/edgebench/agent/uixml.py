"""One uiautomator-style XML parser and one prompt formatter, shared by the simulated and real device."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass

NORMALIZE = {"\u2011": "-", "\u202f": " ", "\u00a0": " "}
BOUNDS = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")


def normalize(text: str) -> str:
    """Real screens say "Wi‑Fi" (U+2011) and "7:00 AM" (U+202F); the agent sees plain characters."""
    for odd, plain in NORMALIZE.items():
        text = text.replace(odd, plain)
    return text


@dataclass(frozen=True)
class Element:
    index: int
    cls: str
    text: str
    resource_id: str
    checkable: bool
    checked: bool
    clickable: bool
    editable: bool
    bounds: tuple[int, int, int, int]
    row_title: str = ""

    @property
    def centre(self) -> tuple[int, int]:
        x1, y1, x2, y2 = self.bounds
        return (x1 + x2) // 2, (y1 + y2) // 2

    @property
    def label(self) -> str:
        return self.text or self.row_title


def parse_bounds(text: str) -> tuple[int, int, int, int]:
    match = BOUNDS.fullmatch(text.strip())
    if not match:
        raise ValueError(f"bad bounds {text!r}")
    return tuple(int(v) for v in match.groups())  # type: ignore[return-value]


def parse_hierarchy(xml: str) -> list[Element]:
    """Interesting nodes (with text, an id, or clickable/checkable), in document order, indexed.

    A switch without text takes the title of the row it sits in, as people read it.
    """
    root = ET.fromstring(xml)
    elements: list[Element] = []

    def walk(node: ET.Element, row_title: str) -> None:
        # The first text inside the innermost enclosing node is the title of that row.
        texts = [normalize(c.get("text", "")) for c in node.iter("node") if c.get("text")]
        title = texts[0] if texts else row_title
        if node.tag == "node":
            text = normalize(node.get("text", ""))
            cls = node.get("class", "").rsplit(".", 1)[-1]
            flags = {k: node.get(k) == "true" for k in ("checkable", "checked", "clickable")}
            editable = cls == "EditText"
            if text or flags["clickable"] or flags["checkable"] or editable:
                elements.append(
                    Element(
                        index=len(elements),
                        cls=cls,
                        text=text,
                        resource_id=node.get("resource-id", ""),
                        checkable=flags["checkable"],
                        checked=flags["checked"],
                        clickable=flags["clickable"],
                        editable=editable,
                        bounds=parse_bounds(node.get("bounds", "[0,0][0,0]")),
                        row_title="" if text else row_title,
                    )
                )
        for child in node:
            walk(child, title)

    walk(root, "")
    return elements


def format_elements(elements: list[Element]) -> str:
    """One line per element, e.g. `[4] Switch "Wi-Fi" checked=true clickable`."""
    lines = []
    for e in elements:
        parts = [f"[{e.index}] {e.cls}"]
        if e.label:
            parts.append(f'"{e.label}"')
        if e.checkable:
            parts.append(f"checked={'true' if e.checked else 'false'}")
        if e.editable:
            parts.append("editable")
        elif e.clickable:
            parts.append("clickable")
        lines.append(" ".join(parts))
    return "\n".join(lines)
