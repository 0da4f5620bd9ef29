"""How often does a claim "A is higher than B" come out decided when A and B do not differ,
if it is judged at 3 repetitions and, while inconclusive, judged again after more?

`lsmbench reproduce --claim-repetitions N` (a plan) judges a claim again after its groups got
more repetitions, and each look's intervals cover with their stated confidence *per look*.
This simulation puts a number on the whole sequence: two groups drawn from one distribution,
judged with the real `evidence.compare` (order-statistic intervals from `stats.median_ci`) at
each look of a schedule, stopping at the first look that decides. It prints, per schedule, how
often the claim came out reproduced (apart the claimed way: a false reproduction), not
reproduced (apart the other way) and, for comparison, what the first look alone gives (3 vs 3:
min..max intervals apart with probability 2 / C(6, 3) = 10 %, half each way).

A schedule looks again every time; a plan only runs when the first look's estimate is at
most its cap, which a null difference rarely passes: the script gives both (`--plan-cap`: a
look at 3, then, as reproduce plans, one look at the estimate when it is at most the cap).

    .venv/bin/python research/bench/sequential_looks.py [--trials 4000] [--seed 29] \
        [--schedule 3,14 --schedule 3,9,14 ...] [--plan-cap 12 ...] \
        [--distribution normal|lognormal]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

import numpy as np
from lsmbench.method.stats import median_ci
from lsmbench.reproduce.evidence import (
    INCONCLUSIVE,
    NOT_REPRODUCED,
    REPRODUCED,
    Finding,
    compare,
    fmt_plain,
)
from pydantic import BaseModel

# The looks the stored Luo & Carey plans took (LC19 3->13, LC23 3->16, LC30 3->9->14,
# LC32 3->14) and one that looks after every repetition, the most a plan could look.
DEFAULT_SCHEDULES = ((3,), (3, 9), (3, 13), (3, 14), (3, 16), (3, 9, 14),
                     tuple(range(3, 17)))
DEFAULT_CAPS = (12, 16)  # --claim-repetitions' default, and the largest the stored plans used


class LooksOutcome(BaseModel):
    """Out of `trials` null pairs judged at `schedule`: how many came out each way."""

    schedule: tuple[int, ...]
    trials: int
    reproduced: int
    not_reproduced: int

    @property
    def decided(self) -> int:
        return self.reproduced + self.not_reproduced


def draw(rng: np.random.Generator, distribution: str, size: int) -> np.ndarray:
    """One group's repetitions: the same distribution for both groups (no difference)."""
    if distribution == "normal":
        return rng.normal(100.0, 10.0, size)
    return rng.lognormal(0.0, 1.0, size)  # heavy right tail, like a p99 over repetitions


def judge_at(a: np.ndarray, b: np.ndarray, n: int) -> Finding:
    """What `compare` finds of "a higher than b" on each group's first n repetitions."""
    return compare(median_ci(a[:n].tolist()), median_ci(b[:n].tolist()), "a", "b",
                   higher=True, fmt=fmt_plain, what="x")


def count(trials: int, seed: int, distribution: str, drawn: int,
          judge: Callable[[np.ndarray, np.ndarray], str], schedule: tuple[int, ...]
          ) -> LooksOutcome:
    """`trials` null pairs of `drawn` repetitions per group (one seed: the same pairs for
    every judge given the same `drawn`), each judged once by `judge` (its final status)."""
    rng = np.random.default_rng(seed)
    counts = {REPRODUCED: 0, NOT_REPRODUCED: 0}
    for _ in range(trials):
        a, b = draw(rng, distribution, drawn), draw(rng, distribution, drawn)
        status = judge(a, b)
        if status != INCONCLUSIVE:
            counts[status] += 1
    return LooksOutcome(schedule=schedule, trials=trials, reproduced=counts[REPRODUCED],
                        not_reproduced=counts[NOT_REPRODUCED])


def sequential(schedule: Sequence[int], trials: int, seed: int, distribution: str,
               drawn: int | None = None) -> LooksOutcome:
    """Judge each trial's pair at every look of `schedule` until one decides. Each group
    draws `drawn` repetitions (default: the last look's), so two schedules given the same
    seed and `drawn` judge the same pairs."""
    def first_decided(a: np.ndarray, b: np.ndarray) -> str:
        status = INCONCLUSIVE
        for n in schedule:
            status = judge_at(a, b, n).status
            if status != INCONCLUSIVE:
                break
        return status

    return count(trials, seed, distribution, max(max(schedule), drawn or 0), first_decided,
                 tuple(schedule))


def planned(cap: int, trials: int, seed: int, distribution: str,
            drawn: int | None = None) -> LooksOutcome:
    """As `lsmbench reproduce --claim-repetitions cap` does: a look at 3 and, when that is
    inconclusive with an estimate of at most `cap` repetitions each, one more look there
    (`drawn` as in `sequential`)."""
    def plan(a: np.ndarray, b: np.ndarray) -> str:
        first = judge_at(a, b, 3)
        if first.status == INCONCLUSIVE and first.repetitions is not None \
                and first.repetitions <= cap:
            return judge_at(a, b, first.repetitions).status
        return first.status

    return count(trials, seed, distribution, max(cap, drawn or 0), plan, (3, cap))


def parse_schedule(text: str) -> tuple[int, ...]:
    try:
        looks = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: comma-separated repetition counts, e.g. 3,9,14") from None
    if not looks or looks[0] < 3 or list(looks) != sorted(set(looks)):
        raise argparse.ArgumentTypeError(
            f"{text!r}: increasing repetition counts from at least 3 (fewer have no interval)")
    return looks


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=29)
    ap.add_argument("--schedule", type=parse_schedule, action="append",
                    help="the looks, e.g. 3,9,14 (repeatable; default: the stored plans')")
    ap.add_argument("--plan-cap", type=int, action="append",
                    help="also as reproduce plans, capped at this (repeatable; default 12, 16)")
    ap.add_argument("--distribution", choices=("normal", "lognormal"), default="normal")
    args = ap.parse_args(argv)
    if args.trials < 1:
        print(f"--trials {args.trials}: at least 1", file=sys.stderr)
        return 2
    if args.seed < 0:
        print(f"--seed {args.seed}: at least 0", file=sys.stderr)
        return 2
    if any(cap < 4 for cap in args.plan_cap or ()):
        print("--plan-cap: at least 4 (a plan adds to the first look's 3)", file=sys.stderr)
        return 2
    print(f"seed {args.seed}, {args.trials} null pairs each, {args.distribution}")
    schedules, caps = args.schedule or DEFAULT_SCHEDULES, args.plan_cap or DEFAULT_CAPS
    # Every row judges the same pairs (one seed, as many drawn as the longest needs), so the
    # rows differ only by their looks.
    drawn = max(max(max(s) for s in schedules), max(caps))
    for schedule in schedules:
        o = sequential(schedule, args.trials, args.seed, args.distribution, drawn)
        print(f"looks {','.join(map(str, o.schedule))}: {rates(o)}")
    for cap in caps:
        o = planned(cap, args.trials, args.seed, args.distribution, drawn)
        print(f"look 3, then a plan capped at {cap}: {rates(o)}")
    return 0


def rates(o: LooksOutcome) -> str:
    return (f"reproduced {o.reproduced / o.trials:.1%}, not reproduced "
            f"{o.not_reproduced / o.trials:.1%}, decided {o.decided / o.trials:.1%}")


if __name__ == "__main__":
    sys.exit(main())
