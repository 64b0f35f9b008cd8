"""The type column of the dashboard: it takes the room the terminal has to spare, cuts a long name in the middle
(both ends stay, so names of one family stay apart), and measures cells, so CJK and emoji rows stay aligned."""

from __future__ import annotations

from dataclasses import replace

import pytest
from rich.cells import cell_len, split_graphemes

from queuetop.tui.detail import DetailScreen
from queuetop.tui.scenes import PROFILES, _settle, scene_app, snapshot_at
from queuetop.tui.table import QueueTable
from queuetop.watch.monitor import CONNECTED, PollOutcome

STAGES = tuple(f"acme.pipeline.nightly.warehouse-export-stage-{n}" for n in (10, 20))
WIDE = ("請求書の送信ジョブ", "📦 parcel.ship", "👩‍💻 dev.build", "résumé.parse")


def outcome(names: tuple[str, ...]) -> PollOutcome:
    profiles = tuple(replace(PROFILES[i % len(PROFILES)], name=name) for i, name in enumerate(names))
    return PollOutcome(CONNECTED, snapshot_at(0.0, profiles))


def line_text(table: QueueTable, y: int) -> str:
    return "".join(segment.text for segment in table.render_line(y))


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_one_family_of_long_names_stays_distinct(size: tuple[int, int]) -> None:
    polled = outcome(STAGES)
    app = scene_app(polled)
    async with app.run_test(size=size) as pilot:
        app.apply(polled)
        await _settle(pilot)
        table = app.main.query_one(QueueTable)
        labels = [line_text(table, y + 1)[1:table.shown[0].width + 1].rstrip() for y in range(len(table.rows))]
        assert labels[0] != labels[1]
        for label, name in zip(labels, [row.job_type for row in table.rows], strict=True):
            head, tail = label.split("…")
            assert name.startswith(head) and name.endswith(tail) and tail.endswith(("stage-10", "stage-20"))
        # All the room the other columns leave goes to the type column.
        assert table.width_needed == size[0] or table.shown[0].width == max(len(n) for n in STAGES)


async def test_a_wide_terminal_shows_long_names_whole_and_the_drill_down_titles_the_full_name() -> None:
    polled = outcome(STAGES)
    app = scene_app(polled)
    async with app.run_test(size=(200, 40)) as pilot:
        app.apply(polled)
        await _settle(pilot)
        table = app.main.query_one(QueueTable)
        assert {line_text(table, y + 1)[1:].split("  ")[0] for y in range(2)} == set(STAGES)
    app = scene_app(polled)
    async with app.run_test(size=(80, 24)) as pilot:
        app.apply(polled)
        await _settle(pilot)
        await pilot.press("enter")  # the cut name is one key from whole
        await _settle(pilot)
        assert isinstance(app.screen, DetailScreen)
        assert app.screen.job_type in STAGES and str(app.screen.query_one("#summary").visual).startswith(
            app.screen.job_type)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_cjk_and_emoji_rows_keep_every_column_in_its_cells(size: tuple[int, int]) -> None:
    polled = outcome(WIDE)
    app = scene_app(polled)
    async with app.run_test(size=size) as pilot:
        app.apply(polled)
        await _settle(pilot)
        table = app.main.query_one(QueueTable)
        assert {row.job_type for row in table.rows} == set(WIDE)
        for y, row in enumerate(table.rows, start=1):
            line = line_text(table, y)
            assert cell_len(line) == size[0]
            left = 0
            for column in table.shown:  # each figure sits in its own column's cells, wherever wide text is
                cell = cells_between(line, left + 1, left + 1 + column.width)
                assert cell.strip() == column.cell(row).strip(), (column.key, line)
                assert cell_len(cell) == column.width
                left += column.width + 2


def cells_between(text: str, start: int, end: int) -> str:
    """The characters of `text` that cover terminal cells [start, end)."""
    out, used = [], 0
    for first, last, size in split_graphemes(text)[0]:  # an emoji sequence is one cluster of two cells
        if start <= used < end:
            out.append(text[first:last])
        used += size
    return "".join(out)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_a_figure_is_never_cut_a_deep_queues_depth_and_a_big_dead_count_shown_whole(size: tuple[int, int]
                                                                                           ) -> None:  # fmt: skip
    """A deep queue is what the dashboard is opened for: its "≈1,234,567" is ten cells in a column made for
    nine, which showed "≈1,2…,567"; each figure's column grows to the totals' text (no row's count is wider)."""
    deep = (replace(PROFILES[3], depth=lambda t: 1_234_567, dead=2_000_000), PROFILES[0])
    polled = PollOutcome(CONNECTED, snapshot_at(0.0, deep))
    app = scene_app(polled)
    async with app.run_test(size=size) as pilot:
        app.apply(polled)
        await _settle(pilot)
        table = app.main.query_one(QueueTable)
        screen = "\n".join(line_text(table, y) for y in range(len(table.rows) + 2))
    assert "≈1,234,579" in screen and "≈1,234,567" in screen and "…" not in screen, screen  # totals and row
    if size == (120, 40):  # the dead column is among those an 80-column terminal leaves out first
        assert screen.count(" 2,000,000 ") == 2, screen  # the row's and the totals
