"""The headline: one line above the table saying what is wrong now, worst first, without any SLO — and that
nothing is when nothing is; words first (a monochrome terminal shows them), colour only repeats them. On built
snapshots, then on the dashboard over a real SQLite queue with a claim past its timeout."""

from __future__ import annotations

from datetime import datetime, timedelta

from textual.widgets import Static

from queuetop.act.queue import Queue
from queuetop.tui.headline import HeadlineWatch
from queuetop.tui.table import ALERT, WARN, QueueTable
from queuetop.watch.snapshot import TOTAL, Snapshot, TypeStats
from tests.conftest import Backend
from tests.tui.conftest import SIZE, AppFactory, text, wait_for

T0 = datetime(2026, 11, 26, 2, 0, 0)


def at(seconds: float, *rows: TypeStats) -> Snapshot:
    return Snapshot(taken_at=T0 + timedelta(seconds=seconds), target="q.db", dialect="sqlite", poll_ms=1.0,
                    window_s=60.0, types=rows, totals=TypeStats(TOTAL))  # fmt: skip


def backing(**changed: object) -> TypeStats:
    figures = {"depth": 30, "oldest_age_s": 159.0, "arrivals_10s_per_s": 0.8, "completions_10s_per_s": 0.5,
               "completions_60s_per_s": 0.5, **changed}  # fmt: skip
    return TypeStats("report", **figures)  # type: ignore[arg-type]


def test_the_worst_comes_first_and_a_queue_backing_up_says_for_how_long():
    watch = HeadlineWatch()
    email = TypeStats("email", timed_out=3, completions_10s_per_s=1.0)
    first = watch.observe(at(0, backing(), email))
    assert first.text == "▲ 3 claims timed out (email) · report backing up: in 0.8/s > out 0.5/s, oldest 2m39s"
    assert first.style == ALERT
    later = watch.observe(at(130, backing(), email))
    assert "report backing up: in 0.8/s > out 0.5/s for 2m10s, oldest 2m39s" in later.text
    assert watch.observe(at(140, backing(completions_10s_per_s=2.0))).text == "▲ report oldest 2m39s"  # caught up
    assert "for" not in watch.observe(at(150, backing())).text.split("oldest")[0]  # a new run: from now


def test_work_that_waited_a_minute_with_nothing_completed_is_stalled():
    watch = HeadlineWatch()
    fresh = TypeStats("email", depth=4, oldest_age_s=5.0, completions_10s_per_s=0.0, completions_60s_per_s=0.0)
    assert watch.observe(at(0, fresh)).text == "✓ all queues draining"  # it has waited 5 s: not stalled yet
    old = TypeStats("email", depth=4, oldest_age_s=75.0, completions_10s_per_s=0.0, completions_60s_per_s=0.0)
    said = watch.observe(at(70, old))
    assert said.text.startswith("▲ email stalled: 4 waiting, nothing completed for 1m10s") and said.style == ALERT


def test_nothing_wrong_says_so_in_words_and_an_old_job_alone_is_a_warning():
    watch = HeadlineWatch()
    assert watch.observe(at(0)).text == "✓ all queues empty"
    calm = TypeStats("email", depth=2, oldest_age_s=3.0, arrivals_10s_per_s=1.0, completions_10s_per_s=1.0)
    assert watch.observe(at(1, calm)).text == "✓ all queues draining"
    no_rates = TypeStats("email", depth=2, oldest_age_s=3.0)  # a shape that cannot know its completions
    assert watch.observe(at(2, no_rates)).text == "✓ nothing looks wrong"
    old = TypeStats("email", depth=2, oldest_age_s=90.0, in_no_state=2)
    said = watch.observe(at(3, old))
    assert (said.text, said.style) == ("▲ email oldest 1m30s · 2 rows in no state (email)", WARN)


