"""Contacts: the list, a contact's details, and the editor (Save; back discards)."""

from __future__ import annotations

from collections.abc import Callable

from edgebench.agent.simulator.widgets import (
    CONTACTS,
    Widget,
    _noop,
    text_field,
    text_view,
)


class ContactsScreens:
    """Screens and actions of the Contacts app, mixed into SimulatedDevice (which owns the state,
    the navigation stack and the renderer)."""

    def _show_contact(self, contact: tuple[str, str]) -> Callable[[], None]:
        def show() -> None:
            self._contact = contact
            self._go("contact")

        return show

    def _screen_contacts(self) -> list[Widget]:
        rows = [text_view("Contacts", CONTACTS + "toolbar_title")]
        rows[0].height = 234
        for contact in sorted(self.state.contacts):
            rows.append(
                Widget(
                    "android.widget.LinearLayout",
                    rid=CONTACTS + "cliv_container",
                    clickable=True,
                    on_tap=self._show_contact(contact),
                    children=[text_view(contact[0], CONTACTS + "cliv_name_textview")],
                    height=180,
                )
            )
        fab = Widget(
            "android.widget.ImageButton",
            rid=CONTACTS + "floating_action_button",
            desc="Create contact",
            clickable=True,
            on_tap=self._open_editor,
            height=252,
        )
        return [*rows, fab]

    def _screen_contact(self) -> list[Widget]:
        name, phone = self._contact or ("", "")
        up = Widget(
            "android.widget.ImageButton", desc="Navigate up", clickable=True, on_tap=self.back, height=154
        )
        phone_row = Widget(
            "android.widget.LinearLayout",
            clickable=True,
            on_tap=_noop,
            column=True,
            children=[text_view(phone, CONTACTS + "header"), text_view("Mobile", CONTACTS + "sub_header")],
        )
        return [up, text_view(name, CONTACTS + "large_title"), phone_row]

    def _open_editor(self) -> None:
        self._editor = {"name": "", "phone": ""}
        self._go("editor")

    def _editor_text(self, key: str) -> Callable[[str], None]:
        def apply(text: str) -> None:
            self._editor[key] = text.strip()

        return apply

    def _editor_save(self) -> None:
        if self._editor.get("name"):
            self.state.contacts.append((self._editor["name"], self._editor["phone"]))
        self.back()

    def _screen_editor(self) -> list[Widget]:
        e = self._editor
        return [
            Widget(
                "android.view.ViewGroup",
                height=234,
                children=[
                    Widget("android.widget.ImageButton", desc="Cancel", clickable=True, on_tap=self.back),
                    text_view("Create contact", CONTACTS + "toolbar_title"),
                    Widget(
                        "android.widget.Button",
                        "Save",
                        CONTACTS + "editor_menu_save_button",
                        clickable=True,
                        on_tap=self._editor_save,
                        end=True,
                    ),
                ],
            ),
            text_field(e["name"] or "First name", CONTACTS + "first_name", self._editor_text("name"), _noop),
            text_field(e["phone"] or "Phone", CONTACTS + "phone", self._editor_text("phone"), _noop),
        ]
