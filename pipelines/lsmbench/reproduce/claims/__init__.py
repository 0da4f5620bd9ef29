"""The papers' claims, each with the experiment that tests it and how it is judged.

A claim names its source (section, figure), says what the paper measured, and judges the
evidence with the rule of :mod:`lsmbench.reproduce.evidence`. A claim whose experiment did not
run (``--paper``, or a campaign that stored nothing) is "not run".
"""

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


def all_claims() -> list[Claim]:
    from .luo_carey import CLAIMS as LC
    from .mao import CLAIMS as MAO
    from .pramanik import CLAIMS as PV

    return [*LC, *MAO, *PV]
