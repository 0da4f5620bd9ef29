"""The one digest of a JSON-able value: points' configuration hashes, the nightly history's
spec hashes and tune's trial keys are all this, so equal settings always hash equal."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_hash(obj: Any, length: int = 12) -> str:
    """The first `length` hex digits of the SHA-256 of obj as canonical JSON (sorted keys, no
    spaces; anything JSON cannot say, as its str)."""
    text = json.dumps(_json_keys(obj), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:length]


def _json_keys(obj: Any) -> Any:
    """obj with the keys of a mapping whose keys are of mixed types (a spec may say
    {"": null, 0: null}) as the strings JSON makes of them (0 -> "0"), so that they sort;
    a mapping of one key type is left as it is (its digest does not change)."""
    if isinstance(obj, dict):
        mixed = len({type(k) for k in obj}) > 1
        return {(json.dumps(k, default=str) if mixed and not isinstance(k, str) else k):
                _json_keys(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_json_keys(v) for v in obj]
    return obj
