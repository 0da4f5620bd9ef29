"""The campaign's I/O and CPU limits: resolved from the spec (percentages of a calibrated
disk, or absolute rates), checked on this machine or on each node of a remote testbed."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

from ..calibrate import DiskProfile
from ..plan import Plan
from ..progress import Reporter
from ..store import Store
from ..testbeds import Testbed, TestbedError
from ..testbeds.remote import RemoteTestbed
from ..throttle import ThrottleError, ThrottleLimits, check_throttle_available
from ..throttle.rates import is_relative, resolve_relative
from .base import CampaignError


def calibration_path(store: Store, host: str) -> Path:
    return store.root / ".calibration" / f"{host}.json"


def resolve_limits(plan: Plan, store: Store, testbed: Testbed, profile: Any = None,
                   device: str | None = None) -> Any:
    """The ThrottleLimits of the campaign (None when throttling is off); `profile` and
    `device` are a remote node's (else this machine's calibration and the spec's device).

    Percentages are of the fio-calibrated disk (lsmbench calibrate); absolute
    values are bytes (or I/Os) per second: 100MB/s (10^6), 100MiB/s (2^20), 52428800.
    """
    th = plan.spec.throttle
    if not th.enabled:
        return None
    values = {k: getattr(th, k) for k in ("write_bps", "read_bps", "write_iops", "read_iops")}
    relative = any(is_relative(v) for v in values.values())
    if relative and profile is None:
        profile = load_profile(plan, store)
    out = {k: resolve_relative(v, profile, kind=k) for k, v in values.items() if v is not None}
    device = th.device if th.device != "auto" else (None if device in (None, "auto") else device)
    return ThrottleLimits(**out, device=device, cpus=th.cpus, cpu_quota=th.cpu_quota)


def load_profile(plan: Plan, store: Store) -> Any:
    tb = plan.spec.testbed
    path = Path(getattr(tb, "calibration", None) or calibration_path(store, socket.gethostname()))
    if not path.is_file():
        raise CampaignError(
            f"the throttle is given relative to the calibrated disk, but there is no calibration "
            f"at {path}: run `lsmbench calibrate` first (or give absolute rates such as 100MB/s)"
        )
    return DiskProfile.load(path)


def check_throttle(limits: Any, data_root: str, required: bool, reporter: Reporter) -> Any:
    """Fails early (or drops the throttle with a warning when not required)."""
    if limits is None:
        return None
    try:
        check_throttle_available(limits, data_dir=data_root)
    except ThrottleError as e:
        if required:
            raise CampaignError(f"throttle: {e}") from e
        reporter.message(f"throttle unavailable, running unthrottled: {e}", "warning")
        return None
    return limits


def remote_limits(plan: Plan, store: Store, testbed: RemoteTestbed, nodes: list[Any],
                  reporter: Reporter) -> dict[str, Any]:
    """Each node's ThrottleLimits (its own calibration for percentages), checked on the node."""
    th = plan.spec.throttle
    out: dict[str, Any] = {n.name: None for n in nodes}
    if not th.enabled:
        return out
    relative = any(is_relative(getattr(th, k))
                   for k in ("write_bps", "read_bps", "write_iops", "read_iops"))
    for n in nodes:
        profile = None
        if relative:
            path = testbed.state.calibration_path(n.name)
            if not path.is_file():
                raise CampaignError(
                    f"the throttle is given relative to the calibrated disk, but node {n.name} "
                    f"has no calibration at {path}: run `lsmbench testbed calibrate "
                    f"{testbed.state.name}` first (or give absolute rates such as 100MB/s)")
            profile = DiskProfile.load(path)
        limits = resolve_limits(plan, store, testbed, profile=profile, device=n.device)
        try:
            check = testbed.check_throttle(n, limits) or {}
        except TestbedError as e:
            raise CampaignError(f"throttle on node {n.name}: {e}") from e
        if not check.get("ok"):
            if th.required:
                raise CampaignError(f"throttle on node {n.name}: {check.get('error')}")
            reporter.message(f"node {n.name}: throttle unavailable, running unthrottled: "
                             f"{check.get('error')}", "warning")
            limits = None
        out[n.name] = limits
    return out
