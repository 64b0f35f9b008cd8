"""Text in terminal cells: job types in CJK or with emoji keep their row's columns aligned in `queuetop stats`, and
a long type name cut to fit keeps both its ends."""

from __future__ import annotations

import pytest
from rich.cells import cell_len

from queuetop.act.queue import Queue
from queuetop.cli import main
from queuetop.core import format as fmt
from queuetop.db import Database, parse_target
from queuetop.layouts.schema import init_schema

WIDE_TYPES = ("email", "請求書の送信", "📦 parcel.ship", "résumé.parse", "👩‍💻 dev.build")


@pytest.mark.parametrize("width", [8, 12, 18, 21, 26, 31])
def test_a_cut_keeps_both_ends_and_fits(width: int) -> None:
    name = "Acme.Billing.Jobs.InvoiceSender"
    cut = fmt.fit(name, width)
    assert fmt.cells(cut) <= width and fmt.cells(cut) >= width - 1
    if width < len(name):
        head, tail = cut.split("…")
        assert name.startswith(head) and name.endswith(tail) and len(tail) >= len(head) >= (width - 1) // 2
    assert fmt.fit(name, 26) == "Acme.Billing…InvoiceSender"


def test_a_cut_counts_cells_and_never_splits_a_character() -> None:
    assert fmt.fit("請求書の送信ジョブ", 9) == "請求…ョブ"  # 4 + 1 + 4 cells
    assert fmt.cells(fmt.fit("請求書の送信ジョブ", 9)) == 9
    family = "👩‍💻" * 6  # one grapheme of two cells, five code points each
    cut = fmt.fit(family, 7)
    assert cut == "👩‍💻" + "…" + "👩‍💻" * 2 and fmt.cells(cut) == 7
    assert fmt.fit("short", 18) == "short" and fmt.fit("abc", 0) == ""


def test_the_same_family_stays_distinct_when_cut() -> None:
    names = [f"acme.pipeline.nightly.warehouse-export-stage-{n}" for n in (10, 20)]
    for width in range(12, 40):
        assert fmt.fit(names[0], width) != fmt.fit(names[1], width), width


def test_pad_fills_cells_not_characters() -> None:
    assert fmt.pad("請求", 6) == "請求  " and fmt.pad("請求", 6, right=True) == "  請求"
    assert fmt.pad("toolong", 3) == "toolong"  # padding never cuts


def test_stats_keeps_columns_aligned_with_wide_job_types(tmp_path, capsys) -> None:
    path = tmp_path / "q.db"
    with Database.open(parse_target(str(path)), create=True) as db:
        init_schema(db)
        queue = Queue(db)
        for count, job_type in enumerate(WIDE_TYPES, start=1):
            queue.enqueue_many(job_type, count * 3)
    assert main(["stats", "--db", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = lines[1]
    rows = {job_type: next(line for line in lines if line.startswith(job_type)) for job_type in WIDE_TYPES}
    # Every row is as wide as the header in cells, and each figure ends in the cell its header ends in.
    assert {cell_len(line) for line in rows.values()} == {cell_len(header)}
    depth_end = cell_len(header[: header.index("DEPTH") + len("DEPTH")])
    for count, (job_type, line) in enumerate(rows.items(), start=1):
        depth = str(count * 3)
        cut = line[: line.index("  " + depth + "  ") + 2 + len(depth)]
        assert cell_len(cut) == depth_end, (job_type, line)
