"""lsmbench reproduce's children (reproduce/runner.py run_child): what a failed one said goes
into reproduce.json, and an interruption of reproduce reaches them once -- real child
processes and real signals."""

from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path

import pytest


def test_a_failed_child_is_recorded_with_what_it_said(capsys):
    from lsmbench.reproduce.runner import failure_text, run_child

    code, tail = run_child([sys.executable, "-c",
                            "import sys; print('first', file=sys.stderr); "
                            "print('lsmbench: throttle on node n2: no cgroup', file=sys.stderr); "
                            "sys.exit(3)"])
    assert (code, tail) == (3, ["first", "lsmbench: throttle on node n2: no cgroup"])
    assert "lsmbench: throttle on node n2" in capsys.readouterr().err  # passed through
    assert failure_text(code, tail) == ("exit 3 (the environment refused it): lsmbench: "
                                        "throttle on node n2: no cgroup")
    assert failure_text(1, []) == "exit 1 (a point failed)"


def _child_that_waits(ready: Path, ended: Path, release: Path) -> str:
    """A child that says when it is ready, writes 'ended' on SIGTERM and exits 130, and ends
    by itself (exit 0) once `release` exists (at most two minutes)."""
    return (f"import signal, sys, time, pathlib\n"
            f"def end(*_):\n"
            f"    pathlib.Path({str(ended)!r}).write_text('ended')\n"
            f"    sys.exit(130)\n"
            f"signal.signal(signal.SIGTERM, end)\n"
            f"pathlib.Path({str(ready)!r}).write_text('ready')\n"
            f"for _ in range(1200):\n"
            f"    if pathlib.Path({str(release)!r}).exists():\n"
            f"        sys.exit(0)\n"
            f"    time.sleep(0.1)\n")


def _interrupted_run_child(tmp_path: Path, raised: type[BaseException]) -> Path:
    """run_child on _child_that_waits, interrupted here once the child is ready by a signal
    whose handler raises `raised` (as cli.main's SIGTERM handler raises Terminated); the
    child is released 2 s after the interruption (a margin, not a measurement: it only
    lets an untold child end). The child's 'ended' marker path."""
    from lsmbench.reproduce.runner import _live, run_child

    ready, ended, release = tmp_path / "ready", tmp_path / "ended", tmp_path / "release"

    def interrupt_when_ready() -> None:
        for _ in range(30000):
            if ready.exists():
                os.kill(os.getpid(), signal.SIGUSR1)
                threading.Event().wait(2)
                release.write_text("go")
                return
            threading.Event().wait(0.01)

    def handler(*_: object) -> None:
        raise raised

    previous = signal.signal(signal.SIGUSR1, handler)
    try:
        threading.Thread(target=interrupt_when_ready, daemon=True).start()
        with pytest.raises(KeyboardInterrupt):
            run_child([sys.executable, "-c", _child_that_waits(ready, ended, release)])
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert not _live
    return ended


def test_a_sigterm_to_reproduce_alone_reaches_its_child(tmp_path):
    """SIGTERM to this process only (not its group, as Ctrl-C is): the child gets SIGTERM,
    is waited for, and the interruption goes on up; no child outlives it."""
    from lsmbench.util.exits import Terminated

    ended = _interrupted_run_child(tmp_path, Terminated)
    assert ended.read_text() == "ended"  # it ended itself, on the SIGTERM passed on


def test_ctrl_c_is_not_told_to_the_child_twice(tmp_path):
    """Ctrl-C reaches the child from the terminal: run_child only waits for it (a second
    signal could cut short the child's own clean-up)."""
    ended = _interrupted_run_child(tmp_path, KeyboardInterrupt)
    assert not ended.exists()  # no SIGTERM: it ended by itself, once released
