"""Human units for figures: durations, rates and counts, as the CLI table and the dashboard show them."""

from __future__ import annotations


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
