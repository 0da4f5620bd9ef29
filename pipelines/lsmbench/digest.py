"""The one digest of a JSON-able value: points' configuration hashes, the nightly history's
spec hashes and testbed keys, and tune's trial keys are all this, so equal settings always hash
equal; and what of a node's fingerprint a testbed key covers (``testbed_identity``: the nightly
history's segments, `lsmbench reproduce --testbed`'s node keys)."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any


def canonical_hash(obj: Any, length: int = 12) -> str:
    """The first `length` hex digits of the SHA-256 of obj as canonical JSON (sorted keys, no
    spaces; anything JSON cannot say, as its str)."""
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:length]


def _selected_scheduler(text: Any) -> str | None:  # the disk's I/O scheduler
    """'mq-deadline [none]' -> 'none' (the kernel marks the one in use)."""
    if not isinstance(text, str):
        return None
    m = re.search(r"\[([^\]]+)\]", text)
    return m.group(1) if m else text.strip() or None


def testbed_identity(fingerprint: dict[str, Any], throttle: Any) -> dict[str, Any]:
    """What makes two nights comparable: the hardware, the kernel, the disk and its I/O
    scheduler, the filesystem, and the throttle. Not the host name (a renamed machine is the
    same testbed) and not the project commit (that is what is tracked)."""
    disk = fingerprint.get("disk") or {}
    return {
        "cpu_model": fingerprint.get("cpu_model"),
        "cpu_count": fingerprint.get("cpu_count"),
        "memory_bytes": fingerprint.get("memory_bytes"),
        "arch": fingerprint.get("arch"),
        "kernel": fingerprint.get("kernel"),
        "os": fingerprint.get("os"),
        "disk_model": disk.get("model"),
        "disk_rotational": disk.get("rotational"),
        # The disk's I/O scheduler ("scheduler" in fingerprints before 2026-11-27); the key
        # keeps its name so that testbed keys, hashes of this mapping, stay what they were.
        "disk_scheduler": _selected_scheduler(disk.get("io_scheduler", disk.get("scheduler"))),
        "filesystem": disk.get("filesystem"),
        "throttle": throttle,
    }