def test_a_first_look_that_left_the_claims_and_the_dead_uncounted_claims_nothing_of_them():
    """A deep graphile-worker or django-q2 queue's first look counts no state but its depth (firstlook.py): with
    its claims, timed-out claims and dead jobs unknown, the headline cannot say nothing is wrong."""
    unknown = {"claimed": None, "timed_out": None, "dead": None}
    deep = TypeStats("email", depth=300_000, depth_is_estimate=True, **unknown)  # type: ignore[arg-type]
    first = Snapshot(taken_at=T0, target="q", dialect="postgresql", poll_ms=1.0, window_s=60.0, types=(deep,),
                     totals=TypeStats(TOTAL, depth=300_000, depth_is_estimate=True, **unknown))  # type: ignore[arg-type]
    said = HeadlineWatch().observe(first)
    assert (said.text, said.style) == ("≈ a first look: depths from a sample, the other states counted at the next "
                                       "poll", "")  # fmt: skip
    counted = Snapshot(taken_at=T0, target="q", dialect="postgresql", poll_ms=1.0, window_s=60.0,
                       types=(TypeStats("email", depth=300_000),), totals=TypeStats(TOTAL, depth=300_000))
    assert HeadlineWatch().observe(counted).text == "✓ nothing looks wrong"


def test_more_troubles_than_fit_are_counted_not_dropped():
    rows = [TypeStats(f"t{n}", timed_out=1) for n in range(3)] + [TypeStats(f"o{n}", depth=1, oldest_age_s=100.0 + n)
                                                                 for n in range(4)]  # fmt: skip
    said = HeadlineWatch().observe(at(0, *rows)).text
    assert said.startswith("▲ 3 claims timed out (t0, t1, …) · o3 oldest 1m43s · o2 oldest 1m42s")
    assert said.endswith(" · +2 more")


async def test_the_dashboard_heads_its_table_with_what_is_wrong(sqlite_backend: Backend, make_app: AppFactory):
    with sqlite_backend.open() as db:
        queue = Queue(db, sqlite_backend.layout)
        queue.enqueue_many("email", 2)
        queue.claim("gone", batch=1, lease=0.1)  # its worker never comes back: the claim times out
    app = make_app(sqlite_backend)
    async with app.run_test(size=SIZE) as pilot:
        headline = app.main.query_one("#headline", Static)
        await wait_for(pilot, lambda: "claim timed out" in text(headline), "the headline")
        assert text(headline).startswith("▲ 1 claim timed out (email)")


async def test_without_colour_a_row_in_trouble_is_marked_and_its_cells_reversed(
        sqlite_backend: Backend, make_app: AppFactory, monkeypatch) -> None:  # fmt: skip
    monkeypatch.setenv("NO_COLOR", "1")  # read by the app as it starts: every colour greyed
    with sqlite_backend.open() as db:
        queue = Queue(db, sqlite_backend.layout)
        queue.enqueue_many("email", 2)
        queue.enqueue_many("report", 1)
        queue.claim("gone", job_types=["email"], batch=1, lease=0.1)
    app = make_app(sqlite_backend)
    async with app.run_test(size=SIZE) as pilot:
        assert app.no_color
        table = app.main.query_one(QueueTable)

        def drawn() -> dict:
            """The table's lines by their first words (a glyph, then the type)."""
            lines = {}
            for y in range(1, table.size.height):
                strip = table.render_line(y)
                lines[" ".join("".join(segment.text for segment in strip).split()[:2])] = strip
            return lines

        # email: a claim timed out (red: ▲, its cell reversed); report: waiting, nothing completing (yellow: △)
        await wait_for(pilot, lambda: {"▲ email", "△ report"} <= set(drawn()), "both rows drawn, marked")
        lines = drawn()
        assert any(s.style and s.style.reverse and s.text.strip() == "1" for s in lines["▲ email"])
        assert any(s.style and s.style.underline and "report" in s.text for s in lines["△ report"])

        # a choice in a dialog: [x] and [ ], where colour alone told the chosen one
        table.select_type("email")
        await pilot.press("r")
        await wait_for(pilot, lambda: app.screen.query("#scope"), "the release dialog")
        buttons = {button.id: str(button.render()) for button in app.screen.query("#scope RadioButton")}
        assert buttons["one"].startswith("[x] only job type 'email'") and buttons["all"].startswith("[ ] all job")
