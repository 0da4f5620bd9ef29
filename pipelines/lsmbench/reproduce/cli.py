"""`lsmbench reproduce [--quick] [--paper P] [--experiment E] [--pages-only] [--testbed NAME]`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..util.exits import EXIT_ENV, EXIT_FAILED, EXIT_OK, EXIT_USAGE
from ..util.paths import project_root
from ..util.wording import plural
from .suite import PAPERS, SUITE, experiments, runs_in

if TYPE_CHECKING:
    from .changes import EarlierPage

# The most repetitions per group reproduce adds for an undecided claim (--claim-repetitions):
# a dozen part two medians whose gap is at least 0.85 times their 3-repetition intervals'
# summed half-widths (groups.repetitions_to_part: 75 % intervals widened to 95 % ones), at a
# few minutes a point in the full variant.
CLAIM_REPETITIONS = 12


def add_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    s = sub.add_parser("reproduce", parents=[common],
                       help="run the papers' experiments and regenerate docs/results/"
                            "{luo-carey,mao,pramanik}.md")
    s.add_argument("--quick", action="store_true",
                   help="short phases and few repetitions: under 30 minutes in all")
    s.add_argument("--paper", action="append", default=None, metavar="NAME",
                   help=f"only this paper's experiments and page ({', '.join(PAPERS)}); "
                        "repeatable")
    s.add_argument("--experiment", action="append", default=None, metavar="NAME",
                   help="run only this experiment (repeatable) into the stored suite run, "
                        "then write its paper's page from everything stored: "
                        + ", ".join(e.name for e in SUITE))
    s.add_argument("--pages-only", action="store_true",
                   help="run nothing: the pages again from RESULTS/reproduce/")
    s.add_argument("--resume", action="store_true",
                   help="go on from an interrupted run: the experiments the stored suite run "
                        "(of the same variant) finished are not run again (with --experiment: "
                        "those named are), the others go on from their complete points "
                        "(`lsmbench run --resume`) instead of starting over")
    s.add_argument("--claim-repetitions", type=int, default=None, metavar="N",
                   help="after an experiment, more repetitions (up to N per group) for the "
                        "groups of each claim that is inconclusive only because their "
                        "intervals overlap, when that many would likely part them (default: "
                        f"{CLAIM_REPETITIONS} in the full variant, 0 in --quick; 0: never)")
    s.add_argument("--testbed", default=None, metavar="NAME",
                   help="run on the kept testbed NAME (`lsmbench testbed up NAME`), several "
                        "experiments at once: each run/tune experiment on one node, the "
                        "simulator ones here; prints the estimated time on its nodes and on "
                        "one machine first")
    s.add_argument("--out", default=None, metavar="DIR",
                   help="where the pages go (default: docs/results/ of the project)")
    s.add_argument("--compare-with", action="append", default=None, metavar="PAGE",
                   help="a page an earlier `lsmbench reproduce` wrote (e.g. `git show "
                        "REV:docs/results/luo-carey.md > old.md`): the new page of its paper "
                        "lists every claim whose status changed since; repeatable, one page "
                        "per paper")
    s.set_defaults(func=cmd_reproduce)


def cmd_reproduce(args: argparse.Namespace) -> int:
    from ..outputs import OutputError, check_writable, record_written, resolve_out
    from .changes import CompareError
    from .pages import RUN_FILE, load_evidence, page_names, read_run, render_page
    from .runner import run_suite

    unknown = [p for p in args.paper or [] if p not in PAPERS]
    if unknown:
        print(f"lsmbench reproduce: --paper: unknown {', '.join(unknown)}; choose from "
              f"{', '.join(PAPERS)}", file=sys.stderr)
        return EXIT_USAGE
    names = list(dict.fromkeys(args.experiment or []))
    known = {e.name: e for e in SUITE}
    if [n for n in names if n not in known]:
        print(f"lsmbench reproduce: --experiment: unknown "
              f"{', '.join(n for n in names if n not in known)}; choose from "
              f"{', '.join(known)}", file=sys.stderr)
        return EXIT_USAGE
    if args.testbed is not None and args.pages_only:
        print("lsmbench reproduce: --testbed runs experiments, --pages-only runs none: give "
              "one of them", file=sys.stderr)
        return EXIT_USAGE
    if args.resume and args.pages_only:
        print("lsmbench reproduce: --resume runs experiments, --pages-only runs none: give "
              "one of them", file=sys.stderr)
        return EXIT_USAGE
    if args.claim_repetitions is not None and args.claim_repetitions < 0:
        print("lsmbench reproduce: --claim-repetitions: expected 0 or more, got "
              f"{args.claim_repetitions}", file=sys.stderr)
        return EXIT_USAGE
    if names and args.pages_only:
        print("lsmbench reproduce: --experiment runs an experiment, --pages-only runs none: "
              "give one of them", file=sys.stderr)
        return EXIT_USAGE
    chosen = list(dict.fromkeys(args.paper)) if args.paper else None
    if names and chosen and [n for n in names if known[n].paper not in chosen]:
        print(f"lsmbench reproduce: --experiment {', '.join(names)} is not all of --paper "
              f"{', '.join(chosen)}", file=sys.stderr)
        return EXIT_USAGE
    papers = chosen or (list(dict.fromkeys(known[n].paper for n in names)) if names
                        else list(PAPERS))
    exps = experiments(papers)
    store = Path(args.results) / "reproduce"
    if not args.pages_only:
        from ..store import results_store_problem

        problem = results_store_problem(store)
        if problem:
            print(f"lsmbench reproduce: {problem}", file=sys.stderr)
            return EXIT_ENV
    out, owned = resolve_out(args.out, project_root() / "docs" / "results")
    try:
        check_writable(out, "reproduce", page_names(papers), owned=owned)
    except OutputError as e:
        print(f"lsmbench reproduce: {e}", file=sys.stderr)
        return EXIT_USAGE
    try:
        earlier = _earlier_pages(args.compare_with or [], papers)
    except CompareError as e:
        print(f"lsmbench reproduce: {e}", file=sys.stderr)
        return EXIT_USAGE
    say = (lambda *_: None) if args.quiet or args.json else print
    stored = read_run(store)
    if args.pages_only:
        if stored is None:
            print(f"lsmbench reproduce: --pages-only: no readable {RUN_FILE} in {store} (run "
                  "`lsmbench reproduce` first)", file=sys.stderr)
            return EXIT_USAGE
    elif names or args.resume:
        skipped = [n for n in names if not runs_in(known[n], args.quick)]
        if skipped:
            print(f"lsmbench reproduce: --experiment {', '.join(skipped)}: the full variant "
                  "only (not in --quick)", file=sys.stderr)
            return EXIT_USAGE
        variant = "quick" if args.quick else "full"
        if stored is not None and stored.variant != variant:
            flag = "--experiment" if names else "--resume"
            print(f"lsmbench reproduce: {flag}: the suite run stored in {store} is the "
                  f"{stored.variant} variant; go on with it as such ("
                  f"{'with' if stored.variant == 'quick' else 'without'} --quick), or run the "
                  "whole suite", file=sys.stderr)
            return EXIT_USAGE
    todo = ([] if args.pages_only else [known[n] for n in names] if names
            else [e for e in exps if runs_in(e, args.quick)])
    if args.resume and not names and stored is not None:
        done = [e.name for e in todo if e.name in stored.experiments
                and stored.experiments[e.name].exit_code == 0
                and not stored.experiments[e.name].plan_pending]
        if done:
            say(f"reproduce: --resume: {plural(len(done), 'experiment')} finished before, not "
                f"run again: {', '.join(done)}")
        todo = [e for e in todo if e.name not in done]
    nodes = None
    estimates: dict[str, float | None] = {}
    if args.testbed is not None:
        # Every node up, deployed and fingerprinted before anything runs or is written.
        from .spread import SpreadError, describe_estimate, estimate_s, open_nodes

        try:
            nodes = open_nodes(args.testbed, lambda m: print(m, file=sys.stderr))
        except SpreadError as e:
            print(f"lsmbench reproduce: {e}", file=sys.stderr)
            return e.exit_code
        estimates = {e.name: estimate_s(e, args.quick, store, stored) for e in todo}
        for line in describe_estimate(args.testbed, [n.name for n in nodes.nodes], todo,
                                      estimates):
            say(line)
    failed = False
    if args.pages_only:
        assert stored is not None
        run = stored
    else:
        more = args.claim_repetitions
        if more is None:
            more = 0 if args.quick else CLAIM_REPETITIONS
        run = run_suite(todo, args.quick, store, say,
                        into=stored if names or args.resume else None,
                        nodes=nodes, estimates=estimates, resume=args.resume,
                        ends=args.resume and not names, claim_repetitions=more)
        failed = any(run.experiments[e.name].exit_code != 0 for e in todo)
    evidence = load_evidence(store, [e for e in exps if e.name in run.experiments])
    written = []
    for paper in papers:
        page = render_page(paper, exps, evidence, run, out, earlier.get(paper))
        record_written(out, "reproduce", page.files)
        written.append(str(page.path))
        say(f"reproduce: {written[-1]}")
    if not args.json:  # the one final line, with --quiet too
        bad = [e.name for e in todo if run.experiments[e.name].exit_code != 0]
        print(f"reproduce: {plural(len(todo), 'experiment')} run"
              + (f" ({len(bad)} failed: {', '.join(bad)})" if bad else "")
              + f"; {plural(len(written), 'page')} written: {', '.join(written)}")
    if args.json:
        print(json.dumps({"variant": run.variant, "pages": written,
                          "experiments": {n: r.exit_code for n, r in run.experiments.items()},
                          "testbed": (run.testbed or {}).get("name"),
                          "nodes": {n: r.node for n, r in run.experiments.items()},
                          "estimate_s": estimates}))
    return EXIT_FAILED if failed else EXIT_OK


def _earlier_pages(paths: list[str], papers: list[str]) -> dict[str, EarlierPage]:
    """--compare-with's pages by paper, read before anything runs."""
    from .changes import CompareError, paper_of, read_earlier
    from .claims import all_claims

    out: dict[str, EarlierPage] = {}
    for p in paths:
        page = read_earlier(Path(p))
        paper = paper_of(page, all_claims())
        if paper not in papers:
            raise CompareError(f"--compare-with {p}: a page of {paper}, whose page this run "
                               f"does not write (it writes {', '.join(papers)})")
        if paper in out:
            raise CompareError(f"--compare-with {p}: a second page of {paper} (the first: "
                               f"{out[paper].path}); give one per paper")
        out[paper] = page
    return out
