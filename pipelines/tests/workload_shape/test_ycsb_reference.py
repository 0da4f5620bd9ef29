"""The YCSB reference harness itself (workloads/ycsb/reference/record.sh): YCSB 0.17.0's own
client and CoreWorkload, recorded through lsmbench.ycsb.RecordingDB, must show YCSB's
definitions (workloads/ycsb/README.md).

YCSB's client takes no seed (every generator draws from ThreadLocalRandom), so each run differs:
a proportion is checked within 5 binomial sigmas (+ 1/n), sqrt(p (1 - p) / n) for n operations,
a false alarm about 6e-7 per check; a skew bound sits tens of sigmas from the value expected.
The `java` marker (the ycsb_record fixture): Java and Maven, and Maven Central on the first
build."""

from __future__ import annotations

import math
import os
import shutil
import subprocess
from pathlib import Path

from lsmbench.workload_shape.op_stream import read_op_stream, recent_insert_share, summarize
from ycsb_definitions import within_binomial

RECORDCOUNT = 1000
OPERATIONCOUNT = 5000


def fnvhash64(value: int) -> int:
    """YCSB's site.ycsb.Utils.fnvhash64 (0.17.0): FNV-1 over the long's 8 bytes, low byte first,
    Java's signed arithmetic (the shift keeps the sign), Math.abs at the end."""
    mask = (1 << 64) - 1
    h = 0xCBF29CE484222325
    v = value
    for _ in range(8):
        h ^= v & 0xFF
        v >>= 8  # Python's >> on a signed int is Java's >>
        h = (h * 1099511628211) & mask
    signed = h - (1 << 64) if h >> 63 else h
    return abs(signed) if signed != -(1 << 63) else signed


def ycsb_key(keynum: int) -> str:
    """CoreWorkload.buildKeyName with the defaults (insertorder=hashed, zeropadding=1), as the
    op stream writes it: the hex of its bytes."""
    return f"user{fnvhash64(keynum)}".encode().hex()


def record(script: Path, workload: str, out: Path) -> tuple:
    subprocess.run([str(script), workload, str(out), str(RECORDCOUNT), str(OPERATIONCOUNT)],
                   check=True, capture_output=True, text=True, timeout=900)
    return read_op_stream(out.with_suffix(".load.csv")), read_op_stream(out)


def test_fnvhash64_matches_ycsb():
    # the first keys YCSB's load writes (recorded from site.ycsb:core:0.17.0)
    assert f"user{fnvhash64(0)}" == "user6284781860667377211"
    assert fnvhash64(-1) >= 0


def check_load(load) -> None:
    """-load: one insert per record, keys user + fnvhash64(0..recordcount-1) in that order,
    10 fields x 100 bytes each."""
    assert "YCSB 0.17.0 CoreWorkload" in load.attrs["source"]
    assert (load["op"] == "insert").all() and len(load) == RECORDCOUNT
    assert load["key"].tolist() == [ycsb_key(i) for i in range(RECORDCOUNT)]
    assert (load["value_size"] == 1000).all()


def test_workloada(ycsb_record, tmp_path):
    load, run = record(ycsb_record, "a", tmp_path / "a.csv")
    check_load(load)
    s = summarize(run)
    assert s["ops"] == OPERATIONCOUNT
    assert set(s["op_mix"]) == {"read", "update"}
    for op in ("read", "update"):
        assert within_binomial(s["op_mix"][op], 0.5, OPERATIONCOUNT), s["op_mix"]
    # writeallfields=false: an update writes one 100-byte field; reads carry no size
    assert s["value_size"]["update"]["p0"] == s["value_size"]["update"]["p100"] == 100
    assert run.loc[run["op"] == "read", "value_size"].isna().all()
    assert set(run["key"]) <= set(load["key"])
    # YCSB's "zipfian" (ScrambledZipfianGenerator: zipfian(0.99) over 10^10 items, hashed onto
    # the keys): ~12% of accesses on the top 1% of 1000 keys. A uniform choice gives ~2.5% at
    # 5000 ops, a plain zipfian(0.99) over 1000 keys ~38%; sigma here is about 0.5%.
    assert 0.07 < s["top_1pct_key_share"] < 0.20, s["top_1pct_key_share"]


