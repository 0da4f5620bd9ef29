"""One point run and committed to the store: its pipeline, its log (pipeline.log), its
point.json; a failure the node caused told apart from the point's own (a distributed run
retries it elsewhere)."""

from __future__ import annotations

import logging
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from ..faults import ResultsStoreFull, is_no_space, results_full_text
from ..plan import Plan
from ..point_pipeline import PointContext, PointFailed, PointPipeline
from ..progress import Reporter
from ..store import STATE_COMPLETE, STATE_FAILED, PointWriter, Store, write_json_atomic
from ..testbeds import Testbed
from ..testbeds.sshconn import NodeUnreachable

POINT_SCHEMA = "lsmbench.point/1"


class _PointLogHandler(logging.FileHandler):
    """pipeline.log. A write that fails (the results disk ran out) is remembered for the
    campaign to act on, not printed with a traceback as logging does by default."""

    error: BaseException | None = None

    def handleError(self, record: logging.LogRecord) -> None:
        self.error = self.error or sys.exc_info()[1]

    def flush(self) -> None:
        try:
            super().flush()
        except OSError as e:
            self.error = self.error or e

    def close(self) -> None:
        try:
            super().close()
        except OSError as e:
            self.error = self.error or e


def _point_logger(path: Path) -> tuple[logging.Logger, _PointLogHandler]:
    logger = logging.getLogger(f"lsmbench.point.{os.getpid()}.{path.name}")
    logger.setLevel(logging.INFO)
    logger.propagate = False
    handler = _PointLogHandler(path / "pipeline.log")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    logger.addHandler(handler)
    return logger, handler


def node_failure(e: BaseException | None, exit_code: int | None) -> tuple[bool, bool]:
    """(the node failed, the node is unreachable) for a point's failure."""
    cause = e
    while cause is not None:
        if isinstance(cause, NodeUnreachable):
            return True, True
        cause = cause.__cause__ or cause.__context__
    if isinstance(e, PointFailed) and e.fault is not None and e.fault.node_local:
        return True, False
    # Killed by a signal (negative status, or a shell's 128+N): a crash, not the point's input.
    return exit_code is not None and (exit_code < 0 or exit_code >= 128), False


def run_point(plan: Plan, store: Store, testbed: Testbed, node: Any, limits: Any,
               point: Any, chash: str, reporter: Reporter, *,
               attempts: list[dict[str, Any]] | None = None,
               may_retry: bool = False,
               shared_testing: dict[str, Any] | None = None,
               shared_testing_dir: Path | None = None,
               after_testing: Any = None,
               extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """Runs and commits one point (`after_testing`: stages.PointContext.after_testing). With
    `attempts` (a distributed run) the record names its
    node (`host`) and earlier attempts; with `may_retry` a failure caused by the node is not
    committed but returned with state "retry" (the caller runs it on another node).

    Raises ResultsStoreFull, with the unfinished point discarded, when the store has no room
    for it."""
    writer = store.begin_point(plan.spec.name, point.id)
    logger, handler = _point_logger(writer.path)
    try:
        return _run_and_commit(plan, store, writer, logger, handler, testbed, node, limits,
                               point, chash, reporter, attempts=attempts, may_retry=may_retry,
                               shared_testing=shared_testing,
                               shared_testing_dir=shared_testing_dir,
                               after_testing=after_testing, extra=extra)
    except BaseException as e:
        handler.close()
        logger.removeHandler(handler)
        no_room = isinstance(e, ResultsStoreFull) or is_no_space(e)
        # Interrupted, or no room for the point: nothing of it stays (its space is freed).
        if no_room or isinstance(e, KeyboardInterrupt | SystemExit):
            writer.discard()
        if no_room and not isinstance(e, ResultsStoreFull):
            raise ResultsStoreFull(results_full_text(store.root)) from e
        raise


def _run_and_commit(plan: Plan, store: Store, writer: PointWriter, logger: logging.Logger,
                    handler: _PointLogHandler, testbed: Testbed, node: Any, limits: Any,
                    point: Any, chash: str, reporter: Reporter, *,
                    attempts: list[dict[str, Any]] | None, may_retry: bool,
                    shared_testing: dict[str, Any] | None,
                    shared_testing_dir: Path | None,
                    after_testing: Any = None,
                    extra: dict[str, Any] | None = None) -> dict[str, Any]:
    spec = plan.spec
    started = time.time()
    t0 = time.monotonic()
    write_json_atomic(writer.path / "spec.json", plan.point(point).config)
    record: dict[str, Any] = {
        "schema": POINT_SCHEMA,
        "campaign": spec.name,
        "point": point.id,
        "index": point.index,
        "params": point.params,
        "rep": point.rep,
        "seed": point.seed,
        "engine": plan.point(point).spec.engine.name,
        "config_hash": chash,
        "state": None,
        "error": None,
        "started": started,
        **(extra or {}),
    }
    pipeline = PointPipeline(PointContext(plan=plan, point=point, testbed=testbed, node=node,
                                          out_dir=writer.path, limits=limits, reporter=reporter,
                                          log=logger, shared_testing=shared_testing,
                                          shared_testing_dir=shared_testing_dir,
                                          after_testing=after_testing,
                                          store_root=Path(os.path.abspath(store.root)),
                                          driver=plan.driver_for(point)))
    if attempts is not None:
        record["host"] = node.name
        record["disk"] = node.facts.get("disk")
    failure: BaseException | None = None
    try:
        pipeline.run()
        record["state"] = STATE_COMPLETE
    except PointFailed as e:
        failure = e
        record["state"] = STATE_FAILED
        record["error"] = {"stage": e.stage, "message": e.message, "exit_code": e.exit_code,
                           "fault": e.fault.kind if e.fault else None}
        logger.error("failed in %s: %s", e.stage, e.message)
    except (KeyboardInterrupt, SystemExit, ResultsStoreFull):
        raise
    except Exception as e:
        if is_no_space(e):
            raise
        failure = e
        record["state"] = STATE_FAILED
        record["error"] = {"stage": "internal", "message": f"{type(e).__name__}: {e}",
                           "exit_code": None, "fault": None}
        logger.error("internal error:\n%s", traceback.format_exc())
    if attempts is not None and record["error"] is not None:
        node_failed, unreachable = node_failure(failure, record["error"]["exit_code"])
        record["error"].update({"node": node.name, "node_failed": node_failed,
                                "unreachable": unreachable})
        if node_failed and may_retry:
            handler.close()
            logger.removeHandler(handler)
            writer.discard()
            record["state"] = "retry"
            return record
    if attempts is not None:
        record["attempts"] = attempts
    result = pipeline.result
    if result.fingerprint is not None:
        write_json_atomic(writer.path / "fingerprint.json", result.fingerprint)
    wall = time.monotonic() - t0
    record.update({
        "finished": time.time(),
        "wall_s": round(wall, 3),
        "driver_s": round(result.driver_s, 3),
        "overhead_s": round(max(0.0, wall - result.driver_s), 3),
        "max_throughput": result.max_throughput,
        "verdict": result.headline,
        "sustainable": result.headline["sustainable"] if result.headline else None,
        "verdicts": result.verdicts,
        "search": result.search,
        "skipped_running": result.skipped_running,
        "warnings": result.warnings,
        "phases": result.phases,
        "throttled": limits is not None and limits.has_io_limits,
        "published": False if spec.sinks.section else None,
        "publish_error": None,
    })
    handler.close()
    logger.removeHandler(handler)
    if handler.error is not None:
        # pipeline.log could not be written (a full results disk): a point is not kept
        # without its log.
        raise handler.error
    writer.commit(record)
    return record
