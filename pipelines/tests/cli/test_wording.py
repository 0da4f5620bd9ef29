"""Output people read: counts with their plural, error lists in numeric order, and the run's
last line without a meaningless overhead."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from lsmbench.progress import summary_line
from lsmbench.spec import SpecError, load_spec
from lsmbench.util.wording import natural_key, plural


def test_plural_says_one_point_and_two_points():
    assert [plural(n, "point") for n in (0, 1, 2)] == ["0 points", "1 point", "2 points"]
    assert plural(1234, "point") == "1,234 points"
    assert plural(2, "repetition is", "repetitions are") == "2 repetitions are"


def test_natural_key_orders_numbers_by_value():
    paths = ["matrix.x[999]", "y", "matrix.x[99]", "matrix.x[2].a", "matrix.x[10]", "matrix"]
    assert sorted(paths, key=natural_key) == ["matrix", "matrix.x[2].a", "matrix.x[10]",
                                              "matrix.x[99]", "matrix.x[999]", "y"]


def test_spec_errors_come_in_the_order_of_their_indexes(tmp_path: Path):
    schedulers = ["single"] * 12  # a duplicate value at [1]..[11]
    schedulers[9] = "gredy"  # an unknown one at [9]
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump({"name": "c", "workload": "update-uniform-1kb",
                                 "matrix": {"scheduler": schedulers}}))
    with pytest.raises(SpecError) as e:
        load_spec(p)
    paths = [path for path, _ in e.value.errors if path.startswith("matrix.scheduler[")]
    # As text, [10] and [11] came before [2] (and [999] before [99]).
    assert paths == [f"matrix.scheduler[{i}]" for i in range(1, 12)]


def test_the_last_line_of_a_run_that_ran_nothing_has_no_overhead():
    summary = {"campaign": "c", "complete": 0, "failed": 0, "skipped": 4, "wall_s": 3.0,
               "driver_s": 0.0, "overhead_pct": None, "results_dir": "r/c"}
    line = summary_line(summary)
    assert line == "campaign c: 0 complete, 0 failed, 4 skipped in 3s; results in r/c"
    ran = summary_line({**summary, "complete": 4, "driver_s": 100.0, "overhead_pct": 1.25})
    assert "(orchestration overhead 1.2%); results in r/c" in ran
