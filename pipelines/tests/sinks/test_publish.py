"""The InfluxDB wiring with a real influxd: points are published after each point; a sink
that is down, or slow and failing (a local server that answers 503/429 and then stalls),
never fails the campaign nor holds it past its sink budget, and `lsmbench publish` sends the
points later."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import ClassVar

import pytest
import yaml
from fixtures_influx import free_port, influxd  # noqa: F401 - the real server fixture
from lsmbench.publish import sink_from_url
from lsmbench.spec import InfluxSinkSpec
from lsmbench.store import Store

pytestmark = pytest.mark.slow

PW_ENV = "LSMBENCH_TEST_INFLUX_PASSWORD"


def spec_file(tmp_path: Path, data_root: Path, name: str, url: str,
              matrix: dict | None = None, **sink: object) -> Path:
    spec = {
        "name": name,
        "matrix": matrix or {},
        "engine": {"options": {"memtable_bytes": "1M"}},
        "workload": {"file": "update-uniform-1kb", "set": {"record_count": 5000}},
        "phases": {"testing": {"duration": "2s", "warmup": "0.5s"},
                   "running": {"duration": "1s"}},
        "sinks": {"influx": {"url": url, "database": "lsmtest", "username": "admin",
                             "token_env": PW_ENV, "retries": 1, "timeout": "2s",
                             "tags": {"host": "ci"}, **sink}},
        "testbed": {"type": "local", "data_dir": str(data_root / "data")},
    }
    p = tmp_path / f"{name}.yaml"
    p.write_text(yaml.safe_dump(spec))
    return p


def run(args: list[str], password: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, PW_ENV: password}
    return subprocess.run([sys.executable, "-m", "lsmbench", *args], capture_output=True,
                          text=True, env=env, timeout=300, check=False)


def count(server, campaign: str, measurement: str) -> int:
    data = server.query(f"SELECT count(\"ops.writes\") FROM {measurement} "
                        f"WHERE campaign = '{campaign}'", db="lsmtest")
    series = data["results"][0].get("series") or []
    return int(series[0]["values"][0][1]) if series else 0


def test_published_after_each_point(tmp_path, data_root, driver_path, influxd):  # noqa: F811
    spec = spec_file(tmp_path, data_root, "pub", influxd.url)
    results = tmp_path / "results"
    r = run(["run", str(spec), "--quiet", "--results", str(results),
             "--set", f"testbed.driver={driver_path}"], influxd.password)
    assert r.returncode == 0, r.stderr
    rec = Store(results).points("pub")[0]
    assert rec.data["published"] is True and rec.data["publish_error"] is None
    intervals = sum(len((rec.path / ph / "timeseries.jsonl").read_text().splitlines())
                    for ph in ("load", "testing", "running"))
    assert count(influxd, "pub", "lsm_interval") == intervals
    tags = influxd.query("SHOW TAG VALUES FROM lsm_summary WITH KEY = phase", db="lsmtest")
    phases = sorted(v[1] for v in tags["results"][0]["series"][0]["values"])
    assert phases == ["load", "running", "testing"]


def test_sink_down_then_publish_later(tmp_path, data_root, driver_path, influxd):  # noqa: F811
    dead = f"http://127.0.0.1:{free_port()}"
    spec = spec_file(tmp_path, data_root, "later", dead)
    results = tmp_path / "results"
    r = run(["run", str(spec), "--json", "--results", str(results),
             "--set", f"testbed.driver={driver_path}"], influxd.password)
    assert r.returncode == 0, r.stderr  # the sink being down does not fail the campaign
    events = [json.loads(line) for line in r.stdout.splitlines()]
    pub = [e for e in events if e["event"] == "published"]
    assert len(pub) == 1 and pub[0]["ok"] is False and "127.0.0.1" in pub[0]["error"]
    assert events[-1]["unpublished"] == 1
    rec = Store(results).points("later")[0]
    assert rec.state == "complete" and rec.data["published"] is False
    assert count(influxd, "later", "lsm_interval") == 0

    ls = run(["ls", "--json", "--results", str(results)], "")
    assert json.loads(ls.stdout)["campaigns"][0]["unpublished"] == 1

    # `lsmbench publish` sends it later; the sink settings (database, user) come from the
    # stored spec, the URL from --to, the password from the environment.
    r = run(["publish", str(results), "--to", influxd.url], influxd.password)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "published 1 point, 0 failed" in r.stdout
    rec = Store(results).points("later")[0]
    assert rec.data["published"] is True and rec.data["published_to"] == influxd.url
    n = count(influxd, "later", "lsm_interval")
    assert n > 0
    # Already published points are skipped; --all resends them, idempotently.
    r = run(["publish", str(results), "--to", influxd.url], influxd.password)
    assert "published 0 points, 0 failed, 1 already published" in r.stdout
    r = run(["publish", str(results / "later"), "--to", influxd.url, "--all"], influxd.password)
    assert r.returncode == 0 and count(influxd, "later", "lsm_interval") == n
    # A wrong password is a failure the store records, with exit code 1.
    r = run(["publish", str(results), "--to", influxd.url, "--all"], "wrong")
    assert r.returncode == 1 and "FAILED" in r.stderr
    assert "wrong" not in r.stderr
    assert Store(results).points("later")[0].data["published"] is False


def test_sink_from_url_reads_query_and_keeps_base():
    base = InfluxSinkSpec(url="http://a:8086", database="x", username="u", token_env="E")
    s = sink_from_url("http://b:9999?db=other", base)
    assert (s.url, s.database, s.username, s.token_env) == ("http://b:9999", "other", "u", "E")
    s = sink_from_url("https://c:8086?org=o&bucket=b")
    assert (s.url, s.org, s.bucket, s.database) == ("https://c:8086", "o", "b", None)


class _FlakyInflux(http.server.BaseHTTPRequestHandler):
    """An InfluxDB that answers its first writes 503 and 429, then stalls every later one
    (until the test releases it): a server slow or failing mid-campaign."""

    answers: ClassVar[list[tuple[int, dict[str, str]]]] = []
    release = threading.Event()
    writes = 0
    lock = threading.Lock()

    def do_POST(self) -> None:
        with self.lock:
            type(self).writes += 1
            answer = self.answers.pop(0) if self.answers else None
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if answer is None:
            self.release.wait(timeout=60)
            return
        status, headers = answer
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_slow_sink_stays_within_its_budget_then_publish_sends(
        tmp_path, data_root, driver_path, influxd):  # noqa: F811
    _FlakyInflux.answers = [(503, {}), (429, {"Retry-After": "0.2"})]
    _FlakyInflux.writes = 0
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _FlakyInflux)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    budget, timeout = 3.0, 1.0
    try:
        spec = spec_file(tmp_path, data_root, "stall", url, matrix={"policy": ["tiering",
                                                                               "leveling"]},
                         retries=8, timeout=f"{timeout:g}s", budget=f"{budget:g}s")
        results = tmp_path / "results"
        r = run(["run", str(spec), "--json", "--results", str(results),
                 "--set", f"testbed.driver={driver_path}"], influxd.password)
    finally:
        _FlakyInflux.release.set()
        server.shutdown()
        server.server_close()
    assert r.returncode == 0, r.stderr  # every point ran; the sink only lost its turn
    events = [json.loads(line) for line in r.stdout.splitlines()]
    end = events[-1]
    assert (end["complete"], end["unpublished"], end["sink_budget_exhausted"]) == (2, 2, True)
    # Bounded by the budget: the 503 and the 429 are answered at once, each stalled write
    # costs a full timeout but the last, cut to what was left; the second point is not tried.
    assert 3 <= _FlakyInflux.writes <= 2 + int(budget / timeout) + 1
    pub = {e["point"]: e["error"] for e in events if e["event"] == "published"}
    assert "the time allowed for the sink ran out" in pub["policy=tiering,rep=0"]
    assert "sinks.influx.budget" in pub["policy=leveling,rep=0"]
    assert any(e["event"] == "message" and "is used up" in e["text"] for e in events)

    # `lsmbench ls` lists what is unpublished and why; `lsmbench publish` sends it later.
    ls = run(["ls", "stall", "--results", str(results)], "")
    assert ls.returncode == 0, ls.stderr
    assert "unpublished policy=tiering,rep=0: InfluxDB write" in ls.stdout
    assert "unpublished policy=leveling,rep=0: not sent" in ls.stdout
    r = run(["publish", str(results), "--to", influxd.url], influxd.password)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "published 2 points, 0 failed" in r.stdout
    assert count(influxd, "stall", "lsm_interval") > 0
    assert all(p.data["published"] is True for p in Store(results).points("stall"))
