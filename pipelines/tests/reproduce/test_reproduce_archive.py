"""research/bench/reproduce_archive.py: a suite run kept between sittings, and the runner that
keeps each experiment as soon as it ends (no experiment runs in these tests)."""

from __future__ import annotations

import subprocess
import sys
import tarfile
from datetime import datetime, timedelta
from pathlib import Path

from bench_scripts import load_bench_script
from lsmbench.reproduce.pages import RUN_FILE, ExperimentRun, SuiteRun
from lsmbench.reproduce.suite import SUITE
from lsmbench.store import CAMPAIGN_FILE
from lsmbench.util.paths import project_root

SCRIPT = project_root() / "research" / "bench" / "reproduce_archive.py"
LC = [e.name for e in SUITE if e.paper == "luo-carey"]


def archive_cmd(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True,
                          text=True, timeout=120, check=False)


def stored_suite(results: Path, names: list[str], exit_code: int = 0) -> None:
    store = results / "reproduce"
    for name in names:
        (store / name / "points" / "p1").mkdir(parents=True)
        (store / name / CAMPAIGN_FILE).write_text(f'{{"name": "{name}"}}')
        (store / name / "points" / "p1" / "result.json").write_text(f'{{"of": "{name}"}}')
    run = SuiteRun(variant="full", started="2026-11-28T08:00:00", experiments={
        n: ExperimentRun(name=n, command=f"lsmbench reproduce --experiment {n}",
                         exit_code=exit_code, seconds=60.0) for n in names})
    (store / RUN_FILE).write_text(run.model_dump_json())


def test_save_then_restore_gives_back_every_file(tmp_path: Path) -> None:
    stored_suite(tmp_path / "a", ["repro-lc-bursts", "repro-lc-queries"])
    saved = archive_cmd("save", tmp_path / "a", tmp_path / "keep", "repro-lc-bursts",
                        "repro-lc-queries")
    assert saved.returncode == 0, saved.stderr
    assert sorted(p.name for p in (tmp_path / "keep").iterdir()) == sorted([
        RUN_FILE, "repro-lc-bursts.tar.xz", "repro-lc-queries.tar.xz"])
    back = archive_cmd("restore", tmp_path / "keep", tmp_path / "b")
    assert back.returncode == 0, back.stderr
    for name in ("repro-lc-bursts", "repro-lc-queries"):
        rel = Path("reproduce") / name / "points" / "p1" / "result.json"
        assert (tmp_path / "b" / rel).read_text() == (tmp_path / "a" / rel).read_text()
    assert (tmp_path / "b" / "reproduce" / RUN_FILE).read_bytes() == \
        (tmp_path / "a" / "reproduce" / RUN_FILE).read_bytes()


def test_restore_never_replaces_what_the_store_holds(tmp_path: Path) -> None:
    stored_suite(tmp_path / "a", ["repro-lc-bursts"])
    assert archive_cmd("save", tmp_path / "a", tmp_path / "keep", "repro-lc-bursts").returncode == 0
    mine = tmp_path / "b" / "reproduce" / "repro-lc-bursts"
    mine.mkdir(parents=True)
    (mine / "newer.txt").write_text("a later sitting's")
    back = archive_cmd("restore", tmp_path / "keep", tmp_path / "b")
    assert back.returncode == 0
    assert "left as it is" in back.stdout
    assert sorted(p.name for p in mine.iterdir()) == ["newer.txt"]


def test_bad_archives_exit_2_naming_them(tmp_path: Path) -> None:
    empty = archive_cmd("restore", tmp_path / "nothing", tmp_path / "r")
    assert empty.returncode == 2 and "nothing" in empty.stderr
    assert "Traceback" not in empty.stderr
    keep = tmp_path / "keep"
    keep.mkdir()
    (keep / RUN_FILE).write_text("{}")
    (keep / "repro-lc-bursts.tar.xz").write_bytes(b"not xz at all")
    damaged = archive_cmd("restore", keep, tmp_path / "r")
    assert damaged.returncode == 2 and "Traceback" not in damaged.stderr
    (keep / "repro-lc-bursts.tar.xz").unlink()
    outside = tmp_path / "evil.txt"
    outside.write_text("x")
    with tarfile.open(keep / "repro-lc-queries.tar.xz", "w:xz") as tar:
        tar.add(outside, arcname="repro-lc-bursts/../../evil.txt")
    escaping = archive_cmd("restore", keep, tmp_path / "r2")
    assert escaping.returncode == 2 and "outside repro-lc-queries/" in escaping.stderr
    missing = archive_cmd("save", tmp_path / "r3", keep, "repro-lc-bursts")
    assert missing.returncode == 2 and "repro-lc-bursts" in missing.stderr


def test_run_refuses_unknown_experiments_and_times(tmp_path: Path) -> None:
    bogus = archive_cmd("run", tmp_path / "keep", tmp_path / "r", "--out", tmp_path / "o",
                        "--experiment", "repro-lc-nonesuch")
    assert bogus.returncode == 2
    assert "repro-lc-nonesuch" in bogus.stderr and "repro-lc-bursts" in bogus.stderr
    late = archive_cmd("run", tmp_path / "keep", tmp_path / "r", "--out", tmp_path / "o",
                       "--until", "25:99")
    assert late.returncode == 2 and "--until 25:99" in late.stderr
    assert not (tmp_path / "r").exists()


