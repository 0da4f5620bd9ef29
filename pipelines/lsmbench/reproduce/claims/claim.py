"""A claim of a paper: its source, what the paper measured, the experiment that tests it and
the rule that judges that experiment's evidence (each paper's module lists its claims)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..evidence import NOT_RUN, CampaignEvidence, Finding
from ..simlong import LongSims
from ..simtable import SimTable

# Each experiment's stored result: a campaign, lsm-sim-validate's table, or the long simulations.
Evidence = dict[str, CampaignEvidence | SimTable | LongSims]


@dataclass(frozen=True)
class Claim:
    id: str
    paper: str  # a key of suite.PAPERS
    source: str  # "Sec. 5.2, Fig. 9"
    text: str
    theirs: str  # what the paper measured
    experiment: str  # the suite experiment's name
    check: Callable[[Any], Finding]  # the evidence of its experiment (see Evidence)

    def judge(self, evidence: Evidence) -> Finding:
        ev = evidence.get(self.experiment)
        if ev is None:
            return Finding(status=NOT_RUN, ours="-", why=f"{self.experiment} did not run")
        return self.check(ev)
