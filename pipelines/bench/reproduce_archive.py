"""Keeps a suite run of `lsmbench reproduce` that is assembled over several sittings on
machines that do not keep /var/tmp: each experiment's stored campaign as one xz tarball, and
the suite run's record (reproduce.json), in a directory of the repository.

    # after `lsmbench reproduce --experiment NAME --results RESULTS ...`:
    .venv/bin/python pipelines/bench/reproduce_archive.py save RESULTS ARCHIVE NAME [NAME ...]
    # on the next machine, before the next --experiment or --pages-only:
    .venv/bin/python pipelines/bench/reproduce_archive.py restore ARCHIVE RESULTS

ARCHIVE is docs/results/adaptive/store for the adaptive Luo & Carey page (its README says
what it holds). `restore` never replaces a campaign RESULTS already holds (it says which it
left); `save` replaces the tarballs of the campaigns it is given and the record.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tarfile
from pathlib import Path

from lsmbench.reproduce.pages import RUN_FILE
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
    args = ap.parse_args()
    try:
        if args.verb == "save":
            return save(args.results, args.archive, args.names)
        return restore(args.archive, args.results)
    except (OSError, tarfile.TarError) as e:  # unwritable, full, or a damaged tarball
        print(f"reproduce_archive: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
