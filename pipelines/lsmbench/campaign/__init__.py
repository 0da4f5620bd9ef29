"""Running a campaign: every point of the plan through the pipeline, into the store.

``run.py`` runs the plan (``run_campaign``), ``session.py`` holds an open run, ``point.py`` runs
and commits one point, ``nodes.py`` spreads points over a remote testbed's nodes,
``limits.py`` resolves the throttle, ``sink.py`` publishes within the sink's budget.


* One campaign directory per campaign name, locked while a run uses it.
* ``resume``: a point whose directory holds a *complete* point.json with the
  same configuration hash is skipped; every other point (missing, failed,
  stale, or half-written in .tmp/) is run again.
* A point that fails is recorded as failed (stage, message, driver exit
  code) and the campaign goes on; the result says whether any failed.
* After each point, when a sink is configured, the point is published; a
  sink failure marks it unpublished and never fails the campaign, which waits on the sink
  at most its budget (sinks.influx.budget) in all.
* A full results store stops the campaign (CampaignError: exit 3) with the unfinished
  point discarded; a full data disk fails the point only (faults.py, docs/faults.md).
"""

from .base import CampaignError, RunOptions
from .limits import calibration_path, check_throttle, load_profile, remote_limits, resolve_limits
from .nodes import LockedReporter, node_attempt, retrying_text, run_distributed
from .point import POINT_SCHEMA, run_point
from .run import run_campaign
from .session import CampaignSession, campaign_errors, existing_points

__all__ = [
    "POINT_SCHEMA", "CampaignError", "CampaignSession", "LockedReporter", "RunOptions",
    "calibration_path", "campaign_errors", "check_throttle", "existing_points", "load_profile",
    "node_attempt", "remote_limits", "resolve_limits", "retrying_text", "run_campaign",
    "run_distributed", "run_point",
]
