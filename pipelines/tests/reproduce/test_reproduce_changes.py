"""`lsmbench reproduce` across runs and windows: a page compared with an earlier one
(--compare-with), and figures averaged over running windows compared over the same stretch."""

from __future__ import annotations

import json
import random
import re
import shutil
from pathlib import Path

import pytest
from fixtures_reproduce import REPORT_FIXTURE
from lsmbench.method.stats import median_ci
from lsmbench.reproduce import changes, pages
from lsmbench.reproduce.claims import all_claims
from lsmbench.reproduce.evidence import (
    INCONCLUSIVE,
    NOT_REPRODUCED,
    REPRODUCED,
    compare,
    components_mean,
    est,
    fmt_plain,
    query_rate,
    read_evidence,
)
from lsmbench.reproduce.suite import SUITE


def _rewrite_running(point_dir: Path, keep_s: float | None, components_after: float | None,
                     after_s: float) -> None:
    """The point's running timeseries cut at `keep_s` (an early end), or with disk_components
    set to `components_after` in every interval ending after `after_s`."""
    path = point_dir / "running" / "timeseries.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    start = min(float(iv["t_start_s"]) for iv in lines if "t_start_s" in iv)
    out = []
    for iv in lines:
        end = float(iv.get("t_end_s") or 0.0) - start
        if keep_s is not None and end > keep_s + 1e-6:
            continue
        if components_after is not None and end > after_s and "engine" in iv:
            iv["engine"]["disk_components"] = components_after
        out.append(iv)
    path.write_text("".join(json.dumps(iv) + "\n" for iv in out))


def test_components_are_compared_over_the_same_stretch_of_running(store):
    """Fair's running phases end early (cut at 2 s of their 4), greedy's run on and their trees grow
    (1000 components after 2 s): over whole windows greedy keeps more, over the first 2 s
    of each -- what LC3 compares -- the recorded counts decide."""
    camp = store / "reproduce" / "repro-lc-schedulers"
    for d in camp.iterdir():
        if d.name.startswith("policy=tiering,scheduler=fair,"):
            _rewrite_running(d, 2.5, None, 0.0)
        elif d.name.startswith("policy=tiering,scheduler=greedy,"):
            _rewrite_running(d, None, 1000.0, 2.5)
    ev = read_evidence(store / "reproduce", "repro-lc-schedulers")
    assert ev is not None
    lc3 = next(c for c in all_claims() if c.id == "LC3").judge({"repro-lc-schedulers": ev})
    assert "first 2 s" in lc3.why, lc3.why
    greedy = ev.one(policy="tiering", scheduler="greedy")
    fair = ev.one(policy="tiering", scheduler="fair")
    assert greedy is not None and fair is not None

    def first_2s(group):  # the mean over the intervals starting in the first 2 s
        means = []
        for pid in group.points:
            ivs = [iv for iv in ev.points[pid].running.regular_intervals()
                   if iv.get("measured")] or ev.points[pid].running.regular_intervals()
            t0 = float(ivs[0]["t_start_s"])
            counts = [iv["engine"]["disk_components"] for iv in ivs
                      if float(iv["t_start_s"]) - t0 < 1.5]
            means.append(sum(counts) / len(counts))
        return median_ci(means)

    g, f = first_2s(greedy), first_2s(fair)
    assert 1000.0 not in (g.ci_high, f.ci_high)
    assert f"greedy {est(g, fmt_plain)}" in lc3.ours and f"fair {est(f, fmt_plain)}" in lc3.ours
    expected = (REPRODUCED if g.ci_high < f.ci_low else
                NOT_REPRODUCED if g.ci_low > f.ci_high else INCONCLUSIVE)  # type: ignore[operator]
    assert lc3.status == expected
    # The whole windows would have judged greedy's 1000s.
    whole = compare(ev.of(components_mean, policy="tiering", scheduler="greedy"),
                    ev.of(components_mean, policy="tiering", scheduler="fair"), "greedy",
                    "fair", higher=False, fmt=fmt_plain, what="mean disk components")
    assert whole.status == NOT_REPRODUCED


def test_a_query_rate_over_the_first_seconds_counts_their_intervals_ops():
    """query_rate(kind, first_s): the ops of the intervals starting in the window's first
    seconds over their length; without first_s, the summary's rate of the whole window."""
    ev = read_evidence(REPORT_FIXTURE, "report-fixture")
    assert ev is not None
    pt = next(p for p in ev.points.values() if p.ok and p.running is not None)
    ivs = [iv for iv in pt.running.regular_intervals() if iv.get("measured")]
    t0 = float(ivs[0]["t_start_s"])
    first = [iv for iv in ivs if float(iv["t_start_s"]) - t0 < 1.5]
    assert 0 < len(first) < len(ivs)
    for kind in ("get", "scan"):
        want = sum(iv["queries"][kind]["ops"] for iv in first) / sum(
            iv["t_end_s"] - iv["t_start_s"] for iv in first)
        assert query_rate(kind, 2.0)(pt) == pytest.approx(want)
        assert query_rate(kind)(pt) == pt.running.summary["queries"][kind]["throughput"]
    assert query_rate("secondary", 2.0)(pt) is None  # no such query ran


def _status_flipped(line: str) -> str:
    for a, b in (("**reproduced**", "**not reproduced**"), ("**not run**", "**inconclusive**"),
                 ("**inconclusive**", "**reproduced**"),
                 ("**not reproduced**", "**reproduced**")):
        if a in line:
            return line.replace(a, b)
    raise AssertionError(line)


