"""``lsmbench plan --predict``: lsm-sim's testing maximum for each point, and whether its running
phase, at the point's utilization of it, would be sustainable, before anything runs.

The simulator runs the point's merge policy and scheduler (the engine's own code) in its time
model (engines/sim/README.md): the load's flushes build the starting tree, then the testing
phase's closed loop writes memtables as fast as the bandwidth lets flushes and merges keep
up; the maximum is the flushes per second times the records a memtable holds. When every
write updates a loaded key, the simulator's key-space model keeps one entry per key in each
merge (the loaded data is the key space). The running phase is then simulated at the point's
utilization of that rate with arrivals that keep coming during stalls: it is predicted
sustainable when the writes' longest wait stays under the verdict's p99 bound, the final
backlog under its backlog bound and the time writes were stalled under its stall bound, the
verdict's own criteria (the longest wait bounds the p99 from above).

The maximum is the simulated rate over the window the engine measures (the warm-up to the
phase's end; a steady phase's rounds at its cap), not over all the flushes simulated.

What it needs and assumes: the builtin engine, and a bandwidth: the engine's I/O budget
(``io_budget_bytes_per_sec``), else the throttle's absolute ``write_bps``. The throttle carries
the write-ahead log only when the log reaches the disk (``_log_on_disk``: synced, or a log file
outliving the kernel's dirty expiry); then the maximum is scaled by WA / (WA + 1). The
simulator knows bandwidth, not CPU. The writer is taken to be WRITER_FACTOR times faster than
the budget (the engine's in-memory write rate, unknown before a run; the closed loop's maximum
barely depends on it, the catch-up after a stall does). A point whose setup was measured more
than 10 % off (``_outside``) keeps its numbers, marked ``outside``, and is shown as outside the
validated range with the reason; a running phase the model was not validated for
(``_verdict_outside``) hides only the verdict. How far to trust the numbers:
engines/sim/README.md, "The shipped setups".
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from .cyclecheck import SIM_NOT_BUILT, CycleUnknown, SimInputs, sim_inputs
from .engine_options import write_share
from .mergesim import SimError, default_option, run_lsm_sim
from .plan import Plan
from .points import ResolvedPoint
from .throttle.rates import resolve_relative
from .util.units import parse_size
from .util.wording import plural

UTILIZATION = 0.95  # the question: is 95 % of the predicted maximum sustainable?
WRITER_FACTOR = 20.0
MIN_FLUSHES = 20
MAX_FLUSHES = 200_000  # a plan stays quick: each simulated flush costs microseconds
DIRTY_EXPIRE = Path("/proc/sys/vm/dirty_expire_centisecs")
DEFAULT_DIRTY_EXPIRE_S = 30.0  # Linux's default dirty_expire_centisecs, 3000
MAX_CHECKPOINTS = 4_000  # rows of the simulated testing phase (one command-line argument)
# Measured / predicted testing maximum of the one shape measured more than 10 % off
# (engines/sim/README.md, "The shipped setups").
TIERING_BUDGET_UPDATES = 1.19


class Prediction(BaseModel):
    """One point's prediction, or why there is none (``basis``)."""

    point: str
    max_writes_per_s: float | None = None
    utilization: float = UTILIZATION
    sustainable: bool | None = None
    max_wait_s: float | None = None  # the longest a write waits at that rate
    final_backlog_s: float | None = None
    stalled_share: float | None = None  # of the simulated testing phase
    running_stalled_share: float | None = None  # of the simulated running phase
    bandwidth: int | None = None  # the I/O budget simulated (bytes/s)
    arrival: str = "constant"  # the running phase's arrival process, as the point runs it
    modelled: str = ""  # what bounds the simulated I/O and what the writes do
    # Why the point is outside the range the model was validated on ("" inside it): its
    # numbers are kept but shown as "outside the validated range: <why>".
    outside: str = ""
    # Why only the running phase's verdict is outside that range ("" inside): the maximum
    # is shown, the verdict as "outside the validated range: <why>".
    verdict_outside: str = ""
    basis: str = ""  # why there is no prediction


class PredictError(Exception):
    """Why a point has no prediction (said in the plan, never raised to a user)."""


