"""The sink interface (lsmbench.sinks.base.Sink) and its registry: a backend is chosen by the
short name its spec section carries (`kind`), for a campaign's points, `lsmbench publish --to
URL` and the nightly history alike; an unknown name is refused naming the ones there are. No
server: a fake backend registered by name, and InfluxDB's requests recorded by a fake
session."""

from __future__ import annotations

import json
import shutil
from typing import Any, ClassVar

import pytest
from lsmbench import publish, sinks
from lsmbench.sinks import BACKENDS, SeriesPoint, Sink, UnknownSink
from lsmbench.spec import SINK_SECTIONS, InfluxSinkSpec, Sinks
from lsmbench.store import Store
from lsmbench.track.influx_history import CHANGES_MEASUREMENT, HISTORY_MEASUREMENT, publish_history
from lsmbench.util import names
from pydantic import BaseModel, ConfigDict
from repo_paths import TESTS

TRACK_FIXTURE = TESTS / "fixtures" / "track"


class FakeSection(BaseModel):
    """A spec section of the fake sink."""

    model_config = ConfigDict(extra="forbid")
    kind: ClassVar[str] = "fake"

    url: str
    shelf: str = "default"
    tags: dict[str, str] = {}
    budget: float = 10.0


class FakeSink(Sink):
    """Keeps what it is sent."""

    title: ClassVar[str] = "Fake"
    opened: ClassVar[list[FakeSink]] = []

    def __init__(self, section: FakeSection, deadline: float | None) -> None:
        self.section, self.deadline = section, deadline
        self.points: list[tuple[str, dict[str, Any]]] = []
        self.series: list[SeriesPoint] = []
        self.deleted: list[tuple[str, dict[str, str]]] = []
        FakeSink.opened.append(self)

    @classmethod
    def from_section(cls, section: Any, *, deadline: float | None = None) -> FakeSink:
        return cls(section, deadline)

    @classmethod
    def check_section(cls, section: Any) -> None:
        if section.shelf == "bad":
            raise ValueError("the fake sink has no shelf 'bad'")

    @classmethod
    def url_fields(cls, url: str) -> dict[str, Any]:
        base, _, shelf = url.partition("#")
        return {"url": base, **({"shelf": shelf} if shelf else {})}

    def publish_point(self, point_dir: Any, tags: Any) -> int:
        self.points.append((str(point_dir), dict(tags)))
        return 7

    def write_series(self, points: Any) -> int:
        points = list(points)
        self.series += points
        return len(points)

    def delete_series(self, measurement: str, tags: Any) -> bool:
        self.deleted.append((measurement, dict(tags)))
        return True

    def ping(self) -> bool:
        return True


@pytest.fixture
def fake(monkeypatch):
    monkeypatch.setitem(BACKENDS, "fake", FakeSink)
    monkeypatch.setitem(SINK_SECTIONS, "fake", FakeSection)
    FakeSink.opened = []
    return FakeSink


def stored_point(tmp_path):
    store = Store(tmp_path)
    w = store.begin_point("c1", "a")
    (w.path / "testing").mkdir()
    (w.path / "testing" / "summary.json").write_text(json.dumps(
        {"start_time_utc": "2026-01-01T00:00:00Z", "elapsed_s": 1.0}))
    w.commit({"campaign": "c1", "point": "a", "state": "complete", "published": False})
    return store, store.point("c1", "a")


def test_sink_names_have_one_list():
    assert tuple(BACKENDS) == names.SINKS == tuple(SINK_SECTIONS) == tuple(Sinks.model_fields)
    for name, section in SINK_SECTIONS.items():
        assert section.kind == name
        assert {"url", "tags", "budget"} <= set(section.model_fields)


