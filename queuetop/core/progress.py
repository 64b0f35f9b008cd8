"""A long command's progress on one line: rewritten in place on a terminal, a line every few seconds on a pipe
or into a log (a trace, not a flood). `load`'s running figures and the batched maintenance writes use it."""

from __future__ import annotations

import time
from typing import TextIO

PROGRESS_EVERY_PIPE_S = 5.0  # when the stream is not a terminal: a line now and then


class ProgressLine:
    """A line rewritten in place on a terminal; on a pipe, a line every few seconds."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self._last = 0.0

    def show(self, line: str) -> None:
        if self.tty:
            self.stream.write("\r\x1b[K" + line)
        elif time.monotonic() - self._last >= PROGRESS_EVERY_PIPE_S:
            self.stream.write(line + "\n")
            self._last = time.monotonic()
        else:
            return
        self.stream.flush()

    def done(self, line: str) -> None:
        self.stream.write(("\r\x1b[K" if self.tty else "") + line + "\n")
        self.stream.flush()