def _rows(sim: Path, options: dict[str, str], args: list[str]) -> list[dict[str, Any]]:
    """lsm-sim's JSONL rows (a row per checkpoint, the last at its final flush)."""
    try:
        lines = run_lsm_sim(sim, [*args, "--format", "jsonl"], sorted(options.items()))
    except SimError as e:
        raise PredictError(str(e)) from e
    try:
        rows = [json.loads(line) for line in lines.strip().splitlines()]
    except ValueError as e:
        raise PredictError(f"lsm-sim printed no JSON row: {e}") from e
    if not rows or not all(isinstance(row, dict) and all(
            isinstance(row.get(k), (int, float)) for k in ("flushes", "time_s", "stall_s"))
            for row in rows):
        raise PredictError("lsm-sim printed no row of the timed model")
    return rows


def _run(sim: Path, options: dict[str, str], args: list[str]) -> dict[str, Any]:
    return _rows(sim, options, args)[-1]


class _Window(BaseModel):
    """The simulated testing phase over the window its maximum is measured on."""

    flushes_per_s: float
    stalled_share: float
    write_amp: float


def _testing_window(rows: list[dict[str, Any]], start_s: float, end_s: float) -> _Window:
    """The rate between the first checkpoint at or after `start_s` and the last at or before
    `end_s` of simulated time: the window the engine's maximum is measured on. A tree that
    is still deepening writes slower the longer it runs, so the rate of many more flushes
    than the phase holds is not the phase's (the whole run when the window holds no two)."""
    inside = [r for r in rows if start_s <= float(r["time_s"]) <= end_s]
    if len(inside) < 2:
        first, last = {"flushes": 0, "time_s": 0.0, "stall_s": 0.0, "bytes_flushed": 0,
                       "bytes_written": 0}, rows[-1]
    else:
        first, last = inside[0], inside[-1]
    seconds = max(float(last["time_s"]) - float(first["time_s"]), 1e-9)
    flushed = float(last.get("bytes_flushed", 0)) - float(first.get("bytes_flushed", 0))
    written = float(last.get("bytes_written", 0)) - float(first.get("bytes_written", 0))
    return _Window(flushes_per_s=(int(last["flushes"]) - int(first["flushes"])) / seconds,
                   stalled_share=(float(last["stall_s"]) - float(first["stall_s"])) / seconds,
                   write_amp=written / flushed if flushed > 0 else 0.0)


def _checkpoints(flushes: int) -> list[str]:
    """A checkpoint every few flushes, at most MAX_CHECKPOINTS of them (one argument)."""
    step = max(1, math.ceil(flushes / MAX_CHECKPOINTS))
    return ["--checkpoints", ",".join(str(f) for f in range(step, flushes + 1, step))]


def _measured_window(testing: Any) -> tuple[float, float]:
    """Where in the testing phase its maximum is measured: after the warm-up to the end; for
    a phase that ends at steady state, its rounds at the cap (a tree that settled writes at
    one rate wherever its window lies; one that did not is what the cap sees)."""
    if testing.steady is not None:
        return (max(testing.steady.ramp,
                    testing.duration - testing.steady.rounds * testing.steady.round),
                testing.duration)
    return testing.warmup_seconds(), testing.duration


def _flushes(seconds: float, flushes_per_s: float) -> int:
    return min(max(MIN_FLUSHES, math.ceil(seconds * flushes_per_s) + 1), MAX_FLUSHES)


def _key_space(inputs: SimInputs) -> list[str]:
    """lsm-sim's model of updates for a phase whose writes all update loaded keys: merges keep
    one entry per key, so a loaded tree under updates merges less than under inserts."""
    return ["--key-space", str(inputs.key_space_bytes)] if inputs.key_space_bytes > 0 else []


def _bandwidth(resolved: ResolvedPoint, options: dict[str, str]) -> tuple[int, bool]:
    """The bandwidth flushes and merges share in the testing phase: the engine's I/O budget,
    else the throttle's absolute write rate (True: the throttle's)."""
    budget = parse_size(options.get("io_budget_bytes_per_sec", "0"))
    if budget > 0:
        return budget, False
    throttle = resolved.spec.throttle
    if throttle.enabled and throttle.write_bps is not None and "testing" in throttle.phases:
        try:
            return resolve_relative(throttle.write_bps), True
        except ValueError as e:
            raise PredictError(f"throttle.write_bps {throttle.write_bps!r} is relative to the "
                               "calibrated disk; lsm-sim needs an absolute rate") from e
    raise PredictError("no I/O budget (engine option io_budget_bytes_per_sec) and no absolute "
                       "throttle.write_bps: lsm-sim models bandwidth, not CPU")


