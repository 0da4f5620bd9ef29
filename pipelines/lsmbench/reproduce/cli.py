"""`lsmbench reproduce [--quick] [--paper P] [--pages-only]`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..paths import project_root
from .suite import PAPERS, experiments

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def add_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    s = sub.add_parser("reproduce", parents=[common],
                       help="run the papers' experiments and regenerate docs/results/"
                            "{luo-carey,mao,pramanik}.md")
    s.add_argument("--quick", action="store_true",
                   help="short phases and few repetitions: under 30 minutes in all")
    s.add_argument("--paper", action="append", default=None, metavar="NAME",
                   help=f"only this paper's experiments and page ({', '.join(PAPERS)}); "
                        "repeatable")
    s.add_argument("--pages-only", action="store_true",
                   help="run nothing: the pages again from RESULTS/reproduce/")
    s.add_argument("--out", default=None, metavar="DIR",
                   help="where the pages go (default: docs/results/ of the project)")
    s.set_defaults(func=cmd_reproduce)


def cmd_reproduce(args: argparse.Namespace) -> int:
    from .pages import RUN_FILE, load_evidence, read_run, render_page
    from .runner import run_suite

    unknown = [p for p in args.paper or [] if p not in PAPERS]
    if unknown:
        print(f"lsmbench reproduce: --paper: unknown {', '.join(unknown)}; choose from "
              f"{', '.join(PAPERS)}", file=sys.stderr)
        return EXIT_USAGE
    papers = list(dict.fromkeys(args.paper)) if args.paper else list(PAPERS)
    exps = experiments(papers)
    store = Path(args.results) / "reproduce"
    out = Path(args.out) if args.out else project_root() / "docs" / "results"
    if out.exists() and not out.is_dir():
        print(f"lsmbench reproduce: --out {out}: not a directory", file=sys.stderr)
        return EXIT_USAGE
    say = (lambda *_: None) if args.quiet or args.json else print
    failed = False
    if args.pages_only:
        run = read_run(store)
        if run is None:
            print(f"lsmbench reproduce: --pages-only: no readable {RUN_FILE} in {store} (run "
                  "`lsmbench reproduce` first)", file=sys.stderr)
            return EXIT_USAGE
    else:
        run = run_suite(exps, args.quick, store, say)
        failed = any(r.exit_code != 0 for r in run.experiments.values())
    evidence = load_evidence(store, exps)
    written = []
    for paper in papers:
        written.append(str(render_page(paper, exps, evidence, run, out)))
        say(f"reproduce: {written[-1]}")
    if args.json:
        print(json.dumps({"variant": run.variant, "pages": written,
                          "experiments": {n: r.exit_code for n, r in run.experiments.items()}}))
    return EXIT_FAILED if failed else EXIT_OK
