"""The papers' claims, each with the experiment that tests it and how it is judged.

A claim names its source (section, figure), says what the paper measured, and judges the
evidence with the rule of :mod:`lsmbench.reproduce.evidence`. A claim whose experiment did not
run (``--paper``, or a campaign that stored nothing) is "not run".
"""

from __future__ import annotations

from .claim import Claim, Evidence
from .luo_carey import CLAIMS as LUO_CAREY
from .mao import CLAIMS as MAO
from .pramanik import CLAIMS as PRAMANIK

__all__ = ["Claim", "Evidence", "all_claims"]


def all_claims() -> list[Claim]:
    return [*LUO_CAREY, *MAO, *PRAMANIK]
