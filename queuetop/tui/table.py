"""The main table: one row per job type plus the totals, sortable, filterable, with trouble in colour.

Columns are data (`COLUMNS`: label, width, how to format, how to sort, when to colour, which figures of the
snapshot it needs and how much it matters), shared by the table and the command palette. The table shows only
the columns the queue's shape can know (`Snapshot.provides`), and in a narrow terminal it drops the least
important first (`Column.rank`; the sort column always stays), saying so in the header (`+3 ›`, a click names
them) rather than cutting them off silently; → and ← page through the hidden ones (`column_pages`), as htop's
arrow keys scroll its columns. The widget draws with Textual's Line API: each refresh formats only
the lines on screen.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from queuetop.core import format as fmt
from queuetop.watch.snapshot import TOTAL, TypeStats

OLD_WARN_S = 60.0  # oldest pending job older than this: yellow
OLD_ALERT_S = 600.0  # … and this: red
TOTAL_LABEL = "all types"

WARN, ALERT, DIM, EST = "yellow", "bold red", "dim", "italic"
BREACH = "bold white on red"  # a cell whose figure breaks an SLO (queuetop.watch.slo)


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    width: int
    cell: Callable[[TypeStats], str]
    sort_value: Callable[[TypeStats], float | str]
    style: Callable[[TypeStats], str] = lambda row: ""
    needs: tuple[str, ...] = ()  # the Snapshot figures it shows: not shown when the shape cannot know one
    rank: int = 0  # 0: always shown; higher: dropped sooner when the terminal is narrow (see DROPPED_FIRST)

    @property
    def numeric(self) -> bool:
        return self.key != "type"


def _none_last(value: float | None) -> float:
    return float("-inf") if value is None else value


def outpaced(row: TypeStats) -> bool:
    """Arrivals outpace completions with work waiting: the queue is growing."""
    arrivals, completions = row.arrivals_10s_per_s, row.completions_10s_per_s
    return row.depth > 0 and arrivals is not None and completions is not None and arrivals > completions * 1.05


def trouble(row: TypeStats) -> str:
    """The worst problem of a row as a style: red for stuck or lost work, yellow for a queue falling behind.
    A figure the shape cannot know (None) is no trouble."""
    if row.timed_out or row.lost or (row.oldest_age_s or 0) > OLD_ALERT_S:
        return ALERT
    if (row.oldest_age_s or 0) > OLD_WARN_S or row.drain == "never" or outpaced(row) or row.in_no_state:
        return WARN
    return ""


def age_style(row: TypeStats) -> str:
    """How old the oldest pending job looks: red past OLD_ALERT_S, yellow past OLD_WARN_S, else plain."""
    age = row.oldest_age_s or 0
    return ALERT if age > OLD_ALERT_S else WARN if age > OLD_WARN_S else ""


# Which columns give way first in a narrow terminal: the most expendable first. Whether work is stuck or lost,
# how deep the queue is and how old its oldest job is stay longest; `later` (jobs not due yet) goes first.
DROPPED_FIRST = ("scheduled", "processing", "dead", "wait", "drain", "claimed", "completions", "arrivals", "lost",
                 "in_no_state", "timed_out", "oldest")  # fmt: skip


def _sampled(row: TypeStats, seconds: float | None) -> str:
    """A percentile from a sample of the completions is marked as estimated depths are: ≈."""
    text = fmt.duration(seconds)
    return "≈" + text if row.latency_is_sample and seconds is not None else text


def _rank(key: str) -> int:
    return len(DROPPED_FIRST) - DROPPED_FIRST.index(key)


COLUMNS: tuple[Column, ...] = (
    Column("type", "type", 18, lambda r: TOTAL_LABEL if r.job_type == TOTAL else r.job_type,
           lambda r: r.job_type.lower(), trouble),
    Column("depth", "depth", 9, lambda r: fmt.count(r.depth, r.depth_is_estimate), lambda r: r.depth,
           lambda r: EST if r.depth_is_estimate else "", ("depth",)),
    Column("oldest", "oldest", 7, lambda r: fmt.duration(r.oldest_age_s), lambda r: _none_last(r.oldest_age_s),
           age_style, ("oldest_age_s",), _rank("oldest")),
    Column("scheduled", "later", 7, lambda r: fmt.count(r.scheduled), lambda r: _none_last(r.scheduled),
           needs=("scheduled",), rank=_rank("scheduled")),
    Column("claimed", "claimed", 8, lambda r: fmt.count(r.claimed), lambda r: _none_last(r.claimed),
           needs=("claimed",), rank=_rank("claimed")),
    Column("timed_out", "timed-out", 10, lambda r: fmt.count(r.timed_out), lambda r: _none_last(r.timed_out),
           lambda r: ALERT if r.timed_out else "", ("timed_out",), _rank("timed_out")),
    Column("dead", "dead", 6, lambda r: fmt.count(r.dead), lambda r: _none_last(r.dead),
           lambda r: WARN if r.dead else "", ("dead",), _rank("dead")),
    Column("lost", "lost", 6, lambda r: fmt.count(r.lost), lambda r: _none_last(r.lost),
           lambda r: ALERT if r.lost else "", ("lost",), _rank("lost")),
    Column("in_no_state", "no state", 8, lambda r: fmt.count(r.in_no_state), lambda r: _none_last(r.in_no_state),
           lambda r: WARN if r.in_no_state else "", ("in_no_state",), _rank("in_no_state")),
    Column("arrivals", "in/s", 6, lambda r: fmt.rate(r.arrivals_10s_per_s),
           lambda r: _none_last(r.arrivals_10s_per_s), lambda r: WARN if outpaced(r) else "", ("arrivals",),
           _rank("arrivals")),
    Column("completions", "out/s", 6, lambda r: fmt.rate(r.completions_10s_per_s),
           lambda r: _none_last(r.completions_10s_per_s), needs=("completions",), rank=_rank("completions")),
    Column("wait", "wait p95", 9, lambda r: _sampled(r, r.wait_p95_s), lambda r: _none_last(r.wait_p95_s),
           lambda r: EST if r.latency_is_sample else "", ("wait",), _rank("wait")),
    Column("processing", "proc p95", 9, lambda r: _sampled(r, r.processing_p95_s),
           lambda r: _none_last(r.processing_p95_s), lambda r: EST if r.latency_is_sample else "", ("processing",),
           _rank("processing")),
    Column("drain", "drain", 7, lambda r: fmt.drain(r.drain, r.drain_eta_s), lambda r: _drain_order(r),
           lambda r: WARN if r.drain == "never" else "", ("depth", "arrivals", "completions"), _rank("drain")),
)  # fmt: skip
HIDDEN_MARK_WIDTH = 6  # " +9 ›": the header cell that says columns are hidden
COLUMN_KEYS = tuple(column.key for column in COLUMNS)


def _drain_order(row: TypeStats) -> float:
    """Sorting by drain puts "never" after the longest ETA, and empty queues first."""
    return {"empty": -1.0, "never": float("inf"), "unknown": float("-inf")}.get(row.drain, row.drain_eta_s or 0.0)


Cell = tuple[str, str]  # (text, style)


def cells(row: TypeStats, columns: Sequence[Column] = COLUMNS) -> tuple[Cell, ...]:
    """The row's cells as (text, style); the totals row in bold."""
    bold = " bold" if row.job_type == TOTAL else ""
    return tuple((column.cell(row), (column.style(row) + bold).strip()) for column in columns)


