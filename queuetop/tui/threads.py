"""Running a blocking call (a database read or write) off the UI thread and getting its result back as a message.

`in_thread(node, call, done, failed)` runs `call()` on a daemon thread of its own. Its result comes back to the
node as a `ThreadResult` message, handled on the UI thread by `done` (or `failed` for a QueuetopError, the
user-facing kind). If the node is gone by then (a modal closed, a chart redrawn, the app quit meanwhile) the
message is simply dropped: Textual drops a post to a closed node, and one to a node already detached from its app
but not yet closed cannot find the app (NoActiveAppError), which is dropped here, not raised in the thread.
Anything else a call raises is a bug: the app logs and reports it (`report_unexpected`).

Daemon threads, not Textual's thread workers: those run on asyncio's default executor, which the app joins when
it exits, so a call blocked on a database that stopped answering held `q` and Ctrl-C until the server spoke
again. A daemon thread is never waited for; its connection's deadline (db/watchdog.py) ends it soon after.
`CallThread` (watch/ahead.py) is one such thread kept for a stream of calls (the poll loop: no thread start per
poll).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import suppress
from typing import Any, TypeVar

from textual.dom import DOMNode
from textual.message import Message
from textual.types import NoActiveAppError

from queuetop.db import QueuetopError

T = TypeVar("T")


class ThreadResult(Message, bubble=False):
    def __init__(self, handler: Callable[[Any], None], value: object) -> None:
        super().__init__()
        self.handler = handler
        self.value = value


class HandlesThreadResults:
    """Mixin for any node that calls `in_thread`: runs the result's handler on the UI thread."""

    def on_thread_result(self, message: ThreadResult) -> None:
        message.handler(message.value)


def in_thread(node: DOMNode, call: Callable[[], T], done: Callable[[T], None],
              failed: Callable[[QueuetopError], None], *, group: str = "actions", name: str = "",
              bug: Callable[[Exception], None] | None = None) -> threading.Thread:  # fmt: skip
    """Run `call()` on a daemon thread; `done`, `failed` (a QueuetopError) or, for a bug, `bug` (after the app
    has reported it) then run on the UI thread."""
    app = node.app
    doing = f"running {name or group}"

    def deliver(handler: Callable[[Any], None], value: object) -> None:
        with suppress(NoActiveAppError):  # the node left the app while the call ran: nobody is there to show it
            node.post_message(ThreadResult(handler, value))

    def work() -> None:
        try:
            result = call()
        except QueuetopError as exc:
            deliver(failed, exc)
            return
        except Exception as exc:  # a bug: to the app, which logs it and says so
            report = getattr(app, "report_unexpected", None)
            if report is None:
                raise
            app.post_message(ThreadResult(lambda error: report(error, doing), exc))
            if bug is not None:
                deliver(bug, exc)
            return
        deliver(done, result)

    thread = threading.Thread(target=work, name=f"queuetop-{group}", daemon=True)
    thread.start()
    return thread
