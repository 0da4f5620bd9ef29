"""Keeps a suite run of `lsmbench reproduce` that is assembled over several sittings on
machines that do not keep /var/tmp: each experiment's stored campaign as one xz tarball, and
the suite run's record (reproduce.json), in a directory of the repository.

    # after `lsmbench reproduce --experiment NAME --results RESULTS ...`:
    .venv/bin/python research/bench/reproduce_archive.py save RESULTS ARCHIVE NAME [NAME ...]
    # on the next machine, before the next --experiment or --pages-only:
    .venv/bin/python research/bench/reproduce_archive.py restore ARCHIVE RESULTS
    # or all three, experiment after experiment, as many as end before a deadline:
    .venv/bin/python research/bench/reproduce_archive.py run ARCHIVE RESULTS --out DIR \
        [--paper luo-carey] [--experiment NAME ...] [--until 10:30]

ARCHIVE is research/luo-carey-adaptive-rerun/store for the adaptive Luo & Carey page (its
README says what it holds). `restore` never replaces a campaign RESULTS already holds (it says which
it left); `save` replaces the tarballs of the campaigns it is given and the record.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tarfile
import time
from datetime import datetime, timedelta
from pathlib import Path

from lsmbench.reproduce.pages import RUN_FILE, read_run
from lsmbench.reproduce.spread import estimate_s
from lsmbench.reproduce.suite import SUITE
from lsmbench.store import CAMPAIGN_FILE

SUFFIX = ".tar.xz"


def save(results: Path, archive: Path, names: list[str]) -> int:
    store = results / "reproduce"
    missing = [n for n in names if not (store / n / CAMPAIGN_FILE).is_file()]
    if missing or not (store / RUN_FILE).is_file():
        what = ", ".join(missing) if missing else RUN_FILE
        print(f"reproduce_archive: {store} holds no {what}", file=sys.stderr)
        return 2
    archive.mkdir(parents=True, exist_ok=True)
    for name in names:
        part = archive / f".{name}{SUFFIX}.part"
        with tarfile.open(part, "w:xz", preset=6) as tar:
            tar.add(store / name, arcname=name)
        kept = archive / f"{name}{SUFFIX}"
        part.replace(kept)
        print(f"{name}: {kept.stat().st_size / 1e6:.2f} MB")
    shutil.copyfile(store / RUN_FILE, archive / RUN_FILE)
    return 0


def restore(archive: Path, results: Path) -> int:
    tarballs = sorted(archive.glob(f"*{SUFFIX}"))
    if not tarballs or not (archive / RUN_FILE).is_file():
        print(f"reproduce_archive: {archive} holds no {RUN_FILE} and campaigns to restore",
              file=sys.stderr)
        return 2
    store = results / "reproduce"
    store.mkdir(parents=True, exist_ok=True)
    for tarball in tarballs:
        name = tarball.name[: -len(SUFFIX)]
        if (store / name).exists():
            print(f"{name}: {store / name} exists, left as it is")
            continue
        with tarfile.open(tarball, "r:xz") as tar:
            if any(m.name != name and not m.name.startswith(f"{name}/")
                   for m in tar.getmembers()):
                print(f"reproduce_archive: {tarball} holds files outside {name}/",
                      file=sys.stderr)
                return 2
            tar.extractall(store, filter="data")
        print(f"{name}: restored")
    if not (store / RUN_FILE).exists():
        shutil.copyfile(archive / RUN_FILE, store / RUN_FILE)
    else:
        print(f"{store / RUN_FILE} exists, left as it is")
    return 0


# What an experiment's claim repetitions (the full variant's --claim-repetitions) may add to
# plan's estimate of its campaign: measured 2026-11-27, constraints' LC12 would add ~50 min to
# its ~22, the schedulers' added ~8 to ~50; an experiment starts only when this much fits.
CLAIMS_MARGIN = 2.0


def ended_well(results: Path, name: str, since: float) -> bool:
    """Whether the suite run's record says experiment `name` ran to its end (exit 0) after
    `since` (epoch seconds): `lsmbench reproduce` can fail after that, writing the pages, and
    the stored campaign is then whole."""
    run = read_run(results / "reproduce")
    record = run.experiments.get(name) if run is not None else None
    if record is None or record.exit_code != 0 or not record.finished:
        return False
    try:
        finished = datetime.fromisoformat(record.finished.replace("Z", "+00:00"))
    except ValueError:
        return False
    return finished.timestamp() >= since


def deadline_at(until: str) -> float:
    """--until HH:MM: today's (tomorrow's, when it has passed) epoch seconds."""
    now = datetime.now()
    at = datetime.combine(now.date(), datetime.strptime(until, "%H:%M").time())
    if at <= now:
        at += timedelta(days=1)
    return at.timestamp()


def run(archive: Path, results: Path, out: Path, papers: list[str], names: list[str],
        deadline: float | None, claim_repetitions: int | None = None) -> int:
    """Each experiment not yet kept in ARCHIVE (exit 0), one after another, each kept as soon
    as it ends: a sitting cut short loses at most the experiment under way."""
    known = {e.name: e for e in SUITE}
    unknown = [n for n in names if n not in known]
    if unknown:
        print(f"reproduce_archive: --experiment {', '.join(unknown)}: not an experiment "
              f"(known: {', '.join(known)})", file=sys.stderr)
        return 2
    if (archive / RUN_FILE).is_file():
        code = restore(archive, results)
        if code:
            return code
    kept = read_run(archive)
    todo = [known[n] for n in names] if names else [
        e for e in SUITE if e.paper in papers and not (
            kept is not None and kept.variant == "full" and e.name in kept.experiments
            and kept.experiments[e.name].exit_code == 0
            and (archive / f"{e.name}{SUFFIX}").is_file())]
    lsmbench = Path(sys.executable).with_name("lsmbench")
    left: list[str] = []
    pages_missing = False
    for exp in todo:
        est = estimate_s(exp, False, results, read_run(results / "reproduce"))
        if deadline is not None and est is None:
            # Nothing says it would end in time: a sitting's end is no place to find out.
            print(f"{exp.name}: no estimate of its time: not started before a deadline")
            left.append(exp.name)
            continue
        need = (est or 0.0) * (1.0 if claim_repetitions == 0 else CLAIMS_MARGIN)
        if deadline is not None and time.time() + need > deadline:
            # A shorter one further on may still fit the time left.
            room = "" if claim_repetitions == 0 else " with its claims' repetitions"
            print(f"{exp.name}: ~{need / 60:.0f} min{room} does not fit before the deadline: "
                  "left for the next sitting")
            left.append(exp.name)
            continue
        # A campaign of it the store holds already is an earlier sitting's, cut short: its
        # complete points are kept (a kept experiment asked for by name runs anew).
        resume = not names and (results / "reproduce" / exp.name / CAMPAIGN_FILE).is_file()
        print(f"{exp.name}: plan's estimate ~{(est or 0.0) / 60:.0f} min"
              + (", going on from the stored points" if resume else ""), flush=True)
        began = time.time()
        done = subprocess.run([str(lsmbench), "reproduce", "--quiet", "--experiment", exp.name,
                               "--results", str(results), "--out", str(out),
                               *(["--resume"] if resume else []),
                               *([f"--claim-repetitions={claim_repetitions}"]
                                 if claim_repetitions is not None else [])], check=False)
        if done.returncode != 0 and ended_well(results, exp.name, began):
            print(f"{exp.name}: lsmbench reproduce exit {done.returncode} after the experiment "
                  "ended well (its record: exit 0): kept; its pages were not written "
                  "(`lsmbench reproduce --pages-only` writes them)", file=sys.stderr)
            pages_missing = True
        elif done.returncode != 0:  # its record (RESULTS/reproduce) says why; kept: no part
            print(f"{exp.name}: lsmbench reproduce exit {done.returncode}; not kept (`lsmbench "
                  "reproduce --resume --experiment` goes on from its complete points)",
                  file=sys.stderr)
            return done.returncode
        else:
            pages_missing = False
        code = save(results, archive, [exp.name])
        if code:
            return code
    if pages_missing:
        print(f"the pages were not written after the last experiment: `lsmbench reproduce "
              f"--pages-only --results {results} --out {out}` writes them", file=sys.stderr)
        return 1
    if left:
        print(f"left for the next sitting: {', '.join(left)}")
    else:
        print("nothing left to run" if not todo else "every experiment asked for is kept")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="verb", required=True)
    s = sub.add_parser("save")
    s.add_argument("results", type=Path)
    s.add_argument("archive", type=Path)
    s.add_argument("names", nargs="+")
    r = sub.add_parser("restore")
    r.add_argument("archive", type=Path)
    r.add_argument("results", type=Path)
    u = sub.add_parser("run")
    u.add_argument("archive", type=Path)
    u.add_argument("results", type=Path)
    u.add_argument("--out", type=Path, required=True, help="where the pages go")
    u.add_argument("--paper", action="append", default=None,
                   help="the experiments of this paper not yet kept (default: luo-carey)")
    u.add_argument("--experiment", action="append", default=[],
                   help="this experiment, kept or not (repeatable)")
    u.add_argument("--until", help="HH:MM: start an experiment only when it likely ends before")
    u.add_argument("--claim-repetitions", type=int, default=None, metavar="N",
                   help="passed to lsmbench reproduce (0: none, and --until then counts plan's "
                        "estimate alone, without room for them)")
    args = ap.parse_args()
    try:
        if args.verb == "save":
            return save(args.results, args.archive, args.names)
        if args.verb == "run":
            try:
                deadline = deadline_at(args.until) if args.until else None
            except ValueError:
                print(f"reproduce_archive: --until {args.until}: expected HH:MM",
                      file=sys.stderr)
                return 2
            if args.claim_repetitions is not None and args.claim_repetitions < 0:
                print("reproduce_archive: --claim-repetitions: expected 0 or more, got "
                      f"{args.claim_repetitions}", file=sys.stderr)
                return 2
            return run(args.archive, args.results, args.out, args.paper or ["luo-carey"],
                       args.experiment, deadline, args.claim_repetitions)
        return restore(args.archive, args.results)
    except (OSError, tarfile.TarError) as e:  # unwritable, full, or a damaged tarball
        print(f"reproduce_archive: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
