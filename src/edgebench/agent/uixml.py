"""One uiautomator-style XML parser and one prompt formatter, shared by the simulated and real device.

Labels follow what a person reads on a real screen: an element's own text, else its own
`content-desc` (icon buttons such as the Clock's "Add alarm" carry only that), else the title inside
its own subtree (a Settings row is clickable and holds its title), else, for an element with no
words of its own (a switch), the title of the row it sits in.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass

# Real screens say "Wi‑Fi" (U+2011), "7:00 AM" (U+202F), Clock's "8:30 AM" (U+200A); "Oct 15 – Nov 12"
# (U+2009). The agent sees plain characters.
NORMALIZE = {"\u2011": "-", "\u202f": " ", "\u200a": " ", "\u2009": " ", "\u00a0": " "}
BOUNDS = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")
# uiautomator2 dumps hold every window; the status bar is not part of the app the agent drives.
SKIPPED_PACKAGES = ("com.android.systemui",)
# Resource ids that name a row or a card: the Settings row title, the Clock alarm's time.
TITLE_IDS = ("title", "digital_clock")
# Words that are a state ("On", "Off" in the phone's language), never a title: a preference row's
# summary, and the text of a pre-Android-12 SwitchBar (Android 12+'s MainSwitchBar puts the
# switch's name in its `switch_text` instead).
STATE_IDS = ("summary",)
SWITCH_BAR = "switch_bar"
# Resource ids that hold a page's title (its words, or those of a text inside it).
PAGE_TITLE_IDS = ("action_bar_title", "collapsing_toolbar", "action_bar", "toolbar")
# XML 1.0 cannot carry most control characters, even escaped; typed text drops them.
NOT_IN_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def normalize(text: str) -> str:
    for odd, plain in NORMALIZE.items():
        text = text.replace(odd, plain)
    return text.strip()


def xml_safe(text: str) -> str:
    """Text with the characters XML 1.0 cannot carry dropped (escaping is the writer's job)."""
    return NOT_IN_XML.sub("", text)


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
    desc: str = ""
    title: str = ""  # from its own subtree, or its row's when it has no words of its own
    package: str = ""  # the app the element belongs to (uiautomator's `package` attribute)

    @property
    def centre(self) -> tuple[int, int]:
        x1, y1, x2, y2 = self.bounds
        return (x1 + x2) // 2, (y1 + y2) // 2

    @property
    def label(self) -> str:
        """What a person (and a screen reader) calls it. A check box or switch's content-desc is
        its accessible name and comes first: the Clock's day buttons show "S" twice but are
        "Sunday" and "Saturday"."""
        if self.checkable:
            return self.desc or self.text or self.title
        return self.text or self.desc or self.title

    @property
    def rid(self) -> str:
        """The resource id without its package (`switch_widget`, `fab`)."""
        return self.resource_id.rsplit("/", 1)[-1]


def element_at(elements: list[Element], index) -> Element:
    """The element an action names; anything but an in-range int (bools too) is a ValueError."""
    if type(index) is not int or not 0 <= index < len(elements):
        shown = index if type(index) is int and abs(index) < 10**6 else type(index).__name__
        raise ValueError(f"no element with index {shown!r} (the screen has {len(elements)})")
    return elements[index]


def parse_bounds(text: str) -> tuple[int, int, int, int]:
    match = BOUNDS.fullmatch(text.strip())
    if not match:
        raise ValueError(f"bad bounds {text!r}")
    return tuple(int(v) for v in match.groups())  # type: ignore[return-value]


def _words(node: ET.Element) -> str:
    return normalize(node.get("text", "")) or normalize(node.get("content-desc", ""))


def _rid(node: ET.Element) -> str:
    return node.get("resource-id", "").rsplit("/", 1)[-1]


def is_state(node: ET.Element, in_switch_bar: bool = False) -> bool:
    return _rid(node) in STATE_IDS or (in_switch_bar and _rid(node) == "switch_text")


def shared_checkable_texts(root: ET.Element) -> set[str]:
    """Texts that two or more check boxes or switches of the page show, casefolded: a text that
    many switches share names none of them. It is their state ("Włączono", "ON") in whatever
    language the phone speaks, read from the page's structure, not from a word list."""
    seen: dict[str, int] = {}
    for node in root.iter("node"):
        text = normalize(node.get("text", "")).casefold()
        if node.get("checkable") == "true" and text:
            seen[text] = seen.get(text, 0) + 1
    return {text for text, count in seen.items() if count > 1}


def state_words(root: ET.Element) -> set[str]:
    """The page's state words, casefolded: state-id texts, the switch bar's, and texts that several
    switches share."""
    words = {_words(n).casefold() for n in root.iter("node") if is_state(n) and _words(n)}
    words |= shared_checkable_texts(root)
    for bar in (n for n in root.iter("node") if _rid(n) == SWITCH_BAR):
        words |= {_words(n).casefold() for n in bar.iter("node") if is_state(n, True) and _words(n)}
    return words


def subtree_title(node: ET.Element, states: frozenset[str] = frozenset()) -> str:
    """The title inside a node's subtree: a title-id node's words first, else the first words
    that are not a state word."""
    below = [
        d
        for d in node.iter("node")
        if d is not node and _words(d) and not is_state(d) and _words(d).casefold() not in states
    ]
    titled = [d for d in below if _rid(d) in TITLE_IDS]
    chosen = titled or below
    return _words(chosen[0]) if chosen else ""


def _is_element(node: ET.Element, cls: str) -> bool:
    flags = (node.get(k) == "true" for k in ("clickable", "checkable"))
    return bool(_words(node)) or any(flags) or cls == "EditText"


def _own_text(node: ET.Element, states: set[str]) -> str:
    text = normalize(node.get("text", ""))
    return "" if node.get("checkable") == "true" and text.casefold() in states else text


def page_title(root: ET.Element) -> str:
    """The page's title from its action bar or toolbar ("" when it shows none)."""
    for node in root.iter("node"):
        if _rid(node) in PAGE_TITLE_IDS and node.get("package") not in SKIPPED_PACKAGES:
            words = _words(node) or subtree_title(node)
            if words:
                return words
    return ""


def parse_hierarchy(xml: str) -> list[Element]:
    """Interesting nodes (with words, clickable, checkable or editable), in document order, indexed.
    A switch or check box is labelled by its row's title, else the page's (a SwitchBar), never by
    the state word it or its row shows."""
    root = ET.fromstring(xml)
    elements: list[Element] = []
    page = page_title(root)
    # the page's state words, in its own language: a switch showing one ("ON") is not named by it
    states = frozenset(state_words(root))

    def walk(node: ET.Element, row_title: str) -> None:
        if node.get("package") in SKIPPED_PACKAGES:
            return
        own_title = subtree_title(node, states) if node.tag == "node" else ""
        if node.tag == "node":
            cls = node.get("class", "").rsplit(".", 1)[-1]
            x1, y1, x2, y2 = bounds = parse_bounds(node.get("bounds", "[0,0][0,0]"))
            if _is_element(node, cls) and x2 > x1 and y2 > y1:  # off-screen rows have no area
                elements.append(
                    Element(
                        index=len(elements),
                        cls=cls,
                        text=_own_text(node, states),
                        resource_id=node.get("resource-id", ""),
                        checkable=node.get("checkable") == "true",
                        checked=node.get("checked") == "true",
                        clickable=node.get("clickable") == "true",
                        editable=cls == "EditText",
                        bounds=bounds,
                        desc=normalize(node.get("content-desc", "")),
                        # only a switch or check box borrows its row's (or page's) title
                        title=own_title or (row_title or page if node.get("checkable") == "true" else ""),
                        package=node.get("package", ""),
                    )
                )
        if _rid(node) == SWITCH_BAR:  # the page's main switch: named by the page (or the bar's own name)
            row_title = own_title or page
        for child in node:
            walk(child, own_title or row_title)

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


def find(
    elements: list[Element], text: str | None = None, rid: str | None = None, switch_of: str | None = None
):
    """The first element with this label, resource id (without package), or switch in this row."""
    for e in elements:
        if text is not None and e.label == text:
            return e
        if rid is not None and e.rid == rid:
            return e
        if switch_of is not None and e.checkable and e.label == switch_of:
            return e
    return None
