"""`?`: every key of the dashboard on one screen, read from the bindings themselves so it cannot fall behind."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

Section = tuple[str, list[tuple[str, str]]]


def binding_rows(app: App, bindings: Iterable[BindingType]) -> list[tuple[str, str]]:
    """(keys as shown, what they do) for each binding with a description."""
    rows = []
    for item in bindings:
        binding = item if isinstance(item, Binding) else Binding(*item)
        if not binding.description:
            continue
        keys = [app.get_key_display(Binding(key.strip(), binding.action)) for key in binding.key.split(",")]
        if binding.key_display:
            keys[0] = binding.key_display
        shown = " ".join(keys)
        rows.append((shown, binding.tooltip or binding.description))
    return rows


def keys_table(sections: Sequence[Section]) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(justify="right", style="bold cyan", no_wrap=True)
    table.add_column()
    for i, (title, rows) in enumerate(sections):
        if i:
            table.add_row("", "")
        table.add_row("", Text(title, style="bold underline"))
        for keys, what in rows:
            table.add_row(keys, what)
    return table


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,q", "close", "Close help"),
    ]

    def __init__(self, sections: Sequence[Section]) -> None:
        super().__init__()
        self.sections = sections

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="dialog", classes="dialog help"):
            yield Static(Text("queuetop keys", style="bold"), classes="title")
            yield Static(keys_table(self.sections))
            yield Static(Text("Escape, ? or q closes this screen.", style="dim"))

    def action_close(self) -> None:
        self.dismiss(None)
