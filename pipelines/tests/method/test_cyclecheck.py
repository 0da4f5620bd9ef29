"""Is a running phase long enough to see a merge into the deepest level? lsm-sim's merges by
level (mergesim), the expected cycle and the warning (cyclecheck), at run time (stages) and in
lsmbench plan. Synthetic series and a fake lsm-sim with known answers; the real lsm-sim when it
is built."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from lsmbench import cyclecheck, mergesim
from lsmbench.campaign import point as point_run
from lsmbench.cli import main
from lsmbench.engine_options import description
from lsmbench.method.cycles import MergeCycle, merge_cycle
from lsmbench.plan import build_plan
from lsmbench.point_pipeline import PointContext, PointPipeline
from lsmbench.progress import Reporter
from lsmbench.spec import validate_raw
from lsmbench.store import Store, write_json_atomic
from lsmbench.util.paths import find_driver
from repo_paths import PIPELINES

QUICKSTART = PIPELINES / "campaigns" / "quickstart.yaml"
# What the fake lsm-sim says a 4 MiB memtable of 1 KiB records holds (the real one: within one of
# it, test_records_per_flush_is_what_lsm_sim_says).
RECORDS = 3712
LOAD_FLUSHES = 20


def raw_spec(duration: str = "18s", *, schedulers: tuple[str, ...] = ("single",),
             record_count: int = LOAD_FLUSHES * RECORDS + 100, **running) -> dict:
    return {
        "name": "cyc",
        "engine": {"name": "builtin", "options": {"memtable_bytes": "4M", "wal": "async"}},
        "workload": {"inline": {"record_count": record_count, "key_size": 16,
                                "value_size": 1000, "operations": {"update": 1.0}}},
        "matrix": {"policy": ["leveling"], "scheduler": list(schedulers)},
        "phases": {"testing": {"duration": "24s"},
                   "running": {"duration": duration, **running}},
    }


def plan_of(duration: str = "18s", **kw):
    return build_plan(validate_raw(raw_spec(duration, **kw)))


def leveling_decisions(flushes: int, k: int) -> list[tuple[int, int, int, int]]:
    """What lsm-sim --decisions says of leveling whose level 1 fills in k flushes and whose
    level 2 never does: (flush, first stack position, inputs, output level)."""
    out, stack, filled = [], [], 0
    for f in range(1, flushes + 1):
        stack.append(0)
        if 1 in stack:  # the flush merges into level 1
            pos = stack.index(1)
            out.append((f, pos, 2, 1))
            stack[pos:pos + 2] = [1]
        else:
            out.append((f, len(stack) - 1, 1, 1))
            stack[-1] = 1
        filled += 1
        if filled == k:  # level 1 is full: into level 2
            filled = 0
            if stack[0] == 2:
                out.append((f, 0, 2, 2))
                stack[0:2] = [2]
            else:
                out.append((f, stack.index(1), 1, 2))
                stack[stack.index(1)] = 2
    return out


@pytest.fixture
def fake_sim(tmp_path: Path):
    """An lsm-sim that writes leveling_decisions(k=5) and logs its arguments; make(fail=True)
    gives one that refuses its options like the real one does."""
    def make(fail: bool = False) -> tuple[Path, Path]:
        d = tmp_path / ("fake-fail" if fail else "fake")
        d.mkdir()
        src, log = d / "decisions.jsonl", d / "argv.jsonl"
        src.write_text("".join(
            json.dumps({"flush": f, "time_s": 0, "first": p, "inputs": n, "input_bytes": 1,
                        "output_bytes": 1, "level": lv}, separators=(",", ":")) + "\n"
            for f, p, n, lv in leveling_decisions(2000, 5)))
        script = d / "lsm-sim"
        script.write_text(f"""#!{sys.executable}
import json, sys
args = sys.argv[1:]
opts = dict(zip(args[::2], args[1::2]))
if "--memtable-entries" in opts:  # it takes only memtable_bytes: never refused
    print(json.dumps({{"entries": {RECORDS}}}))
    sys.exit(0)
with open({str(log)!r}, "a") as f:
    f.write(json.dumps(args) + "\\n")
if {fail!r}:
    sys.stderr.write("lsm-sim: Invalid argument: flag '--merge_policy': bad\\n")
    sys.exit(2)
n = int(opts["--flushes"])
with open({str(src)!r}) as src, open(opts["--decisions"], "w") as out:
    for line in src:
        if json.loads(line)["flush"] <= n:
            out.write(line)
