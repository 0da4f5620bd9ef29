"""One process at a time: an exclusive, non-blocking flock(2) on a lock file, for a campaign's
directory (store.py) and for the nightly job (track/nightlock.py).

The file says who holds it (pid, host, since when) so that a refused process can name the
holder. The kernel drops the lock when the last process holding its descriptor exits: there
is no stale lock to clean up after a crash.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path


class LockHeld(RuntimeError):
    """Another process holds the lock; ``holder`` is what it wrote in the file."""

    def __init__(self, path: Path, holder: str) -> None:
        super().__init__(f"{path} is held by {holder}")
        self.path = path
        self.holder = holder


@contextlib.contextmanager
def exclusive(path: Path) -> Iterator[int]:
    """Holds the lock for the block and yields its descriptor (to pass on to child processes
    that must keep it). Raises LockHeld at once when another process holds it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _read_holder(fd)
        os.close(fd)
        raise LockHeld(path, holder) from None
    except BaseException:
        os.close(fd)
        raise
    try:
        since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()} since {since}\n".encode(), 0)
        yield fd
    finally:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
        os.close(fd)


def _read_holder(fd: int) -> str:
    try:
        text = os.pread(fd, 512, 0).decode(errors="replace").strip()
    except OSError:
        text = ""
    return text or "another process"
