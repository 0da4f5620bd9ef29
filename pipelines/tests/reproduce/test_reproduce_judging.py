"""How `lsmbench reproduce` judges a claim: a claim that one group is higher, much higher or
about the same as another, from the intervals of their medians, and claims made of parts."""

from __future__ import annotations

from lsmbench.method.stats import median_ci
from lsmbench.reproduce.evidence import (
    INCONCLUSIVE,
    NOT_REPRODUCED,
    REPRODUCED,
    Finding,
    all_of,
    compare,
    fmt_plain,
    much,
    similar,
)

# ---------------------------------------------------------------- the rule


def test_compare_needs_apart_intervals_in_the_claimed_direction():
    high, low = median_ci([10, 11, 12]), median_ci([5, 6, 7])
    assert compare(high, low, "a", "b", higher=True, fmt=fmt_plain, what="x").status == \
        REPRODUCED
    assert compare(low, high, "a", "b", higher=True, fmt=fmt_plain, what="x").status == \
        NOT_REPRODUCED
    assert compare(low, high, "a", "b", higher=False, fmt=fmt_plain, what="x").status == \
        REPRODUCED
    overlapping = median_ci([6, 9, 13])
    f = compare(high, overlapping, "a", "b", higher=True, fmt=fmt_plain, what="x")
    assert f.status == INCONCLUSIVE and "overlap" in f.why
    # half-widths 1 and 4 against a gap of 2, each 75 % interval widened to 95 % (x 1.704):
    # 3 x (5 x 1.704 / 2)^2 = 54.5 (taken as 95 % intervals, 18.75: the estimate of old)
    assert f.why.endswith("; ~55 repetitions each would part them if the medians hold")
    f = compare(high, median_ci([9, 11.05, 13]), "a", "b", higher=True, fmt=fmt_plain, what="x")
    assert f.why.endswith("the medians are within 1 %: no practical number of repetitions "
                          "parts them")
    # A 2 % gap against half-widths of 2 and 4: 3 x (6 / 0.22)^2 is thousands, not advice.
    f = compare(high, median_ci([7, 10.78, 15]), "a", "b", higher=True, fmt=fmt_plain, what="x")
    assert f.status == INCONCLUSIVE and f.repetitions is not None and f.repetitions > 100
    assert f.why.endswith("the medians are too close for their spread: more than 100 "
                          "repetitions each would be needed to part them")
    # Two runs: no interval, so no status however far apart the medians are.
    f = compare(median_ci([100, 101]), median_ci([1, 2]), "a", "b", higher=True,
                fmt=fmt_plain, what="x")
    assert f.status == INCONCLUSIVE and "fewer than 3 repetitions" in f.why
    assert "(n=2)" in f.ours


def test_similar_is_an_equivalence_within_a_margin():
    def judge(a, b, within=1.2):
        return similar(median_ci(a), median_ci(b), "a", "b", fmt=fmt_plain, what="x",
                       within=within)

    # The ratio's whole range, 99/104 .. 101/102, is within ±20 %: similar, although the
    # intervals are apart (the old rule called this not reproduced).
    f = judge([99, 100, 101], [102, 103, 104])
    assert f.status == REPRODUCED and "between 0.95 and 0.99: within ±20 %" in f.why
    # Overlapping intervals, but wide: a/b may be 0.5 or 1.6 (the old rule: reproduced).
    f = judge([5, 6, 8], [5, 9, 10])
    assert f.status == INCONCLUSIVE and "the intervals cannot tell" in f.why
    # medians 6 and 9: 0.667, 0.223 (in logs) from the nearer edge 0.833; the range reaches
    # 1.6, 0.875 from 0.667, widened from 75 % to 95 % (x 1.704):
    # 3 x (0.875 x 1.704 / 0.223)^2 = 134.2 -> 135 each, past any practical number.
    assert f.repetitions == 135 and "more than 100 repetitions each would be needed to " \
        "settle it" in f.why
    # A medians' ratio on the margin's edge (1.2): no number of repetitions settles it.
    f = judge([110, 120, 130], [95, 100, 105])
    assert f.status == INCONCLUSIVE and f.repetitions is None and "sits on the margin" in f.why
    # Apart by more than the margin either way.
    assert judge([5, 6, 8], [20, 21, 22]).status == NOT_REPRODUCED
    assert judge([30, 31, 32], [20, 21, 22]).status == NOT_REPRODUCED
    # The margin decides: a factor of 2 holds where ±20 % does not.
    assert judge([10, 11, 12], [15, 16, 17]).status == NOT_REPRODUCED
    f = judge([10, 11, 12], [15, 16, 17], within=2.0)
    assert f.status == REPRODUCED and "within a factor of 2" in f.why
    # An interval down to 0 bounds no ratio; two runs give no interval.
    assert judge([0, 1, 2], [1, 2, 3]).status == INCONCLUSIVE
    assert judge([1, 2], [1, 2, 3]).status == INCONCLUSIVE


