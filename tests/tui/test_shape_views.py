"""What the dashboard shows of each queue shape, on the fixed scenes (no database): the columns a shape can know,
the least important dropped first in a narrow terminal with a marker that says which, the status line, the
drill-down's figures, the enqueue form's fields and the release refusal."""

from __future__ import annotations

import pytest
from textual.widgets import Input

from queuetop.act.shape_queue import nothing_to_release
from queuetop.layouts import NATIVE, PRESET_NAMES, load_layout
from queuetop.tui.detail import summary_text
from queuetop.tui.main import MainScreen
from queuetop.tui.modals import EnqueueModal
from queuetop.tui.scenes import JOB_QUEUE, LIVE, SCENES, WORK_QUEUE, WORK_QUEUE_SHAPE, scene_app
from queuetop.tui.table import COLUMNS, DROPPED_FIRST, QueueTable, fitting_columns, ordered, shape_columns
from queuetop.watch.snapshot import TypeStats
from tests.tui.conftest import RecordingApp, status

NATIVE_KEYS = ["type", "depth", "oldest", "scheduled", "claimed", "timed_out", "dead", "arrivals", "completions",
               "wait", "processing", "drain"]  # fmt: skip


def keys(columns) -> list[str]:
    return [column.key for column in columns]


def provides(preset: str):
    return lambda figure: load_layout(preset).provides.get(figure, True)


@pytest.mark.parametrize(
    ("preset", "expected"),
    [
        ("native", NATIVE_KEYS),
        ("job_queue", ["type", "depth", "oldest", "scheduled", "claimed", "timed_out", "dead", "arrivals",
                       "completions", "wait", "processing", "drain"]),
        ("requests", ["type", "depth", "oldest", "claimed", "lost", "arrivals", "completions", "wait", "processing",
                      "drain"]),
        ("queuesample", ["type", "depth", "oldest", "arrivals", "completions", "wait", "drain"]),
        ("work_queue", ["type", "depth", "arrivals", "completions", "drain"]),
        ("processed", ["type", "depth", "arrivals", "completions", "drain"]),
    ],
)  # fmt: skip
def test_only_the_columns_a_shape_can_know(preset: str, expected: list[str]) -> None:
    assert keys(shape_columns(provides(preset))) == expected


def test_every_column_has_its_own_rank_and_type_and_depth_are_never_dropped() -> None:
    ranked = sorted((c for c in COLUMNS if c.rank), key=lambda c: -c.rank)
    assert keys(ranked) == list(DROPPED_FIRST)
    assert {c.key for c in COLUMNS if not c.rank} == {"type", "depth"}


def test_narrower_and_narrower_drops_in_rank_order() -> None:
    assert "in_no_state" not in keys(shape_columns(provides("job_queue")))  # only while some row is in no state
    columns = shape_columns(provides("job_queue"), in_no_state=3)
    dropped: list[str] = []
    for width in range(200, 20, -1):
        shown, hidden = fitting_columns(columns, width)
        assert sum(c.width + 2 for c in shown) + (6 if hidden else 0) <= width or keys(shown) == ["type", "depth"]
        for key in keys(hidden):
            if key not in dropped:
                dropped.append(key)
    assert dropped == [key for key in DROPPED_FIRST if key != "lost"]  # job_queue has no lost column


def test_the_sort_column_is_never_dropped() -> None:
    columns = shape_columns(provides("native"))
    _, hidden = fitting_columns(columns, 80)
    assert keys(hidden) == ["scheduled", "claimed", "dead", "wait", "processing", "drain"]
    shown, hidden = fitting_columns(columns, 80, keep="wait")
    assert "wait" in keys(shown) and "wait" not in keys(hidden) and "completions" in keys(hidden)


def test_unknown_figures_sort_last_never_crash() -> None:
    rows = [TypeStats("a", claimed=None, dead=None, timed_out=None), TypeStats("b", claimed=3, dead=1, timed_out=0)]
    for key in ("claimed", "dead", "timed_out", "scheduled", "lost", "wait", "drain"):
        assert [r.job_type for r in ordered(rows, key, descending=True)][-1] in ("a", "b")
    assert [r.job_type for r in ordered(rows, "claimed", descending=True)] == ["b", "a"]


def _scene(name: str, size: tuple[int, int] | None = None):
    scene = SCENES[name]
    app = scene.make()
    return scene, app, size or scene.size


def header_line(app) -> str:
    table = app.main.query_one(QueueTable)
    return "".join(segment.text for segment in table.render_line(0))


async def test_80x24_hides_six_columns_and_says_which_200x60_hides_none() -> None:
    scene, app, _ = _scene("main")
    async with app.run_test(size=(80, 24)) as pilot:
        await scene.prepare(pilot)
        table = app.main.query_one(QueueTable)
        assert table.width_needed <= 80
        assert keys(table.shown) == ["type", "depth", "oldest", "timed_out", "arrivals", "completions"]
        assert header_line(app).rstrip().endswith("out/s  +6 ›")
        assert table.hidden_note == ("+6 columns off the screen (→ and ← page through them, or widen the terminal): "
                                     "later, claimed, dead, wait p95, proc p95, drain")
        notes: list[str] = []
        app.notify = lambda message, **kwargs: notes.append(message)  # type: ignore[method-assign]
        await pilot.click(QueueTable, offset=(table.width_needed - 3, 0))  # on the marker
        assert notes == [table.hidden_note]

        # → pages through the hidden columns, the type and the sort column staying; every column is reachable
        seen: set[str] = set()
        for _ in range(4):
            seen |= set(keys(table.shown))
            assert keys(table.shown)[:2] == ["type", "depth"] and table.width_needed <= 80
            await pilot.press("right")
        assert seen == set(keys(table.columns)) and table.column_page > 0
        assert header_line(app).rstrip().endswith(f"‹+{len(table.hidden)}")  # the last page: more only to the left
        await pilot.press(*["left"] * 4)
        assert table.column_page == 0 and keys(table.shown)[-1] == "completions"

        await pilot.press(*["greater_than_sign"] * 3)  # depth → oldest → later → claimed, a hidden column
        assert app.main.sort_key == "claimed"
        assert "claimed▼" in header_line(app) and table.width_needed <= 80  # shown, something else gave way
    scene, app, _ = _scene("main")
    async with app.run_test(size=(200, 60)) as pilot:
        await scene.prepare(pilot)
        table = app.main.query_one(QueueTable)
        assert not table.hidden and keys(table.shown) == NATIVE_KEYS and "›" not in header_line(app)


