"""Every command's output for people, piped with COLUMNS=80 (validate, plan, plan --predict,
ls, tune's table, report, track report): no line wider than 80 columns (but for one word longer
than a line, a path, on a line of its own), no word, number or id split across lines -- every
word of the unbounded output (no terminal at all) is whole in the 80-column one, and the
80-column one holds no fragment -- and a number is not parted from its qualifier ("at most
~20m18s"). Then --quiet: exactly one line on stdout, the command's final line, for every
command that has the flag but track bisect, which builds and measures commits (its --quiet path
prints the conclusion's head alone, by reading of the code; not run here)."""

from __future__ import annotations

import os
import re
import shutil

import pytest
import yaml
from lsmbench.cli import main
from lsmbench.results.tuning import Best, Confirmed, TrialRow, TuneResult
from lsmbench.tune.console import print_result
from repo_paths import PIPELINES, REPO, TESTS

FIXTURES = TESTS / "fixtures"
QUICKSTART = PIPELINES / "campaigns" / "quickstart.yaml"
REPORT_FIXTURE = FIXTURES / "report" / "results" / "report-fixture"
REPRO_STORE = FIXTURES / "reproduce" / "results" / "reproduce"
WIDTH = 80
# A number or an id holds a digit: those must be whole on one line.
_DIGIT = re.compile(r"[0-9]")
# What qualifies a number must not end a line ("at most" / "~20m18s").
_DANGLING = re.compile(r"(\bat most|\bat least|\bup to|<=|>=)$")


def _no_terminal(fd: int) -> os.terminal_size:
    raise OSError("not a terminal")


def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], args: list[str],
        columns: int | None) -> tuple[int, list[str], str]:
    """The command in this process, its stdout captured (piped): COLUMNS set, or no width and
    no terminal at all."""
    monkeypatch.setattr(os, "get_terminal_size", _no_terminal)
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", str(columns))
    code = main(args)
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


def _tokens(lines: list[str]) -> set[str]:
    # Separators are not parts of a word: a stacked block joins cells with "; " where the
    # table has columns.
    return {w.strip(";:,()[]") for line in lines for w in line.split()} - {""}


def assert_fits(narrow: list[str], free: list[str], width: int = WIDTH,
                labels: frozenset[str] = frozenset()) -> None:
    """``labels``: words a stacked block adds as labels (the table has them in no column)."""
    assert narrow, "no output"
    # Longer than the line only as one word on a line of its own (a path).
    too_long = [ln for ln in narrow if len(ln.rstrip()) > width and len(ln.split()) > 1]
    assert too_long == []
    # A word broken across lines leaves fragments that the unbounded output does not hold.
    fragments = sorted(_tokens(narrow) - _tokens(free) - labels)
    assert fragments == []
    lost = sorted(w for w in _tokens(free) - _tokens(narrow) if _DIGIT.search(w))
    assert lost == []
    dangling = [ln for ln in narrow if _DANGLING.search(ln.rstrip())]
    assert dangling == []


def both(monkeypatch, capsys, args: list[str]) -> tuple[list[str], list[str]]:
    code, narrow, err = run(monkeypatch, capsys, args, WIDTH)
    assert code in (0, 4), err
    code, free, err = run(monkeypatch, capsys, args, None)
    assert code in (0, 4), err
    return narrow, free


# ---------------------------------------------------------------- 80 columns, nothing split


def test_validate_and_plan_fit_80_columns(monkeypatch, capsys, tmp_path):
    for args in (["validate", str(QUICKSTART)],
                 ["plan", str(QUICKSTART), "--results", str(tmp_path)]):
        narrow, free = both(monkeypatch, capsys, args)
        assert_fits(narrow, free)
    # The known breakage: the summary's worst case was parted from its duration.
    assert any(re.search(r"at most ~\S+", ln) for ln in narrow)


