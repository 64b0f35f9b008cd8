"""`queuetop ARGS` in a process of its own, forked from one that has imported queuetop already.

A CLI test runs a command as a user does: a process of its own, with its argv, environment, working directory,
streams and exit code. Started as `python -m queuetop`, each such process spent ~0.2 s of CPU on the
interpreter's start and queuetop's imports before the command began, and the suite starts over 400 of them on
2 cores. Here one server per test worker imports the CLI once, and each command is a fork of it that runs
`queuetop.cli.main` from there on: what users run, from the parsing of argv to the exit code.

What the fork skips (the interpreter's start, `python -m`, the console script) is run as such by the tests that
need it: `test_cli.py` runs `python -m queuetop` and the installed `queuetop`, and every test that signals a
command, or reads its output while it runs, starts it with `subprocess.Popen`.

The protocol, one connection to the server's Unix socket per command: the request (argv, environment, working
directory as JSON) with the command's stdin, stdout and stderr as passed file descriptors; the server forks a
watcher, which forks the command, sends its pid, waits for it and sends how it ended (exit code, or -N for
signal N, as `subprocess` reports it).
"""

from __future__ import annotations

import atexit
import contextlib
import io
import json
import locale
import os
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path

REQUEST_MAX = 1 << 20


# -- the server (its own process: `python -m tests.forked_cli SOCKET`) -------------------------------------------
def serve(path: str) -> None:
    """Import the CLI, then fork a command per connection until the test worker that started it goes away (its
    stdin, a pipe from that worker, ends)."""
    # what every command imports, and the modules of the commands most tests run
    import queuetop.cli
    import queuetop.cli.fleet_commands
    import queuetop.cli.queue_commands  # noqa: F401

    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # watchers are reaped by the kernel
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    print("ready", flush=True)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(sys.stdin, selectors.EVENT_READ)
    while True:
        for key, _ in selector.select():
            if key.fileobj is sys.stdin:
                return
            connection, _ = listener.accept()
            if os.fork() == 0:
                _watch(listener, connection)  # never returns
            connection.close()


def _watch(listener: socket.socket, connection: socket.socket) -> None:
    """The watcher: fork the command, say its pid, wait for it, say how it ended."""
    try:
        listener.close()
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # this one waits for its child
        payload, fds, _, _ = socket.recv_fds(connection, REQUEST_MAX, 3)
        request = json.loads(payload)
        pid = os.fork()
        if pid == 0:
            connection.close()
            _command(request, fds)  # never returns
        for fd in fds:
            os.close(fd)
        connection.sendall(f"{pid}\n".encode())
        _, status = os.waitpid(pid, 0)
        connection.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
    finally:
        os._exit(0)


def _command(request: Mapping, fds: Sequence[int]) -> None:
    """The command's process: its streams, environment, directory and argv, then `main` and the interpreter's
    own ending (non-daemon threads joined, atexit handlers, streams flushed), as `python -m queuetop` ends."""
    code = 1
    try:
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        # the streams as the interpreter opens them on files: stdout buffered, stderr by line
        encoding = sys.stdout.encoding
        sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)), encoding=encoding)
        sys.stdout = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False)), encoding=encoding,
                                      write_through=bool(request["env"].get("PYTHONUNBUFFERED")))  # fmt: skip
        sys.stderr = io.TextIOWrapper(io.BufferedWriter(io.FileIO(2, "w", closefd=False)), encoding=encoding,
                                      line_buffering=True, errors="backslashreplace")  # fmt: skip
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        sys.argv = [str(Path(sys.modules["queuetop"].__file__).parent / "__main__.py"), *request["args"]]
        from queuetop.cli import main

        code = _exit_code(main)
        threading._shutdown()  # type: ignore[attr-defined]  # as the interpreter does at exit
        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(BrokenPipeError):
                stream.flush()
    finally:
        os._exit(code)


def _exit_code(main: object) -> int:
    """`main()`'s exit code as the interpreter makes it from `raise SystemExit(main())`, or from an exception."""
    try:
        raise SystemExit(main())  # type: ignore[operator]
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # the interpreter ends by the signal itself
        traceback.print_exc()
        sys.stderr.flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        return 1
    except BaseException:
        traceback.print_exc()
        return 1


# -- the client, in a test worker -----------------------------------------------------------------------------
class _Server:
    """This worker's server, started on first use and ended with the worker."""

    def __init__(self) -> None:
        self.directory = tempfile.TemporaryDirectory(prefix="queuetop-forks-")
        self.path = os.path.join(self.directory.name, "socket")
        self.process = subprocess.Popen([sys.executable, "-m", "tests.forked_cli", self.path],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        cwd=Path(__file__).parent.parent)  # fmt: skip
        assert self.process.stdout is not None
        if self.process.stdout.readline() != b"ready\n":
            raise RuntimeError(f"the forking server did not start (exit code {self.process.wait()})")
        atexit.register(self.close)

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(10)
        self.directory.cleanup()


_server: _Server | None = None
_starting = threading.Lock()


def run(args: Sequence[str], *, env: Mapping[str, str], timeout: float, cwd: str | None = None,
        input: str | None = None) -> subprocess.CompletedProcess:
    """`subprocess.run(["queuetop", *args], capture_output=True, text=True, ...)`, run as a fork of this worker's
    server. Raises `subprocess.TimeoutExpired` (the command killed) past `timeout`."""
    global _server
    with _starting:
        if _server is None:
            _server = _Server()
    with tempfile.TemporaryFile() as stdin, tempfile.TemporaryFile() as stdout, \
            tempfile.TemporaryFile() as stderr, socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        if input is not None:
            stdin.write(input.encode())
            stdin.seek(0)
        connection.connect(_server.path)
        request = {"args": list(args), "env": dict(env), "cwd": cwd or os.getcwd()}
        socket.send_fds(connection, [json.dumps(request).encode()], [stdin.fileno(), stdout.fileno(),
                                                                       stderr.fileno()])  # fmt: skip
        connection.settimeout(timeout)
        answers = connection.makefile("rb")
        pid = int(answers.readline())
        try:
            code = int(answers.readline())
        except TimeoutError:
            os.kill(pid, signal.SIGKILL)
            raise subprocess.TimeoutExpired(["queuetop", *args], timeout) from None
        out, err = (_text(stream) for stream in (stdout, stderr))
    return subprocess.CompletedProcess(["queuetop", *args], code, out, err)


def _text(stream: io.BufferedRandom) -> str:
    """What `subprocess.run(..., text=True)` makes of a stream's bytes: the locale's encoding, universal
    newlines."""
    stream.seek(0)
    return io.TextIOWrapper(stream, encoding=locale.getpreferredencoding(False)).read()


if __name__ == "__main__":
    serve(sys.argv[1])
