"""What the builtin engine's "0 means the policy's default" options resolve to.

``size_ratio`` and ``max_components_per_level`` take 0 for "the merge policy's default"
(options.def). Resolved here as the engine resolves them -- engines/lsm/policy/policies.h
(``kLevelingDefaultRatio`` and its siblings, a test holds the numbers to the header) and
policy.cc (which policy takes which) -- so that what a spec runs can be compared with a domain:
``lsmbench tune``'s first trial is the spec's own configuration, resolved. A default that
depends on the running tree (``max_components``: by the number of levels) is not resolved.
"""

from __future__ import annotations

from typing import Any

# policies.h: kLevelingDefaultRatio (leveling, partitioned), kTieringDefaultRatio,
# kSizeTieredDefaultRatio. The bounded-depth policies do not read size_ratio.
SIZE_RATIO: dict[str, float] = {"leveling": 10, "partitioned": 10, "tiering": 3,
                                "size-tiered": 1.2}
# options.def, max_components_per_level: 2 for leveling, 2*T for tiering, 50 for size-tiered.
PER_LEVEL_LEVELING = 2
PER_LEVEL_SIZE_TIERED = 50
RESOLVED = ("size_ratio", "max_components_per_level")


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def size_ratio(policy: str, value: Any) -> float | None:
    """The size ratio a policy runs with: the value, or the policy's default for 0."""
    v = _number(value)
    if v is None:
        return None
    return SIZE_RATIO.get(policy) if v == 0 else v


def resolve(engine: str, option: str, value: Any, options: dict[str, Any],
            default_policy: str) -> Any:
    """``value`` of ``option`` as the builtin engine runs it with the other ``options``: 0
    replaced by the policy's default where the policy has one; other values as they are."""
    if engine != "builtin" or option not in RESOLVED or _number(value) != 0:
        return value
    policy = str(options.get("merge_policy", default_policy))
    if option == "size_ratio":
        resolved = SIZE_RATIO.get(policy)
    elif policy == "leveling":
        resolved = PER_LEVEL_LEVELING
    elif policy == "size-tiered":
        resolved = PER_LEVEL_SIZE_TIERED
    elif policy == "tiering":
        t = size_ratio(policy, options.get("size_ratio", 0))
        resolved = int(2 * t) if t is not None else None
    else:
        resolved = None
    if resolved is None:
        return value
    return float(resolved) if isinstance(value, float) else resolved
