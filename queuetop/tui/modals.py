"""The two action dialogs. Each returns a typed result when dismissed (None when cancelled) and changes
nothing itself: the app runs the action on its own connection and reports the outcome.

- `EnqueueModal` → EnqueueRequest: every field is checked as it is typed, with the error under the field;
  submitting an invalid form keeps it open and enqueues nothing.
- `ReleaseModal` → ReleaseChoice: the scope (the selected type or all), the dry-run count for that scope
  before anything can be confirmed, and a plain "nothing to release" when there is nothing. A shape that has
  no release at all never gets this far: `nothing_to_release` says why.
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
from textual.content import Content
from textual.screen import ModalScreen
from textual.suggester import SuggestFromList
from textual.widgets import Button, Input, Label, RadioButton, RadioSet, Static

from queuetop.act.actions import EnqueueRequest, describe_release, parse_enqueue_form
from queuetop.act.queue import ReleaseResult
from queuetop.db import QueuetopError
from queuetop.layouts import NATIVE, Layout
from queuetop.tui.threads import HandlesThreadResults, in_thread

FIELDS = ("job_type", "count", "payload", "priority")
GUID_EXAMPLE = "AC351A46-49E4-4F0C-BF8C-F45255012150"



class Choice(RadioButton):
    """A radio button that reads without colour too: its dot is the same glyph on and off, told apart by colour
    alone, so under NO_COLOR it is `[x]` / `[ ]`."""

    @property
    def _button(self) -> Content:
        if not self.app.no_color:
            return super()._button
        return Content("[x]" if self.value else "[ ]")

class EnqueueModal(ModalScreen[EnqueueRequest | None]):
    """Job type (prefilled from the selection), count, payload, priority."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, job_type: str | None, known_types: Sequence[str] = (), layout: Layout = NATIVE) -> None:
        super().__init__()
        self.shape = layout  # `layout` is Textual's own
        form = layout.enqueue_takes
        # Only the fields this shape's insert takes: a shape without a job type column asks for none.
        self.fields = tuple(name for name, needs in (("job_type", "type"), ("count", None), ("payload", "info"),
                                                     ("priority", "priority")) if needs is None or needs in form)
        self.job_type = (job_type or "") if "job_type" in self.fields else ""
        self.known_types = list(known_types)

    def compose(self) -> ComposeResult:
        layout = self.shape
        guid = layout.type_of("type") == "guid"
        with Vertical(id="dialog", classes="dialog"):
            yield Label("Enqueue test jobs", classes="title")
            if "job_type" in self.fields:
                yield Label("Job type (a GUID)" if guid else "Job type")
                yield Input(self.job_type, id="job_type", compact=True,
                            placeholder=f"must be a GUID, e.g. {GUID_EXAMPLE}" if guid else "e.g. email",
                            suggester=SuggestFromList(self.known_types, case_sensitive=True))  # fmt: skip
                yield Label("", id="job_type-error", classes="error", markup=False)
            yield Label("Count")
            yield Input("1", id="count", placeholder="1 to 1,000,000", compact=True)
            yield Label("", id="count-error", classes="error", markup=False)
            if "payload" in self.fields:
                yield Label(f"Payload (stored in {layout.enqueue_goes_to('info')}; optional)")
                yield Input("", id="payload", placeholder='{"to": "ops@example.com"}', compact=True)
                yield Label("", id="payload-error", classes="error", markup=False)
            if "priority" in self.fields:
                # The layout's own starting value, or empty: the table's default priority
                start = layout.enqueue_defaults.get("priority")
                yield Label("Priority (0 is the most urgent, 255 the least)")
                yield Input("" if start is None else str(start), id="priority", compact=True,
                            placeholder="empty: the table's default" if start is None else "")  # fmt: skip
                yield Label("", id="priority-error", classes="error", markup=False)
            with Horizontal(classes="buttons"):
                yield Button("Enqueue", variant="primary", id="submit")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        first = "#job_type" if "job_type" in self.fields and not self.job_type else "#count"
        self.query_one(first, Input).focus()

    def _form(self) -> tuple[EnqueueRequest | None, dict[str, str]]:
        values = {name: self.query_one(f"#{name}", Input).value if name in self.fields else "" for name in FIELDS}
        return parse_enqueue_form(**values, layout=self.shape)

    def _show_errors(self, errors: dict[str, str], only: str | None = None) -> None:
        for name in self.fields if only is None else (only,):
            message = errors.get(name, "")
            self.query_one(f"#{name}-error", Label).update(message)
            self.query_one(f"#{name}", Input).set_class(bool(message), "-invalid")

    @on(Input.Changed)
    def _check_field(self, event: Input.Changed) -> None:
        if event.input.id in self.fields:
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