# Without colour (NO_COLOR: Textual greys every colour), trouble shows by weight and a glyph instead: red cells
# reversed, yellow ones underlined, and the type cell of a row in trouble led by ▲ (red) or △ (yellow).
_WITHOUT_COLOUR = {ALERT: "bold reverse", WARN: "underline", BREACH: "bold reverse"}
_GLYPH = {ALERT: "▲ ", WARN: "△ "}


def without_colour(row: TypeStats, columns: Sequence[Column], row_cells: Sequence[Cell]) -> tuple[Cell, ...]:
    """A row's cells as a terminal without colour must show them (see `_WITHOUT_COLOUR`)."""
    out = []
    for column, (text, style) in zip(columns, row_cells, strict=True):
        if column.key == "type":
            text = _GLYPH.get(trouble(row), "") + text
        out.append((text, _WITHOUT_COLOUR.get(style, style)))
    return tuple(out)


def shape_columns(provides: Callable[[str], bool], in_no_state: int | None = None) -> tuple[Column, ...]:
    """The columns a shape can fill: those whose every figure it provides (`Snapshot.provides`); "no state" only
    while some row is in none of the layout's states (`in_no_state`: the totals'), which is rare and worth a look."""
    return tuple(column for column in COLUMNS if all(provides(figure) for figure in column.needs)
                 and (column.key != "in_no_state" or in_no_state))


