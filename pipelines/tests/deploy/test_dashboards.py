"""The Grafana dashboards against a real InfluxDB: the recorded campaign of
fixtures/report/ is published with `lsmbench publish` into influxd (fixtures_influx.py), and the
tracking history of fixtures/track/ (history.csv and regressions.json as `track report` writes
them) with the nightly job's publisher; every panel query, template-variable query and
annotation query of dashboards/*.json is run with its variables substituted the way Grafana
does, and each must return data in every column it names. A query naming a measurement or field
the sink does not write therefore fails -- shown once per dashboard by mutating a query. The
provisioning files must point at what the dashboards use."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from fixtures_influx import InfluxServer, influxd  # noqa: F401 - the real server fixture
from lsmbench.sinks.influx import point_to_lines
from repo_paths import REPO, TESTS

DASHBOARDS = REPO / "dashboards"
FIXTURE = TESTS / "fixtures" / "report" / "results" / "report-fixture"
TRACK_FIXTURE = TESTS / "fixtures" / "track"
DB = "lsmdash"
VARIABLES = ("campaign", "point", "phase", "host")
CAMPAIGN_DASHBOARD = DASHBOARDS / "lsmbench-campaign.json"
HISTORY_DASHBOARD = DASHBOARDS / "lsmbench-history.json"
HISTORY_VARIABLES = ("campaign", "group", "metric")
# The data each dashboard's queries are checked against (a fixture of this module).
DATA_FOR = {CAMPAIGN_DASHBOARD.name: "published", HISTORY_DASHBOARD.name: "published_history"}


def dashboards() -> list[Path]:
    return sorted(DASHBOARDS.glob("*.json"))


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def panels(dash: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for p in dash.get("panels", []):
        out.append(p)
        out.extend(p.get("panels", []))  # panels inside collapsed rows
    return out


def queries(dash: dict[str, Any]) -> list[tuple[str, str]]:
    """(what, InfluxQL) of every panel target and annotation of a dashboard."""
    out = []
    for p in panels(dash):
        for t in p.get("targets", []):
            assert t.get("rawQuery") and t.get("query"), (
                f"panel {p['title']!r} target {t.get('refId')}: only raw InfluxQL is checked")
            out.append((f"panel {p['title']!r} {t['refId']}", t["query"]))
    for a in dash.get("annotations", {}).get("list", []):
        if a.get("datasource", {}).get("type") == "influxdb":
            out.append((f"annotation {a['name']!r}", a["query"]))
    return out


# -- Grafana's variable substitution ------------------------------------------------------------


def regex_escape(value: str) -> str:
    """What Grafana's InfluxDB datasource does to a value used inside /.../."""
    return re.sub(r"([\\^$*+?.()|\[\]{}/])", r"\\\1", value)


def substitute(query: str, values: dict[str, list[str] | None], time_ms: tuple[int, int]) -> str:
    """values[name]: the selected values, or None for All (the variable's allValue .*)."""
    q = query.replace("$timeFilter", f"time >= {time_ms[0]}ms and time <= {time_ms[1]}ms")
    q = q.replace("$__interval", "1s")

    def var(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2)
        if name not in values:
            raise AssertionError(f"unknown template variable ${name} in {query}")
        chosen = values[name]
        if chosen is None:
            return ".*"
        escaped = [regex_escape(v) for v in chosen]
        return escaped[0] if len(escaped) == 1 else "(" + "|".join(escaped) + ")"

    return re.sub(r"\$\{(\w+)\}|\$(\w+)", var, q)


def check_returns_data(server: InfluxServer, what: str, query: str,
                       every_column: bool = True) -> None:
    """The query runs, returns at least one series, and (every_column) each column it selects
    has a value somewhere: a misspelt field in a multi-field SELECT is an all-null column."""
    data = server.query(query, db=DB)
    series = [s for r in data.get("results", []) for s in r.get("series", [])]
    assert series, f"{what}: no data for\n  {query}"
    if not every_column:
        return
    columns = {c for s in series for c in s["columns"]} - {"time"}
    for col in columns:
        values = [row[s["columns"].index(col)] for s in series if col in s["columns"]
                  for row in s["values"]]
        assert any(v is not None for v in values), f"{what}: column {col!r} is empty in\n  {query}"


