"""Tests of the InfluxDB sink: line protocol escaping, a stored point published to a real
InfluxDB 1.x and read back with InfluxQL, retries, credentials, and the 2.x API's requests
(against a small local HTTP server: InfluxDB 2 has no Debian package)."""

from __future__ import annotations

import base64
import json
import logging
import math
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from fixtures_influx import free_port
from lsmbench.sinks.influx import (
    ALLOWED_TAGS,
    DeadlineReached,
    InfluxSink,
    InfluxTarget,
    PublishError,
    Secret,
    point_to_lines,
)
from lsmbench.sinks.line_protocol import format_field_value, to_line_protocol

# -- line protocol -------------------------------------------------------------------------------


def test_escaping_rules():
    line = to_line_protocol(
        "lsm interval,x",
        {"point": "a,b c=d", "campaign": "c1"},
        {"field key,=x": 1.5, "s": 'say "hi" \\ there', "n": 3, "ok": True, "off": False},
        1700000000000000000,
    )
    assert line == (
        r"lsm\ interval\,x,campaign=c1,point=a\,b\ c\=d "
        r'field\ key\,\=x=1.5,s="say \"hi\" \\ there",n=3i,ok=true,off=false '
        "1700000000000000000"
    )


def test_field_values():
    assert format_field_value(1.0) == "1.0"
    assert format_field_value(1e20) == "1e+20"
    assert format_field_value(-0.25) == "-0.25"
    assert format_field_value(0) == "0i"
    assert format_field_value(-(2**63)) == f"{-(2**63)}i"
    assert format_field_value(2**63) == "9.223372036854776e+18"  # beyond int64: a float
    assert format_field_value(True) == "true"
    assert format_field_value("") == '""'
    assert format_field_value("a\nb") == '"a\nb"'
    for skipped in (None, math.nan, math.inf, -math.inf):
        assert format_field_value(skipped) is None
    with pytest.raises(TypeError):
        format_field_value([1, 2])


def test_lines_skip_what_cannot_be_sent():
    assert to_line_protocol("m", {}, {"a": None, "b": math.nan}) is None
    assert (
        to_line_protocol("m", {"empty": "", "t": "v"}, {"a": math.inf, "b": 2.0}) == "m,t=v b=2.0"
    )
    # tags sorted by key, fields in the given order
    assert (
        to_line_protocol("m", {"z": "1", "a": "2"}, {"y": 1, "x": 2}, 5) == "m,a=2,z=1 y=1i,x=2i 5"
    )


def test_names_that_have_no_portable_spelling_are_refused():
    for bad in ("a\\b", "line\nbreak", "trailing\\"):
        with pytest.raises(ValueError):
            to_line_protocol("m", {"t": bad}, {"f": 1})
        with pytest.raises(ValueError):
            to_line_protocol("m", {bad: "v"}, {"f": 1})
        with pytest.raises(ValueError):
            to_line_protocol("m", {}, {bad: 1})
        with pytest.raises(ValueError):
            to_line_protocol(bad, {}, {"f": 1})
    with pytest.raises(ValueError, match="empty"):
        to_line_protocol("m", {}, {"": 1})
    with pytest.raises(ValueError, match="empty"):
        to_line_protocol("", {}, {"f": 1})
    with pytest.raises(TypeError):
        to_line_protocol("m", {}, {"f": 1}, 1.5)


def test_escapes_survive_a_real_influxdb(influxd):
    """What the escaping promises, checked against the server's own parser."""
    target = InfluxTarget(
        url=influxd.url, database="escapes", username=influxd.username, token=influxd.password
    )
    sink = InfluxSink(target)
    tags = {"campaign": "odd, name=1 x", "point": "p=1,q=2"}
    fields = {"text": 'quote " back\\slash\nnew line', "f,k=y z": 2.5, "n": 7, "b": True}
    line = to_line_protocol("odd m,x", tags, fields, 1_000_000_000)
    assert sink.write([line]) == 1
    data = influxd.query('SELECT * FROM "odd m,x"', db="escapes")
    series = data["results"][0]["series"][0]
    row = dict(zip(series["columns"], series["values"][0], strict=True))
    assert row == {
        "time": 1_000_000_000,
        "campaign": "odd, name=1 x",
        "point": "p=1,q=2",
        "text": 'quote " back\\slash\nnew line',
        "f,k=y z": 2.5,
        "n": 7,
        "b": True,
    }


