"""Commands on a node over OpenSSH, with the testbed's own known_hosts.

Host keys: ``StrictHostKeyChecking=accept-new`` against the per-testbed known_hosts file
(never the user's): the first contact records the node's key, a changed key is refused
(:class:`HostKeyChanged`). ``BatchMode`` makes a missing key or password prompt an error
instead of a hang. Exit status 255 is ssh's own failure (:class:`NodeUnreachable`), any other
status is the remote command's.
"""

from __future__ import annotations

import contextlib
import shlex
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from .base import TestbedError
from .inventory import HostEntry

SSH_FAILURE = 255
CONNECT_TIMEOUT_S = 10


class NodeUnreachable(TestbedError):
    """ssh could not reach the node (or lost it mid-command): the node, not the point, failed."""

    def __init__(self, node: str, message: str) -> None:
        super().__init__(f"node {node} unreachable: {message}")
        self.node = node


class HostKeyChanged(NodeUnreachable):
    def __init__(self, node: str, known_hosts: Path) -> None:
        TestbedError.__init__(
            self,
            f"node {node}: its SSH host key differs from the one recorded in {known_hosts} "
            "(possible man-in-the-middle, or the node was reinstalled): if the change is "
            f"expected, remove its line from {known_hosts} and run `lsmbench testbed up` again")
        self.node = node


class SshTarget:
    def __init__(self, host: HostEntry, known_hosts: Path) -> None:
        self.host = host
        self.known_hosts = known_hosts

    @property
    def name(self) -> str:
        return self.host.name

    def argv(self, remote: str) -> list[str]:
        h = self.host
        self.known_hosts.parent.mkdir(parents=True, exist_ok=True)
        argv = [
            "ssh", "-p", str(h.port),
            "-o", "BatchMode=yes",
            "-o", f"UserKnownHostsFile={self.known_hosts}",
            "-o", "GlobalKnownHostsFile=/dev/null",
            "-o", "HashKnownHosts=no",
            "-o", "StrictHostKeyChecking=accept-new",
            "-o", f"ConnectTimeout={CONNECT_TIMEOUT_S}",
            "-o", "ServerAliveInterval=5",
            "-o", "ServerAliveCountMax=3",
            "-o", "LogLevel=ERROR",
        ]
        if h.key_file:
            argv += ["-i", str(Path(h.key_file).expanduser()), "-o", "IdentitiesOnly=yes"]
        dest = f"{h.user}@{h.address}" if h.user else h.address
        return [*argv, dest, "--", remote]

    def _failed(self, stderr: str) -> NodeUnreachable:
        if "Host key verification failed" in stderr or "IDENTIFICATION HAS CHANGED" in stderr:
            return HostKeyChanged(self.name, self.known_hosts)
        return NodeUnreachable(self.name, stderr.strip().splitlines()[-1] if stderr.strip()
                               else "ssh failed")

    def run(self, remote: str | Sequence[str], *, input: bytes | None = None,
            timeout: float | None = 120, check: bool = True,
            stdout: IO[bytes] | int | None = subprocess.PIPE) -> subprocess.CompletedProcess[Any]:
        cmd = remote if isinstance(remote, str) else shlex.join(remote)
        try:
            # Without input, stdin is /dev/null (like ssh -n), never the caller's: the
            # remote command must not read, or wait on, whatever our stdin happens to be.
            r = subprocess.run(self.argv(cmd), input=input, stdout=stdout,
                               stdin=subprocess.DEVNULL if input is None else None,
                               stderr=subprocess.PIPE, timeout=timeout, check=False)
        except subprocess.TimeoutExpired as e:
            raise NodeUnreachable(self.name, f"no answer within {timeout:.0f}s") from e
        err = r.stderr.decode(errors="replace") if r.stderr else ""
        if r.returncode == SSH_FAILURE:
            raise self._failed(err)
        if check and r.returncode != 0:
            raise TestbedError(f"node {self.name}: `{cmd[:120]}` failed "
                               f"(exit {r.returncode}): {err.strip()[-800:]}")
        return r

    def stream(self, remote: Sequence[str], *, input: bytes, on_line: Callable[[str], None],
               ) -> tuple[int, str, list[str]]:
        """Runs a command, feeding `input` and calling on_line for each stdout line as it
        comes; returns (exit status, stderr, lines). Interrupting the caller (Ctrl-C) closes
        the connection, which stops the remote command (see node_helper's ticks)."""
        proc = subprocess.Popen(self.argv(shlex.join(remote)), stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        err_chunks: list[bytes] = []

        def drain_err() -> None:
            assert proc.stderr is not None
            err_chunks.append(proc.stderr.read())

        t = threading.Thread(target=drain_err, daemon=True)
        t.start()
        lines: list[str] = []
        try:
            assert proc.stdin is not None and proc.stdout is not None
            with contextlib.suppress(BrokenPipeError):
                proc.stdin.write(input)
                proc.stdin.close()
            for raw in proc.stdout:
                line = raw.decode(errors="replace").rstrip("\n")
                lines.append(line)
                on_line(line)
            code = proc.wait()
        except BaseException:
            with contextlib.suppress(ProcessLookupError):
                proc.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)
            raise
        t.join(timeout=5)
        err = b"".join(err_chunks).decode(errors="replace")
        if code == SSH_FAILURE:
            raise self._failed(err)
        return code, err, lines

    def fetch_dir(self, remote_dir: str, local_dir: Path, *, remove: bool = True,
                  sudo: Sequence[str] = ()) -> None:
        """Copies a remote directory's contents into local_dir (tar over ssh)."""
        local_dir.mkdir(parents=True, exist_ok=True)
        pre = shlex.join(sudo) + " " if sudo else ""
        cmd = f"{pre}tar -C {shlex.quote(remote_dir)} -cf - ."
        if remove:
            cmd += f" && {pre}rm -rf {shlex.quote(remote_dir)}"
        proc = subprocess.Popen(self.argv(cmd), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        untar = subprocess.run(["tar", "-C", str(local_dir), "-xf", "-"], stdin=proc.stdout,
                               capture_output=True, check=False)
        assert proc.stdout is not None
        proc.stdout.close()
        _, err = proc.communicate(timeout=300)
        if proc.returncode == SSH_FAILURE:
            raise self._failed(err.decode(errors="replace"))
        if proc.returncode != 0 or untar.returncode != 0:
            raise TestbedError(f"node {self.name}: could not fetch {remote_dir}: "
                               f"{(err + untar.stderr).decode(errors='replace').strip()}")

    def wait_reachable(self, attempts: int = 3, delay_s: float = 1.0) -> None:
        last: NodeUnreachable | None = None
        for _ in range(attempts):
            try:
                self.run("true", timeout=CONNECT_TIMEOUT_S + 10)
                return
            except HostKeyChanged:
                raise
            except NodeUnreachable as e:
                last = e
                time.sleep(delay_s)
        assert last is not None
        if isinstance(last.__cause__, subprocess.TimeoutExpired):
            # ssh connected (a refused or silent port fails within ConnectTimeout) but even
            # `true` did not finish: the node is overloaded or its login shell is slow.
            raise NodeUnreachable(self.name, f"`true` did not finish within "
                                  f"{CONNECT_TIMEOUT_S + 10}s over ssh, {attempts} attempts "
                                  "(an overloaded node, or a slow shell startup file such as "
                                  "~/.bashrc on it)") from last
        raise last
