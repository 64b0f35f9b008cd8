"""Dear polls come further apart on the dashboards too (`watch/pace.py`), driven by Pilot against a real SQLite
queue whose polls the pace is told to find dear: after two of them the next waits, the status line (and each
target's head on the multi-target dashboard) says why, and a poll the user asks for is not held back."""

from __future__ import annotations

import pytest

from queuetop.watch import pace
from tests.conftest import make_backend
from tests.tui.conftest import SIZE, AppFactory, MultiFactory, status, wait_for
from tests.tui.test_multi_dashboard import section

PACED_S = 5.0  # far past the 0.1 s interval and the test's 1 s look: no third poll comes by chance


@pytest.fixture
def every_poll_dear(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any poll deemed dear, so that the pace stretches the wait to its ceiling, PACED_S."""
    monkeypatch.setattr(pace, "PACED_PAST_S", 0.0)
    monkeypatch.setattr(pace, "POLL_MAX_SHARE", 1e-9)
    monkeypatch.setattr(pace, "PACED_AT_MOST_S", PACED_S)


async def test_dear_polls_come_further_apart_and_the_status_line_says_why(sqlite_backend, make_app: AppFactory,
                                                                          every_poll_dear) -> None:  # fmt: skip
    app = make_app(sqlite_backend, interval=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.polls >= 2, "two polls")
        await pilot.pause(1.0)
        assert app.polls == 2  # at 0.1 s, ten more would have come
        assert "every 5 s, not 0.1: polls are dear" in status(app)
        app.poll_soon()  # what an action asks for
        await wait_for(pilot, lambda: app.polls == 3, "the poll asked for", timeout=2.0)  # the paced one: 4 s on


async def test_each_target_of_the_multi_dashboard_keeps_its_own_pace(tmp_path, make_multi: MultiFactory,
                                                                     every_poll_dear) -> None:  # fmt: skip
    a, b = make_backend("sqlite", tmp_path / "a"), make_backend("sqlite", tmp_path / "b")
    app = make_multi(("alpha", a.target, a.layout, False), ("beta", b.target, b.layout, False))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: min(app.polls.values()) >= 2, "two polls of each target")
        await pilot.pause(1.0)
        assert app.polls == {"alpha": 2, "beta": 2}
        assert "every 5 s (paced: dear polls)" in section(app, "head", "alpha")
        assert "every 5 s, not 0.1: polls are dear" in status(app)
