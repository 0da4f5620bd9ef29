"""Sink backends, chosen by a short name: the field of the spec's ``sinks:`` section that
names one (its section's ``kind``). The interface is base.Sink; nothing outside this package
knows a backend."""

from __future__ import annotations

from ..util import names
from .base import DeadlineReached, PublishError, SeriesPoint, Sink, SinkSection, UnknownSink
from .influx import InfluxSink

BACKENDS: dict[str, type[Sink]] = {
    "influx": InfluxSink,
}


def backend(name: str) -> type[Sink]:
    """The backend named `name`; UnknownSink names the ones there are."""
    try:
        return BACKENDS[name]
    except KeyError:
        raise UnknownSink(
            f"unknown sink {name!r} (choose from: {names.choices(list(BACKENDS))})"
        ) from None


def open_sink(section: SinkSection, *, deadline: float | None = None) -> Sink:
    """The sink of a validated spec section (its ``kind`` chooses the backend); nothing is
    tried after `deadline` (a time.monotonic())."""
    return backend(section.kind).from_section(section, deadline=deadline)


def check_section(section: SinkSection) -> None:
    """ValueError saying what is wrong with a section; opens nothing."""
    backend(section.kind).check_section(section)


__all__ = [
    "BACKENDS",
    "DeadlineReached",
    "PublishError",
    "SeriesPoint",
    "Sink",
    "SinkSection",
    "UnknownSink",
    "backend",
    "check_section",
    "open_sink",
]
