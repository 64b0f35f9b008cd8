"""`in_thread`: a call's result comes back to its node as a message; where the node has gone meanwhile (a chart
redrawn, a modal closed, the app quit while a read ran), the result is dropped without a word — never a traceback
from the thread on the terminal."""

from __future__ import annotations

import threading

from textual.app import App
from textual.widgets import Static

from queuetop.tui.threads import in_thread


async def test_a_result_for_a_node_that_has_gone_is_dropped_quietly() -> None:
    release, raised = threading.Event(), []
    hook = threading.excepthook
    threading.excepthook = lambda args: raised.append(args.exc_value)  # what would print on the terminal
    try:
        app = App()
        async with app.run_test() as pilot:
            # a node detached from the app and not yet closed: the moment between a widget's removal (or the app's
            # exit) and its close, in which the thread's post cannot find the app to reach it through
            detached = Static()
            thread = in_thread(detached, release.wait, lambda _: None, lambda _: None, group="plot")
            release.set()
            thread.join(5)
            await pilot.pause()
    finally:
        threading.excepthook = hook
    assert not thread.is_alive() and raised == []
