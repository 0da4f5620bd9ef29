"""The papers' figures (report/papers.py) drawn from a recorded campaign, each checked against
the store's own numbers (fixtures/papers: leveling and tiering at size ratios 2, 4, 8, bursty
arrivals, the driver's process figures and bytes per level)."""

from __future__ import annotations

import html
import json
import shutil
from typing import Any

import pytest
from lsmbench.report import build_report
from lsmbench.report.load import StoredPhase, StoredPoint, read_campaign
from lsmbench.report.papers import (
    MIB,
    activity_figure,
    activity_series,
    bursts,
    generic_references,
    level_bytes,
    merge_cost_figure,
    merge_costs,
    numeric_dimensions,
    parameter_figure,
    parameter_series,
    ran_in_own_cgroup,
    tick_labels,
    tradeoff_figure,
    tradeoff_points,
)
from repo_paths import TESTS

FIXTURE = TESTS / "fixtures" / "papers" / "results" / "papers-fixture"


@pytest.fixture(scope="module")
def points() -> list[StoredPoint]:
    return read_campaign(FIXTURE).points


def _lines(pt: StoredPoint, phase: str) -> list[dict[str, Any]]:
    text = (pt.path / phase / "timeseries.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


def test_report_draws_every_paper_figure_with_its_caption(tmp_path):
    camp = tmp_path / "papers-fixture"
    shutil.copytree(FIXTURE, camp)
    files = build_report(camp, camp.parent)
    assert {"activity", "tradeoff", "merge-cost", "vs-size_ratio", "throughput",
            "flushes"} <= set(files.figures)
    page = html.unescape(files.html.read_text())
    for ref in ("Pramanik & Venkatesh's Figs. 21-24", "Mao et al.'s Fig. 3",
                "Mao et al.'s Fig. 5", "Luo & Carey's Fig. 11", "Luo & Carey's Fig. 1 ",
                "Mao et al.'s Figs. 2 and 4"):
        assert ref in page, ref
    # Each caption says what differs from the paper's setup.
    assert page.count("Differs from the paper") >= 3
    assert "differs from the paper" in page
    # One self-contained file: the figures are inlined.
    assert "data:image/png;base64," in page


def test_the_size_ratio_sweep_draws_the_stored_maxima_and_p99s(points):
    assert numeric_dimensions(points) == ["size_ratio"]
    curves = parameter_series(points, "size_ratio")
    assert set(curves) == {"merge_policy=leveling", "merge_policy=tiering"}
    for pt in points:
        record = json.loads((pt.path / "point.json").read_text())
        running = record["verdict"]["phase"]
        summary = json.loads((pt.path / running / "summary.json").read_text())
        cell = curves[f"merge_policy={pt.params['merge_policy']}"][float(pt.params["size_ratio"])]
        assert cell == ([record["max_throughput"]["writes_per_s"]],
                        [summary["write_latency_us"]["p99"] / 1000])
    assert parameter_figure(points, "size_ratio") is not None
    assert parameter_figure(points, "merge_policy") is None  # names, not numbers
    # A study's trials: every point its own values of everything, so no curve to draw.
    trials = [StoredPoint(pt.id, pt.path, {**pt.record, "params": {
        "size_ratio": i + 2, "memtable_kib": 64 * (i + 1)}}, pt.spec, pt.fingerprint, pt.phases)
        for i, pt in enumerate(points)]
    assert numeric_dimensions(trials) == ["size_ratio", "memtable_kib"]
    assert parameter_figure(trials, "size_ratio") is None
    assert parameter_figure(points, "no_such_parameter") is None
    assert tick_labels(points, "size_ratio", [2.0, 10.0]) == ["2", "10"]
    # Sizes keep the spec's spelling on the axis.
    sized = [StoredPoint(pt.id, pt.path, {**pt.record, "params": {"partition_bytes": b}},
                         pt.spec, pt.fingerprint, pt.phases)
             for pt, b in zip(points, ("2M", "16M", "256M"), strict=False)]
    xs = sorted(parameter_series(sized, "partition_bytes")["partition_bytes"])
    assert len(xs) == 3
    assert tick_labels(sized, "partition_bytes", xs) == ["2M", "16M", "256M"]


def test_numeric_dimensions_read_sizes_and_skip_mixed_or_short_ones(tmp_path):
    def point(params: dict[str, Any]) -> StoredPoint:
        return StoredPoint("p", tmp_path, {"state": "complete", "params": params}, None, None)

    pts = [point({"partition_bytes": b, "policy": p, "k": k, "flag": True})
           for b, p, k in (("8M", "a", 1), ("32M", "b", 2), ("1G", "a", "x"), ("8M", "b", 1))]
    # sizes are numbers; a dimension with a non-number is not; two values are no curve
    assert numeric_dimensions(pts) == ["partition_bytes"]


def test_the_tradeoff_points_are_the_phase_ends_of_the_store(points):
    rows = tradeoff_points(points)
    assert {r.policy for r in rows} == {"leveling", "tiering"}
    assert sorted(r.label for r in rows) == sorted(f"size_ratio={k}" for k in (2, 2, 4, 4, 8, 8))
    for r in rows:
        pt = next(p for p in points if p.params["merge_policy"] == r.policy
                  and r.label == f"size_ratio={p.params['size_ratio']}")
        # the testing phase has more flushes than the short bursty running one here
        end = json.loads((pt.path / "testing" / "summary.json").read_text())[
            "engine_metrics"]["end"]
        assert (r.write_amplification, r.average_sstables) == (
            [end["write_amplification"]], [end["average_sstables"]])
    assert tradeoff_figure(points) is not None
    assert tradeoff_figure(points[:1]) is None  # one point is no trade-off


def test_the_merge_costs_are_every_rewriting_merge(points):
    by_label = {c.label: c for _, c in merge_costs(points)}
    assert len(by_label) == len(points)
    for pt in points:
        merges = [e for iv in _lines(pt, "testing") for e in iv.get("events", [])
                  if e["kind"] == "merge" and not e["moved"]]
        c = by_label[", ".join(f"{k}={v}" for k, v in pt.params.items())]
        assert sorted(zip(c.mib, c.seconds, strict=True)) == pytest.approx(sorted(
            (e["input_bytes"] / MIB, e["end_s"] - e["start_s"]) for e in merges))
        assert merges
    assert merge_cost_figure(points) is not None


def _running(pt: StoredPoint) -> StoredPhase:
    assert pt.running is not None
    return pt.running


def test_the_activity_series_are_the_drivers_interval_figures(points):
    for pt in points:
        ph = _running(pt)
        lines = [iv for iv in _lines(pt, ph.name) if not iv.get("drain")]
        s = activity_series(ph)
        assert s.t == [iv["t_end_s"] for iv in lines]
        workload = ph.summary["config"]["workload"]
        record = workload["key_size"] + workload["value_size"]
        for i, iv in enumerate(lines):
            dt = iv["t_end_s"] - iv["t_start_s"]
            assert s.client_mib_s[i] == pytest.approx(iv["throughput"]["writes"] * record / MIB)
            assert s.disk_write_mib_s[i] == pytest.approx(
                iv["process"]["disk_write_bytes"] / dt / MIB)
            assert s.disk_read_mib_s[i] == pytest.approx(
                iv["process"]["disk_read_bytes"] / dt / MIB)
            assert s.cpu_percent[i] == pytest.approx(iv["process"]["cpu_utilization"] * 100)
        # the levels' bytes add up to the engine's total at every interval
        levels = level_bytes(ph)
        assert len(levels) >= 2
        for i, iv in enumerate(lines):
            assert sum(ys[i] for _, ys in levels.values()) == iv["engine"]["disk_bytes"]
    # bursty writes show in the disk: the process wrote during the run
    assert all(max(activity_series(_running(pt)).disk_write_mib_s) > 0 for pt in points)


def test_device_writes_are_drawn_only_for_a_phase_alone_in_its_cgroup(tmp_path):
    """A throttled phase (its own cgroup v2) has the device's bytes, the figure the throttle
    limits; the process's dirtied bytes can pass it (48 MB/s throttle, 52 MiB/s dirtied)."""
    ivs = [{"t_start_s": float(i), "t_end_s": i + 1.0, "throughput": {"writes": 10},
            "process": {"disk_write_bytes": 52 * MIB, "disk_read_bytes": 0,
                        "device_write_bytes": 47.9e6, "device_read_bytes": 1e6,
                        "cpu_utilization": 0.5}} for i in range(3)]
    ph = StoredPhase("running", ivs, {"config": {"workload": {"key_size": 8,
                                                              "value_size": 1000}}}, None)

    def point(backend):
        info = {"running": {"cgroup_backend": backend}} if backend else {}
        return StoredPoint("p", tmp_path, {"phases": info}, None, None, {"running": ph})

    assert ran_in_own_cgroup(point("v2"), ph) and ran_in_own_cgroup(point("v1"), ph)
    assert not ran_in_own_cgroup(point(None), ph)
    s = activity_series(ph, own_cgroup=True)
    assert s.device_write_mib_s == pytest.approx([47.9e6 / MIB] * 3)
    assert s.disk_write_mib_s == pytest.approx([52.0] * 3)
    # An unthrottled phase's cgroup is shared: its counters are not the phase's.
    assert activity_series(ph).device_write_mib_s == []
    # A store from before the driver read io.stat: nothing to draw.
    for iv in ivs:
        del iv["process"]["device_write_bytes"], iv["process"]["device_read_bytes"]
    assert activity_series(ph, own_cgroup=True).device_write_mib_s == []


def test_bursts_follow_the_arrival_schedule_or_the_traced_rate(tmp_path, points):
    ph = _running(points[0])
    arrival = ph.summary["config"]["arrival"]
    assert (arrival["process"], arrival["burst_s"], arrival["idle_s"]) == ("bursts", 1.5, 1.5)
    spans = bursts(ph)
    end = max(iv["t_end_s"] for iv in ph.regular_intervals())
    assert spans[:3] == [(0.0, 1.5), (3.0, 4.5), (6.0, 7.5)]
    assert all(b <= end for _, b in spans)

    def phase(process: str, rates: list[float]) -> StoredPhase:
        ivs = [{"t_start_s": float(i), "t_end_s": float(i + 1), "queue": {"intended_rate": r}}
               for i, r in enumerate(rates)]
        return StoredPhase("running", ivs, {"config": {"arrival": {"process": process}}}, None)

    assert bursts(phase("trace", [100, 90, 10, 0, 80, 0])) == [(0.0, 2.0), (4.0, 5.0)]
    assert bursts(phase("constant", [100, 0, 100])) == []  # no bursts to shade


def test_the_activity_figure_needs_the_process_figures(points, tmp_path):
    assert activity_figure(points) is not None
    # The same points without the driver's process figures (an older store): nothing to draw.
    bare = []
    for pt in points:
        phases = {name: StoredPhase(ph.name, [{k: v for k, v in iv.items() if k != "process"}
                                              for iv in ph.intervals], ph.summary, None)
                  for name, ph in pt.phases.items()}
        bare.append(StoredPoint(pt.id, pt.path, pt.record, pt.spec, pt.fingerprint, phases))
    assert activity_figure(bare) is None


def test_generic_figures_name_the_query_and_constraint_figures_only_when_they_ran(points):
    refs = generic_references(points)
    assert "queries" not in refs and "Fig. 12" not in refs["latency"]
    with_constraint = [StoredPoint(pt.id, pt.path, {**pt.record, "params": {
        **pt.params, "constraint": "local"}}, pt.spec, pt.fingerprint, pt.phases)
        for pt in points]
    assert "Fig. 12" in generic_references(with_constraint)["latency"]
