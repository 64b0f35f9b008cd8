"""The charts: an axis over the time the data covers (a fresh start is not crammed into the right edge), whole
ticks for counts, a label for every legend entry shown, and without colour a marker per line."""

from __future__ import annotations

from queuetop.act.queue import Queue
from queuetop.tui.widgets import Chart, ChartSpec, Line, Plot, fitted_span, legend_text, y_ticks
from tests.conftest import Backend
from tests.tui.conftest import SIZE, AppFactory, wait_for


def test_the_axis_spans_what_the_data_covers_up_to_the_window() -> None:
    assert fitted_span(3600.0, 0.0) == 30.0  # the first poll
    assert fitted_span(3600.0, 10.0) == 30.0
    assert fitted_span(3600.0, 45.0) == 60.0
    assert fitted_span(3600.0, 1000.0) == 1800.0
    assert fitted_span(300.0, 400.0) == 300.0  # never wider than the window chosen
    assert fitted_span(60.0, 10.0) == 30.0


def test_counts_get_whole_ticks_and_rates_keep_fractions() -> None:
    assert y_ticks(0.3, whole=True) == ([0.0, 1.0], ["0", "1"])
    assert y_ticks(7.0, whole=True)[1] == ["0", "2", "4", "6", "8"]
    assert y_ticks(0.3)[1] == ["0", "0.1", "0.2", "0.3"]


def test_every_legend_entry_shown_has_its_label_and_the_rest_are_counted() -> None:
    lines = tuple(Line(name, name, "depth", "cyan") for name in ("all", "report.render", "email", "thumbnail"))
    spec = ChartSpec("depth", lines, 300.0)
    text = legend_text(spec, {line.label for line in lines}, width=34).plain
    assert text == "depth  ━ all ━ report.render +2" and len(text) <= 34
    assert legend_text(spec, {"all"}, width=200).plain.endswith("━ thumbnail")  # room for all: no count
    assert legend_text(spec, {"all"}, markers=True).plain.startswith("depth  • all + report.render x email")


async def test_a_fresh_dashboards_charts_span_the_seconds_they_have(sqlite_backend: Backend,
                                                                   make_app: AppFactory) -> None:  # fmt: skip
    with sqlite_backend.open() as db:
        Queue(db, sqlite_backend.layout).enqueue_many("email", 3)
    app = make_app(sqlite_backend)
    async with app.run_test(size=SIZE) as pilot:
        chart = app.main.query_one("#depth-chart", Chart)
        plot = chart.query_one(Plot)
        await wait_for(pilot, lambda: chart.points and "now" in plot.drawn.plain, "a line drawn")
        assert app.window_s == 300.0 and chart.drawn_spec.window_s == 30.0
        assert "-20s" in plot.drawn.plain and "-5m" not in plot.drawn.plain
        assert "0.5" not in plot.drawn.plain  # a depth of 3: whole ticks


async def test_without_colour_each_line_has_its_marker(sqlite_backend: Backend, make_app: AppFactory,
                                                       monkeypatch) -> None:  # fmt: skip
    monkeypatch.setenv("NO_COLOR", "1")
    with sqlite_backend.open() as db:
        Queue(db, sqlite_backend.layout).enqueue_many("email", 3)
    app = make_app(sqlite_backend)
    async with app.run_test(size=SIZE) as pilot:
        chart = app.main.query_one("#depth-chart", Chart)
        plot = chart.query_one(Plot)
        await wait_for(pilot, lambda: chart.points and "•" in plot.drawn.plain, "the first line drawn with •")
        assert str(chart.query_one(".legend").visual) == "depth  • all"
        rates = app.main.query_one("#rate-chart", Chart)
        await wait_for(pilot, lambda: "+ completions" in str(rates.query_one(".legend").visual), "the rates' legend")
        assert str(rates.query_one(".legend").visual) == "jobs/s  • arrivals + completions"
