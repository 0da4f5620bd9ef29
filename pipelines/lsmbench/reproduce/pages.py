"""The results pages: docs/results/<paper>.md from the stored experiments, with their figures
(PNG files beside the page, under img/<paper>/) -- regenerated whole every time, each file
renamed into place when complete."""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..method.groups import Group
from ..report.catalog import all_figures
from ..report.plotting import Figure
from ..report.render import markdown_environment
from ..store import write_bytes_atomic
from .changes import EarlierPage, changes_since
from .claims import Claim, Evidence, all_claims
from .evidence import (
    NOT_REPRODUCED,
    NOT_RUN,
    REPRODUCED,
    CampaignEvidence,
    Finding,
    confirmed_estimate,
    est,
    fmt_plain,
    fmt_rate,
    fmt_seconds,
    read_evidence,
    testing_engine_metric,
)
from .simfigure import SIM_FIGURES, long_figure
from .simlong import LongSims, SimLongError, read_long
from .simtable import SimTable, SimTableError, read_table
from .suite import PAPERS, Experiment

TEMPLATE = "reproduce.md.j2"
RUN_FILE = "reproduce.json"


class ExperimentRun(BaseModel):
    """How one experiment ran (RESULTS/reproduce.json)."""

    name: str
    command: str
    exit_code: int
    seconds: float
    error: str | None = None
    # When and at which commit it ran: an experiment re-run alone (`--experiment`) differs
    # from the rest of its suite run, and its page says so.
    finished: str | None = None
    commit: str | None = None
    # With --testbed: when it started, the node it ran on (None: this machine, as every
    # experiment without --testbed and the simulator ones with it), that node's testbed key
    # (fingerprint.testbed_key of its fingerprint's identity), and the nodes that failed it
    # (testbeds.distribute's attempts).
    started: str | None = None
    node: str | None = None
    node_key: str | None = None
    attempts: list[dict[str, Any]] = []
    # With --resume: the run went on from an interrupted one (its complete points kept);
    # `seconds` is the last run's part, `points_s` the stored points' own wall time, all runs'.
    resumed: bool = False
    points_s: float | None = None
    # More repetitions for undecided claims (runner._more_repetitions), the last plan: claims,
    # groups, repetitions (each group up to), exit_code, seconds, command; done (False: it
    # was interrupted, and `--resume` goes on with it; absent in older records: True),
    # points_s (the wall time of the points it added; absent in older records) and earlier
    # (the plans before it whose points the store keeps, oldest first).
    more: dict[str, Any] | None = None

    @property
    def own_s(self) -> float:
        """How long the experiment's own points took: a resumed one's over its runs summed;
        without the repetitions added for its claims (`more`, which has its own figure)."""
        return max(self.seconds, self.points_s or 0.0) if self.resumed else self.seconds

    @property
    def plans(self) -> list[dict[str, Any]]:
        """Every plan of repetitions for its claims that the stored points hold, oldest first
        (each a `more` without its `earlier`)."""
        if not self.more:
            return []
        last = {k: v for k, v in self.more.items() if k != "earlier"}
        return [*self.more.get("earlier", []), last]

    @property
    def plan_pending(self) -> bool:
        """Its last plan of repetitions was interrupted: `--resume` goes on with it."""
        return self.more is not None and self.more.get("done") is False

    @property
    def took_s(self) -> float:
        """How long the experiment took in all: its own points and its claims' repetitions."""
        return self.own_s + sum(float(p.get("seconds") or 0.0) for p in self.plans)


class SuiteRun(BaseModel):
    """The last `lsmbench reproduce` into this store."""

    variant: str  # quick | full
    started: str
    ended: str | None = None
    commit: str | None = None
    dirty: bool | None = None
    host: dict[str, Any] = {}  # this machine's (with --testbed: the controller's)
    # With --testbed: {name, nodes: {NODE: {address, disk, key, identity}}, differing: the
    # identity fields on which the nodes differ}; None: everything ran on this machine.
    testbed: dict[str, Any] | None = None
    experiments: dict[str, ExperimentRun] = {}


@dataclass(frozen=True)
class RunInParts:
    """A suite run built up by `--experiment` runs after it (a long full variant kept in
    sittings): from the first experiment's start to the last one's end, at these commits."""

    started: str
    ended: str
    commits: list[str]


