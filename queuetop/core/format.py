"""Human units for figures (durations, rates, counts) and text fitted to terminal cells, as the CLI table and the
dashboard show them.

Widths are terminal cells, never string lengths: a CJK character or most emoji take two cells, a combining accent
none. They are measured with rich's grapheme-aware table (`rich.cells`), the one Textual draws the dashboard
with, so `stats` and the dashboard agree on every width.
"""

from __future__ import annotations

from rich.cells import cell_len, split_graphemes

ELLIPSIS = "…"


def duration(seconds: float | None) -> str:
    """850ms, 12.3s, 4m05s, 2h13m, 3d04h; '—' when unknown."""
    if seconds is None:
        return "—"
    s = max(0.0, seconds)
    if s < 1:
        return f"{s * 1000:.0f}ms"
    if s < 60:
        return f"{s:.1f}s"
    if s < 3600:
        return f"{int(s // 60)}m{int(s % 60):02d}s"
    if s < 86400:
        return f"{int(s // 3600)}h{int(s % 3600 // 60):02d}m"
    return f"{int(s // 86400)}d{int(s % 86400 // 3600):02d}h"


def rate(per_s: float | None) -> str:
    """Jobs per second: 0, 0.25, 3.4, 120, 1.2k."""
    if per_s is None:
        return "—"
    if per_s == 0:
        return "0"
    if per_s < 10:
        return f"{per_s:.2f}".rstrip("0").rstrip(".")
    if per_s < 1000:
        return f"{per_s:.0f}"
    return f"{per_s / 1000:.1f}k"


def count(value: int | None, estimate: bool = False) -> str:
    """1,234; ≈1,234 for an estimate; '—' when the shape cannot know it."""
    if value is None:
        return "—"
    return ("≈" if estimate else "") + f"{value:,}"


def drain(state: str, eta_s: float | None) -> str:
    if state == "draining":
        return duration(eta_s)
    return {"empty": "empty", "never": "never", "unknown": "—"}.get(state, state)


# -- text in terminal cells --------------------------------------------------------------------------------------
def cells(text: str) -> int:
    """How many terminal cells `text` takes."""
    return cell_len(text)


def fit(text: str, width: int) -> str:
    """`text` in at most `width` cells: whole when it fits, else cut in the middle so that both ends stay
    (`Acme.Billing…InvoiceSender`): names of one family differ at their end (`…-stage-10`, `…-stage-20`) and
    are told apart at their start. Never splits a character cluster (an emoji sequence, an accented letter)."""
    if width <= 0:
        return ""
    spans, total = split_graphemes(text)
    if total <= width:
        return text
    room = width - cells(ELLIPSIS)
    head_room = room // 2  # the end gets the odd cell: it is where names of one family differ
    head_end, used = 0, 0
    for _, end, size in spans:
        if used + size > head_room:
            break
        head_end, used = end, used + size
    tail_room, tail_start, used = room - used, len(text), 0  # a wide character the head left out: the end's
    for start, _, size in reversed(spans):
        if used + size > tail_room or start < head_end:
            break
        tail_start, used = start, used + size
    return text[:head_end] + ELLIPSIS + text[tail_start:]


def pad(text: str, width: int, right: bool = False) -> str:
    """`text` padded with spaces to `width` cells (on the left when `right`-aligned); never cut."""
    gap = " " * max(0, width - cells(text))
    return gap + text if right else text + gap