# -- a stored point as written by the driver ----------------------------------------------------

START = "2026-03-01T12:00:00Z"
START_NS = 1772366400 * 10**9


def _interval(i: int, writes: int, p99: float | None, measured: bool) -> dict:
    return {
        "schema": "lsm-driver/interval/1",
        "phase": "testing",
        "interval": i,
        "t_start_s": i * 1.0,
        "t_end_s": i * 1.0 + 1.0005,
        "measured": measured,
        "ops": {"insert": writes, "total": writes, "writes": writes},
        "throughput": {
            "insert": writes / 1.0005,
            "total": writes / 1.0005,
            "writes": writes / 1.0005,
        },
        "write_latency_us": {
            "count": writes,
            "mean": 12.5 + i,
            "p50": 10.0,
            "p90": 20.0,
            "p99": p99,
            "p999": None,
            "max": 900.0,
        },
        "latency_us": {"insert": {"count": writes, "mean": 12.5 + i, "p99": p99}},
        "errors": 0,
        "engine": {"flushes": float(i), "stall_us": 0.0, "weird": None},
    }


def _summary(phase: str, elapsed: float, max_tput: float | None) -> dict:
    s = {
        "schema": "lsm-driver/summary/1",
        "status": "ok",
        "interrupted": False,
        "error": None,
        "exit_code": 0,
        "phase": phase,
        "engine": "builtin",
        "start_time_utc": START,
        "hostname": "node-1",
        "config": {"engine_options": {"merge_policy": "tiering", "size_ratio": "4"}},
        "elapsed_s": elapsed,
        "interval_s": 1.0,
        "intervals": 3,
        "window": {
            "start_s": 1.0,
            "end_s": elapsed,
            "duration_s": elapsed - 1.0,
            "intervals": 2,
            "warmup_s": 1.0,
        },
        "throughput": {"mean": 1234.5, "writes_mean": 1234.5, "cv": 0.05},
        "write_latency_us": {"count": 3000, "mean": 13.0, "p50": 10.0, "p99": 99.0},
    }
    if max_tput is not None:
        s["max_write_throughput"] = max_tput
    return s