# -- the published campaign ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def published(influxd, tmp_path_factory):  # noqa: F811
    """The fixture campaign published into influxd; (server, time range in ms, tag values)."""
    camp = tmp_path_factory.mktemp("dash") / "report-fixture"
    shutil.copytree(FIXTURE, camp)  # publish marks points published: never in the checkout
    env = {**os.environ, "LSMB_DASH_CRED": f"{influxd.username}:{influxd.password}"}
    r = subprocess.run([sys.executable, "-m", "lsmbench", "publish", str(camp), "--to",
                        f"{influxd.url}?db={DB}", "--token-env", "LSMB_DASH_CRED"],
                       capture_output=True, text=True, env=env, timeout=120, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "published 3 points, 0 failed" in r.stdout
    stamps = [int(line.rsplit(" ", 1)[1]) for p in camp.iterdir()
              if (p / "point.json").is_file() for line in point_to_lines(p)]
    time_ms = (min(stamps) // 1_000_000 - 1000, max(stamps) // 1_000_000 + 1000)
    tags = {}
    for key in VARIABLES:
        res = influxd.query(f'SHOW TAG VALUES FROM "lsm_interval" WITH KEY = "{key}"', db=DB)
        tags[key] = sorted(v[1] for v in res["results"][0]["series"][0]["values"])
    return influxd, time_ms, tags


def selections(tags: dict[str, list[str]]) -> list[dict[str, list[str] | None]]:
    """All of everything; one point and one phase; two points (a multi-value regex)."""
    campaign = [tags["campaign"][0]]
    running = [p for p in tags["phase"] if p.startswith("running")]
    return [
        {"campaign": campaign, "point": None, "phase": None, "host": None},
        {"campaign": campaign, "point": [tags["point"][0]], "phase": running[-1:],
         "host": [tags["host"][0]]},
        {"campaign": campaign, "point": tags["point"][:2], "phase": None, "host": None},
    ]


def test_every_dashboard_is_checked_against_data():
    assert sorted(p.name for p in dashboards()) == sorted(DATA_FOR)


@pytest.mark.parametrize("path", [CAMPAIGN_DASHBOARD], ids=lambda p: p.name)
def test_every_dashboard_query_returns_data(published, path):
    server, time_ms, tags = published
    assert tags["campaign"] == ["report-fixture"]
    assert len(tags["point"]) == 2  # the failed point has no phase data
    dash = load(path)
    found = queries(dash)
    assert len(found) >= 10
    for i, values in enumerate(selections(tags)):
        for what, q in found:
            # With everything selected every column has data; a narrower selection may leave
            # one empty (the testing phase's maximum throughput when only running is chosen).
            check_returns_data(server, what, substitute(q, values, time_ms), every_column=i == 0)
    # The template variables' own queries list the values the panels are filtered by.
    for v in dash["templating"]["list"]:
        q = substitute(v["query"], {"campaign": tags["campaign"]}, time_ms)
        rows = server.query(q, db=DB)["results"][0]["series"][0]["values"]
        assert sorted(r[1] for r in rows) == tags[v["name"]]


def test_phase_boundary_annotations(published):
    server, time_ms, tags = published
    dash = load(DASHBOARDS / "lsmbench-campaign.json")
    (ann,) = [a for a in dash["annotations"]["list"] if a["name"] == "Phase boundaries"]
    q = substitute(ann["query"], {"campaign": tags["campaign"], "point": [tags["point"][0]],
                                  "phase": None, "host": None}, time_ms)
    series = server.query(q, db=DB)["results"][0]["series"][0]
    rows = [dict(zip(series["columns"], v, strict=True)) for v in series["values"]]
    phases = {"load", "testing", "running@0.5", "running@0.9"}
    assert {r["phase"] for r in rows} == phases
    assert sorted(r["event"] for r in rows) == ["end"] * 4 + ["start"] * 4
    for col in (ann["textColumn"], *ann["tagsColumn"].split(",")):
        assert col in series["columns"]
    # Each phase's start precedes its end, and the next phase starts after the previous ended.
    by_phase = {(r["phase"], r["event"]): r["time"] for r in rows}
    for ph in phases:
        assert by_phase[(ph, "start")] < by_phase[(ph, "end")]
    assert by_phase[("load", "end")] <= by_phase[("testing", "start")] + 1_000_000_000


def test_a_query_the_sink_cannot_answer_fails(published):
    """The check is not vacuous: a misspelt field or measurement fails it."""
    server, time_ms, tags = published
    dash = load(DASHBOARDS / "lsmbench-campaign.json")
    values = selections(tags)[0]
    what, q = next(x for x in queries(dash) if '"throughput.writes"' in x[1])
    check_returns_data(server, what, substitute(q, values, time_ms))  # the real one passes
    for bad in (q.replace('"throughput.writes"', '"throughput.writez"'),
                q.replace('"lsm_interval"', '"lsm_intervals"')):
        with pytest.raises(AssertionError, match="no data"):
            check_returns_data(server, what, substitute(bad, values, time_ms))
    what, q = next(x for x in queries(dash) if '"write_latency_us.p999"' in x[1])
    bad = q.replace('"write_latency_us.p999"', '"write_latency_us.p9999"')
    with pytest.raises(AssertionError, match="is empty"):  # the other columns still have data
        check_returns_data(server, what, substitute(bad, values, time_ms))


# -- structure and provisioning -----------------------------------------------------------------


# -- the tracking history (dashboards/lsmbench-history.json) ----------------------------------


@pytest.fixture(scope="module")
def published_history(influxd, tmp_path_factory):  # noqa: F811
    """fixtures/track/ published by the nightly job's publisher; (server, time range in ms,
    tag values of lsmbench_history)."""
    from lsmbench.sinks.influx import InfluxSink, InfluxTarget
    from lsmbench.track.influx_history import HISTORY_MEASUREMENT, publish_history

    report = tmp_path_factory.mktemp("track")
    for name in ("history.csv", "regressions.json"):
        shutil.copy2(TRACK_FIXTURE / name, report / name)
    sink = InfluxSink(InfluxTarget(url=influxd.url, database=DB, username=influxd.username,
                                   token=influxd.password))
    done = publish_history(sink, report, ["nightly-fixture"])
    assert (done.history_points, done.change_points) == (32, 3)
    rows = influxd.query(f'SELECT "median" FROM "{HISTORY_MEASUREMENT}"', db=DB)
    stamps = [v[0] for v in rows["results"][0]["series"][0]["values"]]
    time_ms = (min(stamps) // 1_000_000 - 86_400_000, max(stamps) // 1_000_000 + 86_400_000)
    tags = {}
    for key in HISTORY_VARIABLES:
        res = influxd.query(f'SHOW TAG VALUES FROM "{HISTORY_MEASUREMENT}" WITH KEY = "{key}"',
                            db=DB)
        tags[key] = sorted(v[1] for v in res["results"][0]["series"][0]["values"])
    return influxd, time_ms, tags


def history_selections(tags: dict[str, list[str]]) -> list[dict[str, list[str] | None]]:
    """All groups and metrics; one metric (p99: an open and an acked regression); every group
    and metric named one by one (a multi-value regex of values with commas and equals signs)."""
    campaign = [tags["campaign"][0]]
    return [
        {"campaign": campaign, "group": None, "metric": None},
        {"campaign": campaign, "group": None, "metric": ["p99_write_latency_s"]},
        {"campaign": campaign, "group": tags["group"], "metric": tags["metric"]},
    ]


def test_history_dashboard_queries_return_data(published_history):
    server, time_ms, tags = published_history
    assert tags == {"campaign": ["nightly-fixture"],
                    "group": ["policy=leveling,scheduler=greedy",
                              "policy=tiering,scheduler=single"],
                    "metric": ["max_write_throughput", "p99_write_latency_s"]}
    dash = load(HISTORY_DASHBOARD)
    found = queries(dash)
    assert len(found) >= 5
    for i, values in enumerate(history_selections(tags)):
        for what, q in found:
            check_returns_data(server, what, substitute(q, values, time_ms),
                               every_column=i == 0)
    for v in dash["templating"]["list"]:
        q = substitute(v["query"], {"campaign": tags["campaign"], "group": None}, time_ms)
        rows = server.query(q, db=DB)["results"][0]["series"][0]["values"]
        assert sorted(r[1] for r in rows) == tags[v["name"]]


def test_history_band_and_change_point_annotations(published_history):
    server, time_ms, tags = published_history
    dash = load(HISTORY_DASHBOARD)
    values = {"campaign": tags["campaign"], "group": ["policy=leveling,scheduler=greedy"],
              "metric": ["p99_write_latency_s"]}
    # The panel: one series per run, median inside its interval.
    (series_panel,) = [p for p in panels(dash) if p["type"] == "timeseries"]
    q = substitute(series_panel["targets"][0]["query"], values, time_ms)
    (series,) = server.query(q, db=DB)["results"][0]["series"]
    rows = [dict(zip(series["columns"], v, strict=True)) for v in series["values"]]
    assert len(rows) == 8
    assert all(r["ci_low"] <= r["median"] <= r["ci_high"] for r in rows)
    assert rows[4]["median"] == pytest.approx(0.1) and rows[5]["median"] == pytest.approx(0.14645)
    # The open regression is an annotation at the first run after it, with the text the
    # publisher formed; the acked one (another group) is not among the open ones.
    anns = {a["name"]: a for a in dash["annotations"]["list"]}
    q = substitute(anns["Open regressions"]["query"], {**values, "group": None}, time_ms)
    (series,) = server.query(q, db=DB)["results"][0]["series"]
    (row,) = [dict(zip(series["columns"], v, strict=True)) for v in series["values"]]
    first_run_after = datetime(2026, 11, 6, 2, 0, tzinfo=UTC)
    assert row["time"] == int(first_run_after.timestamp()) * 10**9
    assert row["text"].startswith("p99_write_latency_s +45.0% between ")
    assert row["group"] == "policy=leveling,scheduler=greedy"
    q = substitute(anns["Improvements and acknowledged changes"]["query"],
                   {**values, "group": None, "metric": None}, time_ms)
    (series,) = server.query(q, db=DB)["results"][0]["series"]
    texts = sorted(v[series["columns"].index("text")] for v in series["values"])
    assert texts[0].startswith("max_write_throughput +20.0% between ")
    assert texts[1].startswith("p99_write_latency_s +30.0% between ")
    assert texts[1].endswith("(acked: the WAL now fsyncs every group commit (a durability fix))")


def test_a_history_query_the_publisher_cannot_answer_fails(published_history):
    server, time_ms, tags = published_history
    values = history_selections(tags)[0]
    (what, q), = [x for x in queries(load(HISTORY_DASHBOARD)) if '"ci_high"' in x[1]]
    check_returns_data(server, what, substitute(q, values, time_ms))
    with pytest.raises(AssertionError, match="is empty"):
        check_returns_data(server, what,
                           substitute(q.replace('"ci_high"', '"ci_hi"'), values, time_ms))
    with pytest.raises(AssertionError, match="no data"):
        check_returns_data(server, what, substitute(
            q.replace('"lsmbench_history"', '"lsmbench_histories"'), values, time_ms))


def test_dashboard_structure_and_provisioning():
    ds_file = yaml.safe_load((DASHBOARDS / "provisioning" / "datasources" / "lsmbench.yaml")
                             .read_text())
    assert ds_file["apiVersion"] == 1
    (ds,) = ds_file["datasources"]
    assert ds["type"] == "influxdb" and ds["url"].startswith("http")
    assert ds["jsonData"]["dbName"] == "lsmbench"  # the sink's default database
    prov = yaml.safe_load((DASHBOARDS / "provisioning" / "dashboards" / "lsmbench.yaml")
                          .read_text())
    assert prov["apiVersion"] == 1
    (provider,) = prov["providers"]
    assert provider["type"] == "file" and provider["options"]["path"].startswith("/")
    assert dashboards(), "no dashboard JSON in dashboards/"
    uids = set()
    for path in dashboards():
        dash = load(path)
        assert dash["uid"] not in uids
        uids.add(dash["uid"])
        for v in dash["templating"]["list"]:
            assert v["datasource"]["uid"] == ds["uid"]
        ids = [p["id"] for p in panels(dash)]
        assert len(ids) == len(set(ids))
        for p in panels(dash):
            assert {"h", "w", "x", "y"} <= set(p["gridPos"]), p["title"]
            if p["type"] != "row":
                assert p["datasource"]["uid"] == ds["uid"], p["title"]
        for a in dash["annotations"]["list"]:
            if a["datasource"]["type"] == "influxdb":
                assert a["datasource"]["uid"] == ds["uid"], a["name"]
    dash = load(CAMPAIGN_DASHBOARD)
    assert [v["name"] for v in dash["templating"]["list"]] == list(VARIABLES)
    for p in panels(dash):
        for what, q in queries({"panels": [p]}):
            for var in ("$campaign", "$point", "$phase", "$host", "$timeFilter"):
                assert var in q, f"{what} does not filter by {var}"
    titles = " ".join(p["title"].lower() for p in panels(dash))
    for needed in ("throughput", "write latency", "processing latency", "components",
                   "stall", "flushed", "queue"):
        assert needed in titles, needed
    assert any(a.get("name") == "Phase boundaries" for a in dash["annotations"]["list"])


def test_history_dashboard_structure():
    dash = load(HISTORY_DASHBOARD)
    assert [v["name"] for v in dash["templating"]["list"]] == list(HISTORY_VARIABLES)
    assert [v["multi"] for v in dash["templating"]["list"]] == [False, True, True]
    for what, q in queries(dash):
        for var in ("$campaign", "$group", "$metric"):
            assert var in q, f"{what} does not filter by {var}"
    # A row per group, in it a panel per metric: the median with its interval as a band.
    (row,) = [p for p in panels(dash) if p["type"] == "row"]
    (series,) = [p for p in panels(dash) if p["type"] == "timeseries"]
    assert row["repeat"] == "group" and series["repeat"] == "metric"
    assert "$timeFilter" in series["targets"][0]["query"]
    band = {o["matcher"]["options"]: {x["id"]: x["value"] for x in o["properties"]}
            for o in series["fieldConfig"]["overrides"]}
    assert band["ci_high"]["custom.fillBelowTo"] == "ci_low"
    assert series["targets"][0]["alias"] == "$col"  # the series are named as the override says
    # Change points are annotations from their own measurement.
    names = [a["name"] for a in dash["annotations"]["list"] if a.get("type") != "dashboard"]
    assert names == ["Open regressions", "Improvements and acknowledged changes"]
    for a in dash["annotations"]["list"][1:]:
        assert '"lsmbench_change_points"' in a["query"] and a["textColumn"] == "text"