def predict_point(resolved: ResolvedPoint, sim: Path) -> Prediction:
    """The point's prediction (never raises: a point without one says why in ``basis``)."""
    pred = Prediction(point=resolved.point.id)
    try:
        return _predict(resolved, sim, pred)
    except (CycleUnknown, PredictError) as e:
        pred.basis = str(e)
        return pred


def _arrival(resolved: ResolvedPoint) -> str:
    """The running phase's arrival process: the spec's, else the workload's, else constant."""
    arrival = resolved.spec.phases.running.arrival or resolved.workload.get("arrival") or {}
    return str(arrival.get("process") or "constant") if isinstance(arrival, dict) else "constant"


def _dirty_expire_s(resolved: ResolvedPoint) -> float:
    """How old a dirty page gets before the kernel writes it back: this machine's for a local
    testbed, Linux's default elsewhere (a plan does not reach the nodes)."""
    if resolved.spec.testbed.type == "local":
        try:
            return int(DIRTY_EXPIRE.read_text()) / 100
        except (OSError, ValueError):
            pass
    return DEFAULT_DIRTY_EXPIRE_S


def _log_on_disk(resolved: ResolvedPoint, inputs: SimInputs, flushes_per_s: float) -> str:
    """Whether the write-ahead log's bytes reach the disk (and so the cgroup's write limit),
    and why ("": they do not). A log file is deleted once its memtable is flushed; with
    wal async nothing syncs it, so its pages stay dirty in the page cache, and the kernel
    drops them unwritten when the file goes before they are old enough to be written back
    (measured: research/predictor-validation.md)."""
    wal = inputs.options.get("wal", "async")
    if wal == "off":
        return ""
    if wal == "sync":
        return "the write-ahead log (sync: each write fsyncs it)"
    memtables = int(inputs.options.get("memory_components")
                    or default_option("memory_components"))
    lives_s = memtables / max(flushes_per_s, 1e-9)
    expire_s = _dirty_expire_s(resolved)
    if lives_s < expire_s:
        return ""
    return (f"the write-ahead log (async: a log file lives ~{lives_s:,.0f} s, past the "
            f"kernel's {expire_s:g} s dirty expiry, so it is written back)")


def _modelled(inputs: SimInputs, budget: int, through_throttle: bool, log: str = "") -> str:
    wal = inputs.options.get("wal", "async")
    if through_throttle:
        bound = f"the cgroup's {budget / 1e6:,.0f} MB/s write limit"
        if log:
            bound += f", which also carries {log}"
        elif wal != "off":
            bound += (f"; the write-ahead log ({wal}) is not charged: each log file is "
                      "deleted at its flush, before the kernel writes its pages back")
    else:
        bound = f"the engine's I/O budget of {budget / 2**20:,.0f} MiB/s"
    writes = (f"updates of {inputs.start_flushes} flushes of loaded data"
              if inputs.key_space_bytes > 0 else "new keys")
    return f"{bound}; writes: {writes}"


def _outside(inputs: SimInputs, through_throttle: bool) -> str:
    """Why a point is outside what engines/sim/README.md validated, or "". Validated: inserts
    into an empty store under the engine's I/O budget; uniform updates of a loaded store
    under a cgroup write limit with the log async (the quickstart, bursts' testing phase);
    leveling's updates under the budget (the schedulers campaign)."""
    why = []
    wal = inputs.options.get("wal", "async")
    if through_throttle and wal == "sync":
        why.append("a synced write-ahead log under a cgroup limit (validated off and async)")
    policy = inputs.options.get("merge_policy", str(default_option("merge_policy")))
    if inputs.key_space_bytes > 0 and not through_throttle and policy == "tiering":
        why.append("tiering's updates of loaded keys under the engine's I/O budget (measured "
                   f"{TIERING_BUDGET_UPDATES:g}x the prediction on the schedulers campaign)")
    if inputs.key_space_bytes > 0 and inputs.distribution != "uniform":
        why.append(f"{inputs.distribution} updates (lsm-sim draws the updated keys uniformly)")
    return "; ".join(why)


