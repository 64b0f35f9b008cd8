"""The two action dialogs. Each returns a typed result when dismissed (None when cancelled) and changes
nothing itself: the app runs the action on its own connection and reports the outcome.

- `EnqueueModal` → EnqueueRequest: every field is checked as it is typed, with the error under the field;
  submitting an invalid form keeps it open and enqueues nothing.
- `ReleaseModal` → ReleaseChoice: the scope (the selected type or all), the dry-run count for that scope
  before anything can be confirmed, and a plain "nothing to release" when there is nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.suggester import SuggestFromList
from textual.widgets import Button, Input, Label, RadioButton, RadioSet, Static

from queuetop.actions import EnqueueRequest, describe_release, parse_enqueue_form
from queuetop.db import QueuetopError
from queuetop.queue import DEFAULT_PRIORITY, ReleaseResult
from queuetop.tui.threads import HandlesThreadResults, in_thread

FIELDS = ("job_type", "count", "payload", "priority")


class EnqueueModal(ModalScreen[EnqueueRequest | None]):
    """Job type (prefilled from the selection), count, payload, priority."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, job_type: str | None, known_types: Sequence[str] = ()) -> None:
        super().__init__()
        self.job_type = job_type or ""
        self.known_types = list(known_types)

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="dialog"):
            yield Label("Enqueue test jobs", classes="title")
            yield Label("Job type")
            yield Input(self.job_type, id="job_type", placeholder="e.g. email", compact=True,
                        suggester=SuggestFromList(self.known_types, case_sensitive=True))  # fmt: skip
            yield Label("", id="job_type-error", classes="error", markup=False)
            yield Label("Count")
            yield Input("1", id="count", placeholder="1 to 1,000,000", compact=True)
            yield Label("", id="count-error", classes="error", markup=False)
            yield Label("Payload (stored in JobInfo; optional)")
            yield Input("", id="payload", placeholder='{"to": "ops@example.com"}', compact=True)
            yield Label("", id="payload-error", classes="error", markup=False)
            yield Label("Priority (0 is the most urgent, 255 the least)")
            yield Input(str(DEFAULT_PRIORITY), id="priority", compact=True)
            yield Label("", id="priority-error", classes="error", markup=False)
            with Horizontal(classes="buttons"):
                yield Button("Enqueue", variant="primary", id="submit")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#job_type" if not self.job_type else "#count", Input).focus()

    def _form(self) -> tuple[EnqueueRequest | None, dict[str, str]]:
        values = {name: self.query_one(f"#{name}", Input).value for name in FIELDS}
        return parse_enqueue_form(**values)

    def _show_errors(self, errors: dict[str, str], only: str | None = None) -> None:
        for name in FIELDS if only is None else (only,):
            message = errors.get(name, "")
            self.query_one(f"#{name}-error", Label).update(message)
            self.query_one(f"#{name}", Input).set_class(bool(message), "-invalid")

    @on(Input.Changed)
    def _check_field(self, event: Input.Changed) -> None:
        if event.input.id in FIELDS:
            self._show_errors(self._form()[1], only=event.input.id)

    @on(Input.Submitted)
    @on(Button.Pressed, "#submit")
    def action_submit(self) -> None:
        request, errors = self._form()
        self._show_errors(errors)
        if request is not None:
            self.dismiss(request)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


@dataclass(frozen=True)
class ReleaseChoice:
    job_type: str | None  # None: all job types


class ReleaseModal(HandlesThreadResults, ModalScreen[ReleaseChoice | None]):
    """Choose the scope, see the dry-run count, confirm."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, job_type: str | None, count: Callable[[str | None], ReleaseResult]) -> None:
        super().__init__()
        self.job_type = job_type
        self._count = count
        self.scope: str | None = job_type
        self.found: ReleaseResult | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="dialog"):
            yield Label("Release timed-out claims", classes="title")
            with RadioSet(id="scope"):
                if self.job_type is not None:
                    yield RadioButton(Text(f"only job type {self.job_type!r}"), value=True, id="one")
                yield RadioButton("all job types", value=self.job_type is None, id="all")
            yield Static("Counting claims past their timeout…", id="verdict", markup=False)
            yield Static("Released claims go back to pending for another worker; a claim that has used all its "
                         "attempts becomes dead instead.", classes="hint")  # fmt: skip
            with Horizontal(classes="buttons"):
                yield Button("Release", variant="error", id="confirm", disabled=True)
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self._dry_run()

    @on(RadioSet.Changed)
    def _scope_changed(self, event: RadioSet.Changed) -> None:
        self.scope = self.job_type if event.pressed.id == "one" else None
        self._dry_run()

    def _dry_run(self) -> None:
        scope = self.scope
        self.found = None
        self.query_one("#confirm", Button).disabled = True
        self.query_one("#verdict", Static).update("Counting claims past their timeout…")
        in_thread(self, lambda: self._count(scope), lambda result: self._counted(scope, result), self._failed,
                  group="release-dry-run")  # fmt: skip

    def _counted(self, scope: str | None, result: ReleaseResult) -> None:
        if scope != self.scope:
            return  # the user changed the scope meanwhile; that count is on its way
        self.found = result
        verdict = describe_release(result, scope)
        self.query_one("#verdict", Static).update(verdict if result.timed_out == 0 else f"{verdict} Release them?")
        self.query_one("#verdict", Static).set_class(result.timed_out == 0, "nothing")
        self.query_one("#confirm", Button).disabled = result.timed_out == 0

    def _failed(self, error: QueuetopError) -> None:
        self.query_one("#verdict", Static).update(f"Could not count the timed-out claims: {error}")

    @on(Button.Pressed, "#confirm")
    def action_confirm(self) -> None:
        if self.found is not None and self.found.timed_out:
            self.dismiss(ReleaseChoice(self.scope))

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
