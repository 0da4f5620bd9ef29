"""Why a point's driver run failed, in words a user can act on (docs/faults.md).

The driver's own exit code says little when the machine is at fault: exit 1 covers both an
engine bug and a full disk, and a negative code is only a signal number. This module reads
what the kernel and the driver left behind -- errno texts in driver.log, the paths they name,
the filesystems' free space, the signal, the core dump settings -- and names the fault:

* ``data-disk-full``: the engine's data directory ran out of space. The point fails; the
  campaign goes on (on a remote testbed the node is to blame: the point may go elsewhere).
* ``results-disk-full``: the results store ran out of space. Nothing more can be kept, so the
  campaign stops (:class:`ResultsStoreFull`, exit 3) and ``run --resume`` finishes it later.
* ``signal``: the driver was killed (the OOM killer, kill -9) or crashed (abort, segfault).
* ``io-error``: the kernel reported EIO: a failing disk.
"""

from __future__ import annotations

import errno
import os
import re
import resource
import signal
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

DATA_DISK_FULL = "data-disk-full"
RESULTS_DISK_FULL = "results-disk-full"
DISK_FULL = "disk-full"  # a disk ran out whose role the error does not tell
KILLED_BY_SIGNAL = "signal"
IO_ERROR = "io-error"
# Faults after which a node of a remote testbed gets no more points of the campaign.
NODE_RETIRING = frozenset({DATA_DISK_FULL, DISK_FULL, IO_ERROR})

NO_SPACE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
# strerror(3) of those errnos: how the driver (and tar, cp) put them in their messages.
NO_SPACE_TEXTS = (os.strerror(errno.ENOSPC), os.strerror(errno.EDQUOT))
IO_ERROR_TEXT = os.strerror(errno.EIO)
LOG_LINES_SHOWN = 5

# Signals that mean a crash of the process itself: a core dump may tell where.
_CRASH_SIGNALS = frozenset({signal.SIGABRT, signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE,
                            signal.SIGILL, signal.SIGTRAP})
_SIGNAL_MEANING = {
    signal.SIGKILL: "killed outright: the kernel's OOM killer (see `dmesg`) or a kill -9",
    signal.SIGABRT: "aborted: the engine or the driver called abort(), e.g. a failed "
                    "assertion or an uncaught exception",
    signal.SIGSEGV: "a segmentation fault in the engine or the driver",
    signal.SIGBUS: "a bus error (a truncated memory-mapped file, or a failing disk)",
    signal.SIGFPE: "an arithmetic fault (e.g. division by zero)",
    signal.SIGILL: "an illegal instruction (a binary built for another CPU?)",
    signal.SIGTERM: "terminated by someone else's SIGTERM",
    signal.SIGXFSZ: "the file size limit (ulimit -f) was exceeded",
}
_PATH = re.compile(r"(/[^\s:'\"`,;()]+)")


class ResultsStoreFull(RuntimeError):
    """The results store's filesystem is full: the campaign cannot keep anything more."""


class Diagnosis(BaseModel):
    """A named fault of one driver run, and the sentence that explains it."""

    kind: str
    message: str
    # The node, not the point, is to blame: on a testbed of several nodes the point may run
    # again on another one.
    node_local: bool = False


def is_no_space(e: BaseException | None) -> bool:
    """Whether e (or an exception it was raised from) is ENOSPC or EDQUOT."""
    while e is not None:
        if isinstance(e, OSError) and e.errno in NO_SPACE_ERRNOS:
            return True
        e = e.__cause__ or e.__context__
    return False


def mentions_no_space(text: str) -> bool:
    return any(t in text for t in NO_SPACE_TEXTS)


def no_space_paths(text: str) -> list[str]:
    """The absolute paths named on the lines that report ENOSPC or EDQUOT."""
    out: list[str] = []
    for line in text.splitlines():
        if mentions_no_space(line):
            out += _PATH.findall(line)
    return out


def is_under(path: str, root: str | os.PathLike[str]) -> bool:
    root_text = os.path.abspath(root)
    path = os.path.abspath(path)
    return path == root_text or path.startswith(root_text.rstrip("/") + "/")