def _verdict_outside(inputs: SimInputs, arrival: str, utilization: float,
                     through_throttle: bool) -> str:
    """Why the running phase's verdict is outside the validated range (constant arrivals up
    to the maximum) while the maximum may be inside it, or ""."""
    why = []
    policy = inputs.options.get("merge_policy", str(default_option("merge_policy")))
    if through_throttle:
        # Measured: tiering's verdict never agreed (the engine stalls where lsm-sim sees no
        # stall); leveling's agreed in 5 of 11 groups of the quickstart and Luo & Carey's
        # schedulers and size ratio.
        why.append(f"{policy}'s running phase under a cgroup write limit (lsm-sim's stalls "
                   "are not the engine's there: engines/sim/README.md, \"The shipped "
                   "setups\")")
    if arrival != "constant":
        why.append(f"arrivals in {arrival} (lsm-sim's running phase has constant arrivals)")
    if utilization > 1:
        why.append(f"a running rate of {utilization:g}x the maximum (validated up to 1x)")
    return "; ".join(why)


def _mix_outside(workload: dict[str, Any]) -> str:
    """Why the workload's mix is outside what lsm-sim models (its writes alone), or "". A mix
    without writes has no write maximum to predict: PredictError."""
    share = write_share(workload)
    if share <= 0:
        raise PredictError("a mix without writes: lsm-sim simulates writes, and this point's "
                           "maximum counts requests")
    if share < 1:
        return (f"a mix of {share:.0%} writes (lsm-sim simulates the writes alone; the reads "
                "share the engine and the disk)")
    return ""


def _predict(resolved: ResolvedPoint, sim: Path, pred: Prediction) -> Prediction:
    spec = resolved.spec
    mix = _mix_outside(resolved.workload)
    testing = sim_inputs(resolved, sim, "testing")
    budget, through_throttle = _bandwidth(resolved, testing.options)
    pred.utilization = spec.phases.running.utilization
    pred.arrival = _arrival(resolved)
    pred.outside = "; ".join(w for w in (_outside(testing, through_throttle), mix) if w)
    if spec.phases.running.enabled:
        pred.verdict_outside = _verdict_outside(testing, pred.arrival, pred.utilization,
                                                through_throttle)
    # Every engine option goes to lsm-sim, which takes them all from the engine's table and
    # ignores those it does not model (wal, checksums, the I/O budget: --bandwidth is that).
    options = dict(testing.options)
    flush = testing.flush_bytes
    writer = WRITER_FACTOR * budget
    common = ["--flush-bytes", str(flush), "--load-flushes", str(testing.start_flushes),
              "--bandwidth", str(budget), *_key_space(testing)]
    # The testing phase: as many flushes as the budget could write in its duration (fewer
    # happen: merges share it, so the simulated time passes the phase's), memtables filling
    # at the writer's rate; the maximum is the rate over the window the engine's is taken on.
    flushes = _flushes(spec.phases.testing.duration, budget / flush)
    window = _testing_window(
        _rows(sim, options, [*common, "--arrival-rate", f"{writer:.0f}",
                             "--flushes", str(flushes), *_checkpoints(flushes)]),
        *_measured_window(spec.phases.testing))
    flushes_per_s = window.flushes_per_s
    log = _log_on_disk(resolved, testing, flushes_per_s) if through_throttle else ""
    if log:
        # The throttle also carries the log, which lsm-sim does not write: about one byte
        # per byte flushed, so the disk writes WA + 1 bytes per flushed byte, not WA.
        wa = window.write_amp
        if wa > 0:
            flushes_per_s *= wa / (wa + 1.0)
    pred.modelled = _modelled(testing, budget, through_throttle, log)
    pred.max_writes_per_s = flushes_per_s * testing.records_per_flush
    pred.stalled_share = window.stalled_share
    pred.bandwidth = budget
    if not spec.phases.running.enabled:
        return pred
    running = sim_inputs(resolved, sim, "running")
    run_options = dict(running.options)
    rate = pred.utilization * flushes_per_s * running.flush_bytes  # bytes/s of arrivals
    run = _run(sim, run_options, [
        "--flush-bytes", str(running.flush_bytes), "--load-flushes", str(running.start_flushes),
        "--bandwidth", str(budget), *_key_space(running), "--arrival-rate", f"{rate:.0f}",
        "--write-rate", f"{max(writer, rate):.0f}",
        "--flushes", str(_flushes(spec.phases.running.duration,
                                  pred.utilization * flushes_per_s))])
    pred.max_wait_s = float(run["max_backlog_s"])
    pred.final_backlog_s = float(run["backlog_s"])
    pred.running_stalled_share = float(run["stall_s"]) / max(float(run["time_s"]), 1e-9)
    verdict = spec.verdict
    pred.sustainable = (pred.max_wait_s <= verdict.p99_write_latency
                        and pred.final_backlog_s <= verdict.max_backlog
                        and pred.running_stalled_share <= verdict.max_stalled_fraction)
    return pred