def test_compare_with_an_earlier_page_lists_exactly_the_changed_claims(store, tmp_path,
                                                                        lsmbench):
    """A page read back gives its statuses; the new page lists each claim whose status
    differs from the earlier page's (then, now), and says when none does."""
    first = tmp_path / "first"
    proc = lsmbench("reproduce", "--pages-only", "--paper", "luo-carey", "--results",
                    str(store), "--out", str(first))
    assert proc.returncode == 0, proc.stderr
    text = (first / "luo-carey.md").read_text()
    earlier = changes.read_earlier(first / "luo-carey.md")
    evidence = pages.load_evidence(store / "reproduce", list(SUITE))
    judged = {c.id: c.judge(evidence).status for c in all_claims()  # type: ignore[arg-type]
              if c.paper == "luo-carey"}
    assert earlier.statuses == judged
    assert earlier.started and earlier.commit is not None
    # The same page again: nothing changed.
    out = tmp_path / "pages"
    proc = lsmbench("reproduce", "--pages-only", "--paper", "luo-carey", "--results",
                    str(store), "--out", str(out), "--compare-with", str(first / "luo-carey.md"))
    assert proc.returncode == 0, proc.stderr
    new = (out / "luo-carey.md").read_text()
    assert "No claim changed status since that run's page." in new
    # An earlier page whose statuses differ for two claims (one of them dropped).
    lines = text.splitlines()
    rows = [i for i, line in enumerate(lines) if line.startswith("| LC")]
    seed = random.randrange(1 << 30)
    changed_at, dropped_at = random.Random(seed).sample(rows, 2)
    print("seed", seed, "rows", changed_at, dropped_at)
    lines[changed_at] = _status_flipped(lines[changed_at])
    then = re.findall(r"\*\*([a-z ]+)\*\*", lines[changed_at])[-1]
    dropped_id = lines[dropped_at].split()[1]
    changed_id = lines[changed_at].split()[1]
    del lines[dropped_at]
    old = tmp_path / "old.md"
    old.write_text("\n".join(lines) + "\n")
    proc = lsmbench("reproduce", "--pages-only", "--paper", "luo-carey", "--results",
                    str(store), "--out", str(out), "--compare-with", str(old))
    assert proc.returncode == 0, proc.stderr
    new = (out / "luo-carey.md").read_text()
    section = new.split("## Changed since", 1)[1].split("\n## ", 1)[0]
    listed = [line.split()[1] for line in section.splitlines() if line.startswith("| LC")]
    assert sorted(listed) == sorted([changed_id, dropped_id])
    row = next(line for line in section.splitlines() if line.startswith(f"| {changed_id} |"))
    assert f"| {then} | **{judged[changed_id]}** |" in row
    assert f"{len(judged) - 2} kept theirs" in section
    drow = next(line for line in section.splitlines() if line.startswith(f"| {dropped_id} |"))
    assert "| absent |" in drow


def test_compare_with_refuses_what_it_cannot_read(store, tmp_path, lsmbench):
    """Each refused before anything is written: exit 2 naming the file and why."""
    out = tmp_path / "pages"
    notes = tmp_path / "notes.md"
    notes.write_text("# my notes\n| LC1 | x | **reproduced** |\n")
    mao = tmp_path / "mao.md"
    proc = lsmbench("reproduce", "--pages-only", "--paper", "mao", "--results", str(store),
                    "--out", str(tmp_path / "mao-page"))
    assert proc.returncode == 0, proc.stderr
    shutil.copy(tmp_path / "mao-page" / "mao.md", mao)
    cases = [([str(tmp_path / "missing.md")], "missing.md: cannot read it"),
             ([str(notes)], "notes.md: not a page `lsmbench reproduce` wrote"),
             ([str(mao)], "mao.md: a page of mao, whose page this run does not write")]
    for paths, said in cases:
        args = [a for p in paths for a in ("--compare-with", p)]
        proc = lsmbench("reproduce", "--pages-only", "--paper", "luo-carey", "--results",
                        str(store), "--out", str(out), *args)
        assert proc.returncode == 2 and said in proc.stderr, (said, proc.stderr)
        assert "Traceback" not in proc.stderr and not out.exists()
    empty = tmp_path / "empty.md"
    empty.write_text(mao.read_text().split("## Claims", 1)[0])
    proc = lsmbench("reproduce", "--pages-only", "--results", str(store), "--out", str(out),
                    "--compare-with", str(empty))
    assert proc.returncode == 2 and "empty.md: no claims table in it" in proc.stderr
    proc = lsmbench("reproduce", "--pages-only", "--results", str(store), "--out", str(out),
                    "--compare-with", str(mao), "--compare-with", str(mao))
    assert proc.returncode == 2 and "a second page of mao" in proc.stderr
    assert not out.exists()


def test_an_earlier_page_run_in_parts_is_named_by_its_start_and_last_commit(tmp_path):
    page = tmp_path / "luo-carey.md"
    page.write_text(
        "<!-- Generated by `lsmbench reproduce` (pipelines/lsmbench/reproduce); do not edit -->\n"
        "Variant **full**,\n"
        "run in parts (experiments added by `--experiment` into one store) from "
        "2026-11-28T19:45:00Z to 2026-11-29T19:15:03Z, at 11 commits: each section names its "
        "own (the first `807284c9ef5a`, with uncommitted changes; the last `f43a10f84517`),\n"
        "| LC1 | a claim | Sec. 5 | x | y | **reproduced** | why |\n")
    earlier = changes.read_earlier(page)
    assert earlier.started == "2026-11-28T19:45:00Z"
    assert earlier.commit == "f43a10f84517"
    assert earlier.statuses == {"LC1": "reproduced"}