def test_plan_predict_fits_80_columns_with_whole_point_ids(monkeypatch, capsys, tmp_path):
    args = ["plan", str(QUICKSTART), "--predict", "--limit", "4", "--results", str(tmp_path)]
    narrow, free = both(monkeypatch, capsys, args)
    assert_fits(narrow, free)
    for pid in ("policy=tiering,scheduler=single,rep=0", "policy=tiering,scheduler=single,rep=1"):
        assert any(pid in ln for ln in narrow)
    assert "lsm-sim's prediction (engines/sim/README.md: how far to trust it)" in narrow


def test_ls_fits_80_columns(monkeypatch, capsys):
    from lsmbench.listing import WHY

    for args in (["ls", "--results", str(REPRO_STORE)],
                 ["ls", "repro-lc-schedulers", "--results", str(REPRO_STORE), "--repetitions"]):
        narrow, free = both(monkeypatch, capsys, args)
        assert_fits(narrow, free, labels=frozenset({WHY}))


def _study(objectives: tuple[str, ...] = ("max_sustainable_rate",)) -> TuneResult:
    rows = [TrialRow(number=i, state="complete", defaults=i == 0,
                     params={"write_buffer_size": 50656789 + i, "max_file_size": 49730350 - i,
                             "size_ratio": 7},
                     values=[176191.0 + 1000 * i, 0.0123][:len(objectives)],
                     verdict="sustainable",
                     note="pruned: its testing maximum 209 writes/s cannot beat 7,152 writes/s")
            for i in range(3)]
    confirmed = [Confirmed(params=rows[1].params, group="g", points=["p"], trial_value=1.0,
                           repetitions=3, median=181013.0, ci_low=176191.0, ci_high=190000.0,
                           confidence=0.75, pessimistic=176191.0, feasible=True,
                           verdict="sustainable")]
    best = Best(params=rows[1].params, value=176191.0, sustainable=True, verdict="sustainable",
                basis="the lower end of its 75 % interval over 3 fresh repetitions")
    return TuneResult(campaign="tune-leveldb-sustainable",
                      study="/var/tmp/results/tune-leveldb-sustainable/tune.sqlite3",
                      objectives=list(objectives), directions=["maximize"] * len(objectives),
                      constraints=[], parameters={}, trials=3, complete=3, pruned=0, failed=0,
                      rows=rows, confirmed=confirmed, best=best, defaults_trial=0)


@pytest.mark.parametrize("objectives", [("max_sustainable_rate",),
                                        ("max_write_throughput", "p99_write_latency")])
def test_tune_table_fits_80_columns(monkeypatch, capsys, objectives):
    result = _study(objectives)
    outputs = []
    for columns in (WIDTH, None):
        monkeypatch.setattr(os, "get_terminal_size", _no_terminal)
        if columns is None:
            monkeypatch.delenv("COLUMNS", raising=False)
        else:
            monkeypatch.setenv("COLUMNS", str(columns))
        print_result(result)
        outputs.append(capsys.readouterr().out.splitlines())
    assert_fits(*outputs)
    # A number and its unit whole on one line.
    assert any("176,191 writes/s" in ln for ln in outputs[0])
    assert any("209 writes/s" in ln for ln in outputs[0])


def test_report_output_fits_80_columns(monkeypatch, capsys, tmp_path):
    camp = tmp_path / "store" / "report-fixture"
    shutil.copytree(REPORT_FIXTURE, camp)
    narrow, free = both(monkeypatch, capsys, ["report", str(camp), "--window", "2"])
    assert_fits(narrow, free)


def test_track_report_output_fits_80_columns(monkeypatch, capsys, tmp_path):
    from test_track_report import STEP, STEP_NIGHT, noisy, record_nights

    scales = [s * (STEP if night >= STEP_NIGHT else 1.0)
              for night, s in enumerate(noisy(7), start=1)]
    hist = record_nights(tmp_path, scales)
    capsys.readouterr()  # what the helpers said
    args = ["track", "report", "--history", str(hist), "--out", str(tmp_path / "out")]
    narrow, free = both(monkeypatch, capsys, args)
    assert any(ln.startswith("REGRESSION") for ln in narrow)
    assert_fits(narrow, free)


