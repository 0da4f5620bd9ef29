"""More repetitions for the claims they would decide: after an experiment ran, the claims it
tests that are inconclusive only because their groups' intervals overlap, where (if the
medians hold) a few more repetitions of those groups would part them. `lsmbench reproduce`
then runs the experiment again with `--resume` and `matrix.repetitions.groups` naming those
groups, up to the largest number a claim needs (capped): the instrument measures until the
claim is decided, not for as long as the spec's repetitions said.

A plan gives its repetitions to every group that a claim compares with one of its groups
too (another claim, or a decided part of a planned one; and so on): repetitions run later
than the rest, for one side of a comparison only, would compare this sitting's machine with
an earlier one's, and one claim's plan would move another claim's verdict without measuring
its other side. (It happened: LC19's plan gave tiering + fair 10 more afternoon repetitions,
tiering + greedy none, and LC16, which compares the two, went from reproduced to
inconclusive.)

Looking again after more data is sequential testing: the intervals' coverage is per look,
not across looks, so a claim decided on the second look has a higher chance of being decided
by chance than its interval says -- little here (research/bench/sequential_looks.py: two
alike groups come out apart 10.4 % of the time at 3 each, 10.4-10.6 % with the stored plans'
second and third looks, since two 95 % intervals part only far apart); the page says when a
claim's groups got repetitions this way."""

from __future__ import annotations

from dataclasses import dataclass, field

from .claims import all_claims
from .evidence import INCONCLUSIVE, CampaignEvidence


@dataclass
class Wanted:
    """The repetitions an experiment's undecided claims want: each group up to `repetitions`
    (`balance`: those of them that only other claims' comparisons bring in, with the claims)."""

    repetitions: int
    groups: list[str]
    claims: list[str] = field(default_factory=list)
    balance: dict[str, list[str]] = field(default_factory=dict)


def repetitions_wanted(experiment: str, ev: CampaignEvidence, cap: int) -> Wanted | None:
    """What the experiment's inconclusive claims would need, from its stored evidence: the
    groups of each one's undecided comparisons and the repetitions they say would decide them
    (always more than those groups have), when that is at most `cap`."""
    groups: set[str] = set()
    claims: list[str] = []
    most = 0
    reads: dict[str, list[str]] = {}
    for claim in all_claims():
        if claim.experiment != experiment:
            continue
        finding, reads[claim.id] = ev.reading(claim.check)
        n = finding.repetitions
        if finding.status != INCONCLUSIVE or n is None or n > cap or not finding.groups:
            continue
        groups |= set(finding.groups)
        claims.append(claim.id)
        most = max(most, n)
    if not claims:
        return None
    # By the groups each claim reads, not by its separate comparisons: a claim of two
    # disjoint comparisons brings in both when one touches the plan (more than needed, never
    # fewer). The planned claims are read too: a decided part of one that shares a group
    # with its open part (A against B decided, A against C open) needs B as much as another
    # claim's comparison would.
    balance = _compared_with(groups, reads)
    return Wanted(repetitions=most, groups=sorted(groups | set(balance)), claims=claims,
                  balance=balance)


def _compared_with(planned: set[str], reads: dict[str, list[str]]) -> dict[str, list[str]]:
    """The groups outside `planned` that a claim (of `reads`: the groups each reads) compares
    with a planned one, until none is left out: each with those claims."""
    added: dict[str, list[str]] = {}
    inside = set(planned)
    grew = True
    while grew:
        grew = False
        for claim, read in reads.items():
            if len(read) < 2 or not inside & set(read):
                continue
            for g in read:
                if g not in planned:
                    added.setdefault(g, [])
                    if claim not in added[g]:
                        added[g].append(claim)
                if g not in inside:
                    inside.add(g)
                    grew = True
    return dict(sorted(added.items()))
