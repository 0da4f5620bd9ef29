"""Runs ansible-playbook (ansible-core, pinned in pyproject.toml) and reports per-host progress.

The default callback's lines are parsed as they come: ``TASK [role : name]`` starts a task,
``ok: [host]`` / ``changed: [host]`` / ``fatal: [host]`` / ``skipping: [host]`` are per-host
results, and ``PLAY RECAP`` gives the per-host totals (``changed=0`` on every host is what an
idempotent second run shows).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..util.paths import project_root
from .base import TestbedError

_TASK_RE = re.compile(r"^TASK \[(.*)\]")
_RESULT_RE = re.compile(r"^(ok|changed|fatal|failed|skipping|unreachable): "
                        r"\[([^\]]+?)(?: ->[^\]]*)?\]")
_RECAP_RE = re.compile(r"^(\S+)\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)"
                       r"\s+skipped=(\d+)")

# on_event(host, status, task): status is ok/changed/fatal/skipping/unreachable.
Event = Callable[[str, str, str], None]


@dataclass
class PlaybookResult:
    rc: int
    recap: dict[str, dict[str, int]] = field(default_factory=dict)
    output_tail: str = ""

    @property
    def changed(self) -> int:
        return sum(r["changed"] for r in self.recap.values())

    def failed_hosts(self) -> list[str]:
        return sorted(h for h, r in self.recap.items() if r["failed"] or r["unreachable"])


def ansible_dir() -> Path:
    return project_root() / "ansible"


def ansible_playbook_bin() -> str:
    here = Path(sys.executable).with_name("ansible-playbook")
    if here.is_file():
        return str(here)
    found = shutil.which("ansible-playbook")
    if not found:
        raise TestbedError("ansible-playbook not found: install the project (`pip install -e "
                           ".[dev]`, ansible-core is a dependency)")
    return found


def run_playbook(playbook: Path, inventory: Path, extra_vars: dict[str, Any], *,
                 limit: list[str] | None = None, check: bool = False,
                 on_event: Event | None = None, log_path: Path | None = None,
                 syntax_check: bool = False) -> PlaybookResult:
    if not playbook.is_file():
        raise TestbedError(f"playbook {playbook} does not exist")
    argv = [ansible_playbook_bin(), "-i", str(inventory), str(playbook)]
    if extra_vars:
        argv += ["-e", json.dumps(extra_vars)]
    if limit:
        argv += ["--limit", ",".join(limit)]
    if check:
        argv.append("--check")
    if syntax_check:
        argv.append("--syntax-check")
    env = dict(os.environ)
    env.setdefault("ANSIBLE_CONFIG", str(ansible_dir() / "ansible.cfg"))
    env["ANSIBLE_FORCE_COLOR"] = "0"
    env["ANSIBLE_NOCOLOR"] = "1"
    env["ANSIBLE_STDOUT_CALLBACK"] = "ansible.builtin.default"
    env["PYTHONUNBUFFERED"] = "1"
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                            stdin=subprocess.DEVNULL, text=True, cwd=str(ansible_dir()))
    result = PlaybookResult(rc=-1)
    task = ""
    in_recap = False
    tail: list[str] = []
    log = open(log_path, "a") if log_path else None  # noqa: SIM115 - closed below
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if log:
                log.write(line)
            line = line.rstrip("\n")
            tail = ([*tail, line])[-60:]
            if m := _TASK_RE.match(line):
                task = m.group(1)
            elif line.startswith("PLAY RECAP"):
                in_recap = True
            elif in_recap and (m := _RECAP_RE.match(line)):
                result.recap[m.group(1)] = {
                    "ok": int(m.group(2)), "changed": int(m.group(3)),
                    "unreachable": int(m.group(4)), "failed": int(m.group(5)),
                    "skipped": int(m.group(6))}
            elif (m := _RESULT_RE.match(line)) and on_event is not None:
                on_event(m.group(2), m.group(1), task)
        result.rc = proc.wait()
    except BaseException:
        proc.terminate()
        proc.wait()
        raise
    finally:
        if log:
            log.close()
    result.output_tail = "\n".join(tail)
    return result