def run_in_parts(run: SuiteRun, names: list[str]) -> RunInParts | None:
    """The span of the experiments `names` when they ran at more than one commit or past the
    run record's own end; None when the record's start, end and commit describe them all."""
    exps = sorted((run.experiments[n] for n in names if n in run.experiments),
                  key=lambda e: e.finished or "")
    commits = list(dict.fromkeys(e.commit for e in exps if e.commit))
    ends = [e.finished for e in exps if e.finished]
    # A run still under way (no end) is not "in parts" for ending after itself.
    past_end = run.ended is not None and any(end > run.ended for end in ends)
    if len(set([*commits, run.commit])) <= 1 and not past_end:
        return None
    first = min([e.started for e in exps if e.started] + [run.started])
    return RunInParts(started=first, ended=max([*ends, run.ended or ""]) or "?",
                      commits=list(dict.fromkeys([c for c in [run.commit, *commits] if c])))


def read_run(store: Path) -> SuiteRun | None:
    try:
        return SuiteRun.model_validate_json((store / RUN_FILE).read_text())
    except (OSError, ValueError):
        return None


def write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_bytes_atomic(path, data)


def load_evidence(store: Path, exps: list[Experiment]) -> Evidence:
    """Every experiment's stored result (a missing one is simply absent). The caller passes
    the experiments of the suite run the pages describe: an older result of an experiment
    that run skipped (a full-only one under --quick) is not evidence for its page."""
    out: Evidence = {}
    for exp in exps:
        if exp.kind in ("sim-validate", "sim"):
            # A simulator result that cannot be read is as good as absent: its claims "not run".
            with contextlib.suppress(SimTableError, SimLongError):
                found = (read_table if exp.kind == "sim-validate" else read_long)(store, exp.name)
                if found is not None:
                    out[exp.name] = found
            continue
        ev = read_evidence(store, exp.name)
        if ev is None:
            continue
        if exp.kind == "tune":
            with contextlib.suppress(OSError, ValueError):
                ev.extra["tune"] = json.loads((store / exp.name / "tune.json").read_text())
        machine = _machine(store / exp.name)
        if machine:
            ev.extra["machine"] = machine
        out[exp.name] = ev
    return out


def _machine(campaign_dir: Path) -> str:
    """The machine a stored campaign's points ran on, from their fingerprint.json ("Intel(R)
    Xeon(R) Processor (2 cores), kernel 6.18.44"); the distinct ones, ";"-joined; "" when none
    says. An experiment added to a run in parts may have run on another machine than the run's
    record names."""
    seen: list[str] = []
    for f in sorted(campaign_dir.glob("*/fingerprint.json")):
        try:
            ident = json.loads(f.read_text())
        except (OSError, ValueError):
            continue
        if not isinstance(ident, dict) or not ident.get("cpu_model"):
            continue
        text = (f"{ident['cpu_model']} ({ident.get('cpu_count', '?')} cores), kernel "
                f"{ident.get('kernel', '?')}")
        if text not in seen:
            seen.append(text)
    return "; ".join(seen)


@dataclass
class ExperimentSection:
    exp: Experiment
    run: ExperimentRun | None
    columns: tuple[str, ...] = ()
    groups: list[list[str]] = field(default_factory=list)
    sim: SimTable | None = None
    figures: list[dict[str, str]] = field(default_factory=list)
    machine: str = ""  # what its points' fingerprints name ("" when they name none)


TWO_PHASE_COLUMNS = ("group", "complete", "testing max", "write p99", "stalled", "verdict")
TESTING_COLUMNS = ("group", "complete", "testing max", "write amplification",
                   "average SSTables")


CONFIRMED_COLUMNS = ("configuration", "confirmed: closed-loop maximum", "the answer")
LONG_COLUMNS = ("policy", "k", "flushes", "write amplification", "average SSTables",
                "growth exponent from 16 x 4^k", "seconds")


def _long_rows(sims: LongSims) -> list[list[str]]:
    rows = []
    for r in sims.runs:
        g = r.growth_exponent()
        last = r.points[-1]
        rows.append([r.policy, str(r.k), f"{r.flushes:,}", f"{last.write_amp:,.2f}",
                     f"{last.avg_sstables:.2f}", "-" if g is None else f"{g:.3f}",
                     f"{r.seconds:.2f}"])
    return rows


def _confirmed_rows(tune: dict[str, Any]) -> list[list[str]]:
    """A tune study's confirmed configurations (fresh repetitions each): what its claims are
    judged on, rather than the trials' single runs."""
    best = (tune.get("best") or {}).get("params")
    rows = []
    for c in tune.get("confirmed") or []:
        params = ", ".join(f"{k}={v}" for k, v in (c.get("params") or {}).items())
        name = f"{params} (the defaults)" if c.get("defaults") else params
        rows.append([name, est(confirmed_estimate(c), fmt_rate),
                     "yes" if c.get("params") == best else ""])
    return rows


