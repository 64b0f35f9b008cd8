"""`x`: what a dashboard screen shows, frozen into a ScreenExport (the files are written by history_report)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from queuetop.store.history_report import ChartData, ChartLine, ScreenExport
from queuetop.tui.session import Dashboard
from queuetop.tui.table import Column
from queuetop.tui.widgets import Chart
from queuetop.watch.snapshot import Snapshot, TypeStats


def screen_export(app: Dashboard, snapshot: Snapshot, rows: Sequence[TypeStats], columns: Sequence[Column],
                  charts: Sequence[Chart]) -> ScreenExport:  # fmt: skip
    """The table's rows as the dashboard formats them (every column of the shape, also those hidden for width) and
    the charts' points at their bucket start times (server clock)."""
    latest = app.session.series.latest or 0.0
    data = []
    for chart in charts:
        spec = chart.drawn_spec  # what is on screen: a fresh start's charts span the data they have, not the window
        if spec is None:
            continue
        width = chart.bucket_s or spec.window_s
        current = math.floor(latest / width) * width  # the charts' x is seconds before the bucket in progress
        lines = tuple(ChartLine(line.label, line.job_type, line.field,
                                tuple((current + x, y) for x, y in zip(xs, ys, strict=True)))
                      for line, xs, ys in chart.points)  # fmt: skip
        data.append(ChartData(spec.title, spec.window_s, width, lines))
    return ScreenExport(
        target=app.target_display, layout=snapshot.layout, clock=snapshot.clock, taken_at=snapshot.taken_at,
        past=app.session.past is not None, headers=tuple(column.label for column in columns),
        cells=tuple(tuple(column.cell(row) for column in columns) for row in rows), rows=tuple(rows),
        charts=tuple(data),
    )  # fmt: skip
