"""The history and the screen as files: `queuetop history` in CSV, JSON or Markdown, and the dashboard's `x`
(what is on screen: the table and the charts' data) as a Markdown file for incident notes beside a CSV file for
scripts. Pure Python: the dashboard hands over a frozen `ScreenExport`; nothing here knows about Textual.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path

from queuetop.core import format as fmt
from queuetop.store.model import FIGURE_NAMES, Record, moment
from queuetop.watch.snapshot import TOTAL, TypeStats

FORMATS = ("csv", "json", "markdown")


def timestamp(t: float, clock: str) -> str:
    """Server seconds → ISO 8601 with milliseconds; `Z` when the clock is UTC (as `stats --json`)."""
    return moment(t).isoformat(timespec="milliseconds") + ("Z" if clock == "utc" else "")


# -- queuetop history ----------------------------------------------------------------------------------------------
def history_csv(records: Sequence[Record], clock: str) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["time", "job_type", "polls", *FIGURE_NAMES, "breaches"])
    for record in records:
        figures = record.figures()
        writer.writerow([timestamp(record.t, clock), record.job_type, record.polls,
                         *("" if figures[name] is None else f"{figures[name]:g}" for name in FIGURE_NAMES),
                         record.breaches or ""])  # fmt: skip
    return out.getvalue()


def history_json(records: Sequence[Record], meta: dict[str, str], level: str, width_s: float) -> str:
    clock = meta.get("clock", "utc")
    return json.dumps({
        "target": meta.get("target"), "layout": meta.get("layout"), "clock": clock, "level": level,
        "bucket_s": width_s or None,
        "rows": [{"time": timestamp(r.t, clock), "job_type": r.job_type, "polls": r.polls, **r.figures(),
                  "breaches": r.breaches} for r in records],
    }, indent=1)  # fmt: skip


MARKDOWN_COLUMNS = (  # header, figures (shown when any row knows one), cell
    ("depth", ("depth",), lambda f: _count(f["depth"])),
    ("oldest", ("oldest_age_s",), lambda f: fmt.duration(f["oldest_age_s"])),
    ("later", ("scheduled",), lambda f: _count(f["scheduled"])),
    ("claimed", ("claimed",), lambda f: _count(f["claimed"])),
    ("timed-out", ("timed_out",), lambda f: _count(f["timed_out"])),
    ("dead", ("dead",), lambda f: _count(f["dead"])),
    ("lost", ("lost",), lambda f: _count(f["lost"])),
    ("in/s", ("arrivals_per_s",), lambda f: fmt.rate(f["arrivals_per_s"])),
    ("out/s", ("completions_per_s",), lambda f: fmt.rate(f["completions_per_s"])),
    ("wait p50/p95/p99", ("wait_p50_s", "wait_p95_s", "wait_p99_s"),
     lambda f: " / ".join(fmt.duration(f[n]) for n in ("wait_p50_s", "wait_p95_s", "wait_p99_s"))),
    ("processing p50/p95/p99", ("processing_p50_s", "processing_p95_s", "processing_p99_s"),
     lambda f: " / ".join(fmt.duration(f[n]) for n in ("processing_p50_s", "processing_p95_s", "processing_p99_s"))),
)  # fmt: skip


def _count(value: float | None) -> str:
    """A count, or the mean of counts over a bucket (one decimal where it is not whole)."""
    if value is None:
        return "—"
    return f"{value:,.0f}" if value == int(value) else f"{value:,.1f}"


def history_markdown(records: Sequence[Record], meta: dict[str, str], level: str, width_s: float) -> str:
    clock = meta.get("clock", "utc")
    what = "raw polls" if not width_s else f"{fmt.duration(width_s)} buckets (means; percentiles: the highest poll)"
    lines = [f"# queuetop history: {meta.get('target')} ({meta.get('layout')})", "",
             f"{len(records):,} rows, {what}, times in {'UTC' if clock == 'utc' else 'server local time'}.", ""]
    if not records:
        return "\n".join(lines)
    known = [column for column in MARKDOWN_COLUMNS
             if any(record.values[FIGURE_NAMES.index(n)] is not None for record in records for n in column[1])]
    header = ["time", "type", *(column[0] for column in known)]
    rows = []
    for record in records:
        figures = record.figures()
        name = "all types" if record.job_type == TOTAL else record.job_type
        rows.append([timestamp(record.t, clock), name, *(column[2](figures) for column in known)])
    return "\n".join(lines + markdown_table(header, rows)) + "\n"


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

    return [line(header), "|" + "|".join("---" for _ in header) + "|", *(line(row) for row in rows)]


# -- the dashboard's `x` -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ChartLine:
    label: str
    job_type: str
    figure: str  # depth | arrivals | completions
    points: tuple[tuple[float, float], ...]  # (bucket start, server seconds; mean)


@dataclass(frozen=True)
class ChartData:
    title: str
    window_s: float
    bucket_s: float
    lines: tuple[ChartLine, ...]


@dataclass(frozen=True)
class ScreenExport:
    """What a dashboard screen shows, frozen: the table as on screen and with its figures, and the charts."""

    target: str
    layout: str
    clock: str
    taken_at: datetime  # the moment the table shows
    past: bool  # the time cursor was on: not the live figures
    headers: tuple[str, ...]
    cells: tuple[tuple[str, ...], ...]  # the table's cells as the dashboard formats them
    rows: tuple[TypeStats, ...]  # the same rows' figures
    charts: tuple[ChartData, ...]


def export_markdown(export: ScreenExport) -> str:
    clock = "UTC" if export.clock == "utc" else "server local time"
    when = f"{export.taken_at:%Y-%m-%d %H:%M:%S} {clock}"
    state = "PAST figures (time cursor), from the history file" if export.past else "live figures"
    lines = [f"# queuetop: {export.target}", "", f"Layout {export.layout}; {state} at {when}.", ""]
    lines += markdown_table(export.headers, export.cells)
    for chart in export.charts:
        times = sorted({t for line in chart.lines for t, _ in line.points})
        lines += ["", f"## Chart: {chart.title} (window {fmt.duration(chart.window_s)}, "
                      f"{fmt.duration(chart.bucket_s)} bucket means)", ""]  # fmt: skip
        if not times:
            lines.append("(no data)")
            continue
        series = [dict(line.points) for line in chart.lines]
        rows = [[timestamp(t, export.clock), *(_number(values.get(t)) for values in series)] for t in times]
        lines += markdown_table(["bucket start", *(line.label for line in chart.lines)], rows)
    return "\n".join(lines) + "\n"


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:.6g}"


def export_csv(export: ScreenExport) -> str:
    """One tidy table: section (`table` or `chart:TITLE`), time, job_type, figure, value."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["section", "time", "job_type", "figure", "value"])
    when = timestamp((export.taken_at - moment(0)).total_seconds(), export.clock)
    for row in export.rows:
        for name, value in asdict(row).items():
            if name != "job_type" and value is not None:
                writer.writerow(["table", when, row.job_type, name, value if isinstance(value, str) else
                                 _number(float(value))])  # fmt: skip
    for chart in export.charts:
        for line in chart.lines:
            for t, value in line.points:
                writer.writerow([f"chart:{chart.title}", timestamp(t, export.clock), line.job_type, line.figure,
                                 _number(value)])  # fmt: skip
    return out.getvalue()


def write_export(export: ScreenExport, folder: Path) -> tuple[Path, Path]:
    """queuetop-YYYYMMDD-HHMMSS.md and .csv in `folder` (never overwriting an earlier export)."""
    stem = f"queuetop-{datetime.now():%Y%m%d-%H%M%S}"
    n = 1
    while (folder / f"{stem}.md").exists() or (folder / f"{stem}.csv").exists():
        n += 1
        stem = f"queuetop-{datetime.now():%Y%m%d-%H%M%S}-{n}"
    markdown, table = folder / f"{stem}.md", folder / f"{stem}.csv"
    markdown.write_text(export_markdown(export), encoding="utf-8")
    table.write_text(export_csv(export), encoding="utf-8")
    return markdown.resolve(), table.resolve()