ASSUMPTIONS = (f"lsm-sim runs each point's policy and scheduler under what bounds its writes "
               f"(the engine's I/O budget or the cgroup's write limit), the writer assumed "
               f"{WRITER_FACTOR:g}x faster than that; a running phase at the point's utilization "
               "is sustainable when the longest wait stays under verdict.p99_write_latency, "
               "the final backlog under verdict.max_backlog and the stalled share under "
               "verdict.max_stalled_fraction. How far to trust it: "
               "engines/sim/README.md, \"Validation of the time model\"")


def predict_plan(plan: Plan, sim: Path | None) -> list[Prediction]:
    """A prediction per point of the plan; the repetitions of a configuration share one."""
    if sim is None:
        return [Prediction(point=p.id, basis=SIM_NOT_BUILT)
                for p in plan.points]
    out: list[Prediction] = []
    done: dict[str, Prediction] = {}
    for p in plan.points:
        resolved = plan.point(p)
        key = json.dumps([resolved.engine_options, resolved.workload,
                          resolved.spec.phases.model_dump(mode="json"),
                          resolved.spec.verdict.model_dump(mode="json")], sort_keys=True,
                         default=str)
        if key not in done:
            done[key] = predict_point(resolved, sim)
        out.append(done[key].model_copy(update={"point": p.id}))
    return out


def add_predictions(plan: Plan, sim: Path | None) -> list[Prediction]:
    """Predicts every point and keeps it in the plan (campaign.json, the report)."""
    preds = predict_plan(plan, sim)
    plan.predictions = {p.point: p.model_dump(exclude={"point"}) for p in preds}
    return preds


def print_predictions(console: Any, predictions: list[Prediction], width: int | None) -> None:
    """lsmbench plan --predict's table, the assumptions, and why a point has none, laid out
    for ``width`` columns as every table is (lsmbench.util.terminal)."""
    from .util.terminal import Rows, say

    rows = Rows(("point", "testing max (writes/s)", "sustainable at", "longest wait (s)"),
                right=frozenset({1, 3}),
                title="lsm-sim's prediction (engines/sim/README.md: how far to trust it)")
    for p in predictions:
        if p.max_writes_per_s is None:
            rows.add(p.point, "-", "-", "-")
            continue
        if p.outside:
            rows.add(p.point, "outside the validated range", "-", "-")
            continue
        if p.verdict_outside:
            rows.add(p.point, f"{p.max_writes_per_s:,.0f}", "outside the validated range", "-")
            continue
        verdict = ("-" if p.sustainable is None else
                   f"{'yes' if p.sustainable else 'no'} at {p.utilization:.0%}"
                   + ("" if p.arrival == "constant" else f", {p.arrival}"))
        rows.add(p.point, f"{p.max_writes_per_s:,.0f}", verdict,
                 f"{p.max_wait_s:.2f}" if p.max_wait_s is not None else "-")
    rows.print(console, width)
    say(console, ASSUMPTIONS, width)
    for what in dict.fromkeys(p.modelled for p in predictions if p.modelled):
        say(console, f"modelled: {what}", width)
    for why in dict.fromkeys(p.outside for p in predictions if p.outside):
        points = [p.point for p in predictions if p.outside == why]
        say(console, f"outside the validated range for {plural(len(points), 'point')} "
                     f"({points[0]}, ...): {why}", width)
    for why in dict.fromkeys(p.verdict_outside for p in predictions
                             if p.verdict_outside and not p.outside):
        points = [p.point for p in predictions if p.verdict_outside == why and not p.outside]
        say(console, f"the verdict is outside the validated range for "
                     f"{plural(len(points), 'point')} ({points[0]}, ...): {why}", width)
    for why in dict.fromkeys(p.basis for p in predictions if p.basis):
        points = [p.point for p in predictions if p.basis == why]
        say(console, f"no prediction for {plural(len(points), 'point')} ({points[0]}, ...): "
                     f"{why}", width)