def fitting_columns(columns: Sequence[Column], width: int, keep: str | None = None
                    ) -> tuple[tuple[Column, ...], tuple[Column, ...]]:  # fmt: skip
    """(shown, hidden): the least important columns (highest rank) dropped first until the rest fit in `width`
    cells, with room left for the marker that says how many are hidden. Rank 0 and the column `keep` (the sort
    column: the order of the rows must stay visible) are never dropped."""
    shown = list(columns)
    hidden: list[Column] = []

    def needed() -> int:
        return sum(c.width + 2 for c in shown) + (HIDDEN_MARK_WIDTH if hidden else 0)

    while needed() > width:
        expendable = [c for c in shown if c.rank and c.key != keep]
        if not expendable:
            break
        least = max(expendable, key=lambda c: c.rank)
        shown.remove(least)
        hidden.append(least)
    return tuple(shown), tuple(c for c in columns if c in hidden)


def column_pages(columns: Sequence[Column], width: int, keep: str | None = None) -> list[tuple[Column, ...]]:
    """The columns page by page in a width too narrow for all: the first page is `fitting_columns`' (the most
    important), each next one the columns that always stay (rank 0, `keep`) and as many of those not shown yet
    as fit, in their order, until every column was on a page. One page when everything fits."""
    shown, hidden = fitting_columns(columns, width, keep)
    pages = [shown]
    while hidden:
        candidates = tuple(c for c in columns if c in hidden or not c.rank or c.key == keep)
        shown, rest = fitting_columns(candidates, width, keep)
        if len(rest) == len(hidden):
            break  # not even one more fits beside the columns that stay
        pages.append(shown)
        hidden = rest
    return pages


def page_marker(page: int, pages: int, hidden: int) -> str:
    """The header's marker, at most HIDDEN_MARK_WIDTH cells: how many columns are off this page, with an arrow
    toward each side that has more (→ for the next page, ← for the one before)."""
    before, after = ("‹" if page > 0 else " "), (" ›" if page < pages - 1 else "")
    return f"{before}+{hidden}{after}".ljust(HIDDEN_MARK_WIDTH)


def widen_types(shown: Sequence[Column], hidden: Sequence[Column], width: int, longest: int
                ) -> tuple[Column, ...]:  # fmt: skip
    """The shown columns with the type column grown into all the room left over, up to the longest type name
    (in cells): a long name is cut (in the middle, `fmt.fit`) only when the terminal has no more room to give."""
    spare = width - sum(c.width + 2 for c in shown) - (HIDDEN_MARK_WIDTH if hidden else 0)
    return tuple(replace(c, width=c.width + max(0, min(spare, longest - c.width)))
                 if c.key == "type" else c for c in shown)  # fmt: skip


def wide_enough(columns: Sequence[Column], widest: Sequence[TypeStats]) -> tuple[Column, ...]:
    """The columns, each figure's grown to hold its value in `widest` (the totals line, whose counts are the sums
    and whose age the oldest, so no row's count or age is wider; a shape's one row where there are no totals): a
    figure is never cut (a deep queue's "≈1,000,000" is ten cells, its column nine)."""
    return tuple(replace(c, width=max(c.width, *(fmt.cells(c.cell(row)) for row in widest)))
                 if c.numeric and widest else c for c in columns)  # fmt: skip


