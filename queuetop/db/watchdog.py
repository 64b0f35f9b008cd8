"""A deadline for every statement, kept even when the server says nothing at all.

A server that stops answering mid-session (a network partition without a reset, a frozen host, a backend
stopped by SIGSTOP) cannot enforce its own statement_timeout, and the kernel still acknowledges every packet, so
neither the driver's query timeout nor TCP keepalives end the wait: pyodbc's call blocks in C for as long as the
stall lasts. So each connection has a `Watch`, armed before each statement and disarmed after it (two attribute
writes and an uncontended lock: no thread per statement), and one watchdog thread per process looks at every
armed watch a few times a second. A watch past its deadline is fired: the connection's socket is shut down,
which wakes the blocked call with a driver error at once, and the connection is treated as lost (the caller
reconnects). The socket is found by the client port the server reported at connect (Linux's /proc).
"""

from __future__ import annotations

import logging
import math
import os
import socket
import threading
import time
import weakref
from collections.abc import Callable

log = logging.getLogger("queuetop")

TICK_S = 0.25  # how often the watchdog looks: a deadline holds to within this
DEADLINE_ENV_VAR = "QUEUETOP_READ_DEADLINE_S"  # shortens every deadline (tests; a user who wants it sooner)


class Watch:
    """One connection's deadline. `arm()` before a statement, `disarm()` after; `fire()` aborts the statement in
    flight now (the watchdog past the deadline, or an owner that stops waiting)."""

    __slots__ = ("__weakref__", "_abort", "_lock", "fired_after_s", "limit_s", "started", "until")

    def __init__(self, limit_s: float, abort: Callable[[], bool]) -> None:
        self.limit_s = limit_s
        self.until = math.inf
        self.started = 0.0
        self.fired_after_s: float | None = None  # set once the connection was cut: every later call fails
        self._abort = abort
        self._lock = threading.Lock()

    def arm(self) -> None:
        self.started = time.monotonic()
        self.until = self.started + self.limit_s

    def disarm(self) -> None:
        with self._lock:  # never fire for a statement that has just returned
            self.until = math.inf

    def fire(self, now: float | None = None) -> bool:
        """Cut the connection if a statement is in flight (past its deadline when `now` is given); whether it
        was cut."""
        with self._lock:
            if self.until == math.inf or (now is not None and now < self.until):
                return False
            self.until = math.inf
            self.fired_after_s = time.monotonic() - self.started
            try:
                return self._abort()
            except Exception:  # a watchdog that dies watches nothing: log, and leave this one be
                log.exception("could not cut a connection that stopped answering")
                return False


class _Watchdog:
    """The one thread that fires watches past their deadline; started with the first watch."""

    def __init__(self) -> None:
        self._watches: weakref.WeakSet[Watch] = weakref.WeakSet()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def add(self, watch: Watch) -> None:
        with self._lock:
            self._watches.add(watch)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="queuetop-watchdog", daemon=True)
                self._thread.start()

    def remove(self, watch: Watch) -> None:
        with self._lock:
            self._watches.discard(watch)

    def _run(self) -> None:
        while True:
            time.sleep(TICK_S)
            now = time.monotonic()
            with self._lock:
                due = [watch for watch in self._watches if watch.until <= now]
            for watch in due:
                if watch.fire(now):  # the statement's owner says so in its own words: only a debug line here
                    log.debug("a statement ran %.0f s without an answer: its connection was cut",
                              watch.fired_after_s or 0.0)


WATCHDOG = _Watchdog()


def read_deadline_s(statement_timeout_s: float | None, grace_s: float) -> float | None:
    """How long a statement may go without an answer: the server's own timeout and a grace for it to say so
    (None: no deadline), never more than $QUEUETOP_READ_DEADLINE_S."""
    limit = None if statement_timeout_s is None else statement_timeout_s + grace_s
    override = os.environ.get(DEADLINE_ENV_VAR)
    if override:
        try:
            value = float(override)
        except ValueError:
            value = 0.0
        if value > 0:
            limit = value if limit is None else min(limit, value)
    return limit


def socket_cutter(client_port: int, server_port: int) -> Callable[[], bool]:
    """An abort that shuts down this process's TCP socket from `client_port` to `server_port`: a call blocked
    on it returns at once with a driver error. The socket is looked up when needed (Linux: /proc)."""

    return lambda: _shut(_socket_fd(client_port, server_port))


def socket_names() -> frozenset[str]:
    """This process's open sockets as /proc names them (`socket:[inode]`); empty where there is no /proc. Taken
    before and after a connect, the one new name is that connection's socket, whatever ports the server sees (a
    proxy, NAT, a Unix socket)."""
    names = set()
    try:
        fds = os.listdir("/proc/self/fd")
    except OSError:
        return frozenset()
    for fd in fds:
        try:
            link = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:["):
            names.add(link)
    return frozenset(names)


def named_socket_cutter(name: str) -> Callable[[], bool]:
    """An abort that shuts down this process's socket called `name` (from `socket_names`)."""
    return lambda: _shut(_fd_of({name}))


def _shut(fd: int | None) -> bool:
    if fd is None:
        return False
    with socket.socket(fileno=os.dup(fd)) as dup:  # shutdown acts on the socket, shared by both fds
        dup.shutdown(socket.SHUT_RDWR)
    return True


def _socket_fd(local_port: int, remote_port: int) -> int | None:
    inodes = set()
    for table in ("/proc/self/net/tcp", "/proc/self/net/tcp6"):
        try:
            with open(table) as lines:
                next(lines)
                for line in lines:
                    fields = line.split()
                    ports = (int(fields[1].rsplit(":", 1)[1], 16), int(fields[2].rsplit(":", 1)[1], 16))
                    if ports == (local_port, remote_port):
                        inodes.add(f"socket:[{fields[9]}]")
        except OSError:
            continue
    return _fd_of(inodes)


def _fd_of(inodes: set[str]) -> int | None:
    if not inodes:
        return None
    for name in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{name}") in inodes:
                return int(name)
        except OSError:
            continue
    return None
