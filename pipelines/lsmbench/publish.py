"""Sending stored points to the campaign's sink (lsmbench.sinks: the backend its spec
section names).

The local store is the source of truth: publishing reads a finished point's
directory and sends it; a failure (the sink down, an HTTP error) never fails
or loses a campaign -- the point is marked ``published: false`` with the
error, and ``lsmbench publish`` sends it later. Credentials come from the
environment variable named by ``token_env`` or the file named by
``token_file``, never from the spec text.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .spec import SINK_SECTIONS
from .store import PointRecord, Store
from .util import names
from .util.units import format_duration

if TYPE_CHECKING:
    from .sinks import SinkSection


def stored_section(spec: Mapping[str, Any]) -> SinkSection | None:
    """The sink section of a campaign's stored spec (campaign.json's `spec`), validated, or
    None when it has none."""
    sinks = spec.get("sinks") or {}
    for name in names.SINKS:
        data = sinks.get(name)
        if data:
            return SINK_SECTIONS[name].model_validate(data)
    return None


def sink_from_url(url: str, base: SinkSection | None = None, *, kind: str | None = None,
                  **changes: Any) -> SinkSection:
    """A sink section for `lsmbench publish --to URL`: what the URL says (for InfluxDB, its
    query may name db, org, bucket), the rest (user, token_env, ...) from `base` (the
    campaign's stored section). The backend is base's, else `kind`, else the first of
    names.SINKS."""
    from .sinks import backend

    kind = base.kind if base is not None else kind or names.SINKS[0]
    fields = base.model_dump() if base is not None else {}
    fields.update(backend(kind).url_fields(url))
    fields.update({k: v for k, v in changes.items() if v is not None})
    return SINK_SECTIONS[kind].model_validate(fields)


@dataclass
class PublishOutcome:
    ok: bool
    error: str | None = None
    lines: int = 0
    deadline_reached: bool = False  # gave up because its time ran out (sinks.KIND.budget)


def publish_record(record: PointRecord, sink: SinkSection,
                   deadline: float | None = None) -> PublishOutcome:
    """Sends one stored point to the sink of a spec section; never raises for a sink failure
    (it is the outcome). Nothing is tried after `deadline` (a time.monotonic())."""
    try:
        from .sinks import DeadlineReached, PublishError, open_sink
    except ImportError as e:
        return PublishOutcome(False, f"the {sink.kind} sink is unavailable: {e}")
    try:
        sent = open_sink(sink, deadline=deadline).publish_point(record.path, dict(sink.tags))
    except DeadlineReached as e:
        return PublishOutcome(False, str(e), deadline_reached=True)
    except PublishError as e:
        return PublishOutcome(False, str(e))
    except (OSError, ValueError) as e:
        return PublishOutcome(False, f"{type(e).__name__}: {e}")
    return PublishOutcome(True, None, sent)


def publish_point(store: Store, record: PointRecord, sink: SinkSection,
                  deadline: float | None = None) -> PublishOutcome:
    """Publishes and records the outcome in the point's point.json."""
    return record_outcome(store, record, sink, publish_record(record, sink, deadline))


def record_outcome(store: Store, record: PointRecord, sink: SinkSection,
                   out: PublishOutcome) -> PublishOutcome:
    store.update_point(record, published=out.ok, publish_error=out.error,
                       published_to=sink.url if out.ok else record.data.get("published_to"))
    return out


class SinkBudget:
    """The time a campaign may spend waiting on its sink, over all its points
    (sinks.KIND.budget): each publish may use what is left; once it is used up, the
    remaining points are marked unpublished without a try, for `lsmbench publish` later.
    Shared by the node threads of a distributed run."""

    def __init__(self, budget_s: float) -> None:
        self.budget_s = budget_s
        self.used_s = 0.0
        self._lock = threading.Lock()

    @property
    def exhausted(self) -> bool:
        return self.used_s >= self.budget_s

    def publish(self, store: Store, record: PointRecord, sink: SinkSection) -> PublishOutcome:
        with self._lock:
            left = self.budget_s - self.used_s
        if left <= 0:
            from .sinks import backend

            return record_outcome(store, record, sink, PublishOutcome(
                False, f"not sent: the campaign's {format_duration(self.budget_s)} for the sink "
                       f"(sinks.{sink.kind}.budget) were used up by a slow or failing "
                       f"{backend(sink.kind).title}; `lsmbench publish` sends it later"))
        start = time.monotonic()
        out = publish_point(store, record, sink, deadline=start + left)
        with self._lock:
            self.used_s += time.monotonic() - start
            if out.deadline_reached:
                # What is left is too short for a try and its backoff: the budget is spent.
                self.used_s = max(self.used_s, self.budget_s)
        return out