RECOUNT_S = 2.0  # a dialog over counted rows counts them again this often while it is open


@dataclass(frozen=True)
class ReleaseChoice:
    job_type: str | None  # None: all job types
    counted: int = 0  # what the dialog showed when confirmed: the outcome is told against it


@dataclass(frozen=True)
class DeadChoice:
    action: str  # "retry" | "delete"
    counted: int


class Recounting(HandlesThreadResults):
    """A dialog over a counted set of rows: counted when it opens, then again every RECOUNT_S while it is open
    (one count at a time, the verdict updated in place), so what it offers to change is what is there now; the
    last count goes with the choice, for the outcome to be told against it ("released 3 of the 8 counted")."""

    _counting = False

    def start_counting(self) -> None:
        self.count_now()
        self.set_interval(RECOUNT_S, self.count_now)  # type: ignore[attr-defined]

    def count_now(self) -> None:
        if self._counting:
            return
        self._counting = True
        in_thread(self, self.count_call(), self._count_done, self._count_failed, group="recount")  # type: ignore[arg-type]

    def _count_done(self, result: object) -> None:
        self._counting = False
        self.counted(result)

    def _count_failed(self, error: QueuetopError) -> None:
        self._counting = False
        self.failed(error)

    def count_call(self) -> Callable[[], object]:
        raise NotImplementedError

    def counted(self, result: object) -> None:
        raise NotImplementedError

    def failed(self, error: QueuetopError) -> None:
        raise NotImplementedError


