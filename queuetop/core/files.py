"""Files queuetop keeps for its user alone: the log and the history hold target names, job types and errors.

Created readable by their owner only (0600, in folders 0700), whatever the umask, and tightened when an older
queuetop left them open; a folder the user named is created private but, when it exists, left as it is.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

FOLDER_MODE = 0o700
FILE_MODE = 0o600


def private_folder(path: Path) -> Path:
    """`path` made, with its missing parents, readable by the owner only (a folder that exists is left alone)."""
    path.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    return path


def private_file(path: Path) -> Path:
    """`path` created if missing, and readable and writable by its owner only."""
    private_folder(path.parent)
    os.close(os.open(path, os.O_CREAT | os.O_APPEND | os.O_WRONLY, FILE_MODE))
    if stat.S_IMODE(path.stat().st_mode) & ~FILE_MODE:
        path.chmod(FILE_MODE)
    return path


def writable_by_others(path: Path) -> str | None:
    """The file's mode, as `chmod` writes it, when someone other than its owner may write it; else None."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return None
    return f"{mode:04o}" if mode & (stat.S_IWGRP | stat.S_IWOTH) else None
