"""What a workload really sent, end to end: a tiny campaign run through the real driver (builtin
engine) stores each phase's workload_shape.json, and the report's Workload section and `lsmbench
export` carry it.

Three points, one per workload file: a 60/40 update/read mix on uniform keys, the same mix on
zipfian keys, and db_bench's mixgraph (prefix_dist's parameters) with a sine arrival. The op
mixes are checked within binomial tolerance (each request's type is an independent draw of the
mix), the skew and the sizes against what the distributions imply; nothing is timed."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from browser import parse
from lsmbench.cli import main
from lsmbench.results import load
from lsmbench.workload_shape.record import SAMPLE_LIMIT, SCHEMA, SHAPE_FILE
from repo_paths import REPO

pytestmark = pytest.mark.slow

RECORDS = 5000
MIX = {"update": 0.6, "read": 0.4}
PREFIX_DIST = yaml.safe_load((REPO / "workloads" / "mixgraph-prefix-dist.yaml").read_text())
WORKLOADS: dict[str, dict[str, Any]] = {
    "mix-uniform.yaml": {"record_count": RECORDS, "value_size": 100, "operations": MIX,
                         "distribution": "uniform"},
    "mix-zipf.yaml": {"record_count": RECORDS, "value_size": 100, "operations": MIX,
                      "distribution": "zipfian", "zipf_theta": 0.99},
    # The rate follows a sine of period 1 s around the rate the method picks (+-50 %).
    "mixgraph.yaml": {"record_count": RECORDS, "key_size": 24,
                      "mixgraph": PREFIX_DIST["mixgraph"],
                      "arrival": {"process": "sine", "sine_a": 0.5, "sine_b": 2 * math.pi,
                                  "sine_d": 1.0, "sine_mix_rate_interval_milliseconds": 50}},
}
GROUPS = {name: f"file={name}" for name in WORKLOADS}


@pytest.fixture(scope="module")
def campaign(tmp_path_factory, driver_path) -> Path:
    """The campaign's directory in its results store, with its report and export."""
    d = tmp_path_factory.mktemp("shapes")
    for name, w in WORKLOADS.items():
        (d / name).write_text(yaml.safe_dump(w))
    spec = {
        "name": "shapes",
        "engine": {"name": "builtin", "options": {"memtable_bytes": "1M"}},
        "matrix": {"workload.file": list(WORKLOADS)},
        "workload": {"file": "mix-uniform.yaml"},
        "phases": {"interval": "0.25s", "testing": {"duration": "1.5s", "warmup": "0.25s"},
                   "running": {"duration": "2s"}},
        "throttle": "none",
        "testbed": {"type": "local", "data_dir": str(d / "data")},
    }
    (d / "shapes.yaml").write_text(yaml.safe_dump(spec))
    results = d / "results"
    assert main(["run", str(d / "shapes.yaml"), "--results", str(results), "-q"]) in (0, 1)
    camp = results / "shapes"
    assert main(["report", str(camp), "--out", str(d / "report")]) == 0
    assert main(["export", str(camp), "--format", "csv", "--out", str(d / "export")]) == 0
    return camp


def point_dir(camp: Path, workload: str) -> Path:
    (found,) = [p for p in camp.iterdir() if p.name.startswith(GROUPS[workload] + ",")]
    return found


def shape(camp: Path, workload: str, phase: str) -> dict[str, Any]:
    point = point_dir(camp, workload)
    print(f"{point.name}: seed {json.loads((point / 'point.json').read_text())['seed']}")
    return json.loads((point / phase / SHAPE_FILE).read_text())


def within_binomial(share: float, p: float, n: int, sigmas: float = 6.0) -> bool:
    return abs(share - p) <= sigmas * math.sqrt(p * (1 - p) / n)


def test_every_phase_has_its_record(campaign):
    for workload in WORKLOADS:
        for phase in ("load", "testing", "running"):
            s = shape(campaign, workload, phase)
            assert s["schema"] == SCHEMA and s["phase"] == phase and s["kind"] == phase
            assert s["computed"] == "with the phase"
            assert s["problems"] == [], s["problems"]
            assert s["cost_s"] >= 0
    load_shape = shape(campaign, "mix-uniform.yaml", "load")
    assert load_shape["completed"]["op_mix"] == {"insert": 1.0}
    # A load sends its records: the sample is all of them, each key once.
    assert load_shape["sample"]["ops"] == load_shape["sample"]["sent"] == RECORDS
    assert load_shape["sample"]["distinct_keys"] == RECORDS


