"""lsmbench.workload_shape.op_stream on hand-made streams whose mix, sizes and skew are known,
and on the YCSB reference summaries committed in workloads/ycsb/reference/expected/."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from lsmbench.workload_shape import op_stream
from lsmbench.workload_shape.op_stream import (
    OpStreamError,
    read_op_stream,
    recent_insert_share,
    summarize,
    top_keys_share,
)
from ycsb_definitions import EXPECTED, YCSB_MIX, within_binomial

HEADER = ("# lsmbench op stream v1: hand-made test stream\n"
          "seq,time_us,op,key,value_size,scan_length\n")


def hexkey(s: str) -> str:
    return s.encode().hex()


def write_stream(path: Path, rows: list[tuple], header: str = HEADER) -> Path:
    """rows: (op, key text, value_size or None, scan_length or None[, time_us])."""
    lines = []
    for seq, row in enumerate(rows):
        op, key, vs, sl, *t = row
        time_us = "" if not t or t[0] is None else str(t[0])
        lines.append(f"{seq},{time_us},{op},{hexkey(key)},{'' if vs is None else vs},"
                     f"{'' if sl is None else sl}")
    path.write_text(header + "".join(line + "\n" for line in lines))
    return path


def known_stream() -> list[tuple]:
    """200 rows: 100 reads, 60 updates, 20 inserts, 10 scans, 6 rmw, 4 deletes; key 'hot' takes
    every read (100 rows), the other 100 rows go to 100 distinct keys."""
    rows: list[tuple] = [("read", "hot", None, None)] * 100
    rows += [("update", f"u{i}", i + 1, None) for i in range(60)]  # sizes 1..60
    rows += [("insert", f"i{i}", 1000, None) for i in range(20)]
    rows += [("scan", f"s{i}", None, 10 * (i + 1)) for i in range(10)]  # lengths 10..100
    rows += [("rmw", f"r{i}", 100, None) for i in range(6)]
    rows += [("delete", f"d{i}", None, None) for i in range(4)]
    return rows


def test_read_op_stream_types_and_source(tmp_path):
    df = read_op_stream(write_stream(tmp_path / "s.csv", known_stream()))
    assert list(df.columns) == list(op_stream.COLUMNS)
    assert df.attrs["source"] == "hand-made test stream"
    assert df["seq"].dtype == "int64"
    assert str(df["value_size"].dtype) == "Int64" and str(df["time_us"].dtype) == "Int64"
    assert list(df["op"].cat.categories) == list(op_stream.OPS)
    assert df["key"].iloc[0] == "686f74"  # "hot", hex of its bytes, kept as text
    assert df["value_size"].isna().sum() == 100 + 10 + 4
    assert df["time_us"].isna().all()


def test_summarize_mix_sizes_scans_and_skew(tmp_path):
    s = summarize(read_op_stream(write_stream(tmp_path / "s.csv", known_stream())))
    assert s["ops"] == 200
    assert s["op_counts"] == {"insert": 20, "update": 60, "read": 100, "scan": 10, "rmw": 6,
                              "delete": 4}
    assert s["op_mix"] == {"insert": 0.1, "update": 0.3, "read": 0.5, "scan": 0.05, "rmw": 0.03,
                           "delete": 0.02}
    upd = s["value_size"]["update"]  # 1..60: linear quantiles
    assert (upd["count"], upd["mean"], upd["p0"], upd["p100"]) == (60, 30.5, 1.0, 60.0)
    assert upd["p50"] == pytest.approx(30.5)
    assert upd["p10"] == pytest.approx(1 + 0.1 * 59)
    assert upd["p99"] == pytest.approx(1 + 0.99 * 59)
    assert s["value_size"]["insert"]["p0"] == s["value_size"]["insert"]["p100"] == 1000.0
    assert s["value_size"]["rmw"]["mean"] == 100.0
    assert set(s["value_size"]) == {"insert", "update", "rmw"}  # no sizes for reads
    sl = s["scan_length"]
    assert (sl["count"], sl["mean"], sl["p0"], sl["p50"], sl["p100"]) == (10, 55.0, 10.0, 55.0,
                                                                          100.0)
    # 101 distinct keys: the top 1% is ceil(1.01) = 2 keys, 'hot' (100 rows) and one other
    assert s["distinct_keys"] == 101
    assert s["top_1pct_keys"] == 2
    assert s["top_1pct_key_share"] == pytest.approx(101 / 200)
    assert s["rate"] is None and "key_range_share" not in s
    json.dumps(s, allow_nan=False)  # JSON-ready


def test_top_keys_share_uniform_vs_skewed():
    uniform = pd.Series([f"{i:04x}" for i in range(1000)] * 3)
    assert top_keys_share(uniform) == (10, pytest.approx(0.01))
    skewed = pd.Series(["aa"] * 900 + [f"{i:04x}" for i in range(100)])
    assert top_keys_share(skewed) == (2, pytest.approx(901 / 1000))
    assert top_keys_share(skewed, 0.5) == (51, pytest.approx(950 / 1000))
    with pytest.raises(ValueError):
        top_keys_share(skewed, 0)


def test_key_ranges_by_boundaries_and_by_function(tmp_path):
    keys = ["\x00", "\x10", "\x10\x00", "\x20", "\xff"]  # \xff is two UTF-8 bytes: c3 bf
    rows = [("read", k, None, None) for k in keys] + [("read", "\x10", None, None)] * 5
    df = read_op_stream(write_stream(tmp_path / "s.csv", rows))
    s = summarize(df, key_ranges=["10", bytes([0x20])])
    assert s["key_range_share"] == {"[,10)": pytest.approx(0.1), "[10,20)": pytest.approx(0.7),
                                    "[20,)": pytest.approx(0.2)}
    s = summarize(df, key_ranges=lambda k: "short" if len(k) == 2 else "long")
    assert s["key_range_share"] == {"short": pytest.approx(0.8), "long": pytest.approx(0.2)}
    with pytest.raises(ValueError, match="increasing"):
        summarize(df, key_ranges=["20", "10"])
    with pytest.raises(ValueError, match="hex"):
        summarize(df, key_ranges=["1"])


def test_rate_in_one_second_buckets(tmp_path):
    rows = [("read", "a", None, None, t) for t in (0, 500_000, 999_999, 1_200_000, 3_000_000)]
    s = summarize(read_op_stream(write_stream(tmp_path / "s.csv", rows)))
    assert s["rate"] == {"bucket_s": 1, "first_bucket_s": 0, "ops_per_bucket": [3, 1, 0, 1],
                         "mean_per_s": 1.25, "max_per_s": 3, "ops_with_time": 5}


def test_recent_insert_share(tmp_path):
    load = read_op_stream(write_stream(tmp_path / "l.csv",
                                       [("insert", f"k{i}", 10, None) for i in range(10)]))
    run = read_op_stream(write_stream(tmp_path / "r.csv", [
        ("read", "k9", None, None),     # 10 inserted: the recent 10% is {k9}: recent
        ("read", "k0", None, None),     # not
        ("insert", "k10", 10, None),
        ("read", "k9", None, None),     # 11 inserted: ceil(1.1) = 2, {k9, k10}: recent
        ("update", "k10", 10, None),    # recent
        ("read", "k8", None, None),     # not
        ("read", "nokey", None, None),  # never inserted: not
    ]))
    assert recent_insert_share(run, load=load) == pytest.approx(3 / 6)
    assert recent_insert_share(run, load=load, ops=("read",)) == pytest.approx(2 / 5)
    assert recent_insert_share(run, load=load, fraction=1.0) == pytest.approx(5 / 6)
    # without the load only k10 was ever inserted: the update of k10 is the only recent access
    assert recent_insert_share(run) == pytest.approx(1 / 6)


@pytest.mark.parametrize(("text", "match"), [
    ("# something else\nseq,time_us,op,key,value_size,scan_length\n", "line 1"),
    ("# lsmbench op stream v1: x\nseq,op,key\n", "line 2"),
    (HEADER + "0,,get,61,,\n", "unknown op"),
    (HEADER + "0,,read,6G,,\n", "hex"),
    (HEADER + "0,,read,AB,,\n", "hex"),
    (HEADER + "0,,read,616,,\n", "hex"),
    (HEADER + "0,,update,61,,\n", "value_size"),
    (HEADER + "0,,read,61,100,\n", "value_size"),
    (HEADER + "0,,read,61,,5\n", "scan_length"),
    (HEADER + "0,,insert,61,-1,\n", "negative"),
    (HEADER + "0,,read,61,,\n0,,read,62,,\n", "seq does not increase"),
])
def test_read_op_stream_refuses(tmp_path, text, match):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(OpStreamError, match=match):
        read_op_stream(path)


def test_empty_stream(tmp_path):
    path = tmp_path / "empty.csv"
    path.write_text(HEADER)
    s = summarize(read_op_stream(path))
    assert s["ops"] == 0 and s["op_mix"] == {} and s["top_1pct_key_share"] is None
    json.dumps(s, allow_nan=False)


def test_main_prints_json(tmp_path, capsys):
    load = write_stream(tmp_path / "l.csv", [("insert", f"k{i}", 1000, None) for i in range(10)])
    run = write_stream(tmp_path / "r.csv", [("read", "k9", None, None), ("read", "k1", None, None)])
    assert op_stream.main(["--load", str(load), str(run)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["run"]["op_mix"] == {"read": 1.0}
    assert out["load"]["value_size"]["insert"]["mean"] == 1000.0
    assert out["recent_10pct_insert_share"] == 0.5
    bad = tmp_path / "bad.csv"
    bad.write_text("nothing\n")
    assert op_stream.main([str(bad)]) == 2


# ---------------------------------------------------------------- the committed reference

@pytest.mark.parametrize("workload", sorted(YCSB_MIX))
def test_committed_reference_summaries_match_ycsb(workload):
    """The summaries record_expected.sh wrote from YCSB's own client agree with YCSB's
    definitions: the mix (5 sigma), 1000-byte inserts of 10 x 100-byte fields, one 100-byte
    field per update and rmw, scans uniform in 1..100, the load one insert per record."""
    summary = json.loads((EXPECTED / f"workload{workload}.json").read_text())
    run, load = summary["run"], summary["load"]
    assert "YCSB 0.17.0 CoreWorkload" in run["source"]
    assert load["op_counts"] == {"insert": 1000} and load["distinct_keys"] == 1000
    assert load["value_size"]["insert"]["p0"] == load["value_size"]["insert"]["p100"] == 1000
    assert set(run["op_mix"]) == set(YCSB_MIX[workload])
    for op, p in YCSB_MIX[workload].items():
        assert within_binomial(run["op_mix"][op], p, run["ops"]), (op, run["op_mix"][op])
    for op, size in (("insert", 1000), ("update", 100), ("rmw", 100)):
        if op in run["value_size"]:
            assert run["value_size"][op]["p0"] == run["value_size"][op]["p100"] == size
    if workload == "e":
        sl = run["scan_length"]
        assert sl["p0"] >= 1 and sl["p100"] <= 100
        sd_mean = math.sqrt((100**2 - 1) / 12 / sl["count"])  # uniform 1..100
        assert abs(sl["mean"] - 50.5) <= 5 * sd_mean
    else:
        assert run["scan_length"] is None
    if workload == "d":  # 'latest': most reads go to the newest 10% of keys
        assert summary["recent_10pct_insert_share"] > 0.5
    else:  # YCSB's zipfian (scrambled) and its hashed keys: no preference for new keys
        assert summary["recent_10pct_insert_share"] < 0.2
        # ... and a skew well above uniform's ~2% yet far below a plain zipfian(0.99) over the
        # keys (~38% for 1000): the hashed zipfian over 10^10 items puts ~12% on the top 1%
        assert 0.06 < run["top_1pct_key_share"] < 0.25


def test_a_traces_scans_and_puts(tmp_path) -> None:
    # A query trace records a seek but not its nexts, and a write without telling new from old.
    path = tmp_path / "trace.csv"
    path.write_text(HEADER + "0,0,put,61,12,\n1,5,scan,62,,\n2,9,read,61,,\n")
    s = summarize(read_op_stream(path))
    assert s["op_counts"] == {"put": 1, "read": 1, "scan": 1}
    assert s["value_size"]["put"]["mean"] == 12
    assert s["scan_length"] == {"count": 0}
