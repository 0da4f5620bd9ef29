"""Sending stored points to InfluxDB (the sink module is lsmbench.sinks.influx).

The local store is the source of truth: publishing reads a finished point's
directory and sends it; a failure (InfluxDB down, an HTTP error) never fails
or loses a campaign -- the point is marked ``published: false`` with the
error, and ``lsmbench publish`` sends it later. Credentials come from the
environment variable named by ``token_env`` or the file named by
``token_file``, never from the spec text.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from .spec import InfluxSinkSpec
from .store import PointRecord, Store
from .util.units import format_duration


def sink_from_url(url: str, base: InfluxSinkSpec | None = None, **changes: Any) -> InfluxSinkSpec:
    """A sink for `lsmbench publish --to URL`: the URL's query may name db, org, bucket;
    the rest (user, token_env, ...) comes from `base` (the campaign's stored sink)."""
    from urllib.parse import parse_qs, urlsplit

    parts = urlsplit(url)
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    fields = base.model_dump() if base else {}
    fields["url"] = f"{parts.scheme}://{parts.netloc}{parts.path}".rstrip("/")
    for key, name in (("db", "database"), ("database", "database"), ("org", "org"),
                      ("bucket", "bucket")):
        if key in query:
            fields[name] = query[key]
    if "bucket" in query and "db" not in query and "database" not in query:
        fields["database"] = None
    fields.update({k: v for k, v in changes.items() if v is not None})
    return InfluxSinkSpec.model_validate(fields)


@dataclass
class PublishOutcome:
    ok: bool
    error: str | None = None
    lines: int = 0
    deadline_reached: bool = False  # gave up because its time ran out (sinks.influx.budget)


def make_target(sink: InfluxSinkSpec) -> Any:
    """The InfluxTarget for a sink section; it reads the credential itself, from
    $token_env or token_file, when the sink is opened."""
    from .sinks.influx import InfluxTarget

    return InfluxTarget(
        url=sink.url,
        api=sink.api,
        database=sink.database,
        retention_policy=sink.retention_policy,
        org=sink.org,
        bucket=sink.bucket,
        username=sink.username,
        token_env=sink.token_env,
        token_file=sink.token_file,
        measurement_prefix=sink.measurement_prefix,
        timeout_s=sink.timeout,
        retries=sink.retries,
    )


def publish_record(record: PointRecord, sink: InfluxSinkSpec,
                   deadline: float | None = None) -> PublishOutcome:
    """Sends one stored point; never raises for a sink failure (it is the outcome). Nothing is
    tried after `deadline` (a time.monotonic())."""
    try:
        from .sinks.influx import DeadlineReached, InfluxSink, PublishError
    except ImportError as e:
        return PublishOutcome(False, f"InfluxDB sink unavailable: {e}")
    try:
        sent = InfluxSink(make_target(sink), deadline=deadline).publish_point(
            record.path, dict(sink.tags))
    except DeadlineReached as e:
        return PublishOutcome(False, str(e), deadline_reached=True)
    except PublishError as e:
        return PublishOutcome(False, str(e))
    except (OSError, ValueError) as e:
        return PublishOutcome(False, f"{type(e).__name__}: {e}")
    return PublishOutcome(True, None, sent)


def publish_point(store: Store, record: PointRecord, sink: InfluxSinkSpec,
                  deadline: float | None = None) -> PublishOutcome:
    """Publishes and records the outcome in the point's point.json."""
    return record_outcome(store, record, sink, publish_record(record, sink, deadline))


def record_outcome(store: Store, record: PointRecord, sink: InfluxSinkSpec,
                   out: PublishOutcome) -> PublishOutcome:
    store.update_point(record, published=out.ok, publish_error=out.error,
                       published_to=sink.url if out.ok else record.data.get("published_to"))
    return out


class SinkBudget:
    """The time a campaign may spend waiting on its sink, over all its points
    (sinks.influx.budget): each publish may use what is left; once it is used up, the
    remaining points are marked unpublished without a try, for `lsmbench publish` later.
    Shared by the node threads of a distributed run."""

    def __init__(self, budget_s: float) -> None:
        self.budget_s = budget_s
        self.used_s = 0.0
        self._lock = threading.Lock()

    @property
    def exhausted(self) -> bool:
        return self.used_s >= self.budget_s

    def publish(self, store: Store, record: PointRecord, sink: InfluxSinkSpec) -> PublishOutcome:
        with self._lock:
            left = self.budget_s - self.used_s
        if left <= 0:
            return record_outcome(store, record, sink, PublishOutcome(
                False, f"not sent: the campaign's {format_duration(self.budget_s)} for the sink "
                       f"(sinks.influx.budget) were used up by a slow or failing InfluxDB; "
                       f"`lsmbench publish` sends it later"))
        start = time.monotonic()
        out = publish_point(store, record, sink, deadline=start + left)
        with self._lock:
            self.used_s += time.monotonic() - start
            if out.deadline_reached:
                # What is left is too short for a try and its backoff: the budget is spent.
                self.used_s = max(self.used_s, self.budget_s)
        return out