def test_the_op_mix_is_the_workloads_within_binomial_tolerance(campaign):
    for workload in ("mix-uniform.yaml", "mix-zipf.yaml"):
        for phase in ("testing", "running"):
            s = shape(campaign, workload, phase)
            done = s["completed"]
            assert set(done["ops"]) == set(MIX)
            assert done["requests"] == sum(done["ops"].values()) > 1000
            for op, p in MIX.items():
                assert within_binomial(done["op_mix"][op], p, done["requests"]), (phase, done)
            sample = s["sample"]
            assert sample["ops"] == min(sample["sent"], SAMPLE_LIMIT) == sample["limit"] or \
                sample["ops"] == sample["sent"] < SAMPLE_LIMIT
            for op, p in MIX.items():
                assert within_binomial(sample["op_mix"][op], p, sample["ops"]), sample
    mg = shape(campaign, "mixgraph.yaml", "testing")["completed"]
    expected = {"read": 0.85, "update": 0.14, "scan": 0.01}  # mixgraph's get, put, seek
    assert set(mg["op_mix"]) == set(expected)
    for op, p in expected.items():
        assert within_binomial(mg["op_mix"][op], p, mg["requests"]), mg


def test_zipfian_keys_are_skewed_and_uniform_ones_are_not(campaign):
    uniform = shape(campaign, "mix-uniform.yaml", "testing")["sample"]
    zipf = shape(campaign, "mix-zipf.yaml", "testing")["sample"]
    print("top-1% shares: uniform", uniform["top_1pct_key_share"], "zipfian",
          zipf["top_1pct_key_share"])
    # 5,000 keys: the top 1 % is 50 of them. Uniform: a little over 1 % (the luckiest 50);
    # zipfian (theta 0.99): H(50)/H(5000), about half of all accesses.
    assert uniform["top_1pct_keys"] == zipf["top_1pct_keys"] == 50
    assert uniform["distinct_keys"] == RECORDS  # every key is drawn, uniformly
    assert uniform["top_1pct_key_share"] < 0.03
    assert zipf["top_1pct_key_share"] > 0.3
    assert zipf["top_1pct_key_share"] > 10 * uniform["top_1pct_key_share"]
    assert zipf["distinct_keys"] < uniform["distinct_keys"]
    # Fixed-size values.
    assert uniform["value_size"]["all"]["p0"] == uniform["value_size"]["all"]["p100"] == 100
    assert uniform["scan_length"] is None


def test_mixgraph_value_sizes_and_scan_lengths_vary(campaign):
    s = shape(campaign, "mixgraph.yaml", "testing")["sample"]
    v = s["value_size"]["all"]
    assert v["count"] == s["value_size"]["update"]["count"] > 100  # its puts are updates
    assert 10 <= v["p0"] < v["p50"] < v["p99"] <= v["p100"]  # sizes are raised to 10 bytes
    assert 20 < v["mean"] < 60  # prefix_dist's Generalized Pareto: a mean near 36 bytes
    sl = s["scan_length"]
    assert sl["count"] > 0 and sl["p0"] < sl["p99"]


def test_the_rate_over_time_is_recorded_and_a_sine_varies(campaign):
    for workload in WORKLOADS:
        rate = shape(campaign, workload, "running")["rate"]
        assert rate["unit"] == "requests/s"
        assert len(rate["t_end_s"]) == len(rate["achieved"]) == len(rate["intended"]) >= 6
        assert rate["t_end_s"] == sorted(rate["t_end_s"])
        assert all(a >= 0 for a in rate["achieved"]) and rate["mean_achieved"] > 0
        assert rate["mean_intended"] > 0
    sine = shape(campaign, "mixgraph.yaml", "running")["rate"]
    assert sine["arrival"]["process"] == "sine"
    intended = [i for i in sine["intended"] if i is not None]
    assert max(intended) > 1.3 * min(intended)  # the wave: +-50 % around its mean
    constant = shape(campaign, "mix-uniform.yaml", "running")["rate"]
    assert constant["arrival"]["process"] == "constant"
    testing = shape(campaign, "mix-uniform.yaml", "testing")["rate"]
    assert testing["intended"] is None and testing["arrival"] is None  # a closed loop


