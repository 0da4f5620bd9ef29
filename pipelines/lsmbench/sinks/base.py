"""The sink interface: where stored results are published, whatever the server.

A sink backend is chosen by a short name (:data:`lsmbench.sinks.BACKENDS`, the names in
``util/names.py`` ``SINKS``): the spec's ``sinks:`` section has one field per name, and a
section's ``kind`` is its name. Everything outside this package talks to a sink only through
this interface:

    from_section(section, deadline=)   the sink of a spec section (reads its credential)
    check_section(section)             what is wrong with a section, opening nothing
    url_fields(url)                    the section's fields a `--to URL` sets
    publish_point(point_dir, tags)     a stored point's driver outputs; how many records sent
    write_series(points)               time-series points (SeriesPoint); how many sent
    delete_series(measurement, tags)   a series' points; False when the sink cannot delete
    ping()                             the server answers

Every failure to send is a PublishError (DeadlineReached when the time allowed ran out) whose
message names the sink and what to fix, never a secret; the caller keeps the point in the
local store, unpublished.
"""

from __future__ import annotations

import abc
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

# A field's value; None (and a non-finite float) is "no value" and is not sent.
FieldValue = bool | int | float | str | None


class SinkSection(Protocol):
    """What every sink's spec section (spec/models.py, a field of `Sinks`) has."""

    kind: ClassVar[str]  # the backend's name (names.SINKS)
    url: str  # where it publishes (point.json's published_to)
    tags: dict[str, str]  # sent with every point
    budget: float  # the most a campaign waits on the sink, in seconds

    # A pydantic model: `--to URL` and a point's own tags make changed copies of it.
    def model_dump(self) -> dict[str, Any]: ...

    def model_copy(self, *, update: Mapping[str, Any] | None = None) -> Any: ...


class PublishError(RuntimeError):
    """Publishing failed (after the retries, where retrying made sense). Never holds secrets."""


class DeadlineReached(PublishError):
    """Publishing gave up because the time allowed for it (the sink's deadline) ran out."""


class UnknownSink(ValueError):
    """A sink name that no backend has; the message lists the names there are."""


@dataclass(frozen=True)
class SeriesPoint:
    """One point of a time series: a measurement's tags (few values each, indexed), its fields
    (the values) and its time in ns since the epoch (None: the server's clock; avoid it, since
    re-publishing then adds instead of overwriting). An empty tag value is no tag."""

    measurement: str
    tags: Mapping[str, str] = field(default_factory=dict)
    fields: Mapping[str, FieldValue] = field(default_factory=dict)
    time_ns: int | None = None


class Sink(abc.ABC):
    """A server that stored results are published to (see the module docstring)."""

    # How messages name the server ("InfluxDB").
    title: ClassVar[str]

    @classmethod
    @abc.abstractmethod
    def from_section(cls, section: SinkSection, *, deadline: float | None = None) -> Sink:
        """The sink of a validated spec section (spec/models.py). Nothing is tried after
        `deadline` (a time.monotonic()). Raises PublishError when its credential cannot be
        read, ValueError for a section it cannot use."""

    @classmethod
    @abc.abstractmethod
    def check_section(cls, section: SinkSection) -> None:
        """Raises ValueError saying what is wrong with the section; opens nothing and reads no
        credential."""

    @classmethod
    @abc.abstractmethod
    def url_fields(cls, url: str) -> dict[str, Any]:
        """The fields of this sink's spec section that `--to URL` sets (the others come from
        the campaign's stored section)."""

    @abc.abstractmethod
    def publish_point(self, point_dir: str | os.PathLike[str], tags: Mapping[str, Any]) -> int:
        """Sends a stored point's driver outputs; returns how many records were sent."""

    @abc.abstractmethod
    def write_series(self, points: Iterable[SeriesPoint]) -> int:
        """Sends the points (a point with no field value is skipped); returns how many were
        sent. Re-sending a point (the same measurement, tags and time) overwrites it."""

    @abc.abstractmethod
    def delete_series(self, measurement: str, tags: Mapping[str, str]) -> bool:
        """Deletes the measurement's points that have these tags (none there is no error);
        False when this sink cannot delete (re-sent points then only overwrite)."""

    @abc.abstractmethod
    def ping(self) -> bool:
        """Whether the server answers."""
