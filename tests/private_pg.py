"""A PostgreSQL server of a test's own, for the tests that freeze backends with SIGSTOP.

A backend stopped while it writes can hold a lock every other session needs (a WAL insertion lock, a buffer's
content lock): the whole server then stalls until it is continued. On the shared server that stalled the tests of
the other pytest workers too (a schema's CREATE waited 21.5 s beside a stopped load; a run of the suite took a
minute longer for it). So those tests get a cluster made for them: `initdb` into a temporary folder (as the
`postgres` user when the suite runs as root, as PostgreSQL requires), on a free loopback port, without fsync,
stopped and removed at the end of the session.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

from tests.conftest import PG_TARGET


def _bin_dir() -> Path:
    """The newest installed server's programs (Debian keeps them out of PATH: /usr/lib/postgresql/N/bin)."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parent.parent.name))
    if found:
        return found[-1].parent
    initdb = shutil.which("initdb")
    assert initdb, "PostgreSQL's initdb is not installed: run scripts/setup.sh --test"
    return Path(initdb).parent


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class PrivateServer:
    """A throwaway cluster: `target_text` is the shared target's connection string pointed at it."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="queuetop-private-pg-"))
        if os.geteuid() == 0:  # PostgreSQL refuses to run as root: its programs run as postgres, in its folder
            shutil.chown(self.folder, "postgres")
        self.port = _free_port()
        self._data = self.folder / "data"
        bin_dir = _bin_dir()
        self._run(str(bin_dir / "initdb"), "-D", str(self._data), "-A", "trust", "-U", "postgres", "--no-sync",
                  "-E", "UTF8")  # fmt: skip
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run(str(bin_dir / "pg_ctl"), "-D", str(self._data), "-o", options, "-l", str(self.folder / "log"),
                  "-w", "start")  # fmt: skip
        self._pg_ctl = bin_dir / "pg_ctl"
        parts = [part for part in PG_TARGET.split(";") if not part.upper().startswith(("PORT=", "DATABASE="))]
        self.target_text = ";".join([*parts, f"PORT={self.port}", "DATABASE=postgres"])

    def _run(self, *command: str) -> None:
        if os.geteuid() == 0:
            command = ("runuser", "-u", "postgres", "--", *command)
        subprocess.run(command, check=True, capture_output=True, timeout=60)

    def stop(self) -> None:
        """Stop the server at once, as a crash would (its connections cut); `close` still removes it."""
        self._run(str(self._pg_ctl), "-D", str(self._data), "-m", "immediate", "stop")

    def close(self) -> None:
        try:
            self._run(str(self._pg_ctl), "-D", str(self._data), "-m", "immediate", "stop")
        except subprocess.CalledProcessError:
            pass  # stopped already (`stop`)
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)