def test_a_second_sink_is_chosen_by_its_name(fake, tmp_path):
    section = FakeSection(url="fake://shelf", tags={"host": "ci"})
    assert isinstance(sinks.open_sink(section), FakeSink)

    # A campaign's point: published through the interface, the outcome in point.json.
    store, rec = stored_point(tmp_path)
    out = publish.publish_point(store, rec, section, deadline=123.0)
    assert (out.ok, out.lines, out.error) == (True, 7, None)
    first, sink = fake.opened  # one sink opened per point
    assert first.points == [] and sink.deadline == 123.0
    assert sink.points == [(str(rec.path), {"host": "ci"})]
    rec = store.point("c1", "a")
    assert rec.data["published"] is True and rec.data["published_to"] == "fake://shelf"

    # Its budget, used up, is named by its own name and title.
    out = publish.SinkBudget(0.0).publish(store, rec, section)
    assert not out.ok and "(sinks.fake.budget) were used up by a slow or failing Fake" in out.error

    # `--to URL`: the URL's fields from the backend of the stored section, the rest kept.
    to = publish.sink_from_url("fake://other#top", FakeSection(url="fake://x", tags={"a": "b"}))
    assert isinstance(to, FakeSection)
    assert (to.url, to.shelf, to.tags) == ("fake://other", "top", {"a": "b"})
    assert publish.sink_from_url("fake://y", kind="fake").shelf == "default"
    sinks.check_section(to)
    with pytest.raises(ValueError, match="no shelf 'bad'"):
        sinks.check_section(FakeSection(url="fake://x", shelf="bad"))

    # The nightly history: time-series points and the stale change points deleted.
    report = tmp_path / "report"
    shutil.copytree(TRACK_FIXTURE, report)
    history = sinks.open_sink(section)
    done = publish_history(history, report, ["nightly-fixture"])
    assert (done.history_points, done.change_points, done.stale_deleted) == (32, 3, True)
    assert history.deleted == [(CHANGES_MEASUREMENT, {"campaign": "nightly-fixture"})]
    assert {p.measurement for p in history.series} == {HISTORY_MEASUREMENT, CHANGES_MEASUREMENT}


def test_an_unknown_sink_name_is_refused_naming_the_allowed_ones(tmp_path):
    class Section:
        kind = "kafka"
        url = "kafka://broker"
        tags: ClassVar[dict[str, str]] = {}

    expected = f"unknown sink 'kafka' (choose from: {names.choices(list(names.SINKS))})"
    assert expected == "unknown sink 'kafka' (choose from: influx)"
    with pytest.raises(UnknownSink) as e:
        sinks.backend("kafka")
    assert str(e.value) == expected
    with pytest.raises(UnknownSink, match=r"choose from: influx\)"):
        sinks.open_sink(Section())
    with pytest.raises(UnknownSink, match=r"choose from: influx\)"):
        publish.sink_from_url("kafka://broker", kind="kafka")
    # Publishing a point to it is an outcome, never a traceback: the point stays unpublished.
    store, rec = stored_point(tmp_path)
    out = publish.publish_point(store, rec, Section())
    assert not out.ok and expected in out.error
    assert store.point("c1", "a").data["published"] is False


# -- InfluxDB behind the interface, its requests recorded ------------------------------------------


class _Answer:
    def __init__(self, status: int, body: dict[str, Any] | None = None) -> None:
        self.status_code, self._body = status, body or {"results": [{}]}
        self.text, self.reason, self.headers = json.dumps(self._body), "", {}

    def json(self) -> dict[str, Any]:
        return self._body


class _Session:
    def __init__(self, answers: list[_Answer] | None = None) -> None:
        self.calls: list[dict[str, Any]] = []
        self.answers = answers or []

    def request(self, method: str, url: str, **kw: Any) -> _Answer:
        self.calls.append({"method": method, "url": url, **kw})
        return self.answers.pop(0) if self.answers else _Answer(200)

    def post(self, url: str, **kw: Any) -> _Answer:
        self.calls.append({"method": "POST", "url": url, **kw})
        return _Answer(204)


def influx(section: InfluxSinkSpec, session: _Session) -> Sink:
    sink = sinks.open_sink(section)
    sink.session = session  # type: ignore[attr-defined]
    return sink


def test_influx_series_and_deletes_through_the_interface():
    v1 = InfluxSinkSpec(url="http://db:8086", database="hist", token_env=None)
    session = _Session([_Answer(200, {"results": [{"error": "measurement not found"}]})])
    sink = influx(v1, session)
    assert type(sink).title == "InfluxDB"
    # A measurement not there yet is deleted all the same.
    assert sink.delete_series(CHANGES_MEASUREMENT, {"campaign": "it's"}) is True
    (call,) = session.calls
    assert call["method"] == "POST" and call["url"] == "http://db:8086/query"
    assert call["params"]["q"] == (f'DELETE FROM "{CHANGES_MEASUREMENT}" WHERE '
                                   "\"campaign\" = 'it\\'s'")
    sent = sink.write_series([
        SeriesPoint("m", {"campaign": "c", "empty": ""}, {"median": 1.5, "commit": "abc"}, 5),
        SeriesPoint("m", {"campaign": "c"}, {"median": None}, 6),  # no value: not a point
    ])
    assert sent == 1 and session.calls[-1]["data"] == b'm,campaign=c median=1.5,commit="abc" 5\n'

    v2 = InfluxSinkSpec(url="http://db:8086", org="o", bucket="b", token_env=None)
    session = _Session()
    assert influx(v2, session).delete_series(CHANGES_MEASUREMENT, {"campaign": "c"}) is False
    assert session.calls == []
