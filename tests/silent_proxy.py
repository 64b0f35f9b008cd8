"""A TCP proxy to PostgreSQL on 127.0.0.1:5432 that goes silent on SIGUSR1: it keeps every connection open and
passes nothing on, in either direction. Prints the port it listens on; run by tests/helpers.SilentProxy."""

from __future__ import annotations

import signal
import socket
import sys
import threading
import time

silent = threading.Event()


def relay(source: socket.socket, sink: socket.socket) -> None:
    while True:
        try:
            data = source.recv(65536)
        except OSError:
            return
        if not data:
            return
        while silent.is_set():  # held, never dropped: the peer just hears nothing
            time.sleep(0.05)
        try:
            sink.sendall(data)
        except OSError:
            return


def main() -> None:
    signal.signal(signal.SIGUSR1, lambda *_: silent.set())
    listener = socket.create_server(("127.0.0.1", 0))
    print(listener.getsockname()[1], flush=True)
    while True:
        client, _ = listener.accept()
        server = socket.create_connection(("127.0.0.1", 5432))
        for a, b in ((client, server), (server, client)):
            threading.Thread(target=relay, args=(a, b), daemon=True).start()


if __name__ == "__main__":
    sys.exit(main())
