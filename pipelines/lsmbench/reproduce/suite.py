"""The experiments `lsmbench reproduce` runs: one campaign spec (or lsm-sim-validate) each, in
the full variant as its file says, or shortened by ``--quick`` with ``--set`` overrides.

A spec file holds the full sizes, so that ``lsmbench run SPEC`` alone is the full experiment;
the quick variant is the same spec with fewer values and shorter phases (each override is a
``--set`` a user could type), chosen so that the whole quick suite stays under 30 minutes on
2 cores (measured: docs/results/reproduce.md).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

PAPERS: dict[str, str] = {
    "luo-carey": "Luo & Carey, On Performance Stability in LSM-based Storage Systems "
                 "(VLDB 2019)",
    "mao": "Mao et al., Experimental Evaluation of Bounded-Depth LSM Merge Policies "
           "(IEEE BigData 2019)",
    "pramanik": "Pramanik & Venkatesh, Data-driven LSM tuning and idle-time compaction",
}


class Experiment(BaseModel):
    """One experiment of the suite."""

    name: str  # the campaign's name in the results store (the spec's `name`)
    paper: str  # a key of PAPERS
    title: str
    kind: Literal["run", "tune", "sim-validate", "sim"] = "run"
    spec: str | None = None  # relative to the project root (run, tune)
    quick: list[str] = Field(default_factory=list)  # --set KEY=VALUE of the quick variant
    full: list[str] = Field(default_factory=list)  # --set of the full variant (usually none)
    quick_args: list[str] = Field(default_factory=list)  # sim-validate: its flags, quick
    full_args: list[str] = Field(default_factory=list)
    # sim: lsm-sim alone, (k, flushes) per run, every bounded-depth policy (quick and full)
    sim_runs: list[tuple[int, int]] = Field(default_factory=list)
    figures: list[str] = Field(default_factory=list)  # report figure ids shown on the page
    # Not in the quick variant (its quick form would not fit the 30 minutes): --quick skips it
    # and its page says so.
    full_only: bool = False
    setup: str  # what differs from the paper's setup, for the page

    def overrides(self, quick: bool) -> list[str]:
        return self.quick if quick else self.full

    def args(self, quick: bool) -> list[str]:
        return self.quick_args if quick else self.full_args


# The quick variant's phases: 12 s of testing (2 s warm-up) and 16 s of running, except where
# a claim needs a longer window (the schedulers' leveling merges: 24 s, as the quickstart).
_SHORT = ["phases.testing.duration=12s", "phases.running.duration=16s"]
# The full variant's adaptive phases (steady testing, running until decided: issue 29) turned
# back into fixed ones, for the quick variant of a spec that has them.
_FIXED = ["phases.testing.steady=null", "phases.running.until_decided=null"]
# The same adaptive phases, for a full variant whose spec file has fixed ones (a spec others
# use as well, or a phase length its page states): the testing phase until steady (3 rounds,
# each holding a merge into the deepest level), the running phase until decided (2 merges into
# the deepest level), each capped at 180 s; 3 repetitions, up to 5 for a group left undecided.
_ADAPTIVE = ["phases.testing.duration=180s",
             "phases.testing.steady={rounds: 3, round: 12s}",
             "phases.running.duration=180s",
             "phases.running.until_decided={deepest_merges: 2, min_duration: 30s}",
             "matrix.repetitions={min: 3, max: 5}"]
_ADAPTIVE_SETUP = ("adaptive phases: testing until steady (3 rounds, each holding a merge into "
                   "the deepest level; cap 180 s), running until decided (2 merges into the "
                   "deepest level; cap 180 s), 3 repetitions, up to 5 for a group left "
                   "undecided")

SUITE: tuple[Experiment, ...] = (
    Experiment(
        name="repro-lc-schedulers", paper="luo-carey",
        title="Merge schedulers under tiering and leveling (Sec. 5.2, Figs. 8-10)",
        spec="pipelines/campaigns/reproduce/lc-schedulers.yaml",
        quick=["phases.testing.duration=16s", "phases.running.duration=24s",
               *_FIXED, "matrix.repetitions=3"],
        figures=["throughput", "components", "latency"],
        setup="200k x 1 KiB records (the paper: 100M), 2 MiB memory components, a 24 MB/s "
              "cgroup write throttle (the paper: 100 MB/s on an SSD); adaptive phases: testing "
              "until steady (3 rounds, each holding a merge into the deepest level; cap 180 s), "
              "running until decided (2 merges into the deepest level; cap 180 s) (quick: fixed "
              "16 s and 24 s; the paper: 2 h each); 3 repetitions, up to 5 for a group left "
              "undecided (quick: 3).",
    ),
    Experiment(
        name="repro-lc-size-ratio", paper="luo-carey",
        title="The size ratio (Sec. 5.2, Fig. 11)",
        spec="pipelines/campaigns/reproduce/lc-size-ratio.yaml",
        quick=[*_SHORT, *_FIXED, "matrix.size_ratio=[2,8]", "matrix.repetitions=1"],
        figures=["vs-size_ratio"],
        setup="Size ratios 2, 6 and 10 (the paper: 2, 4, 6, 8, 10; quick: 2 and 8, one "
              "repetition); leveling with dynamic level sizes; 200k x 1 KiB records, 24 MB/s "
              "throttle; adaptive phases as the schedulers' (caps 180 s; quick: fixed 12 s and "
              "16 s); 3 repetitions, up to 5 for a group left undecided.",
    ),
    Experiment(
        name="repro-lc-constraints", paper="luo-carey",
        title="Global against local component constraints (Sec. 5.2, Fig. 12)",
        spec="pipelines/campaigns/reproduce/lc-constraints.yaml",
        quick=[*_SHORT, "matrix.policy=[leveling]", "matrix.repetitions=1"],
        figures=["latency"],
        setup="Local constraint: 2 components per level for leveling, 2T for tiering (the "
              "paper's); the testing phase measures the maximum with the global constraint and "
              "fair; 3 repetitions (quick: leveling only, one repetition, 12 s and 16 s "
              "phases).",
    ),
    Experiment(
        name="repro-lc-bursts", paper="luo-carey",
        title="Writing as fast as possible against delaying writes (Sec. 5.2, Fig. 13)",
        spec="pipelines/campaigns/reproduce/lc-bursts.yaml",
        quick=["phases.testing.duration=12s", "phases.running.duration=30s",
               "matrix.repetitions=1"],
        figures=["throughput", "latency"],
        setup="The paper alternates 2,000 and 8,000 records/s (25 and 5 minutes) and limits "
              "the in-memory write rate to 4,000/s; here 15 s bursts at 1.6x the testing "
              "maximum with 30 s idle (a burst holds ~21 memory components, the paper's ~18), "
              "and the delay is LevelDB's (write_control slowdown: 1 ms per write above two "
              "thirds of the constraint), not a rate cap. 3 repetitions (quick: one, a 30 s "
              "running phase: one burst).",
    ),
    Experiment(
        name="repro-lc-queries", paper="luo-carey",
        title="Queries under writes (Sec. 5.2.4, Figs. 14-17)",
        spec="pipelines/campaigns/reproduce/lc-queries.yaml",
        quick=[*_SHORT, "matrix.repetitions=1"],
        full=_ADAPTIVE,
        figures=["queries"],
        setup="2 closed-loop query threads (the paper: 8) beside the open-loop writers at 95 %; "
              "point lookups and short scans of 100 records; no long scans (the store holds "
              "200k records, the paper's long scans read 1M); the whole store is in the page "
              "cache here (the paper's was not); " + _ADAPTIVE_SETUP + " (quick: fixed 12 s "
              "and 16 s phases, one repetition).",
    ),
    Experiment(
        name="repro-lc-size-tiered", paper="luo-carey", full_only=True,
        title="Size-tiered merges measured elastically or with exactly the minimum "
              "(Sec. 5.3, Figs. 18-20)",
        spec="pipelines/campaigns/reproduce/lc-size-tiered.yaml",
        full=_ADAPTIVE,
        figures=["throughput", "components", "latency"],
        setup="Size ratio 1.2, 2 to 10 components a merge (HBase-like, as the paper); 200k x "
              "1 KiB records, 2 MiB memory components, a 24 MB/s cgroup write throttle, "
              + _ADAPTIVE_SETUP + " (the paper: 2 h phases); the testing phase with fair.",
    ),
    Experiment(
        name="repro-lc-partitioned", paper="luo-carey", full_only=True,
        title="Partitioned leveling with LevelDB's scheduler (Sec. 6.2, Figs. 21-23)",
        spec="pipelines/campaigns/reproduce/lc-partitioned.yaml",
        full=_ADAPTIVE,
        figures=["throughput", "latency"],
        setup="The bundled engine's LevelDB-style partitioned leveling (the paper: its "
              "implementation in AsterixDB), 2 MiB files, l0_trigger 4 and l0_stop 12 (the "
              "paper's), 200k x 1 KiB records, 2 MiB memory components, a 24 MB/s cgroup "
              "write throttle, " + _ADAPTIVE_SETUP + ".",
    ),
    Experiment(
        name="repro-lc-partition-size", paper="luo-carey", full_only=True,
        title="The partition size (Sec. 6.2, Fig. 24)",
        spec="pipelines/campaigns/reproduce/lc-partition-size.yaml",
        full=_ADAPTIVE,
        figures=["vs-partition_bytes"],
        setup="Files of 2, 16 and 256 MiB (the paper: 8 MB to 32 GB; at 256 MiB each level "
              "of the ~200 MB store is one file: full merges), the maximum measured with "
              "exactly l0_trigger level-0 files; otherwise as the partitioned experiment (" +
              _ADAPTIVE_SETUP + ").",
    ),
    Experiment(
        name="secondary-indexes", paper="luo-carey", full_only=True,
        title="A primary and two secondary indexes, eager against lazy maintenance "
              "(Sec. 7, Figs. 25-27)",
        spec="pipelines/campaigns/secondary-indexes.yaml",
        full=[*_ADAPTIVE, "phases.running.utilizations=null", "phases.running.utilization=0.95"],
        figures=["throughput", "latency", "dataset"],
        setup="100k x 1 KiB records (the paper: 100M), two uint64 secondary fields, tiering "
              "with size ratio 3 per tree, 2 MiB of memory and a 48 MiB/s I/O budget shared "
              "by the three trees (the paper: 128 MB, 100 MB/s), 4 writers for both "
              "strategies (the paper: 8 eager, 1 lazy); the eager lookups read the page cache "
              "here, not the disk; running at 95 % (the paper: 2 h; the spec file also runs 70 "
              "and 85 %: Fig. 27 is the next experiment), " + _ADAPTIVE_SETUP + ". "
              "research/secondary-indexes.md has the details (of the spec file's fixed "
              "24 s phases).",
    ),
    # Fig. 27 apart from Figs. 25-26: its claim (LC33) is about eager + fair alone, so the
    # sweep's second utilization runs for that group only -- running every group at 70 % as
    # well would add a running phase (and its claim repetitions) to the three groups no
    # claim of the sweep reads.
    Experiment(
        name="secondary-indexes-sweep", paper="luo-carey", full_only=True,
        title="Eager maintenance's write latency against the utilization (Sec. 7, Fig. 27)",
        spec="pipelines/campaigns/secondary-indexes.yaml",
        full=[*_ADAPTIVE, "name=secondary-indexes-sweep",
              "matrix.secondary_maintenance=[eager]", "matrix.scheduler=[fair]",
              "phases.running.utilizations=[0.7, 0.95]"],
        figures=["sweep"],
        setup="The dataset above, eager maintenance with the fair scheduler (the paper's "
              "Fig. 27), running at 70 and 95 % of its maximum (the paper: 0.5 to 0.95), " +
              _ADAPTIVE_SETUP + ".",
    ),
    Experiment(
        name="secondary-indexes-queries", paper="luo-carey", full_only=True,
        title="Secondary-index queries under writes (Sec. 7, Figs. 28-29)",
        spec="pipelines/campaigns/secondary-indexes-queries.yaml",
        full=[*_ADAPTIVE, "matrix.phases.running.queries.selectivity=[1,1000]"],
        figures=[],
        setup="The dataset above at 95 %, 2 query threads (the paper: 8) on the first "
              "secondary field, selectivities 1 and 1,000 records (the paper: 1 to 1,000; the "
              "spec file has 1, 10, 100 and 1,000 in one repetition, the suite the two ends in "
              "3), every query validated against the primary index; " + _ADAPTIVE_SETUP + ".",
    ),
    Experiment(
        name="repro-mao-sim", paper="mao", kind="sim-validate",
        title="Table I at engine level against lsm-sim (Sec. V-VI, Figs. 6-7)",
        quick_args=["--flushes", "600", "--ks", "4,6,8"],
        full_args=["--flushes", "2000", "--ks", "4,5,6,7,8"],
        figures=["sim-agreement", "sim-over-time"],
        setup="1 KB records in hashed key order, 64 KiB memtables (~60 records per flush; the "
              "paper: 4 MB memtables, ~24,000 flushes); 2,000 flushes (quick: 600), the engine "
              "waiting for its merges after each flush (the paper's model), then lsm-sim on "
              "exactly the engine's flush sizes; both sides' write amplification after every "
              "20th flush (quick: 6th) for the runs over time. Deterministic: one run per "
              "policy and k.",
    ),
    Experiment(
        name="repro-mao-updates", paper="mao", kind="sim-validate",
        title="Updates (Sec. V-E, Fig. 4)",
        quick_args=["--flushes", "600", "--ks", "6", "--policies",
                    "bigtable,exploring,minlatency,binomial", "--update-fractions", "0,0.7"],
        full_args=["--flushes", "2000", "--ks", "6", "--policies",
                   "bigtable,exploring,minlatency,binomial", "--update-fractions", "0,0.7"],
        figures=["sim-updates"],
        setup="The engine one flush at a time as in the table above, k = 6, the four policies "
              "of the paper's Fig. 4, each run without and with 70 % of the writes updating an "
              "existing key (zipfian 0.99 back from the newest insert, as the paper's); 2,000 "
              "flushes (quick: 600; the paper: ~26,400 of 4 MB). lsm-sim beside it on the same "
              "flush sizes models no updates: with them its figure is the bound, not a "
              "prediction. Deterministic (seeded): one run per policy and setting.",
    ),
    Experiment(
        name="repro-mao-long", paper="mao", kind="sim",
        title="Long runs simulated (Sec. V-C and VI, Fig. 8)",
        sim_runs=[(4, 1_000_000), (5, 1_000_000), (6, 100_000), (7, 100_000),
                  (10, 1_000_000)],
        setup="lsm-sim alone, the engine's policy code in the instant model, equal 4 MiB "
              "flushes (the paper's simulator: uniform flushes too): Fig. 8's runs (k 6 and 7 "
              "over 100,000 flushes, k 10 over 1,000,000) and, for the growth of write "
              "amplification in the large-n regime, k 4 and 5 over 1,000,000 flushes. "
              "Deterministic; the same in the quick variant (seconds).",
    ),
    Experiment(
        name="bounded-depth", paper="mao",
        title="The policies through the driver: trade-off and merge cost (Figs. 3 and 5)",
        spec="pipelines/campaigns/bounded-depth.yaml",
        quick=["matrix.sstable_bound=[4,8]", "workload.set.record_count=60000",
               "phases.testing.duration=5s"],
        figures=["tradeoff", "merge-cost", "flushes"],
        setup="Free-running inserts (merges overlap flushes, unlike the table above), 150k "
              "records (quick: 60k, k 4 and 8), no throttle.",
    ),
    Experiment(
        name="repro-pv-bursts", paper="pramanik",
        title="Idle-time compaction under write bursts (Sec. 6.3.2, Table 2, Figs. 21-24)",
        spec="pipelines/campaigns/reproduce/pv-bursts.yaml",
        quick=["phases.running.duration=20s", "phases.running.drain=5s"],
        figures=["activity", "latency"],
        setup="The bundled engine's leveling (the paper: LevelDB), 5 s bursts and 10 s idle (the "
              "paper: 10 s and 20 s), arrivals at the testing maximum within a burst (the "
              "paper's client wrote as fast as it could), a 24 MB/s cgroup throttle, 2 MiB "
              "memtables; a 45 s running phase, three bursts (quick: 20 s, two bursts), 3 "
              "repetitions.",
    ),
    Experiment(
        name="tune-leveldb-closed-loop", paper="pramanik", kind="tune",
        title="Bayesian tuning of LevelDB's memtable and file size (Sec. 6.3.1)",
        spec="pipelines/campaigns/tune-leveldb-closed-loop.yaml",
        quick=["tune.trials=6", "tune.confirm.top=1", "workload.set.record_count=300000",
               "phases.testing.duration=10s"],
        figures=[],
        setup="LevelDB itself through its adapter, Optuna TPE instead of MLOS, 16 trials and "
              "the top 3 plus the defaults confirmed with 3 fresh runs each (quick: 6 trials, "
              "the top 1, 300k records loaded, 10 s closed loops); no throttle (a cgroup v1 "
              "throttle does not see LevelDB's buffered writes).",
    ),
)


def experiments(papers: list[str] | None = None) -> list[Experiment]:
    """The suite's experiments of the given papers (all when None), in the suite's order."""
    return [e for e in SUITE if papers is None or e.paper in papers]


def runs_in(exp: Experiment, quick: bool) -> bool:
    """Whether the variant runs the experiment."""
    return not (quick and exp.full_only)
