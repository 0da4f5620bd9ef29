"""Small real filesystems for the fault tests: a sized tmpfs, or an ext4 image on a loop device.

Both need root (mount, losetup); without it the test is skipped with the reason. Each is
unmounted (and its loop device detached) when the `with` block ends, also when a test fails.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


def _run(*argv: str) -> str:
    r = subprocess.run(argv, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {(r.stderr or r.stdout).strip()}")
    return r.stdout


def _need_root(*tools: str) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root (mounting a small filesystem)")
    for tool in ("mount", "umount", *tools):
        if shutil.which(tool) is None:
            pytest.skip(f"needs {tool}")


@contextlib.contextmanager
def tmpfs(path: Path, size: str) -> Iterator[Path]:
    """A tmpfs of `size` (e.g. "8m") mounted on path (created if missing)."""
    _need_root()
    path.mkdir(parents=True, exist_ok=True)
    _run("mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(path))
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True, check=False)


@contextlib.contextmanager
def ext4_image(path: Path, size_mb: int) -> Iterator[Path]:
    """An ext4 filesystem of size_mb MiB, in an image file beside path, loop-mounted on path."""
    _need_root("mkfs.ext4", "losetup")
    path.mkdir(parents=True, exist_ok=True)
    image = path.with_name(path.name + ".img")
    with open(image, "wb") as f:
        f.truncate(size_mb << 20)
    device = None
    mounted = False
    try:
        _run("mkfs.ext4", "-q", "-F", "-m", "0", str(image))
        device = _run("losetup", "--find", "--show", str(image)).strip()
        _run("mount", device, str(path))
        mounted = True
        yield path
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(path)], capture_output=True, check=False)
        if device:
            subprocess.run(["losetup", "-d", device], capture_output=True, check=False)
        image.unlink(missing_ok=True)


def fill(filler: Path) -> None:
    """Writes the file filler until its filesystem has no space left."""
    chunk = b"\0" * (64 << 10)
    with open(filler, "wb", buffering=0) as f:
        while True:
            try:
                f.write(chunk)
            except OSError as e:
                if e.errno != errno.ENOSPC:
                    raise
                if len(chunk) == 1:
                    break
                chunk = chunk[: len(chunk) // 2]