def workload_cells(html: str) -> dict[tuple[str, str], dict[str, str]]:
    """The Workload table's rows by (group, phase): each cell's text by its data-key."""
    return {(r["attrs"]["data-group"], r["attrs"]["data-phase"]):
            {a["data-key"]: text for a, text in r["cells"] if "data-key" in a}
            for r in parse(html).tables["workload-table"][1:]}


def test_the_report_says_what_each_group_sent(campaign):
    report = campaign.parent.parent / "report"
    html = (report / "report.html").read_text()
    assert '<h2 id="workload">Workload</h2>' in html and 'href="#workload"' in html
    rows = workload_cells(html)
    assert set(rows) == {(g, ph) for g in GROUPS.values() for ph in ("testing", "running")}
    for workload, group in GROUPS.items():
        for phase in ("testing", "running"):
            s = shape(campaign, workload, phase)
            row = rows[(group, phase)]
            mix = dict(re.findall(r"(\w+)\s([\d.]+)\s%", row["op_mix"]))
            assert {op: float(v) for op, v in mix.items()} == pytest.approx(
                {op: 100 * x for op, x in s["completed"]["op_mix"].items()}, abs=0.051)
            top = float(row["top_1pct_key_share"].rstrip(" %"))  # 3 significant digits
            assert top == pytest.approx(100 * s["sample"]["top_1pct_key_share"], rel=5e-3)
            assert int(row["distinct_keys"].replace(",", "")) == s["sample"]["distinct_keys"]
            assert float(row["value_size_p50"]) == pytest.approx(
                s["sample"]["value_size"]["all"]["p50"], rel=1e-3)
    zipf, uniform = rows[(GROUPS["mix-zipf.yaml"], "testing")], rows[(GROUPS["mix-uniform.yaml"],
                                                                        "testing")]
    assert float(zipf["top_1pct_key_share"].rstrip(" %")) > 30 > float(
        uniform["top_1pct_key_share"].rstrip(" %"))
    assert rows[(GROUPS["mixgraph.yaml"], "running")]["intended_rate_mean"].endswith("(sine)")
    # The rate figure, in the section, and its file.
    assert 'data-figure="rate"' in html.split('<h2 id="workload">')[1].split("<h2")[0]
    assert (report / "figures" / "rate.png").stat().st_size > 1000
    md = (report / "summary.md").read_text()
    assert "Workload (what each group's workload sent" in md
    zipf_md = re.search(rf"^\| {re.escape(GROUPS['mix-zipf.yaml'])} \| testing \| update\s"
                        r"[\d.]+\s%, read\s[\d.]+\s% \| [\d,]+ \| ([\d.]+) % \|", md, re.M)
    assert zipf_md is not None and zipf_md[1] == zipf["top_1pct_key_share"].rstrip(" %")


def test_export_has_the_shape_columns(campaign):
    import pandas as pd

    export = campaign.parent.parent / "export"
    points = pd.read_csv(export / "points.csv")
    assert points.equals(points)  # read back whole
    tables = load(campaign)
    for workload, group in GROUPS.items():
        for phase in ("load", "testing", "running"):
            s = shape(campaign, workload, phase)
            for df in (points, tables.points):
                (row,) = df[(df["group"] == group) & (df["phase"] == phase)].to_dict("records")
                for op in ("insert", "update", "delete", "read", "scan", "rmw"):
                    assert row[f"shape_op_share_{op}"] == pytest.approx(
                        s["completed"]["op_mix"].get(op, 0.0))
                assert row["shape_requests"] == s["completed"]["requests"]
                assert row["shape_sample_ops"] == s["sample"]["ops"]
                assert row["shape_top_1pct_key_share"] == pytest.approx(
                    s["sample"]["top_1pct_key_share"])
                vs = s["sample"]["value_size"]["all"]
                for q in ("mean", "p50", "p99"):
                    assert row[f"shape_value_size_{q}"] == pytest.approx(vs[q])
                assert row["shape_rate_mean"] == pytest.approx(s["rate"]["mean_achieved"])
                sl = s["sample"]["scan_length"]
                if sl is None:
                    assert pd.isna(row["shape_scan_length_p50"])
                else:
                    assert row["shape_scan_length_p50"] == pytest.approx(sl["p50"])
    assert str(tables.points["shape_top_1pct_key_share"].dtype) == "float64"
    assert str(tables.points["shape_requests"].dtype) == "Int64"