def test_much_is_beyond_the_margin_in_the_claimed_direction():
    def judge(a, b, higher=True, within=2.0):
        return much(median_ci(a), median_ci(b), "a", "b", higher=higher, fmt=fmt_plain,
                    what="x", within=within)

    # a/b between 30/3 = 10 and 32/2 = 16: much higher, beyond a factor of 2 either way round.
    f = judge([30, 31, 32], [2, 2.5, 3])
    assert f.status == REPRODUCED and "a/b between 10.00 and 16.00: beyond a factor of 2" \
        in f.why
    assert judge([2, 2.5, 3], [30, 31, 32], higher=False).status == REPRODUCED
    # Apart (compare would say reproduced) but 1.05-1.15 apart: not much, under either margin.
    f = judge([105, 106, 107], [93, 95, 100])
    assert f.status == NOT_REPRODUCED and "not beyond a factor of 2" in f.why
    assert judge([105, 106, 107], [93, 95, 100], within=1.2).status == NOT_REPRODUCED
    # The other way round is no "much higher" either.
    assert judge([2, 2.5, 3], [30, 31, 32]).status == NOT_REPRODUCED
    # Lower: b/a is the ratio; alike p99s at two utilizations are not "much smaller".
    f = judge([3.0, 3.1, 3.3], [2.1, 3.2, 3.4], higher=False)
    assert f.status == NOT_REPRODUCED and "b/a between" in f.why
    # Straddling the margin: a/b from 1.5 to 4; medians 2.5 (a 25 % log-distance from 2):
    # undecided, with the repetitions that would settle it.
    f = judge([4.5, 5, 6], [1.5, 2, 3])
    assert f.status == INCONCLUSIVE and "beyond a factor of 2 or not" in f.why
    assert f.repetitions is not None and f.repetitions > 3
    # No interval, or one down to 0: no status.
    assert judge([30, 31], [2, 3, 4]).status == INCONCLUSIVE
    assert judge([30, 31, 32], [0, 1, 2]).status == INCONCLUSIVE


def test_an_undecided_comparison_names_its_groups_and_all_of_keeps_the_open_ones():
    from lsmbench.reproduce.evidence import GroupEstimate

    def est(values, group):
        return GroupEstimate(**median_ci(values).model_dump(), group=group)

    apart = compare(est([10, 11, 12], "g1"), est([5, 6, 7], "g2"), "a", "b", higher=True,
                    fmt=fmt_plain, what="x")
    assert apart.status == REPRODUCED and apart.groups == []
    open_ = compare(est([10, 11, 12], "g3"), est([6, 9, 13], "g4"), "a", "b", higher=True,
                    fmt=fmt_plain, what="x")
    assert open_.status == INCONCLUSIVE and open_.groups == ["g3", "g4"]
    both = all_of([apart, open_])
    assert (both.status, both.repetitions, both.groups) == (INCONCLUSIVE, 55, ["g3", "g4"])
    # A part no number of repetitions decides: neither does the whole.
    stuck = compare(est([10, 11, 12], "g5"), est([9, 11.05, 13], "g6"), "a", "b", higher=True,
                    fmt=fmt_plain, what="x")
    assert stuck.repetitions is None
    assert all_of([open_, stuck]).repetitions is None


def test_all_of():
    yes = Finding(status=REPRODUCED, ours="1", why="w1")
    no = Finding(status=NOT_REPRODUCED, ours="2", why="w2")
    maybe = Finding(status=INCONCLUSIVE, ours="3", why="w3")
    assert all_of([yes, yes]).status == REPRODUCED
    assert all_of([yes, maybe]).status == INCONCLUSIVE
    assert all_of([maybe, no]).status == NOT_REPRODUCED
    assert all_of([yes, no]).ours == "1; 2"
