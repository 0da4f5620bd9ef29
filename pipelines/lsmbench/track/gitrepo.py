"""The nightly job's git operations on the checkout it measures: is it one, fetch, resolve a
ref to a commit, refuse a modified tree, check the commit out detached.

git runs with GIT_TERMINAL_PROMPT=0 and (unless the caller set its own) an ssh in batch mode:
a night must fail with a message, never wait for a password nobody will type.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

# A fetch that hangs (a dead remote behind a firewall that drops packets) must end.
FETCH_TIMEOUT_S = 600.0
LOCAL_TIMEOUT_S = 120.0


class GitError(RuntimeError):
    """A git command failed; the message names the repository and what git said."""


class NotACheckout(GitError):
    """The path is not a git work tree (bad input)."""


class UnknownRef(GitError):
    """The ref names no commit in the repository (bad input)."""


def git_env() -> dict[str, str]:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes -o ConnectTimeout=30")
    return env


class GitRepo:
    """A git work tree; every method runs git in it and raises GitError on failure."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @classmethod
    def open(cls, path: Path) -> GitRepo:
        """The work tree at `path` (its top level); NotACheckout when there is none."""
        if not path.is_dir():
            raise NotACheckout(f"{path}: no such directory (expected a git checkout)")
        r = subprocess.run(["git", "-C", str(path), "rev-parse", "--show-toplevel"],
                           capture_output=True, text=True, env=git_env(), check=False,
                           timeout=LOCAL_TIMEOUT_S)
        if r.returncode != 0:
            raise NotACheckout(f"{path}: not a git checkout ({_first_line(r.stderr)})")
        return cls(Path(r.stdout.strip()))

    def _git(self, *args: str, timeout: float = LOCAL_TIMEOUT_S) -> str:
        r = subprocess.run(["git", "-C", str(self.root), *args], capture_output=True,
                           text=True, env=git_env(), check=False, timeout=timeout)
        if r.returncode != 0:
            raise GitError(f"{self.root}: git {' '.join(args)}: {_first_line(r.stderr)}")
        return r.stdout

    def fetch(self) -> None:
        """Every remote's branches (and the tags on them). Tags are not pruned: the checkout
        may be someone's own clone."""
        try:
            self._git("fetch", "--all", "--prune", "--quiet", timeout=FETCH_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise GitError(f"{self.root}: git fetch did not finish in {FETCH_TIMEOUT_S:.0f}s")\
                from None

    def resolve(self, ref: str) -> str:
        """The full SHA of the commit `ref` names; UnknownRef when it names none."""
        if not ref or ref.startswith("-"):
            raise UnknownRef(f"{self.root}: {ref!r} is not a ref")
        r = subprocess.run(["git", "-C", str(self.root), "rev-parse", "--verify", "--quiet",
                            "--end-of-options", f"{ref}^{{commit}}"],
                           capture_output=True, text=True, env=git_env(), check=False,
                           timeout=LOCAL_TIMEOUT_S)
        if r.returncode != 0:
            raise UnknownRef(f"{self.root}: unknown ref {ref!r} (no commit of that name; "
                             "`git -C REPO branch -a` lists the branches)")
        return r.stdout.strip()

    def modified_files(self) -> list[str]:
        """Tracked files with uncommitted changes (untracked files, e.g. a build directory,
        do not count)."""
        out = self._git("status", "--porcelain", "--untracked-files=no")
        return [line[3:] for line in out.splitlines() if line.strip()]

    def checkout(self, sha: str) -> None:
        self._git("-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", sha)

    def add_worktree(self, path: Path, sha: str) -> None:
        """A detached worktree of `sha` at `path` (one left there by a killed night first
        removed)."""
        if path.exists():
            try:
                self.remove_worktree(path)
            except GitError:  # not a worktree git knows (any more): only a directory
                shutil.rmtree(path)
                self._git("worktree", "prune")
        path.parent.mkdir(parents=True, exist_ok=True)
        self._git("worktree", "add", "--quiet", "--detach", str(path), sha)

    def remove_worktree(self, path: Path) -> None:
        self._git("worktree", "remove", "--force", str(path))
        self._git("worktree", "prune")

    def rev_list(self, revisions: str, *, ancestry_path: bool = False) -> list[str]:
        """The commits `git rev-list` gives for revisions, newest first."""
        extra = ["--ancestry-path"] if ancestry_path else []
        return self._git("rev-list", *extra, revisions, "--").split()

    def head(self) -> str:
        return self._git("rev-parse", "HEAD").strip()

    def tree(self, sha: str, path: str) -> str | None:
        """The hash of the tree at `path` in commit `sha` (None when the commit has no such
        directory): equal hashes, equal contents."""
        try:
            return self._git("rev-parse", "--verify", "--quiet", f"{sha}:{path}").strip() or None
        except GitError:
            return None

    def describe(self, sha: str) -> str:
        """`abc1234 subject` for the log."""
        return self._git("log", "-1", "--format=%h %s", sha).strip()


def _first_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    # git's useful line is usually the last one ("fatal: ...").
    return lines[-1] if lines else "no message"