async def test_job_queue_scene_shows_later_and_no_lost_and_local_time() -> None:
    scene, app, size = _scene("job-queue")
    async with app.run_test(size=size) as pilot:
        await scene.prepare(pilot)
        table = app.main.query_one(QueueTable)
        assert "scheduled" in keys(table.shown) and "lost" not in keys(table.columns) and not table.hidden
        assert table.totals is None  # one row, the whole queue: no totals line repeating it
        link, freshness = status(app).splitlines()[:2]
        assert "layout job_queue (server local time)" in link
        assert freshness.count("found dbo.Job_Queue: layout job_queue") == 1
        assert JOB_QUEUE.snapshot is not None and JOB_QUEUE.snapshot.totals.lost is None


async def test_work_queue_scene_shows_depth_and_rates_only_and_refuses_release_with_the_reason() -> None:
    scene, app, size = _scene("work-queue")
    async with app.run_test(size=size) as pilot:
        await scene.prepare(pilot)
        table = app.main.query_one(QueueTable)
        assert keys(table.shown) == ["type", "depth", "arrivals", "completions", "drain"]
        assert "layout work_queue" in status(app) and "local time" not in status(app)
        titles = {command.title for command in app.get_system_commands(app.screen)}
        assert {t for t in titles if t.startswith("Sort by")} == {"Sort by type", "Sort by depth", "Sort by in/s",
                                                                  "Sort by out/s", "Sort by drain"}  # fmt: skip
        notes: list[str] = []
        app.notify = lambda message, **kwargs: notes.append(message)  # type: ignore[method-assign]
        assert "release" not in {active.binding.action for active in app.screen.active_bindings.values()
                                 if active.binding.show}  # not offered, as enqueue is not where undeclared
        await pilot.press("r")
        assert notes == ["layout work_queue has nothing to release: the processed flag is final (no claims time out); "
                         "it declares no [release] section."]
        assert isinstance(app.screen, MainScreen)


def test_the_native_status_line_names_no_layout() -> None:
    app = scene_app(LIVE)
    app.session.latest = LIVE.snapshot
    assert app.status_view().layout == "native" and not app.status_view().local_clock


@pytest.mark.parametrize(
    ("preset", "reason"),
    [
        ("queuesample", "retrieval is final (no claims time out)"),
        ("work_queue", "the processed flag is final (no claims time out)"),
        ("processed", "the processed flag is final (no claims time out)"),
    ],
)
def test_why_a_shape_has_nothing_to_release(preset: str, reason: str) -> None:
    layout = load_layout(preset)
    assert layout.release is None
    assert nothing_to_release(layout) == reason


def test_the_drill_down_leaves_out_what_the_shape_cannot_know() -> None:
    snapshot = WORK_QUEUE.snapshot
    assert snapshot is not None
    text = summary_text("work_queue", snapshot.types[0], snapshot.provides).plain
    assert text.startswith("work_queue  depth 12,400 · drain never\narrivals 35/s")
    for absent in ("oldest", "claimed", "timed out", "dead", "lost", "later", "wait", "processing"):
        assert absent not in text
    none_at_all = TypeStats("x", claimed=None, timed_out=None, dead=None)  # no figures said: "—", no crash
    assert "claimed — · timed out — · dead — · lost —" in summary_text("x", none_at_all).plain
    assert WORK_QUEUE_SHAPE.layout.name == "work_queue"


@pytest.mark.parametrize("preset", [name for name in PRESET_NAMES if load_layout(name).refusal("enqueue") is None])
async def test_the_enqueue_form_asks_only_what_the_shapes_insert_takes(preset: str) -> None:
    layout = load_layout(preset)
    app = scene_app(LIVE, layout=layout)
    async with app.run_test(size=(120, 40)) as pilot:
        await SCENES["main"].prepare(pilot)
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, EnqueueModal)
        inputs = {box.id: box for box in app.screen.query(Input)}
        form = layout.enqueue_takes
        expected = {"count"} | {name for name, needs in (("job_type", "type"), ("payload", "info"),
                                                          ("priority", "priority")) if needs in form}  # fmt: skip
        assert set(inputs) == expected
        if "job_type" in inputs:
            guid = layout.type_of("type") == "guid"
            assert ("must be a GUID" in inputs["job_type"].placeholder) == guid
        await pilot.press("escape")


async def test_an_actions_object_without_a_layout_is_the_native_shape() -> None:
    app = RecordingApp(scene_app(LIVE).session.source, object(), poll_on_start=False)  # type: ignore[arg-type]
    assert app._layout() is NATIVE