print("policy,k,flushes,write_amp,avg_sstables,sstables")
""")
        script.chmod(0o755)
        return script, log
    return make


def phase_series(deep_starts: list[float], seconds: int = 100, per_s: float = 2260.0,
                   entries: int = RECORDS) -> list[dict]:
    """A testing phase of per_s writes/s with merges into level 2 starting at deep_starts,
    merges into level 1 every 3 s and a flush every entries / per_s seconds."""
    ivs = [{"t_start_s": float(i), "t_end_s": float(i + 1), "ops": {"writes": per_s},
            "events": []} for i in range(seconds)]
    evts = [{"kind": "merge", "start_s": t, "end_s": t + 6, "output_level": 2,
             "input_bytes": 200 << 20} for t in deep_starts]
    evts += [{"kind": "merge", "start_s": t + 0.5, "end_s": t + 1.0, "output_level": 1,
              "input_bytes": 8 << 20} for t in range(0, seconds - 1, 3)]
    period = entries / per_s
    evts += [{"kind": "flush", "sealed_s": k * period, "start_s": k * period,
              "end_s": k * period + 0.2, "entries": entries, "output_level": 0}
             for k in range(1, int(seconds / period))]
    for e in evts:
        ivs[min(int(e["end_s"]), seconds - 1)]["events"].append(e)
    return ivs


# ---------------------------------------------------------------- mergesim


def test_replay_gives_the_flushes_between_merges_into_each_level() -> None:
    decisions = leveling_decisions(60, 5)
    sim = mergesim.replay("leveling", decisions, 60, LOAD_FLUSHES)
    assert sim.deepest == 2
    assert sim.merges_into(2) == 8  # flushes 25, 30, ..., 60
    assert sim.cycle_flushes(2) == 5.0
    # The flush after each merge into level 2 finds level 1 empty and moves there as it is:
    # no merge (cycles.merges_into leaves the engine's moves out too).
    assert sim.into[1] == tuple(f for f in range(22, 61) if f % 5 != 1)
    assert sim.cycle_flushes(1) == sim.cycle_flushes(0) == (60 - 22) / 31  # every other merge
    assert sim.cycle_flushes(3) is None
    assert mergesim.replay("leveling", decisions, 60, 0).deepest is None  # an empty start
    text = b"".join(json.dumps({"flush": f, "time_s": 0, "first": p, "inputs": n,
                                "input_bytes": 9, "output_bytes": 9, "level": lv},
                               separators=(",", ":")).encode() + b"\n"
                    for f, p, n, lv in decisions[:7])
    assert mergesim.parse_decisions(text) == decisions[:7]
    with pytest.raises(mergesim.SimError, match="line 2"):
        mergesim.parse_decisions(text.splitlines()[0] + b"\n{\"flush\":1}\n")
    with pytest.raises(mergesim.SimError):
        mergesim.replay("leveling", [(1, 3, 2, 1)], 2, 0)


def test_replay_of_a_one_level_tree_counts_its_major_merges() -> None:
    # A one-level policy merging the two newest components while they are of a size (sizes
    # double, as a binary counter): every flush but the odd ones merges into level 0, and a
    # merge reads the whole tree exactly when the flushes so far are a power of two.
    decisions, sizes = [], []
    for f in range(1, 65):
        sizes.append(1)
        while len(sizes) >= 2 and sizes[-1] == sizes[-2]:
            decisions.append((f, len(sizes) - 2, 2, 0))
            sizes[-2:] = [2 * sizes[-1]]
    sim = mergesim.replay("size-tiered", decisions, 64, 8)
    assert sim.deepest == 0 and sim.major == (16, 32, 64)
    assert sim.merges_into(0) == 3 and sim.cycle_flushes(0) == 24.0
    # A leveled tree's count is every merge into the level, major or not.
    assert mergesim.replay("leveling", leveling_decisions(60, 5), 60, LOAD_FLUSHES).major is None


def test_records_per_flush_is_what_lsm_sim_says(sim_path: Path) -> None:
    sim = sim_path
    records = mergesim.records_per_flush(sim, 4 << 20, 16, 1000)
    # The engine's own memtable (engines/lsm/src/db/memtable_capacity_test.cc holds it to
    # what the DB flushes); the quickstart's runs flush 3,712 writes per 4 MiB memtable.
    assert abs(records - RECORDS) <= 1
    assert mergesim.records_per_flush(sim, 4 << 20, 16, 4000) < records / 3
    assert abs(mergesim.records_per_flush(sim, 8 << 20, 16, 1000) / records - 2) < 0.01
    with pytest.raises(mergesim.SimError, match="exited 2"):
        mergesim.records_per_flush(sim, 1, 16, 1000)  # below the engine's minimum budget


def test_the_workload_defaults_are_the_drivers() -> None:
    """A workload that leaves its sizes out gets the driver's defaults (driver-workload.json,
    held to lsm-driver --describe-workload by the driver's tests and here when it is built);
    a value size range counts at its midpoint, in both estimates that need record sizes."""
    from lsmbench.datasize import RECORD_OVERHEAD_BYTES, record_bytes
    from lsmbench.engine_options import record_sizes, workload_defaults

    defaults = workload_defaults()
    assert record_sizes({}) == (defaults["key_size"], defaults["value_size"])
    assert record_sizes({"key_size": 24, "value_size": {"min": 100, "max": 300}}) == (24, 200.0)
    assert record_bytes({"value_size": {"min": 100, "max": 300}}) == (
        defaults["key_size"] + 200 + RECORD_OVERHEAD_BYTES)
    driver = find_driver()
    if driver is not None:
        live = json.loads(subprocess.run([str(driver), "--describe-workload"],
                                         capture_output=True, text=True, check=True).stdout)
        assert live == defaults


def test_the_engine_facts_come_from_its_description() -> None:
    """The defaults and the options the merge policy reads are the committed description's,
    which the driver's tests hold to the engine's option table; with lsm-driver built, the
    live description says the same."""
    desc = description("builtin")
    assert desc is not None
    memtable, policy = desc.get("memtable_bytes"), desc.get("merge_policy")
    assert memtable is not None and policy is not None
    assert mergesim.memtable_bytes({}) == memtable.default
    assert mergesim.memtable_bytes({"memtable_bytes": "4M"}) == 4 << 20
    assert mergesim.default_option("merge_policy") == policy.default
    ignored = mergesim.not_policy_options()
    assert {"merge_scheduler", "wal", "force_bytes"} <= ignored
    assert not {"merge_policy", "size_ratio", "memtable_bytes", "full_level_waits"} & ignored
    assert {o.name for o in desc.options} - ignored == {
        o.name for o in desc.options if o.scope == "merge-policy"}
    driver = find_driver()
    if driver is not None:
        live = json.loads(subprocess.run([str(driver), "--describe-options", "builtin"],
                                         capture_output=True, text=True, check=True).stdout)
        assert ignored == {o["name"] for o in live["options"] if o.get("scope") == "engine"}


def test_the_real_lsm_sim_on_the_quickstart(sim_path: Path) -> None:
    sim = sim_path
    load = 200_000 // RECORDS
    lev = mergesim.simulate(sim, {"merge_policy": "leveling", "memtable_bytes": "4M",
                                  "wal": "async"}, RECORDS * 1016, load)
    tier = mergesim.simulate(sim, {"merge_policy": "tiering", "memtable_bytes": "4M"},
                             RECORDS * 1016, load)
    # Level 1 holds 40 MiB (~12 flushes of 3.6 MiB), but at flush 120 level 2 moves down into
    # a new level 3 and the next flush's turn into level 2 is a move, no merge: 84 flushes
    # hold 6 merges into level 2 or deeper after the load's 53 (60 ... 120, 144). Tiering's
    # level 3 takes 3^3 flushes.
    assert (lev.deepest, lev.cycle_flushes(2)) == (2, 14.0)
    assert (tier.deepest, tier.cycle_flushes(3)) == (3, 27.0)
    with pytest.raises(mergesim.SimError, match="exited 2"):
        mergesim.simulate(sim, {"merge_policy": "leveling", "no_such_option": "1"}, 4096, 10)


# ---------------------------------------------------------------- the expected cycle


def test_expected_cycle_from_two_testing_merges_and_the_warning() -> None:
    mc = merge_cycle(phase_series([10.0, 51.0]))
    assert mc is not None and mc.merges == 2
    cycle, basis = cyclecheck.from_testing(mc, None)
    assert cycle is not None and basis == "from the testing phase's 2 merges into level 2"
    running = plan_of("18s").spec.phases.running
    text = cyclecheck.short_phase_warning("running", running, 2260.0, cycle)
    assert text is not None and text.startswith(
        "running phase 18 s is shorter than the expected cycle of merges into level 2 (~41 s "
        "at 2,260 writes/s, from the testing phase's 2 merges into level 2)")
    assert "~44 % of the time" in text and "phases.running.duration to >= 41 s" in text
    long = plan_of("45s").spec.phases.running
    assert cyclecheck.short_phase_warning("running", long, 2260.0, cycle) is None
    # Half the rate, twice the cycle: 45 s is short again.
    assert "~82 s at 1,130 writes/s" in cyclecheck.short_phase_warning(
        "running@0.5", long, 1130.0, cycle)
    warm = plan_of("45s", warmup="10s").spec.phases.running
    assert "45 s (35 s after its 10 s warm-up)" in cyclecheck.short_phase_warning(
        "running", warm, 2260.0, cycle)


def test_one_testing_merge_falls_back_on_lsm_sim() -> None:
    mc = merge_cycle(phase_series([30.0], seconds=24))
    assert mc is not None and mc.merges == 1 and mc.writes is None
    sim = mergesim.replay("leveling", leveling_decisions(60, 5), 60, LOAD_FLUSHES)
    cycle, basis = cyclecheck.from_testing(mc, sim)
    assert cycle is not None and cycle.writes == 5 * RECORDS and cycle.flushes == 5.0
    assert basis == ("the testing phase saw 1 merge into level 2 in 24 s; lsm-sim puts one "
                     f"every ~5 flushes of ~{RECORDS:,} writes")
    cycle, basis = cyclecheck.from_testing(mc, None, "lsm-sim is not built (make build)")
    assert cycle is None
    assert basis == ("the testing phase saw 1 merge into level 2 in 24 s, too few to time; no "
                     "estimate either: lsm-sim is not built (make build)")


# ---------------------------------------------------------------- at run time


class _Stop(Exception):
    pass


def _pipeline(plan, tmp_path: Path, max_tp: float, mc: MergeCycle) -> PointPipeline:
    logger = logging.getLogger("lsmbench.point.test-cycle")
    ctx = PointContext(plan=plan, point=plan.points[0], testbed=None, node=None,
                       out_dir=tmp_path, reporter=Reporter(), log=logger)
    pipeline = PointPipeline(ctx)
    pipeline.result.max_throughput = {"writes_per_s": max_tp, "merge_cycle": mc.to_json()}

    def no_driver(*args, **kwargs):
        raise _Stop  # the check comes before the phase runs

    pipeline._run_phase = no_driver
    return pipeline


def test_a_short_running_phase_is_warned_before_it_runs(tmp_path, caplog) -> None:
    mc = merge_cycle(phase_series([10.0, 51.0]))
    pipeline = _pipeline(plan_of("18s"), tmp_path, 2260.0, mc)
    with caplog.at_level(logging.WARNING, "lsmbench.point.test-cycle"), pytest.raises(_Stop):
        pipeline.running("running", 1.0, 2260.0, None)
    assert len(pipeline.result.warnings) == 1
    assert pipeline.result.warnings[0].startswith(
        "running phase 18 s is shorter than the expected cycle of merges into level 2 (~41 s "
        "at 2,260 writes/s, from the testing phase's 2 merges into level 2)")
    assert [r.getMessage() for r in caplog.records] == pipeline.result.warnings
    with pytest.raises(_Stop):  # each search step is checked at its own rate
        pipeline.running("running@0.5", 0.5, 2260.0, None)
    assert "running@0.5 phase 18 s" in pipeline.result.warnings[1]
    assert "~82 s at 1,130 writes/s" in pipeline.result.warnings[1]


def test_a_long_running_phase_is_not_warned(tmp_path, caplog) -> None:
    mc = merge_cycle(phase_series([10.0, 51.0]))
    pipeline = _pipeline(plan_of("60s"), tmp_path, 2260.0, mc)
    with caplog.at_level(logging.WARNING, "lsmbench.point.test-cycle"), pytest.raises(_Stop):
        pipeline.running("running", 0.95, 2260.0, None)
    assert pipeline.result.warnings == [] and caplog.records == []


def test_a_merge_the_load_left_pending_is_seen_by_a_window_that_outlasts_it(tmp_path) -> None:
    # The testing phase opened with a merge into level 2 (started at 0.2 s, ended at 6.2 s);
    # the next came 51 s later. A running phase from the same loaded tree opens with it too.
    mc = merge_cycle(phase_series([0.2, 51.0]))
    assert mc is not None and mc.pending_end_s == pytest.approx(6.2)
    assert MergeCycle.from_json({k: v for k, v in mc.to_json().items()
                                 if k != "pending_end_s"}) is not None  # older records
    long_enough = _pipeline(plan_of("18s"), tmp_path, 2260.0, mc)
    with pytest.raises(_Stop):
        long_enough.running("running", 1.0, 2260.0, None)
    assert long_enough.result.warnings == []
    too_short = _pipeline(plan_of("8s"), tmp_path / "short", 2260.0, mc)
    with pytest.raises(_Stop):
        too_short.running("running", 1.0, 2260.0, None)
    assert len(too_short.result.warnings) == 1
    assert too_short.result.warnings[0].startswith(
        "running phase 8 s may end before the merge into level 2 that the load left pending "
        "(it ended 6 s into the testing phase")
    assert mc.pending_end_s is not None and merge_cycle(phase_series([3.0, 51.0])).pending_end_s \
        is None


def test_run_time_check_uses_lsm_sim_after_a_single_testing_merge(tmp_path, fake_sim,
                                                                  monkeypatch) -> None:
    sim, _ = fake_sim()
    monkeypatch.setenv("LSMBENCH_SIM", str(sim))
    mc = merge_cycle(phase_series([5.0], seconds=24, per_s=1000.0))
    pipeline = _pipeline(plan_of("10s"), tmp_path, 1000.0, mc)
    with pytest.raises(_Stop):
        pipeline.running("running", 1.0, 1000.0, None)
    # 5 flushes of RECORDS writes at 1000 writes/s: ~19 s.
    assert len(pipeline.result.warnings) == 1
    assert (f"(~{5 * RECORDS / 1000:.0f} s at 1,000 writes/s, the testing phase saw 1 merge "
            "into level 2 in 24 s; lsm-sim puts one every ~5 flushes") in (
        pipeline.result.warnings[0])


def test_point_json_records_the_warnings(tmp_path, monkeypatch) -> None:
    plan = plan_of("18s")

    def run(self):
        self.result.warnings.append("running phase 18 s is shorter than ...")
        return self.result

    monkeypatch.setattr(point_run.PointPipeline, "run", run)
    store = Store(tmp_path / "results")
    point = plan.points[0]
    point_run.run_point(plan, store, None, None, None, point, plan.point(point).config_hash,
                        Reporter())
    rec = store.point(plan.spec.name, point.id)
    assert rec is not None and rec.state == "complete"
    assert rec.data["warnings"] == ["running phase 18 s is shorter than ..."]


# ---------------------------------------------------------------- lsmbench plan


def test_plan_says_the_cycle_lsm_sim_gives(fake_sim) -> None:
    sim, argv = fake_sim()
    plan = plan_of("10s", schedulers=("single", "greedy"))
    report = cyclecheck.plan_cycles(plan, None, sim)
    writes = 5 * RECORDS
    assert report.warnings == []
    assert report.notes == [
        f"merge cycle: a merge into level 2 (the deepest after the load) comes every ~5 "
        f"flushes (~{writes:,} writes, lsm-sim): the running phase's 10 s window is sure to "
        f"see one end only at >= {writes / 10:,.0f} writes/s"]
    entry = report.points[plan.points[0].id]["lsm_sim"]
    assert (entry["level"], entry["flushes"], entry["records_per_flush"]) == (2, 5.0, RECORDS)
    # One run for the two points (the scheduler does not change the policy's decisions), with
    # the policy's options and the load's flushes.
    calls = [json.loads(line) for line in argv.read_text().splitlines()]
    assert len(calls) == 1
    args = dict(zip(calls[0][::2], calls[0][1::2], strict=False))
    assert args["--merge_policy"] == "leveling" and args["--memtable_bytes"] == "4M"
    assert "--wal" not in args and "--merge_scheduler" not in args
    # Every write updates a loaded record: the load's flushes insert, the rest update the
    # loaded data (lsm-sim's key space), so a tiered tree stops deepening where the engine's does.
    assert int(args["--load-flushes"]) == LOAD_FLUSHES
    assert int(args["--key-space"]) == (LOAD_FLUSHES * RECORDS + 100) * 1016
    assert int(args["--flushes"]) + LOAD_FLUSHES >= LOAD_FLUSHES + mergesim.MIN_FLUSHES_AFTER
    assert int(args["--flush-bytes"]) == RECORDS * 1016


def test_plan_without_a_working_lsm_sim_still_plans(fake_sim, tmp_path, monkeypatch,
                                                     capsys) -> None:
    plan = plan_of("10s")
    report = cyclecheck.plan_cycles(plan, None, None)
    assert report.notes == ["merge cycle: no estimate before a run: lsm-sim is not built (make "
                            "build); lsmbench run warns after each point's testing phase"]
    bad, _ = fake_sim(fail=True)
    report = cyclecheck.plan_cycles(plan, None, bad)
    assert report.notes == ["merge cycle: no estimate before a run: lsm-sim exited 2: lsm-sim: "
                            "Invalid argument: flag '--merge_policy': bad"]
    # The command: no traceback, exit 0, the note.
    spec_file = tmp_path / "cyc.yaml"
    spec_file.write_text(yaml.safe_dump(raw_spec("10s")))
    monkeypatch.setenv("LSMBENCH_SIM", str(tmp_path / "missing" / "lsm-sim"))
    assert main(["plan", str(spec_file), "--results", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out.replace("\n", " ")
    assert "lsm-sim is not built" in out


def _store_run(store: Store, plan, max_tp: float, max_throughput_extra: dict,
               testing: list[dict] | None = None, config: dict | None = None) -> None:
    """A complete stored run of the plan's first point."""
    point = plan.points[0]
    d = store.campaign_dir(plan.spec.name) / point.id
    d.mkdir(parents=True)
    write_json_atomic(d / "spec.json", config or plan.point(point).config)
    if testing is not None:
        (d / "testing").mkdir()
        (d / "testing" / "timeseries.jsonl").write_text(
            "".join(json.dumps(iv) + "\n" for iv in testing))
    write_json_atomic(d / "point.json", {
        "schema": "lsmbench.point/1", "point": point.id, "state": "complete",
        "config_hash": plan.point(point).config_hash,
        "max_throughput": {"writes_per_s": max_tp, **max_throughput_extra}})


