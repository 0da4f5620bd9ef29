"""The one digest of a JSON-able value: points' configuration hashes, the nightly history's
spec hashes and tune's trial keys are all this, so equal settings always hash equal."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_hash(obj: Any, length: int = 12) -> str:
    """The first `length` hex digits of the SHA-256 of obj as canonical JSON (sorted keys, no
    spaces; anything JSON cannot say, as its str)."""
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:length]