# ---------------------------------------------------------------- --quiet: one final line


def quiet(monkeypatch, capsys, args: list[str], code: int = 0) -> tuple[str, str]:
    """The one line `args --quiet` prints on stdout, and its stderr: one line on a narrow
    terminal too (not wrapped)."""
    got, out, err = run(monkeypatch, capsys, [*args, "--quiet"], 40)
    assert got == code, err
    assert len(out) == 1, out
    return out[0], err


def last_line(monkeypatch, capsys, args: list[str], code: int = 0) -> str:
    got, out, err = run(monkeypatch, capsys, args, None)
    assert got == code, err
    return out[-1]


def test_quiet_validate_plan_ls_report_export(monkeypatch, capsys, tmp_path):
    camp = tmp_path / "store" / "report-fixture"
    shutil.copytree(REPORT_FIXTURE, camp)
    store = str(tmp_path / "store")
    for args, expected in (
            (["validate", str(QUICKSTART)],
             f"{QUICKSTART}: valid (campaign quickstart, 12 points)"),
            (["plan", str(QUICKSTART), "--results", str(tmp_path / "r")],
             "campaign quickstart: up to 12 points (0 excluded)"),
            (["ls", "--results", store], f"1 campaign in {store}"),
            (["ls", "report-fixture", "--results", store], "3 groups, points 3 planned, 3 run"),
            (["report", str(camp)], f"report written to {camp / 'report' / 'report.html'}"),
            (["export", str(camp), "--format", "csv"], f"export written to {camp / 'export'}")):
        line, _ = quiet(monkeypatch, capsys, args)
        assert line.startswith(expected), (args, line)
        assert line == last_line(monkeypatch, capsys, args), args


def test_quiet_tune_is_the_best_line_alone(monkeypatch, capsys):
    from lsmbench.progress import QuietReporter

    result = _study()
    monkeypatch.setenv("COLUMNS", "40")
    print_result(result, quiet=True)
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 and out[0].startswith("best: write_buffer_size=50656790")
    # The campaign's own summary line is not printed before it (tune's reporter).
    reporter = QuietReporter(final=False)
    reporter.campaign_end({"campaign": "c", "complete": 1, "failed": 0, "skipped": 0,
                           "wall_s": 1.0, "results_dir": "/r"})
    assert capsys.readouterr().out == ""


def test_quiet_run_is_the_campaign_line(monkeypatch, capsys, tmp_path, data_root, driver_path):
    spec = tmp_path / "c.yaml"
    spec.write_text(yaml.safe_dump({
        "name": "quiet-run", "engine": {"name": "null"},
        "workload": {"file": "update-uniform-1kb", "set": {"record_count": 2000}},
        "phases": {"testing": {"duration": "3s", "warmup": "1s"},
                   "running": {"duration": "2s"}},
        "throttle": {"enabled": False},
        "testbed": {"type": "local", "data_dir": str(data_root / "data")}}))
    line, _ = quiet(monkeypatch, capsys, ["run", str(spec), "--results", str(tmp_path / "r"),
                                          "--no-publish"])
    assert line.startswith("campaign quiet-run: 1 complete, 0 failed")


def test_quiet_publish_says_its_summary(monkeypatch, capsys, tmp_path):
    import socket

    camp = tmp_path / "store" / "report-fixture"
    shutil.copytree(REPORT_FIXTURE, camp)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    line, err = quiet(monkeypatch, capsys, ["publish", str(camp), "--to",
                                            f"http://127.0.0.1:{port}?db=x", "--all"], code=1)
    assert re.match(r"published \d+ points?, [1-9]\d* failed, 0 already published", line)
    assert "FAILED" in err


def test_quiet_calibrate_says_where_the_profile_is(monkeypatch, capsys, tmp_path, data_root,
                                                  fio):
    out = tmp_path / "profile.json"
    line, _ = quiet(monkeypatch, capsys, ["calibrate", "--data-dir", str(data_root),
                                          "--runtime", "1", "--size-mb", "16", "--output",
                                          str(out)])
    assert line == f"profile written to {out} (throttle percentages are relative to it)"