def human_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def filesystem_space(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    """(bytes free to an unprivileged writer, total bytes) of the filesystem holding path (or
    its nearest existing parent); None when it cannot be asked."""
    p = Path(path)
    while not p.exists() and p != p.parent:
        p = p.parent
    try:
        st = os.statvfs(p)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize, st.f_blocks * st.f_frsize


def space_text(path: str | os.PathLike[str]) -> str:
    """'12.0 KiB free of 16.0 MiB' for the filesystem of a local path ('' when unknown)."""
    space = filesystem_space(path)
    if space is None:
        return ""
    return f"{human_bytes(space[0])} free of {human_bytes(space[1])}"


def last_lines(log_tail: str, n: int = LOG_LINES_SHOWN) -> list[str]:
    return [ln.rstrip() for ln in log_tail.splitlines() if ln.strip()][-n:]


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def killing_signal(exit_code: int | None) -> int | None:
    """The signal that killed the driver (a negative status). 128+N is not one: the driver
    exits so itself after SIGINT or SIGTERM, with its outputs written."""
    if exit_code is None:
        return None
    if exit_code < 0:
        return -exit_code
    return None


def core_hint(signum: int, pid: int | None) -> str:
    """Where a core dump of a crashed driver (run on this machine) went, or how to get one."""
    if signum not in _CRASH_SIGNALS:
        return ""
    try:
        pattern = Path("/proc/sys/kernel/core_pattern").read_text().strip()
    except OSError:
        pattern = ""
    if pattern.startswith("|"):
        handler = (pattern[1:].split() or ["a program"])[0]
        if "systemd-coredump" in handler and pid is not None:
            return f"its core dump, if kept: `coredumpctl gdb {pid}`, then `bt`"
        return f"its core dump, if kept, went to the core handler {handler}"
    if resource.getrlimit(resource.RLIMIT_CORE)[0] == 0:
        return ("no core dump was written (the core size limit is 0: `ulimit -c unlimited` "
                "before `lsmbench run` keeps one for gdb)")
    if pid is not None and pattern and "%" not in pattern.replace("%p", "").replace("%e", ""):
        name = pattern.replace("%p", str(pid)).replace("%e", "lsm-driver")
        for c in (Path(name), Path(f"{name}.{pid}")):
            if c.is_file():
                return f"core dump: {c.resolve()} (`gdb lsm-driver {c.resolve()}`, then `bt`)"
    return f"a core dump may have been written (kernel.core_pattern is {pattern!r})"


def where_text(node: str | None) -> str:
    return f" on node {node}" if node else ""


def describe_signal(signum: int, pid: int | None, node: str | None) -> str:
    meaning = _SIGNAL_MEANING.get(signum, "")
    text = f"lsm-driver{where_text(node)} was killed by {signal_name(signum)} (signal {signum})"
    if meaning:
        text += f": {meaning}"
    # A remote node's core settings are its own: only this machine's can be read here.
    hint = core_hint(signum, pid) if node is None else ""
    return f"{text}; {hint}" if hint else text


@dataclass
class FaultContext:
    """Where a point's files go: what a path named in an error is compared with."""

    data_dir: str | None  # the point's
    data_root: str  # where every point's data directory is made (the data disk)
    out_dir: Path
    store_root: Path | None
    node: str | None = None  # a remote node (its disks cannot be asked from here)


def log_excerpt(log_tail: str) -> str:
    tail = last_lines(log_tail)
    if not tail:
        return "; driver.log is empty"
    return "; driver.log ends:\n    " + "\n    ".join(tail)


def diagnose_driver(exit_code: int | None, log_tail: str, where: FaultContext,
                    pid: int | None = None) -> Diagnosis | None:
    """The fault behind a failed driver run, or None when it is the point's own (bad input,
    an engine error that is not the machine's)."""
    shown = log_excerpt(log_tail)
    signum = killing_signal(exit_code)
    if signum is not None:
        return Diagnosis(kind=KILLED_BY_SIGNAL, node_local=True,
                         message=describe_signal(signum, pid, where.node) + shown)
    if mentions_no_space(log_tail):
        return diagnose_no_space(no_space_paths(log_tail), where, shown)
    if IO_ERROR_TEXT in log_tail:
        return Diagnosis(kind=IO_ERROR, node_local=True,
                         message=f"the kernel reported an I/O error (EIO){where_text(where.node)}"
                                 f" on a disk the driver writes to: check `dmesg` for a failing "
                                 f"device" + shown)
    return None


def diagnose_error(e: BaseException, where: FaultContext) -> Diagnosis | None:
    """The fault behind an exception of the orchestrator's own work for a point (preparing
    the data directory, writing run.json, fetching the outputs), or None."""
    text = str(e)
    if not (is_no_space(e) or mentions_no_space(text)):
        return None
    paths = no_space_paths(text)
    cause: BaseException | None = e
    while cause is not None:
        if isinstance(cause, OSError) and cause.filename:
            paths.append(os.path.abspath(str(cause.filename)))
        cause = cause.__cause__ or cause.__context__
    return diagnose_no_space(paths, where, "")


def diagnose_no_space(paths: list[str], where: FaultContext, shown: str) -> Diagnosis:
    """Which disk ran out: the paths the error names decide; without one, the results store's
    free space does."""
    data_dir, store = where.data_dir or where.data_root, where.store_root
    # The store first: it is the more specific place when it lies under the data root.
    if store is not None and (any(is_under(p, store) or is_under(p, where.out_dir)
                                  for p in paths) or (not paths and nearly_full(store))):
        return Diagnosis(kind=RESULTS_DISK_FULL, message=results_full_text(store) + shown)
    if any(is_under(p, where.data_root) for p in paths):
        space = space_text(data_dir) if where.node is None else ""
        return Diagnosis(
            kind=DATA_DISK_FULL, node_local=True,
            message=f"the engine's data directory {data_dir}{where_text(where.node)} ran out of "
                    f"space{f' ({space})' if space else ''}: give testbed.data_dir a larger "
                    f"filesystem or make the point smaller (workload.record_count; `lsmbench "
                    f"plan` estimates each point's data)" + shown)
    named = f" writing {', '.join(sorted(set(paths)))}" if paths else ""
    return Diagnosis(kind=DISK_FULL, node_local=True,
                     message=f"a disk{where_text(where.node)} ran out of space{named}" + shown)


def nearly_full(root: Path) -> bool:
    """Less than 1 MiB left: a store that cannot take one more point's files."""
    space = filesystem_space(root)
    return space is not None and space[0] < 1 << 20


def results_full_text(store_root: Path) -> str:
    space = space_text(store_root)
    return (f"the results store {store_root} ran out of space" + (f" ({space})" if space else "")
            + "; the unfinished point was not kept: free space there (or use another "
              "--results) and run `lsmbench run SPEC --resume` to finish the campaign")
