"""More repetitions for the claims they would decide: after an experiment ran, the claims it
tests that are inconclusive only because their groups' intervals overlap, where (if the
medians hold) a few more repetitions of those groups would part them. `lsmbench reproduce`
then runs the experiment again with `--resume` and `matrix.repetitions.groups` naming those
groups, up to the largest number a claim needs (capped): the instrument measures until the
claim is decided, not for as long as the spec's repetitions said.

Looking again after more data is sequential testing: the intervals' coverage is per look,
not across looks, so a claim decided on the second look has a somewhat higher chance of
being decided by chance than its interval says; the page says when a claim's groups got
repetitions this way."""

from __future__ import annotations

from dataclasses import dataclass, field

from .claims import all_claims
from .evidence import INCONCLUSIVE, CampaignEvidence


@dataclass
class Wanted:
    """The repetitions an experiment's undecided claims want: each group up to `repetitions`."""

    repetitions: int
    groups: list[str]
    claims: list[str] = field(default_factory=list)


def repetitions_wanted(experiment: str, ev: CampaignEvidence, cap: int) -> Wanted | None:
    """What the experiment's inconclusive claims would need, from its stored evidence: the
    groups of each one's undecided comparisons and the repetitions they say would decide them
    (always more than those groups have), when that is at most `cap`."""
    groups: set[str] = set()
    claims: list[str] = []
    most = 0
    for claim in all_claims():
        if claim.experiment != experiment:
            continue
        finding = claim.check(ev)
        n = finding.repetitions
        if finding.status != INCONCLUSIVE or n is None or n > cap or not finding.groups:
            continue
        groups |= set(finding.groups)
        claims.append(claim.id)
        most = max(most, n)
    if not claims:
        return None
    return Wanted(repetitions=most, groups=sorted(groups), claims=claims)