def _group_row(ev: CampaignEvidence, g: Group, two_phase: bool) -> list[str]:
    """A group's line: its verdict with the running phase's figures, or, for a campaign
    without a running phase, the testing phase's write amplification and SSTable count."""
    head = [g.group, f"{g.complete}/{g.repetitions}", est(g.max_write_throughput, fmt_rate)]
    if not two_phase:
        return [*head,
                est(ev.estimate(g, testing_engine_metric("write_amplification")), fmt_plain),
                est(ev.estimate(g, testing_engine_metric("average_sstables")), fmt_plain)]
    agree = ", ".join(f"{v} {k}" for k, v in g.agree.items() if v)
    return [*head, est(g.p99_write_latency_s, fmt_seconds), est(g.stall_s, fmt_seconds),
            f"{g.verdict} ({agree})" if agree else g.verdict]


def _figures(ev: CampaignEvidence, exp: Experiment, out_dir: Path) -> list[dict[str, str]]:
    if not exp.figures:
        return []
    wanted = {f.id: f for f in all_figures(ev.campaign.points, only=exp.figures)}
    return [_write_figure(wanted[fid], exp, out_dir) for fid in exp.figures if fid in wanted]


def _write_figure(f: Figure, exp: Experiment, out_dir: Path) -> dict[str, str]:
    rel = Path("img") / exp.paper / f"{exp.name}-{f.id}.png"
    write_atomic(out_dir / rel, f.png)
    return {"path": rel.as_posix(), "title": f.title, "caption": f.caption}


def section(exp: Experiment, evidence: Evidence, run: SuiteRun | None,
            out_dir: Path) -> ExperimentSection:
    sec = ExperimentSection(exp, run.experiments.get(exp.name) if run else None)
    ev = evidence.get(exp.name)
    if isinstance(ev, CampaignEvidence):
        sec.machine = str(ev.extra.get("machine", ""))
    if isinstance(ev, SimTable):
        sec.sim = ev
        figs = [SIM_FIGURES[fid](ev) for fid in exp.figures if fid in SIM_FIGURES]
        sec.figures = [_write_figure(f, exp, out_dir) for f in figs if f is not None]
    elif isinstance(ev, LongSims):
        sec.columns = LONG_COLUMNS
        sec.groups = _long_rows(ev)
        fig = long_figure(ev)
        if fig is not None:
            sec.figures = [_write_figure(fig, exp, out_dir)]
    elif isinstance(ev, CampaignEvidence) and ev.extra.get("tune"):
        sec.columns = CONFIRMED_COLUMNS
        sec.groups = _confirmed_rows(ev.extra["tune"])
    elif isinstance(ev, CampaignEvidence):
        two_phase = any(p.running is not None for p in ev.points.values())
        sec.columns = TWO_PHASE_COLUMNS if two_phase else TESTING_COLUMNS
        sec.groups = [_group_row(ev, g, two_phase) for g in ev.groups]
        sec.figures = _figures(ev, exp, out_dir)
    return sec


def judged(claims: list[Claim], evidence: Evidence) -> list[tuple[Claim, Finding]]:
    return [(c, c.judge(evidence)) for c in claims]


def tally(rows: list[tuple[Claim, Finding]]) -> dict[str, int]:
    out = {REPRODUCED: 0, NOT_REPRODUCED: 0, "inconclusive": 0, NOT_RUN: 0}
    for _, f in rows:
        out[f.status] += 1
    return out


def page_names(papers: list[str]) -> list[str]:
    """What render_page writes under its out_dir for these papers: a page and a figure
    directory each."""
    return [n for p in papers for n in (f"{p}.md", f"img/{p}")]


@dataclass
class RenderedPage:
    path: Path
    files: list[Path]  # the page and its figures


def render_page(paper: str, exps: list[Experiment], evidence: Evidence, run: SuiteRun | None,
                out_dir: Path, earlier: EarlierPage | None = None) -> RenderedPage:
    """Writes out_dir/<paper>.md and its figures (page_names); with `earlier` (a page of this
    paper read back), the claims whose status changed since it."""
    claims = [c for c in all_claims() if c.paper == paper]
    rows = judged(claims, evidence)
    sections = [section(e, evidence, run, out_dir) for e in exps if e.paper == paper]
    machines = list(dict.fromkeys(m for s in sections if s.machine
                                  for m in s.machine.split("; ")))
    text = markdown_environment().get_template(TEMPLATE).render(
        paper=paper, title=PAPERS[paper], run=run, rows=rows, tally=tally(rows),
        machines=machines if len(machines) > 1 else [],
        parts=run_in_parts(run, [e.name for e in exps if e.paper == paper]) if run else None,
        sections=sections, total_seconds=sum(s.run.took_s for s in sections if s.run),
        comparison=changes_since(earlier, rows) if earlier is not None else None)
    path = out_dir / f"{paper}.md"
    write_atomic(path, text.encode())
    return RenderedPage(path, [path] + [out_dir / f["path"] for sec in sections
                                        for f in sec.figures])