@pytest.fixture
def point_dir(tmp_path) -> Path:
    """results/<campaign>/<point>/ with a testing and a running phase in the driver's format."""
    d = tmp_path / "results" / "camp-1" / "policy=tiering,size_ratio=4"
    d.mkdir(parents=True)
    (d / "point.json").write_text(
        json.dumps(
            {
                "schema": "lsmbench/point/1",
                "campaign": "camp-1",
                "point": d.name,
                "params": {"engine.merge_policy": "tiering", "engine.size_ratio": 4},
                "rep": 0,
                "seed": 42,
                "engine": "builtin",
                "state": "complete",
                "max_throughput": 1234.5,
                "sustainable": True,
                "published": False,
                "publish_error": None,
            }
        )
    )
    testing = d / "testing"
    testing.mkdir()
    rows = [
        _interval(0, 1000, 50.0, False),
        _interval(1, 1200, None, True),
        _interval(2, 1300, 70.25, True),
    ]
    (testing / "timeseries.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (testing / "summary.json").write_text(json.dumps(_summary("testing", 3.0015, 1234.5)))
    (testing / "histograms.json").write_text("{}")
    (testing / "run.json").write_text("{}")
    running = d / "running"
    running.mkdir()
    rows = [_interval(0, 1100, 30.0, True), _interval(1, 1150, 31.0, True)]
    for r in rows:
        r["phase"] = "running"
        r["queue"] = {"length": 3, "max": 9, "arrivals": 1100, "intended_rate": 1100.0}
    # A killed run: only the .partial file, with a torn last line.
    (running / "timeseries.jsonl.partial").write_text(
        "".join(json.dumps(r) + "\n" for r in rows) + '{"interval": 2, "t_e'
    )
    (running / "summary.json").write_text(json.dumps(_summary("running", 2.001, None)))
    (d / "logs").mkdir()  # not a phase directory
    return d


def _parse(line: str) -> tuple[str, str, str, int]:
    head, fields, ts = line.rsplit(" ", 2)
    measurement, _, tags = head.partition(",")
    return measurement, tags, fields, int(ts)


def test_point_to_lines(point_dir):
    lines = point_to_lines(point_dir, {"campaign": "camp-1", "rep": 0, "size_ratio": "4"})
    parsed = [_parse(x) for x in lines]
    phase_events = ["lsm_phase"] * 2  # the phase's start and end (dashboard annotations)
    assert [p[0] for p in parsed] == ["lsm_interval"] * 2 + ["lsm_summary"] + phase_events + (
        ["lsm_interval"] * 3 + ["lsm_summary"] + phase_events
    )  # running/ sorts before testing/
    assert parsed[3][2] == 'event="start"' and parsed[3][3] == START_NS
    assert parsed[4][2] == 'event="end",status="ok",elapsed_s=2.001'
    assert parsed[4][3] == START_NS + 2_001_000_000
    _, tags, fields, ts = parsed[0]
    assert tags == (
        "campaign=camp-1,engine=builtin,host=node-1,phase=running,"
        r"point=policy\=tiering\,size_ratio\=4,policy=tiering"
    )
    assert ts == START_NS + 1_000_500_000  # start_time_utc + t_end_s
    assert "queue.length=3.0" in fields and "throughput.writes=" in fields
    assert "measured=true" in fields
    assert "engine.weird" not in fields and "write_latency_us.p999" not in fields  # nulls
    assert "engine.flushes=0.0" in fields and "engine.stall_us=0.0" in fields  # engine metrics
    assert "schema" not in fields and "phase=" not in fields  # tags are not repeated as fields
    # Every number is a float (InfluxDB refuses int-then-float for one field).
    assert "ops.writes=1100.0" in fields and "i," not in fields + ","
    # The summary carries the metadata: matrix values, point.json, non-tag keys offered as tags.
    summary = parsed[2][2]
    for expected in (
        'param.engine.size_ratio="4"',
        'point.state="complete"',
        "point.max_throughput=1234.5",
        "point.sustainable=true",
        'meta.rep="0"',
        'meta.size_ratio="4"',
        'status="ok"',
        "throughput.mean=1234.5",
    ):
        assert expected in summary, expected
    assert "published" not in summary and "config" not in summary
    assert parsed[2][3] == START_NS + 2_001_000_000  # start + elapsed_s
    allowed = set(ALLOWED_TAGS)
    for _, tags, _, _ in parsed:
        keys = {kv.split("=", 1)[0] for kv in tags.replace("\\,", "").split(",")}
        assert keys <= allowed


def test_point_to_lines_without_summary_uses_the_file_time(point_dir):
    (point_dir / "running" / "summary.json").unlink()
    partial = point_dir / "running" / "timeseries.jsonl.partial"
    mtime_ns = partial.stat().st_mtime_ns
    lines = [x for x in point_to_lines(point_dir) if "phase=running" in x]
    assert len(lines) == 2  # the intervals; no summary line
    assert _parse(lines[-1])[3] == mtime_ns  # the last interval ends when the file was written


def test_tags_beyond_the_allowed_set_become_fields(point_dir):
    lines = point_to_lines(point_dir, {"campaign": "c", "run_uuid": "1234-5678", "host": "h"})
    for line in lines:
        tags = _parse(line)[1]
        assert "run_uuid" not in tags
        assert "host=h" in tags  # the caller's host wins over summary.json's
    assert any('meta.run_uuid="1234-5678"' in line for line in lines)


# -- publishing to the real InfluxDB -------------------------------------------------------------


def _target(influxd, db: str, **kw) -> InfluxTarget:
    return InfluxTarget(
        url=influxd.url, database=db, username=influxd.username, token=influxd.password, **kw
    )


def _rows(data: dict) -> list[dict]:
    out = []
    for series in data["results"][0].get("series", []):
        for values in series["values"]:
            out.append(dict(zip(series["columns"], values, strict=True)))
    return out


def test_publish_and_query_back(influxd, point_dir):
    sink = InfluxSink(_target(influxd, "lsmbench_test"))  # the database is created on demand
    n = sink.publish_point(point_dir, {"campaign": "camp-1", "rep": 0})
    assert n == 11  # 5 intervals, 2 summaries, 2 x 2 phase boundaries

    rows = _rows(
        influxd.query(
            "SELECT * FROM lsm_interval WHERE phase = 'testing' ORDER BY time", db="lsmbench_test"
        )
    )
    local = [
        json.loads(x) for x in (point_dir / "testing" / "timeseries.jsonl").read_text().splitlines()
    ]
    assert len(rows) == len(local) == 3
    for row, iv in zip(rows, local, strict=True):
        assert row["time"] == START_NS + round(iv["t_end_s"] * 1e9)
        assert row["throughput.writes"] == iv["throughput"]["writes"]
        assert row["ops.writes"] == iv["ops"]["writes"]
        assert row["write_latency_us.p99"] == iv["write_latency_us"]["p99"]  # None stays None
        assert row["write_latency_us.mean"] == iv["write_latency_us"]["mean"]
        assert row["measured"] is iv["measured"]
        assert row["campaign"] == "camp-1"
        assert row["point"] == point_dir.name
        assert row["policy"] == "tiering"
        assert row["host"] == "node-1"
        assert row["engine"] == "builtin"

    # InfluxQL aggregates agree with the local store, e.g. the measured window's mean rate.
    measured = [iv["throughput"]["writes"] for iv in local if iv["measured"]]
    agg = _rows(
        influxd.query(
            'SELECT MEAN("throughput.writes"), COUNT("throughput.writes") FROM lsm_interval '
            "WHERE phase = 'testing' AND measured = true",
            db="lsmbench_test",
        )
    )
    assert agg[0]["count"] == 2
    assert agg[0]["mean"] == pytest.approx(sum(measured) / len(measured), rel=1e-12)

    summary = json.loads((point_dir / "testing" / "summary.json").read_text())
    srow = _rows(
        influxd.query("SELECT * FROM lsm_summary WHERE phase = 'testing'", db="lsmbench_test")
    )
    assert len(srow) == 1
    assert srow[0]["max_write_throughput"] == summary["max_write_throughput"]
    assert srow[0]["throughput.cv"] == summary["throughput"]["cv"]
    assert srow[0]["window.duration_s"] == summary["window"]["duration_s"]
    assert srow[0]["param.engine.merge_policy"] == "tiering"
    assert srow[0]["status"] == "ok"

    # Only the low-cardinality tags exist.
    keys = _rows(influxd.query("SHOW TAG KEYS FROM lsm_interval", db="lsmbench_test"))
    assert {r["tagKey"] for r in keys} == {"campaign", "engine", "host", "phase", "point", "policy"}

    # Publishing again (lsmbench publish after a partial failure) overwrites, never duplicates.
    sink.publish_point(point_dir, {"campaign": "camp-1", "rep": 0})
    count = _rows(
        influxd.query('SELECT COUNT("throughput.writes") FROM lsm_interval', db="lsmbench_test")
    )
    assert count[0]["count"] == 5


def test_credentials_from_env_and_file(influxd, point_dir, tmp_path, monkeypatch):
    influxd.create_database("creds")
    monkeypatch.setenv("LSMB_TEST_INFLUX", f"{influxd.username}:{influxd.password}")
    env_target = InfluxTarget(url=influxd.url, database="creds", token_env="LSMB_TEST_INFLUX")
    assert InfluxSink(env_target).write(["m,campaign=e f=1.0 1"]) == 1

    token_file = tmp_path / "influx.token"
    token_file.write_text(influxd.password + "\n")
    token_file.chmod(0o600)
    file_target = InfluxTarget(
        url=influxd.url, database="creds", username=influxd.username, token_file=str(token_file)
    )
    assert InfluxSink(file_target).write(["m,campaign=f f=2.0 2"]) == 1
    assert len(_rows(influxd.query("SELECT * FROM m", db="creds"))) == 2


def test_wrong_password_fails_at_once_without_leaking_it(influxd):
    influxd.create_database("creds")
    secret = "not-the-password-" + "x" * 8
    sleeps: list[float] = []
    sink = InfluxSink(
        InfluxTarget(url=influxd.url, database="creds", username="admin", token=secret),
        sleep=sleeps.append,
    )
    with pytest.raises(PublishError) as info:
        sink.write(["m f=1.0 1"])
    assert "HTTP 401" in str(info.value)
    assert sleeps == []  # an authentication error is not retried
    assert secret not in str(info.value)
    assert secret not in repr(sink) and secret not in repr(sink.target)


def test_unauthenticated_write_is_refused(influxd):
    sink = InfluxSink(InfluxTarget(url=influxd.url, database="creds"))
    with pytest.raises(PublishError, match="401"):
        sink.write(["m f=1.0 1"])


def test_influxdb_down_gives_up_after_the_retries_quickly():
    port = free_port()  # nothing listens there
    sleeps: list[float] = []
    sink = InfluxSink(
        InfluxTarget(
            url=f"http://127.0.0.1:{port}",
            database="x",
            retries=4,
            backoff_s=0.01,
            backoff_max_s=0.03,
            timeout_s=2,
            token="s3cret-token",
        ),
        sleep=sleeps.append,
    )
    start = time.monotonic()
    with pytest.raises(PublishError) as info:
        sink.write(["m f=1.0 1"])
    assert time.monotonic() - start < 5
    assert sleeps == [0.01, 0.02, 0.03, 0.03]  # doubling, capped; 5 tries
    assert "after 5 tries" in str(info.value) and "ConnectionError" in str(info.value)
    assert "s3cret-token" not in str(info.value)


def test_real_sleep_backoff_is_bounded():
    port = free_port()
    sink = InfluxSink(
        InfluxTarget(
            url=f"http://127.0.0.1:{port}",
            database="x",
            retries=2,
            backoff_s=0.05,
            backoff_max_s=0.05,
        )
    )
    start = time.monotonic()
    with pytest.raises(PublishError):
        sink.write(["m f=1.0 1"])
    assert 0.1 <= time.monotonic() - start < 3


# -- a recording HTTP server (the 2.x API, retries on 5xx/429, batching) -------------------------


class Recorder:
    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.responses: list[tuple[int, dict[str, str], bytes]] = []  # popped per request
        self.echo_auth = False


@pytest.fixture
def http_server():
    rec = Recorder()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            parts = urlsplit(self.path)
            rec.requests.append(
                {
                    "path": parts.path,
                    "query": {k: v[0] for k, v in parse_qs(parts.query).items()},
                    "auth": self.headers.get("Authorization"),
                    "content_type": self.headers.get("Content-Type"),
                    "body": body.decode(),
                }
            )
            status, headers, payload = rec.responses.pop(0) if rec.responses else (204, {}, b"")
            if rec.echo_auth:
                payload = json.dumps(
                    {"error": f"bad auth {self.headers.get('Authorization')}"}
                ).encode()
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    rec.url = f"http://127.0.0.1:{server.server_address[1]}"
    yield rec
    server.shutdown()
    server.server_close()


def test_v2_request_formation(http_server):
    target = InfluxTarget(
        url=http_server.url + "/", org="my org", bucket="lsm/bench", token="tok-123"
    )
    assert target.api == "v2"
    sink = InfluxSink(target)
    assert sink.write(["a f=1.0 1", "b f=2.0 2"]) == 2
    (req,) = http_server.requests
    assert req["path"] == "/api/v2/write"
    assert req["query"] == {"org": "my org", "bucket": "lsm/bench", "precision": "ns"}
    assert req["auth"] == "Token tok-123"
    assert req["content_type"] == "text/plain; charset=utf-8"
    assert req["body"] == "a f=1.0 1\nb f=2.0 2\n"
    assert "tok-123" not in repr(target)


def test_v1_request_formation(http_server):
    sink = InfluxSink(
        InfluxTarget(
            url=http_server.url, database="db1", retention_policy="week", username="u", token="p:w"
        )
    )
    sink.write(["a f=1.0 1"])
    req = http_server.requests[0]
    assert req["path"] == "/write"
    assert req["query"] == {"db": "db1", "rp": "week", "precision": "ns"}
    assert req["auth"] == "Basic " + base64.b64encode(b"u:p:w").decode()
    # user:password in the token itself, or a bare token (InfluxDB 1.8+)
    InfluxSink(InfluxTarget(url=http_server.url, database="d", token="v:x")).write(["a f=1.0 1"])
    assert http_server.requests[1]["auth"] == "Basic " + base64.b64encode(b"v:x").decode()
    InfluxSink(InfluxTarget(url=http_server.url, database="d", token="bare")).write(["a f=1.0 1"])
    assert http_server.requests[2]["auth"] == "Token bare"
    InfluxSink(InfluxTarget(url=http_server.url, database="d")).write(["a f=1.0 1"])
    assert http_server.requests[3]["auth"] is None


def test_retries_on_5xx_and_429_then_succeeds(http_server):
    http_server.responses = [
        (503, {}, b'{"error":"overloaded"}'),
        (429, {"Retry-After": "0.05"}, b""),
        (204, {}, b""),
    ]
    sleeps: list[float] = []
    sink = InfluxSink(
        InfluxTarget(url=http_server.url, database="d", backoff_s=0.01), sleep=sleeps.append
    )
    assert sink.write(["a f=1.0 1"]) == 1
    assert len(http_server.requests) == 3
    assert sleeps == [0.01, 0.05]  # the second delay is the server's Retry-After


def test_bad_request_is_not_retried(http_server):
    http_server.responses = [(400, {}, b'{"error":"partial write: field type conflict"}')]
    sleeps: list[float] = []
    sink = InfluxSink(InfluxTarget(url=http_server.url, database="d"), sleep=sleeps.append)
    with pytest.raises(PublishError, match="field type conflict"):
        sink.write(["a f=1.0 1"])
    assert len(http_server.requests) == 1 and sleeps == []


def test_token_scrubbed_from_errors_and_logs(http_server, caplog):
    http_server.echo_auth = True
    http_server.responses = [(500, {}, b"")] * 3
    sink = InfluxSink(
        InfluxTarget(url=http_server.url, org="o", bucket="b", token="SEKRIT-42", retries=2),
        sleep=lambda s: None,
    )
    with caplog.at_level(logging.DEBUG), pytest.raises(PublishError) as info:
        sink.write(["a f=1.0 1"])
    assert "bad auth Token ***" in str(info.value)
    assert "SEKRIT-42" not in str(info.value)
    assert "retrying" in caplog.text
    assert "SEKRIT-42" not in caplog.text


def test_batching(http_server):
    sink = InfluxSink(InfluxTarget(url=http_server.url, database="d", batch_lines=5))
    lines = [f"m f={i}.0 {i}" for i in range(12)]
    assert sink.write(iter(lines)) == 12
    bodies = [r["body"].splitlines() for r in http_server.requests]
    assert [len(b) for b in bodies] == [5, 5, 2]
    assert [line for body in bodies for line in body] == lines


# -- the target ----------------------------------------------------------------------------------


def test_target_validation_and_spec_secrets():
    with pytest.raises(ValueError, match="database"):
        InfluxTarget(url="http://h:8086")
    with pytest.raises(ValueError, match="org and a bucket"):
        InfluxTarget(url="http://h:8086", api="v2", bucket="b")
    with pytest.raises(ValueError, match="http"):
        InfluxTarget(url="h:8086", database="d")
    with pytest.raises(ValueError, match="must not be written in the spec"):
        InfluxTarget.from_mapping({"url": "http://h", "database": "d", "token": "abc"})
    with pytest.raises(ValueError, match="unknown"):
        InfluxTarget.from_mapping({"url": "http://h", "database": "d", "colour": "red"})
    t = InfluxTarget.from_mapping({"url": "http://h/", "database": "d", "token_env": "X"})
    assert t.url == "http://h" and t.api == "v1"
    s = Secret("abc")
    assert "abc" not in repr(s) and "abc" not in str(s) and s.reveal() == "abc"


def test_credential_sources(tmp_path, monkeypatch):
    monkeypatch.delenv("LSMB_NOPE", raising=False)
    assert InfluxTarget(url="http://h", database="d", token_env="LSMB_NOPE").credential() is None
    monkeypatch.setenv("LSMB_TOK", "  from-env\n")
    f = tmp_path / "tok"
    f.write_text("from-file\nsecond line\n")
    both = InfluxTarget(url="http://h", database="d", token_env="LSMB_TOK", token_file=str(f))
    assert both.credential().reveal() == "from-env"
    monkeypatch.delenv("LSMB_TOK")
    assert both.credential().reveal() == "from-file"
    missing = InfluxTarget(url="http://h", database="d", token_file=str(tmp_path / "none"))
    with pytest.raises(PublishError, match="cannot read the InfluxDB token file"):
        missing.credential()


def test_ping(influxd):
    assert InfluxSink(InfluxTarget(url=influxd.url, database="d")).ping()
    assert not InfluxSink(
        InfluxTarget(url=f"http://127.0.0.1:{free_port()}", database="d", timeout_s=1)
    ).ping()


def test_database_created_on_demand_even_without_retries(influxd, point_dir):
    # Creating the missing database must not use up the only try.
    sink = InfluxSink(_target(influxd, "created_on_demand", retries=0))
    sink.publish_point(point_dir, {"campaign": "c", "point": "p"})
    rows = _rows(influxd.query("SELECT COUNT(*) FROM lsm_summary", db="created_on_demand"))
    assert rows, "nothing was written"


def test_each_phase_is_tagged_with_the_options_it_ran(point_dir):
    """The quickstart's testing phase runs the fair scheduler whatever the point's scheduler:
    its lines say scheduler=fair; the running phase's say the point's (issue 12)."""
    meta = json.loads((point_dir / "point.json").read_text())
    meta["params"] = {"policy": "tiering", "scheduler": "greedy"}
    meta["phases"] = {
        "testing": {"engine_options": {"merge_policy": "tiering", "merge_scheduler": "fair"}},
        "running": {"engine_options": {"merge_policy": "tiering", "merge_scheduler": "greedy"}},
    }
    (point_dir / "point.json").write_text(json.dumps(meta))
    tags_by_phase: dict[str, set[str]] = {}
    for line in point_to_lines(point_dir):
        tags = _parse(line)[1]
        phase = next(kv.split("=", 1)[1] for kv in tags.split(",") if kv.startswith("phase="))
        tags_by_phase.setdefault(phase, set()).add(
            next(kv for kv in tags.split(",") if kv.startswith("scheduler=")))
    assert tags_by_phase == {"testing": {"scheduler=fair"}, "running": {"scheduler=greedy"}}


class _TricklingInflux(BaseHTTPRequestHandler):
    """An InfluxDB that answers 204, but sends its headers a byte every 0.2 s for a minute:
    each read comes well within any per-read timeout, the whole answer never does."""

    stop = threading.Event()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.wfile.write(b"HTTP/1.1 204 No Content\r\nX-Slow: ")
        for _ in range(300):
            if self.stop.wait(0.2):
                return
            self.wfile.write(b"x")
            self.wfile.flush()
        self.wfile.write(b"\r\nContent-Length: 0\r\n\r\n")

    def log_message(self, *args: object) -> None:
        pass


def test_a_trickling_answer_is_abandoned_at_the_deadline():
    """requests' timeout is per read; the sink's deadline bounds the whole try. Without that,
    this write would wait the minute out and then succeed."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _TricklingInflux)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        target = InfluxTarget(url=f"http://127.0.0.1:{server.server_port}", database="d",
                              timeout_s=1.0, retries=0)
        sink = InfluxSink(target, deadline=time.monotonic() + 3.0)
        # (a machine slow enough to spend the 3 s before the try would give up before it:
        # the same error, which a sink without the bound never raises here)
        with pytest.raises(DeadlineReached, match="the time allowed for the sink ran out"):
            sink.write(["m f=1.0 1"])
    finally:
        _TricklingInflux.stop.set()
        server.shutdown()
        server.server_close()