def hidden_note(hidden: Sequence[Column]) -> str:
    """What the `+N ›` marker stands for, in words."""
    if not hidden:
        return ""
    n = len(hidden)
    return (f"+{n} column{'s' if n > 1 else ''} off the screen (→ and ← page through them, or widen the terminal): "
            f"{', '.join(c.label for c in hidden)}")


def ordered(rows: Sequence[TypeStats], sort_key: str, descending: bool, needle: str = "") -> list[TypeStats]:
    """Filter by a case-insensitive substring of the type, then sort; ties by type name."""
    column = COLUMNS[COLUMN_KEYS.index(sort_key)]
    needle = needle.strip().lower()
    kept = [row for row in rows if needle in row.job_type.lower()] if needle else list(rows)
    kept.sort(key=lambda r: r.job_type)
    kept.sort(key=column.sort_value, reverse=descending)
    return kept


class QueueTable(ScrollView, can_focus=True):
    """Job types and their figures: a header, one line per type, the totals pinned at the bottom.

    Line API: a refresh formats only the lines on screen, so 200 types cost what 20 do. The cursor follows its
    job type through re-sorting, filtering and types coming and going.
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {"queue-table--header", "queue-table--cursor", "queue-table--totals"}
    DEFAULT_CSS = """
    QueueTable { height: auto; max-height: 60%; background: $surface; }
    QueueTable > .queue-table--header { background: $panel; text-style: bold; }
    QueueTable > .queue-table--cursor { background: $block-cursor-blurred-background; }
    QueueTable:focus > .queue-table--cursor { background: $block-cursor-background; color: $block-cursor-foreground; }
    QueueTable > .queue-table--totals { background: $panel; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "move(-1)", "Up", show=False),
        Binding("down", "move(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "move_to(0)", "First", show=False),
        Binding("end", "move_to(-1)", "Last", show=False),
        Binding("enter", "select", "Open", key_display="⏎", tooltip="drill down into the selected job type"),
        Binding("right", "page_columns(1)", "Columns", show=False,
                tooltip="the next page of columns, where the terminal is too narrow for all (the header's +N ›)"),
        Binding("left", "page_columns(-1)", "Columns", show=False, tooltip="the page of columns before"),
    ]

    class Selected(Message):
        """Enter (or a click on the selected row): open this job type."""

        def __init__(self, job_type: str) -> None:
            super().__init__()
            self.job_type = job_type

    class HeaderClicked(Message):
        def __init__(self, column_key: str) -> None:
            super().__init__()
            self.column_key = column_key

    cursor: reactive[int] = reactive(0, always_update=True, repaint=False)

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.rows: list[TypeStats] = []
        self.totals: TypeStats | None = None
        self.other: TypeStats | None = None  # past --max-types: the types folded together, above the totals
        self._index: dict[str, int] = {}
        self.columns: tuple[Column, ...] = COLUMNS  # what the shape can fill
        self.shown: tuple[Column, ...] = self.columns  # what fits in the width
        self.hidden: tuple[Column, ...] = ()
        self.column_page = 0  # which page of columns (→ ←) when the terminal is too narrow for all
        self._pages = 1
        self._sort = ("depth", True)
        self._headers: tuple[str, ...] = tuple(column.label for column in self.shown)
        self.width_needed = sum(column.width + 2 for column in self.shown)
        self._styles: dict[tuple[str, bool, str], Style] = {}
        self.breached: frozenset[tuple[str, str]] = frozenset()  # (job type, column key) breaking an SLO

    def on_focus(self) -> None:
        self.refresh()  # the cursor line changes colour with the focus

    def on_blur(self) -> None:
        self.refresh()

    def notify_style_update(self) -> None:
        self._styles.clear()  # the theme or the CSS changed
        super().notify_style_update()

    # -- data ----------------------------------------------------------------------------------------------
    @property
    def shown_types(self) -> list[str]:
        return [row.job_type for row in self.rows]

    @property
    def selected_type(self) -> str | None:
        return self.rows[self.cursor].job_type if 0 <= self.cursor < len(self.rows) else None

    def show(self, rows: Sequence[TypeStats], totals: TypeStats, sort_key: str, descending: bool,
             columns: Sequence[Column] | None = None, breached: frozenset[tuple[str, str]] = frozenset(),
             other: TypeStats | None = None, folded: int = 0) -> None:  # fmt: skip
        """Display rows in the given order (already filtered and sorted), the totals pinned below, in the
        columns the shape can fill (`shape_columns`). A totals line that would only repeat the one row (a shape
        without job types has one row, named after its table) is left out. `breached` cells are coloured.
        `other`: the `folded` types past --max-types summed, pinned above the totals ("+9,000 more types")."""
        self.breached = breached
        keep = self.selected_type
        self.rows = list(rows)
        self.totals = None if repeats(self.rows, totals) else totals
        self.other = replace(other, job_type=f"+{folded:,} more types") if other is not None else None
        self._index = {row.job_type: i for i, row in enumerate(self.rows)}
        if columns is not None:
            self.columns = tuple(columns)
        self._sort = (sort_key, descending)
        self._fit()
        self.virtual_size = Size(self.width_needed, self._lines)
        at = self._index.get(keep, self.cursor) if keep is not None else self.cursor
        self.set_reactive(QueueTable.cursor, min(max(at, 0), max(len(self.rows) - 1, 0)))
        if keep is not None and keep in self._index:
            self._keep_cursor_visible()
        self.refresh()

    @property
    def _lines(self) -> int:
        return 1 + len(self.rows) + len(self._footer)

    @property
    def _footer(self) -> list[TypeStats]:
        """The lines pinned at the bottom: the folded types', then the totals."""
        return [line for line in (self.other, self.totals) if line is not None]

    def _fit(self) -> None:
        sort_key, descending = self._sort
        width = self.size.width or 200
        columns = wide_enough(self.columns, self._footer if self.totals is not None else self.rows)
        pages = column_pages(columns, width, keep=sort_key)
        self._pages, self.column_page = len(pages), min(self.column_page, len(pages) - 1)
        shown = pages[self.column_page]
        self.hidden = tuple(column for column in columns if column not in shown)
        longest = max((fmt.cells(row.job_type) for row in self.rows), default=0)
        self.shown = widen_types(shown, self.hidden, width, longest)
        headers = [column.label + (("▼" if descending else "▲") if column.key == sort_key else "")
                   for column in self.shown]  # fmt: skip
        self._headers = tuple(headers)
        self.width_needed = sum(column.width + 2 for column in self.shown) + (HIDDEN_MARK_WIDTH if self.hidden else 0)

    @property
    def hidden_note(self) -> str:
        """What the header's `+N ›` stands for ("" when every column fits)."""
        return hidden_note(self.hidden)

    def on_resize(self) -> None:
        self._fit()
        self.virtual_size = Size(self.width_needed, self._lines)
        self.refresh()

    def select_type(self, job_type: str) -> None:
        if job_type in self._index:
            self.cursor = self._index[job_type]

    # -- moving ----------------------------------------------------------------------------------------------
    @property
    def _body_height(self) -> int:
        below = len(self._footer) + (1 if self.show_horizontal_scrollbar else 0)
        return max(1, self.size.height - 1 - below)

    def validate_cursor(self, value: int) -> int:
        return min(max(value, 0), max(len(self.rows) - 1, 0))

    def watch_cursor(self) -> None:
        self._keep_cursor_visible()
        self.refresh()

    def _keep_cursor_visible(self) -> None:
        top, body = round(self.scroll_y), self._body_height
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + body:
            self.scroll_to(y=self.cursor - body + 1, animate=False, immediate=True)

    def action_move(self, step: int) -> None:
        self.cursor += step

    def action_page(self, step: int) -> None:
        self.cursor += step * self._body_height

    def action_move_to(self, index: int) -> None:
        self.cursor = index if index >= 0 else len(self.rows) - 1

    def action_page_columns(self, step: int) -> None:
        page = min(max(self.column_page + step, 0), self._pages - 1)
        if page != self.column_page:
            self.column_page = page
            self.on_resize()

    def action_select(self) -> None:
        if self.selected_type is not None:
            self.post_message(self.Selected(self.selected_type))

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        if offset.y == 0:
            x, left = offset.x + round(self.scroll_x), 0
            for column in self.shown:
                left += column.width + 2
                if x < left:
                    self.post_message(self.HeaderClicked(column.key))
                    return
            if self.hidden and x < left + HIDDEN_MARK_WIDTH:  # the `+N ›` marker: which ones, in words
                self.notify(self.hidden_note, title="Columns hidden for width", timeout=8, markup=False)
            return
        index = round(self.scroll_y) + offset.y - 1
        if 0 <= index < len(self.rows) and offset.y <= self._body_height:
            if index == self.cursor:
                self.action_select()
            else:
                self.cursor = index

    # -- drawing ---------------------------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        width = self.size.width
        last = self.size.height - 1 - (1 if self.show_horizontal_scrollbar else 0)
        if y == 0:
            header = self._component("queue-table--header")
            strip = self._strip([(label, "") for label in self._headers], header)
            if self.hidden:  # say that columns were dropped for width, never cut them off silently
                strip = Strip([*strip, Segment(page_marker(self.column_page, self._pages, len(self.hidden)), header)])
        elif last - len(footer := self._footer) < y <= last:
            strip = self._strip(cells(footer[y - last - 1], self.shown), self._component("queue-table--totals"))
        else:
            index = round(self.scroll_y) + y - 1
            if not 0 <= index < len(self.rows) or y > last:
                return Strip.blank(width, self._component("base"))
            on_cursor = index == self.cursor
            base = self._component("queue-table--cursor" if on_cursor else "base")
            row = self.rows[index]
            row_cells = cells(row, self.shown)
            if self.breached:
                row_cells = tuple((text, BREACH) if (row.job_type, column.key) in self.breached else (text, style)
                                  for column, (text, style) in zip(self.shown, row_cells, strict=True))  # fmt: skip
            if self.app.no_color:
                row_cells = without_colour(row, self.shown, row_cells)
            strip = self._strip(row_cells, base, keep_colors=not on_cursor)
        x = round(self.scroll_x)
        return strip.crop(x, x + width).extend_cell_length(width, strip_style(strip))

    def _component(self, name: str) -> Style:
        # Computing a style from CSS is dear and a frame asks for it on every line: keep it while the focus
        # and theme stay the same.
        key = (name, self.has_focus, self.app.theme)
        style = self._styles.get(key)
        if style is None:
            base = self.rich_style if name == "base" else self.rich_style + self.get_component_rich_style(name)
            style = self._styles[key] = base
        return style

    def _strip(self, row: Sequence[Cell], base: Style, keep_colors: bool = True) -> Strip:
        segments = []
        for column, (text, style) in zip(self.shown, row, strict=True):
            fitted = fmt.pad(fmt.fit(text, column.width), column.width, right=column.numeric)
            if style:  # on the cursor line trouble keeps its weight but not its colour, which would not read
                extra = parse_style(style)
                # A breached SLO's red cell, white on red, reads on the cursor line too and must not vanish there.
                base_and_extra = base + (extra if keep_colors or style == BREACH else extra.without_color)
            else:
                base_and_extra = base
            segments.append(Segment(f" {fitted} ", base_and_extra))
        return Strip(segments)


def repeats(rows: Sequence[TypeStats], totals: TypeStats) -> bool:
    """Whether the totals would only repeat the one row shown: every figure the same."""
    return len(rows) == 1 and replace(rows[0], job_type=totals.job_type) == totals


def strip_style(strip: Strip) -> Style:
    """The background to extend a line with: its first segment's."""
    for segment in strip:
        return segment.style or Style()
    return Style()


@lru_cache(maxsize=64)
def parse_style(style: str) -> Style:
    return Style.parse(style)
