"""Running a blocking call (a database read or write) off the UI thread and getting its result back as a message.

`in_thread(node, call, done, failed)` runs `call()` in a Textual thread worker. Its result comes back to the
node as a `ThreadResult` message, handled on the UI thread by `done` (or `failed` for a QueuetopError, the
user-facing kind). If the node is gone by then (a modal closed meanwhile) the message is simply dropped.
Anything else a call raises is a bug: the worker ends in error and the app logs and reports it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from textual.dom import DOMNode
from textual.message import Message
from textual.worker import Worker

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
              failed: Callable[[QueuetopError], None], *, group: str = "actions",
              name: str = "") -> Worker[None]:  # fmt: skip
    def work() -> None:
        try:
            result = call()
        except QueuetopError as exc:
            node.post_message(ThreadResult(failed, exc))
            return
        node.post_message(ThreadResult(done, result))

    return node.run_worker(work, name=name or group, group=group, thread=True, exit_on_error=False)
