"""The nightly job's lock: two nights never overlap, and a night never waits for another.

It is the project's file lock (lsmbench.util.filelock). Its descriptor is passed to the steps the
night starts (pass_fds): a step left running by a night that was killed keeps the lock until
it ends, so the next night cannot start under it.
"""

from __future__ import annotations

from ..util.filelock import LockHeld
from ..util.filelock import exclusive as night_lock

__all__ = ["LockHeld", "night_lock"]