def test_run_skips_what_is_kept_and_starts_nothing_past_the_deadline(tmp_path: Path) -> None:
    stored_suite(tmp_path / "a", LC)
    assert archive_cmd("save", tmp_path / "a", tmp_path / "keep", *LC).returncode == 0
    done = archive_cmd("run", tmp_path / "keep", tmp_path / "r", "--out", tmp_path / "o")
    assert done.returncode == 0, done.stderr
    assert "nothing left to run" in done.stdout

    # One failed experiment is not kept: it is the one left to run, and a minute is too
    # little for any Luo & Carey experiment.
    stored_suite(tmp_path / "c", ["repro-lc-bursts"], exit_code=1)
    assert archive_cmd("save", tmp_path / "c", tmp_path / "keep2", "repro-lc-bursts"
                       ).returncode == 0
    soon = (datetime.now() + timedelta(minutes=2)).strftime("%H:%M")
    cut = archive_cmd("run", tmp_path / "keep2", tmp_path / "r2", "--out", tmp_path / "o",
                      "--until", soon, "--experiment", "repro-lc-bursts")
    assert cut.returncode == 0, cut.stderr
    assert "repro-lc-bursts" in cut.stdout and "does not fit before the deadline" in cut.stdout
    assert not (tmp_path / "o").exists()

    # One that does not fit is passed over, not the end: the next is still weighed, and one
    # whose time nothing estimates (a simulator experiment never run here) is not started.
    both = archive_cmd("run", tmp_path / "keep2", tmp_path / "r3", "--out", tmp_path / "o",
                       "--until", soon, "--experiment", "repro-lc-bursts",
                       "--experiment", "repro-mao-sim")
    assert both.returncode == 0, both.stderr
    assert "repro-mao-sim: no estimate of its time" in both.stdout
    assert "left for the next sitting: repro-lc-bursts, repro-mao-sim" in both.stdout
    assert not (tmp_path / "o").exists()

    # Without claim repetitions plan's estimate alone is weighed: half the time.
    def minutes(*extra: str) -> int:
        # A deadline a few minutes off, taken now: one that passed would be tomorrow's.
        near = (datetime.now() + timedelta(minutes=3)).strftime("%H:%M")
        proc = archive_cmd("run", tmp_path / "keep2", tmp_path / "r4", "--out", tmp_path / "o",
                           "--until", near, "--experiment", "repro-lc-bursts", *extra)
        assert proc.returncode == 0, proc.stderr
        line = next(x for x in proc.stdout.splitlines() if "does not fit" in x)
        return int(line.split("~", 1)[1].split(" min", 1)[0])

    with_room, without = minutes(), minutes("--claim-repetitions", "0")
    assert abs(with_room - 2 * without) <= 1, (with_room, without)
    bad = archive_cmd("run", tmp_path / "keep2", tmp_path / "r5", "--out", tmp_path / "o",
                      "--claim-repetitions", "-1")
    assert bad.returncode == 2 and "--claim-repetitions: expected 0 or more" in bad.stderr


def _archive_module():
    return load_bench_script("reproduce_archive")


def test_an_experiment_whose_record_says_it_ended_well_is_kept_after_a_late_failure(
        tmp_path: Path) -> None:
    """`lsmbench reproduce` can fail after the experiment (writing its pages): the runner
    keeps the campaign when the suite run's record says the experiment ended with exit 0
    after the runner started it -- not an older record, not a failed one."""
    ended_well = _archive_module().ended_well
    stored_suite(tmp_path, ["repro-lc-size-ratio", "repro-lc-bursts"])
    record = tmp_path / "reproduce" / RUN_FILE
    run = SuiteRun.model_validate_json(record.read_text())
    run.experiments["repro-lc-size-ratio"].finished = "2026-11-28T23:12:09Z"
    run.experiments["repro-lc-bursts"].finished = "2026-11-28T20:42:01Z"
    record.write_text(run.model_dump_json())
    utc_end = datetime.fromisoformat("2026-11-28T23:12:09+00:00").timestamp()
    assert ended_well(tmp_path, "repro-lc-size-ratio", utc_end - 60)
    assert not ended_well(tmp_path, "repro-lc-size-ratio", utc_end + 60)  # an older record
    assert not ended_well(tmp_path, "repro-lc-queries", 0.0)  # no record
    run.experiments["repro-lc-size-ratio"].exit_code = 1
    record.write_text(run.model_dump_json())
    assert not ended_well(tmp_path, "repro-lc-size-ratio", 0.0)  # it failed
    run.experiments["repro-lc-bursts"].finished = None
    record.write_text(run.model_dump_json())
    assert not ended_well(tmp_path, "repro-lc-bursts", 0.0)  # no end stamped