def test_plan_warns_from_the_last_run_of_the_point(tmp_path, fake_sim) -> None:
    sim, _ = fake_sim()
    mc = merge_cycle(phase_series([10.0, 51.0]))
    store = Store(tmp_path / "results")
    _store_run(store, plan_of("18s"), 2400.0, {"merge_cycle": mc.to_json()})
    # 0.95 x 2400 = 2280 writes/s: 41 s x 2260 / 2280 ~ 41 s > 18 s.
    report = cyclecheck.plan_cycles(plan_of("18s"), store, sim)
    assert len(report.warnings) == 1
    assert report.warnings[0].startswith(
        "policy=leveling,scheduler=single,rep=0: at the 2,400 writes/s its testing phase "
        "measured last time, running phase 18 s is shorter than the expected cycle of merges "
        "into level 2 (~41 s at 2,280 writes/s, from the testing phase's 2 merges into level 2)")
    # A longer running phase (the fix) keeps the stored run's testing phase, and no warning.
    long = plan_of("60s")
    report = cyclecheck.plan_cycles(long, store, sim)
    assert report.warnings == []
    last = report.points[long.points[0].id]["last_run"]
    assert last["max_writes_per_s"] == 2400.0 and last["cycle"]["level"] == 2


def test_plan_reads_older_runs_and_ignores_other_testing_phases(tmp_path, fake_sim) -> None:
    sim, _ = fake_sim()
    plan = plan_of("18s")
    old = Store(tmp_path / "old")  # point.json from before merge_cycle: the time series tells
    _store_run(old, plan, 2400.0, {}, testing=phase_series([10.0, 51.0]))
    assert len(cyclecheck.plan_cycles(plan, old, sim).warnings) == 1
    other = Store(tmp_path / "other")  # a run whose testing phase loaded other records
    config = json.loads(json.dumps(plan.point(plan.points[0]).config))
    config["workload"]["record_count"] += 1
    _store_run(other, plan, 2400.0, {"merge_cycle": merge_cycle(
        phase_series([10.0, 51.0])).to_json()}, config=config)
    assert cyclecheck.plan_cycles(plan, other, sim).warnings == []


def test_plan_of_the_quickstart_with_the_real_lsm_sim(capsys, sim_path: Path) -> None:
    assert main(["plan", str(QUICKSTART), "--json", "--results", "/nonexistent"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    # 40k records, ~22 flushes: the load leaves level 2 deepest under both policies.
    assert any(n.startswith("merge cycle: policy=tiering: a merge into level 2 (the deepest "
                            "after the load) comes every ~9 flushes") for n in notes), notes
    assert any(n.startswith("merge cycle: policy=leveling: a merge into level 2 (the deepest "
                            "after the load) comes every ~16 flushes") for n in notes), notes