class ReleaseModal(Recounting, ModalScreen[ReleaseChoice | None]):
    """Choose the scope, see the dry-run count (kept up to date while open), confirm."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, job_type: str | None, count: Callable[[str | None], ReleaseResult], what: str | None = None,
                 hint: str | None = None) -> None:  # fmt: skip
        super().__init__()
        self.job_type = job_type
        self._count = count
        self.what = what  # None: the native wording, "timed-out claims"
        self.hint = hint
        self.scope: str | None = job_type
        self.found: ReleaseResult | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="dialog"):
            yield Label(f"Release {self.what or 'timed-out claims'}", classes="title")
            with RadioSet(id="scope"):
                if self.job_type is not None:
                    yield Choice(Text(f"only job type {self.job_type!r}"), value=True, id="one")
                yield Choice("all job types", value=self.job_type is None, id="all")
            yield Static("Counting…", id="verdict", markup=False)
            yield Static(self.hint or "Released claims go back to pending for another worker; a claim that has used "
                         "all its attempts becomes dead instead.", classes="hint")  # fmt: skip
            with Horizontal(classes="buttons"):
                yield Button("Release", variant="error", id="confirm", disabled=True)
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.start_counting()

    @on(RadioSet.Changed)
    def _scope_changed(self, event: RadioSet.Changed) -> None:
        self.scope = self.job_type if event.pressed.id == "one" else None
        self.found = None  # the other scope's count is not this one's
        self.query_one("#confirm", Button).disabled = True
        self.query_one("#verdict", Static).update("Counting…")
        self._counting = False  # a count of the old scope still on its way is dropped when it comes
        self.count_now()

    def count_call(self) -> Callable[[], tuple[str | None, ReleaseResult]]:
        scope = self.scope
        return lambda: (scope, self._count(scope))

    def counted(self, result: object) -> None:
        scope, found = result  # type: ignore[misc]
        if scope != self.scope:
            return  # the user changed the scope meanwhile; that count is on its way
        self.found = found
        verdict = describe_release(found, scope, self.what)
        self.query_one("#verdict", Static).update(verdict if found.timed_out == 0 else f"{verdict} Release them?")
        self.query_one("#verdict", Static).set_class(found.timed_out == 0, "nothing")
        self.query_one("#confirm", Button).disabled = found.timed_out == 0

    def failed(self, error: QueuetopError) -> None:
        self.query_one("#verdict", Static).update(f"Could not count the {self.what or 'timed-out claims'}: {error}")

    @on(Button.Pressed, "#confirm")
    def action_confirm(self) -> None:
        if self.found is not None and self.found.timed_out:
            self.dismiss(ReleaseChoice(self.scope, self.found.timed_out))

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


class DeadModal(Recounting, ModalScreen[DeadChoice | None]):
    """Dead jobs of one type: their count first (kept up to date while open), then retry (back to pending,
    attempts reset) or delete."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, job_type: str | None, count: Callable[[], int], title: str | None = None) -> None:
        super().__init__()
        self.job_type = job_type
        self._count = count
        self.title_text = title  # the job view's one job ("Dead job 1047"), else the type's dead jobs
        self.found: int | None = None

    def compose(self) -> ComposeResult:
        scope = f" of type {self.job_type!r}" if self.job_type else ""
        with Vertical(id="dialog", classes="dialog"):
            yield Label(self.title_text or f"Dead jobs{scope}", classes="title", markup=False)
            yield Static("Counting…", id="verdict", markup=False)
            yield Static("Retry puts them back to pending as if never tried; delete removes them for good.",
                         classes="hint")  # fmt: skip
            with Horizontal(classes="buttons"):
                yield Button("Retry", variant="primary", id="retry", disabled=True)
                yield Button("Delete", variant="error", id="delete", disabled=True)
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.start_counting()

    def count_call(self) -> Callable[[], int]:
        return self._count

    def counted(self, result: object) -> None:
        found = int(result)  # type: ignore[call-overload]
        self.found = found
        verdict = f"{found:,} dead job(s)." if found else "No dead jobs: nothing to do."
        self.query_one("#verdict", Static).update(verdict)
        for button in ("#retry", "#delete"):
            self.query_one(button, Button).disabled = found == 0

    def failed(self, error: QueuetopError) -> None:
        self.query_one("#verdict", Static).update(f"Could not count the dead jobs: {error}")

    @on(Button.Pressed, "#retry")
    def action_retry(self) -> None:
        if self.found:
            self.dismiss(DeadChoice("retry", self.found))

    @on(Button.Pressed, "#delete")
    def action_delete(self) -> None:
        if self.found:
            self.dismiss(DeadChoice("delete", self.found))

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


class CountConfirmModal(Recounting, ModalScreen[int | None]):
    """One action on a counted set of rows: the dry-run count first (kept up to date while open), then confirm
    (the count shown, for the outcome to be told against) or cancel (None). The confirm button stays disabled
    until the count is in, and while it is 0."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, count: Callable[[], int], verdict: Callable[[int], str], hint: str,
                 confirm: str) -> None:  # fmt: skip
        super().__init__()
        self.title_text, self.hint, self.confirm_label = title, hint, confirm
        self._count, self._verdict = count, verdict
        self.found: int | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="dialog"):
            yield Label(self.title_text, classes="title", markup=False)
            yield Static("Counting…", id="verdict", markup=False)
            yield Static(self.hint, classes="hint", markup=False)
            with Horizontal(classes="buttons"):
                yield Button(self.confirm_label, variant="error", id="confirm", disabled=True)
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.start_counting()

    def count_call(self) -> Callable[[], int]:
        return self._count

    def counted(self, result: object) -> None:
        found = int(result)  # type: ignore[call-overload]
        self.found = found
        self.query_one("#verdict", Static).update(self._verdict(found))
        self.query_one("#verdict", Static).set_class(found == 0, "nothing")
        self.query_one("#confirm", Button).disabled = found == 0

    def failed(self, error: QueuetopError) -> None:
        self.query_one("#verdict", Static).update(f"Could not count them: {error}")

    @on(Button.Pressed, "#confirm")
    def action_confirm(self) -> None:
        if self.found:
            self.dismiss(self.found)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
