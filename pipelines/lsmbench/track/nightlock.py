"""The nightly job's lock: two nights never overlap, and a night never waits for another.

An exclusive, non-blocking flock(2) on a lock file. The file says who holds it (pid, host,
since when) so that the refused night can name the holder. The lock's descriptor is passed to
the steps the night starts (pass_fds): a step left running by a night that was killed keeps
the lock until it ends, so the next night cannot start under it. The kernel drops the lock
when the last holder exits -- there is no stale lock to clean up after a crash.
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
    """Another night holds the lock."""


@contextlib.contextmanager
def night_lock(path: Path) -> Iterator[int]:
    """Holds the lock for the block; yields its descriptor (to pass on to child processes).
    Raises LockHeld at once when another process holds it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _read_holder(fd)
        os.close(fd)
        raise LockHeld(f"{path} is held by {holder}: another night is running; this one "
                       "does not wait for it") from None
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
