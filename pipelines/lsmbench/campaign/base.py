"""What every part of a campaign run shares: the error that stops it, and how it was asked
to run."""

from __future__ import annotations

from dataclasses import dataclass


class CampaignError(RuntimeError):
    """The campaign cannot start (or cannot go on at all); nothing was lost."""


@dataclass
class RunOptions:
    resume: bool = False
    force: bool = False
    publish: bool = True