def test_workloadd_latest_and_new_keys(ycsb_record, tmp_path):
    load, run = record(ycsb_record, "d", tmp_path / "d.csv")
    check_load(load)
    s = summarize(run)
    assert set(s["op_mix"]) == {"read", "insert"}
    assert within_binomial(s["op_mix"]["insert"], 0.05, OPERATIONCOUNT), s["op_mix"]
    # the run's inserts take the next key numbers (AcknowledgedCounterGenerator from
    # recordcount), hashed like the load's, 1000 bytes each
    inserts = run[run["op"] == "insert"]
    assert inserts["key"].tolist() == [ycsb_key(RECORDCOUNT + i) for i in range(len(inserts))]
    assert (inserts["value_size"] == 1000).all()
    # a read never goes to a key not inserted yet
    inserted = set(load["key"])
    for op, key in zip(run["op"], run["key"], strict=True):
        if op == "insert":
            inserted.add(key)
        else:
            assert key in inserted
    # 'latest' (SkewedLatestGenerator: zipfian over recency): ~70% of reads on the newest 10%
    # of keys; a uniform or scrambled-zipfian choice would put ~10% there
    assert recent_insert_share(run, load=load) > 0.5


def test_workloade_scans(ycsb_record, tmp_path):
    _, run = record(ycsb_record, "e", tmp_path / "e.csv")
    s = summarize(run)
    assert set(s["op_mix"]) == {"scan", "insert"}
    assert within_binomial(s["op_mix"]["scan"], 0.95, OPERATIONCOUNT), s["op_mix"]
    sl = s["scan_length"]
    # maxscanlength=100, scanlengthdistribution=uniform: 1..100 inclusive
    assert sl["p0"] >= 1 and sl["p100"] <= 100
    assert abs(sl["mean"] - 50.5) <= 5 * math.sqrt((100**2 - 1) / 12 / sl["count"])
    assert run.loc[run["op"] == "scan", "value_size"].isna().all()


def test_workloadf_rmw_is_one_line(ycsb_record, tmp_path):
    _, run = record(ycsb_record, "f", tmp_path / "f.csv")
    s = summarize(run)
    # a read-modify-write is one rmw line (RecordingCoreWorkload marks it): no update lines
    # appear, and the stream holds exactly operationcount lines (record.sh checks that too)
    assert set(s["op_mix"]) == {"read", "rmw"}
    assert s["ops"] == OPERATIONCOUNT
    assert within_binomial(s["op_mix"]["rmw"], 0.5, OPERATIONCOUNT), s["op_mix"]
    assert s["value_size"]["rmw"]["p0"] == s["value_size"]["rmw"]["p100"] == 100


def test_rmw_without_the_marking_workload_is_refused(ycsb_record, tmp_path):
    """Plain CoreWorkload with workload F would record an rmw as a read and an update: the
    binding refuses it (and YCSB's client still exits 0, which record.sh's row count catches)."""
    here = ycsb_record.parent
    record(ycsb_record, "a", tmp_path / "warm.csv")  # builds the jar
    out = tmp_path / "plain.csv"
    p = subprocess.run(
        ["java", "-cp", f"{here / 'target' / 'ycsb-reference.jar'}:{here / 'target' / 'lib'}/*",
         "site.ycsb.Client", "-t", "-db", "lsmbench.ycsb.RecordingDB",
         "-P", str(here / "workloads" / "workloadf"), "-p", "recordcount=100",
         "-p", "operationcount=100", "-p", f"lsmbench.out={out}"],
        capture_output=True, text=True, timeout=300)
    assert "readmodifywriteproportion > 0 needs -p workload=lsmbench.ycsb.RecordingCoreWorkload" \
        in p.stdout + p.stderr
    assert not out.exists()


def test_record_sh_says_when_maven_is_missing(tmp_path):
    """Without mvn on PATH, record.sh stops at once with exit 3 and says what to install."""
    script = Path(__file__).resolve().parents[3] / "workloads" / "ycsb" / "reference" / "record.sh"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("dirname", "basename"):
        os.symlink(shutil.which(tool), bin_dir / tool)
    java = shutil.which("java")
    if java is not None:
        os.symlink(java, bin_dir / "java")
    p = subprocess.run([shutil.which("bash"), str(script), "a", str(tmp_path / "a.csv")],
                       capture_output=True, text=True, env={"PATH": str(bin_dir)}, timeout=60)
    assert p.returncode == 3
    assert "'mvn' is not installed" in p.stderr or "'java' is not installed" in p.stderr
    assert "default-jdk-headless maven" in p.stderr
    assert not (tmp_path / "a.csv").exists()