def test_quiet_testbed_commands(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("LSMBENCH_TESTBEDS", str(tmp_path / "testbeds"))
    definition = tmp_path / "tb.yml"
    definition.write_text(yaml.safe_dump({"type": "local", "data_dir": str(tmp_path / "d")}))
    line, _ = quiet(monkeypatch, capsys, ["testbed", "up", "tb", "--file", str(definition)])
    assert line.startswith("testbed tb up: local (")
    line, _ = quiet(monkeypatch, capsys, ["testbed", "status", "tb"])
    assert line == "testbed tb: local"
    line, _ = quiet(monkeypatch, capsys, ["testbed", "down", "tb", "--yes"])
    assert line == "testbed tb: local, nothing to tear down"


def test_quiet_track_commands(monkeypatch, capsys, tmp_path):
    from test_track_report import STEP, STEP_NIGHT, noisy, record_nights
    from track_nights import make_night

    scales = [s * (STEP if night >= STEP_NIGHT else 1.0)
              for night, s in enumerate(noisy(7), start=1)]
    hist = record_nights(tmp_path, scales)
    capsys.readouterr()  # what the helpers said
    args = ["track", "report", "--history", str(hist), "--out", str(tmp_path / "out")]
    line, _ = quiet(monkeypatch, capsys, args, code=4)
    assert re.match(r"\d+ open regression\(s\), \d+ change point\(s\); ", line)
    assert line == last_line(monkeypatch, capsys, args, code=4)
    import json

    change = json.loads((tmp_path / "out" / "regressions.json").read_text())["open"][0]["id"]
    line, _ = quiet(monkeypatch, capsys, ["track", "ack", change, "--history", str(hist),
                                          "--why", "expected: a test"])
    assert line.startswith(f"{change}: ") and line.endswith("marked as expected: expected: a test")
    camp = make_night(tmp_path / "night-extra", 13, throughput_scale=0.85, commit="13" * 20)
    capsys.readouterr()
    line, _ = quiet(monkeypatch, capsys, ["track", "record", str(camp), "--history", str(hist)])
    assert " recorded as run " in line
    series = tmp_path / "series.csv"
    series.write_text("night,value\n" + "".join(f"{i},{v}\n" for i, v in
                                                enumerate([10.0] * 10 + [7.0] * 10)))
    line, _ = quiet(monkeypatch, capsys, ["track", "detect", str(series)])
    assert line.startswith(f"{series}: column 'value': 20 values")


def test_quiet_reproduce_is_its_pages_line(monkeypatch, capsys, tmp_path, store):
    out = tmp_path / "pages"
    monkeypatch.chdir(REPO)
    line, _ = quiet(monkeypatch, capsys, ["reproduce", "--pages-only", "--results", str(store),
                                          "--out", str(out)])
    assert line.startswith("reproduce: 0 experiments run; 3 pages written: ")
    assert str(out / "luo-carey.md") in line


def test_quiet_nightly_is_its_end_line_alone(tmp_path, data_root, driver_path):
    from test_track_nightly import Measured, build_command, nightly, tiny_spec

    (tmp_path / "git").mkdir()
    measured = Measured(tmp_path / "git")
    measured.push_commit("engine v2\n")
    spec = tiny_spec(tmp_path / "tiny.yaml", data_root)
    r = nightly(str(spec), "--repo", str(measured.repo), "--ref", "origin/main", "--results",
                str(tmp_path / "results"), "--build-command", build_command(driver_path),
                "--quiet")
    assert r.returncode in (0, 4), r.stderr[-3000:]
    # The children's own final lines (run, record, report) went to stderr.
    assert len(r.stdout.splitlines()) == 1, r.stdout
    assert r.stdout.startswith(f"nightly: exit {r.returncode}; commit ")
    assert "campaign nightly-tiny: 1 complete" in r.stderr
