"""`lsmbench track detect` and its detector (issue 14, part 2): known answers on seeded
synthetic series (each test prints the seeds it drew), the nightly replay, and the command's
output and refusals. The suite's figures come from research/bench/track_detect_synthetic.py,
not from here: these are known-answer checks, fast and never timed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from bench_scripts import load_bench_script
from lsmbench.cli import main
from lsmbench.track import synthetic
from lsmbench.track.detect import (
    BadSeries,
    ChangePoint,
    DetectorConfig,
    NotEnoughData,
    ar1_mean_variance,
    autocorrelation,
    detect,
    noise,
    pooled_autocorrelation,
    read_csv_series,
)
from lsmbench.track.synthetic import SeriesSpec
from repo_paths import PIPELINES

SEED = 20261124


def drawn(spec: SeriesSpec, seed: int = SEED) -> synthetic.SyntheticSeries:
    series = synthetic.generate(spec, seed)
    print(f"{spec.label}: seed {seed}")
    return series


def step_at(night: int, step: float, cov: float, rho: float = 0.0) -> SeriesSpec:
    return SeriesSpec(kind="step", cov=cov, rho=rho, step=step, step_from=night,
                      step_until=night)


# ---------------------------------------------------------------- known answers


def test_a_15_percent_step_is_found_where_it_is_with_its_sign_and_size():
    series = drawn(step_at(30, 0.15, cov=0.02))
    [cp] = detect(series.values)
    assert abs(cp.index - 30) <= 1
    assert 0.12 < cp.change < 0.18
    assert 97 < cp.before < 103 and 112 < cp.after < 118
    assert cp.p_value is not None and cp.p_value < 1e-6


@pytest.mark.parametrize("seed", range(SEED, SEED + 5))
def test_a_flat_series_at_cov_5_percent_has_no_change_point(seed):
    assert detect(drawn(SeriesSpec(kind="flat", cov=0.05), seed).values) == []


def test_a_single_spike_is_not_a_change_not_even_on_its_own_night():
    values = drawn(SeriesSpec(kind="flat", cov=0.02)).values
    values[30] *= 1.5
    assert detect(values) == []
    assert detect(values[:31]) == []  # the spike is the newest night
    assert detect(values[:33]) == []  # and two nights later


def test_two_bad_nights_in_a_row_are_not_a_change():
    """A spike and its echo: a segment of min_segment nights holds them, but most of its
    nights are not on their level."""
    values = drawn(SeriesSpec(kind="flat", cov=0.02)).values
    values[30] *= 1.3
    values[31] *= 1.3
    assert detect(values) == []
    assert detect(values[:32]) == [] and detect(values[:34]) == []


def test_a_bimodal_flat_series_is_not_a_change():
    """A machine with two states (30 % of nights 15 % higher, at random) has no change; a
    run of nights in one mode can still look like one now and then (the suite measures how
    often), so: at most 1 of 20 series."""
    spec = SeriesSpec(kind="bimodal", cov=0.02)
    series = synthetic.draw(spec, 20, seed=SEED)
    print(f"{spec.label}: seeds {[s.seed for s in series]}")
    flagged = [s.seed for s in series if detect(s.values)]
    assert len(flagged) <= 1, flagged


def test_the_sign_follows_the_value_so_a_lower_is_better_regression_is_positive():
    latency = drawn(step_at(30, 0.15, cov=0.02)).values  # latency up: a regression
    throughput = drawn(step_at(30, -0.15, cov=0.02)).values  # throughput down: a regression
    [up] = detect(latency)
    [down] = detect(throughput)
    assert up.change > 0.1 and up.after > up.before
    assert down.change < -0.1 and down.after < down.before


def test_a_step_and_its_revert_are_two_change_points():
    values = drawn(SeriesSpec(kind="flat", cov=0.02)).values
    for i in range(20, 40):
        values[i] *= 0.85
    cps = detect(values)
    assert all(abs(cp.index - want) <= 1 for cp, want in zip(cps, (20, 40), strict=True))
    assert [np.sign(cp.change) for cp in cps] == [-1, 1]


def test_a_noise_free_step_is_found():
    [cp] = detect([10.0] * 10 + [12.0] * 10)
    assert cp.index == 10 and cp.change == pytest.approx(0.2)


def test_a_change_from_zero_is_infinite_and_null_in_json(capsys, tmp_path):
    values = [0.0] * 10 + [5.0] * 10
    [cp] = detect(values)
    assert cp.index == 10 and cp.change == float("inf") and cp.before == 0.0
    path = write_csv(tmp_path / "z.csv", "night,stalled_s",
                     [f"{i},{v}" for i, v in enumerate(values)])
    code, out, _ = run(capsys, str(path), "--json")
    assert code == 0 and json.loads(out)["change_points"][0]["change"] is None
    code, out, _ = run(capsys, str(path))
    assert code == 0 and "from 0" in out


def test_a_change_smaller_than_the_noise_is_not_reported():
    # 3 % at CoV 5 %: below min_magnitude_noise x noise, however many nights confirm it
    values = drawn(step_at(30, 0.03, cov=0.05)).values
    assert detect(values) == []


def test_noise_is_the_series_cov_and_ignores_a_step_and_spikes():
    flat = drawn(SeriesSpec(kind="flat", cov=0.05)).values
    assert 0.035 < noise(flat) < 0.065
    stepped = drawn(step_at(30, 0.20, cov=0.05)).values
    spiky = drawn(SeriesSpec(kind="spikes", cov=0.05)).values
    assert 0.035 < noise(stepped) < 0.065 and 0.035 < noise(spiky) < 0.065
    assert noise([5.0] * 10) == 0.0


def test_too_few_points_and_values_that_are_no_numbers_are_refused():
    config = DetectorConfig()
    with pytest.raises(NotEnoughData, match=f"at least {config.min_points}"):
        detect([1.0] * (config.min_points - 1))
    assert detect([1.0] * config.min_points) == []
    with pytest.raises(BadSeries, match="value 3"):
        detect([1.0, 2.0, 1.0, float("nan")] + [1.0] * 10)
    with pytest.raises(BadSeries):
        detect([1.0] * 10 + [float("inf")])



def test_the_newest_nights_report_a_step_before_the_segmentation_can_confirm_it():
    """Four nights 2.4 noise above a 26-night level (CoV 5 %): the newest nights' test reports
    the step at its first night on the night the fourth one arrives; the segmentation alone
    (the newest test off), which estimates the noise from the short new segment too, misses
    some of them."""
    with_newest, segmentation_only = 0, 0
    for seed in range(SEED, SEED + 10):
        values = synthetic.generate(SeriesSpec(kind="flat", cov=0.05, nights=30), seed).values
        values = values[:26] + [v + 12.0 for v in values[26:]]
        print(f"flat CoV 5 %, 30 nights, +12 from night 26: seed {seed}")
        found = detect(values)
        assert [cp.index for cp in found] == [26], found
        assert found[0].p_value is not None and found[0].p_value <= 0.02
        with_newest += 1
        segmentation_only += bool(detect(values, DetectorConfig(newest_max_p_value=0)))
    assert segmentation_only < with_newest


def test_the_newest_nights_must_be_one_level():
    """Two bad nights and two ordinary ones (one of them a little high, so three of the four
    are above the level: the held shift passes) pull the newest nights' mean as far as a step
    would; their spread says they are no level."""
    values = drawn(SeriesSpec(kind="flat", cov=0.02)).values[:34]
    values[30] *= 1.3
    values[31] *= 1.3
    assert detect(values) == []
    assert [cp.index for cp in detect(values, DetectorConfig(newest_max_spread=100.0))] == [30]


def test_the_variance_of_a_mean_of_ar1_nights_is_the_exact_small_sample_one():
    assert ar1_mean_variance(1, 0.5) == pytest.approx(1.0)
    assert ar1_mean_variance(4, 0.0) == pytest.approx(0.25)
    # (4 + 2 (3 rho + 2 rho^2 + rho^3)) / 16 at rho 0.5
    assert ar1_mean_variance(4, 0.5) == pytest.approx(8.25 / 16)
    # and it is what the generator's AR(1) nights do: means of 4 over 200,000 nights
    x = synthetic.ar1_noise(np.random.default_rng(SEED), 200_000, 1.0, 0.5)
    print(f"AR(1) rho 0.5: seed {SEED}")
    assert x[: len(x) // 4 * 4].reshape(-1, 4).mean(axis=1).var() == pytest.approx(
        8.25 / 16, rel=0.03)


def test_a_testbeds_pooled_autocorrelation_is_nearer_than_one_series_own():
    """Testbeds of 8 series of 30 nights at rho 0.5 (half of their noise shared): the pool of
    their own estimates spreads about half as much from testbed to testbed as one series' own
    estimate does from series to series, about the same mean; and a given rho is what the
    detector uses (a higher one, a weaker newest nights' test)."""
    spec = SeriesSpec(kind="flat", cov=0.05, rho=0.5, nights=30)
    testbeds = synthetic.draw_testbeds(spec, 96, seed=SEED)
    print(f"{spec.label}, testbeds of 8: seed {SEED}")
    own = [[autocorrelation(s.values) for s in tb] for tb in testbeds]
    pooled = np.asarray([pooled_autocorrelation(parts) for parts in own])
    each = np.asarray([a.rho for parts in own for a in parts if a is not None])
    assert float(np.std(pooled)) < 0.6 * float(np.std(each)), (np.std(pooled), np.std(each))
    assert abs(float(np.mean(pooled)) - float(np.mean(each))) < 0.05
    assert pooled_autocorrelation([None, None]) is None
    values = drawn(SeriesSpec(kind="flat", cov=0.05, nights=30)).values
    values = values[:26] + [v + 12.0 for v in values[26:]]
    [independent] = detect(values, rho=0.0)
    [correlated] = detect(values, rho=0.2)
    assert independent.p_value is not None and correlated.p_value is not None
    assert independent.p_value < correlated.p_value
    assert detect(values, rho=0.5) == []  # 4 nights of AR(1) nights at 0.5 are too few


@pytest.mark.parametrize("rho", [0.0, 0.5])
def test_a_series_own_autocorrelation_is_not_biased_low(rho):
    """96 step-free series of 40 nights at AR(1) rho: their own estimates (about the levels
    the detector keeps, without the newest nights) average within 0.04 of the true rho. The
    lag-1 autocorrelation about estimated levels is biased low by (1 + 4 rho) / n per level
    (Marriott & Pope 1954), and a rank correlation reads 0.48 for 0.5: corrected only by
    Kendall's (1 + 3 rho) / n, rho 0.5 read as about 0.42, and a testbed's pool of such
    estimates let autocorrelated nights raise 1.2 false alarms per 100 nights."""
    spec = SeriesSpec(kind="flat", cov=0.05, rho=rho, nights=40)
    series = synthetic.draw(spec, 96, seed=SEED)
    print(f"{spec.label}: seed {SEED}, 96 series")
    own = [autocorrelation(s.values) for s in series]
    mean = float(np.mean([a.rho for a in own if a is not None]))
    assert abs(mean - rho) < 0.04, mean


def test_a_change_reported_on_an_earlier_night_is_kept_until_the_nights_since_reject_it():
    """A 10 % drop at CoV 3 % at night 14: reported on nights 17-19 (the newest nights' test),
    not on nights 20-22 (its window has moved on, the segmentation has not confirmed it yet),
    reported again from night 23. Held (``held=[14]``, as the history keeps what the last
    report gave) it is reported on every night; a held change on a flat series is dropped."""
    spec = step_at(14, -0.10, cov=0.03)
    values = drawn(spec, 20261139).values
    alone = {night: [cp.index for cp in detect(values[: night + 1])] for night in range(17, 24)}
    assert alone == {17: [14], 18: [14], 19: [14], 20: [], 21: [], 22: [], 23: [14]}, alone
    for night in range(20, 23):
        assert [cp.index for cp in detect(values[: night + 1], held=[14])] == [14], night
    flat = drawn(SeriesSpec(kind="flat", cov=0.03)).values[:30]
    assert detect(flat, held=[20]) == []
    replay = synthetic.detector_of(hold=True)
    assert all(any(abs(i - 14) <= 2 for i, _ in replay(values[: night + 1]))
               for night in range(17, 30))


# ---------------------------------------------------------------- the nightly replay


def test_a_step_is_confirmed_once_most_of_a_segment_is_on_the_new_level():
    """The newest nights alone are not a change: a 10 % step at CoV 2 % (5 noise) is not
    reported while only two nights show it, and is by the night its segment reaches
    min_segment nights (3 of the 4 suffice: see the held shift)."""
    config = DetectorConfig()
    series = drawn(step_at(30, 0.10, cov=0.02))
    delay = synthetic.detection_delay(series, synthetic.detector_of(config))
    assert delay is not None and 2 <= delay <= config.min_segment - 1


def test_steps_of_10_percent_at_cov_5_percent_are_mostly_found_within_3_nights():
    """30 steps of 2 noise: most are found within 3 nights, and the newest nights' test is
    what finds them that soon (the suite's rate, over 200 series, is in
    research/change-detectors.md)."""
    spec = SeriesSpec(kind="step", cov=0.05, step=0.10)
    series = synthetic.draw(spec, 30, seed=SEED)
    print(f"{spec.label}: seeds {[s.seed for s in series]}")

    def within_3(config: DetectorConfig) -> int:
        delays = [synthetic.detection_delay(s, synthetic.detector_of(config)) for s in series]
        return sum(d is not None and d <= 3 for d in delays)

    found = within_3(DetectorConfig())
    assert found >= 20, found
    assert within_3(DetectorConfig(newest_max_p_value=0)) < found - 5


def test_a_flat_series_replayed_night_by_night_raises_at_most_one_alarm():
    """About a third of flat 60-night series raise one alarm somewhere
    (research/change-detectors.md, "series with one"): this one raises one at night 35
    since the newest nights' test takes the level's trimmed mean (it raised none with the median).
    Two would be beyond the rate."""
    series = drawn(SeriesSpec(kind="flat", cov=0.05))
    config = DetectorConfig()
    assert synthetic.false_alarms(series, synthetic.detector_of(config),
                                  first_night=config.min_points - 1) <= 1


def test_the_generator_is_seeded_and_its_noise_has_the_asked_cov_and_rho():
    spec = SeriesSpec(kind="flat", cov=0.05, rho=0.5, nights=4000)
    a, b = synthetic.generate(spec, 7), synthetic.generate(spec, 7)
    assert a.values == b.values
    x = np.asarray(a.values)
    assert 0.045 < x.std() / x.mean() < 0.055
    assert 0.45 < np.corrcoef(x[:-1], x[1:])[0, 1] < 0.55


def _bound_module():
    """research/bench/track_detect_bound.py (a script, not part of the package)."""
    return load_bench_script("track_detect_bound")


def test_the_bounds_informed_test_is_students_two_sample_t_for_independent_nights():
    """The bound in research/change-detectors.md rests on this test: for independent
    nights its GLS regression is the pooled two-sample t-test (and with the noise known, the
    z-test); with the noise from the nights before alone, t with their n - 1 degrees of freedom."""
    from scipy import stats

    bound = _bound_module()
    values = drawn(step_at(30, 0.10, cov=0.05)).values[:34]
    before, after = np.asarray(values[:30]), np.asarray(values[30:])
    p, shift = bound.step_p_value(values, 30, 0.0, 5.0, "pooled")
    assert shift == pytest.approx(after.mean() - before.mean())
    assert p == pytest.approx(stats.ttest_ind(after, before).pvalue)
    z = shift / (5.0 * np.sqrt(1 / 4 + 1 / 30))
    assert bound.step_p_value(values, 30, 0.0, 5.0, "noise-known")[0] == pytest.approx(
        2 * stats.norm.sf(abs(z)))
    t = shift / (before.std(ddof=1) * np.sqrt(1 / 4 + 1 / 30))
    assert bound.step_p_value(values, 30, 0.0, 5.0, "before")[0] == pytest.approx(
        2 * stats.t.sf(abs(t), 29))
    one, _ = bound.step_p_value(values, 30, 0.0, 5.0, "pooled", one_sided=True)
    assert one == pytest.approx(p / 2 if shift > 0 else 1 - p / 2)


def test_the_bounds_informed_test_keeps_its_false_alarm_rate_on_ar1_nights():
    """With rho told, the GLS t-test of the newest 4 nights is exact for AR(1) nights too:
    over 400 seeded windows at rho 0.5 it rejects at about its level (a test that ignored
    rho would reject about 4 times as often: 22 %)."""
    bound = _bound_module()
    spec = SeriesSpec(kind="flat", cov=0.05, rho=0.5, nights=34)
    series = synthetic.draw(spec, 400, seed=SEED)
    print(f"{spec.label}: 400 series of seed {SEED}")
    told = [bound.step_p_value(s.values, 30, 0.5, 5.0, "pooled")[0] for s in series]
    ignored = [bound.step_p_value(s.values, 30, 0.0, 5.0, "pooled")[0] for s in series]
    assert 0.02 <= np.mean(np.asarray(told) <= 0.05) <= 0.09
    assert np.mean(np.asarray(ignored) <= 0.05) > 0.12


# ---------------------------------------------------------------- the command


def run(capsys, *args: str) -> tuple[int, str, str]:
    """The command's exit code, stdout and stderr; what the test printed before (the seeds)
    is printed again after, so that a failure still shows it."""
    earlier = capsys.readouterr().out
    code = main(["track", "detect", *args])
    out, err = capsys.readouterr()
    print(earlier, end="")
    return code, out, err


def write_csv(path: Path, header: str, rows: list[str], *, bom: bool = False) -> Path:
    text = "\n".join([header, *rows]) + "\n"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode())
    return path


def nightly_csv(tmp_path: Path) -> Path:
    """60 nights: throughput steps down 15 % at night 30, latency up 20 % at night 40."""
    tput = drawn(step_at(30, -0.15, cov=0.02)).values
    lat = drawn(step_at(40, 0.20, cov=0.02), SEED + 1).values
    rows = [f"2026-09-{1 + i // 30:02d}T{i % 30:02d}:00,{t:.3f},{v:.3f}"
            for i, (t, v) in enumerate(zip(tput, lat, strict=True))]
    return write_csv(tmp_path / "nightly.csv", "night,throughput,p99_ms", rows)


def test_json_has_the_change_points_with_their_time(capsys, tmp_path):
    path = nightly_csv(tmp_path)
    code, out, err = run(capsys, str(path), "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert list(doc) == ["change_points"]
    [cp] = doc["change_points"]
    assert set(cp) == {"index", "time", "before", "after", "change", "p_value"}
    assert abs(cp["index"] - 30) <= 1 and cp["change"] < -0.1
    assert cp["time"] == read_csv_series(path).times[cp["index"]]
    assert isinstance(cp["time"], str) and cp["time"].startswith("2026-09-")
    ChangePoint.model_validate(cp)


def test_column_picks_the_series(capsys, tmp_path):
    path = nightly_csv(tmp_path)
    code, out, _ = run(capsys, str(path), "--column", "p99_ms", "--json")
    assert code == 0
    [cp] = json.loads(out)["change_points"]
    assert abs(cp["index"] - 40) <= 1 and cp["change"] > 0.15


def test_human_output_is_one_line_per_change_point_and_a_summary(capsys, tmp_path):
    path = nightly_csv(tmp_path)
    code, out, _ = run(capsys, str(path))
    lines = out.splitlines()
    assert code == 0 and len(lines) == 2
    assert lines[0].startswith("index ") and "%" in lines[0]
    assert "column 'throughput': 60 values" in lines[1] and "1 change point" in lines[1]
    code, out, _ = run(capsys, str(path), "--quiet")
    assert code == 0 and len(out.splitlines()) == 1


def test_an_integer_index_column_comes_back_as_a_number(capsys, tmp_path):
    values = drawn(step_at(12, 0.3, cov=0.02)).values[:24]
    path = write_csv(tmp_path / "i.csv", "i,v", [f"{i},{v}" for i, v in enumerate(values)])
    code, out, _ = run(capsys, str(path), "--json")
    [cp] = json.loads(out)["change_points"]
    assert code == 0 and cp["time"] == cp["index"] == 12


def test_a_bom_blank_lines_and_crlf_are_read(capsys, tmp_path):
    values = drawn(step_at(30, 0.15, cov=0.02)).values
    rows = [f"{i},{v}" for i, v in enumerate(values)]
    rows.insert(10, "")
    rows.insert(20, "  ,  ")
    text = "\r\n".join(["night,ops", *rows, "", ""])
    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    code, out, err = run(capsys, str(path), "--column", "ops", "--json")
    assert code == 0, err
    assert len(json.loads(out)["change_points"]) == 1


def _bad(kind: str, d: Path) -> tuple[Path, list[str], str]:
    """A bad input: the file, extra arguments, and what the message says."""
    ok_rows = [f"{i},{100 + i % 3}" for i in range(20)]
    if kind == "empty":
        return write_csv(d / "e.csv", "", []), [], "empty"
    if kind == "blank":
        (d / "b.csv").write_text("\n \n\n")
        return d / "b.csv", [], "empty"
    if kind == "header-only":
        return write_csv(d / "h.csv", "night,ops", []), [], "a header and no rows"
    if kind == "one-column":
        return write_csv(d / "o.csv", "ops", ["1", "2"]), [], "one column ('ops')"
    if kind == "missing-column":
        return (write_csv(d / "m.csv", "night,ops,p99", ok_rows), ["--column", "latency"],
                "no column 'latency'; the columns are: night, ops, p99")
    if kind == "non-numeric":
        rows = [*ok_rows[:5], "5,fast", *ok_rows[6:]]
        return (write_csv(d / "n.csv", "night,ops", rows), [],
                "row 7: column 'ops': 'fast' is not a number")
    if kind == "nan":
        rows = [*ok_rows[:5], "5,nan", *ok_rows[6:]]
        return write_csv(d / "nan.csv", "night,ops", rows), [], "row 7: column 'ops': 'nan'"
    if kind == "empty-cell":
        rows = [*ok_rows[:5], "5,", *ok_rows[6:]]
        return write_csv(d / "c.csv", "night,ops", rows), [], "row 7: no value in column"
    if kind == "short-row":
        rows = [*ok_rows[:5], "5", *ok_rows[6:]]
        return write_csv(d / "s.csv", "night,ops", rows), [], "row 7: no value in column"
    if kind == "too-few":
        return (write_csv(d / "f.csv", "night,ops", ok_rows[:5]), [],
                "column 'ops': 5 value(s); the detector needs at least")
    if kind == "binary":
        (d / "bin.csv").write_bytes(bytes(range(256)) * 8)
        return d / "bin.csv", [], "not a text file"
    if kind == "nul":
        (d / "nul.csv").write_bytes(b"night,ops\n1,2\x00\n")
        return d / "nul.csv", [], "not a text file"
    if kind == "directory":
        (d / "dir.csv").mkdir()
        return d / "dir.csv", [], "a directory"
    if kind == "missing":
        return d / "absent.csv", [], "cannot read: No such file"
    raise AssertionError(kind)


BAD = ["empty", "blank", "header-only", "one-column", "missing-column", "non-numeric", "nan",
       "empty-cell", "short-row", "too-few", "binary", "nul", "directory", "missing"]


@pytest.mark.parametrize("kind", BAD)
def test_bad_input_exits_2_with_the_reason_and_no_traceback(capsys, tmp_path, kind):
    path, extra, says = _bad(kind, tmp_path)
    for output in ([], ["--json"]):
        code, out, err = run(capsys, str(path), *extra, *output)
        assert code == 2, err
        assert err.startswith(f"{path}: ") and says in err, err
        assert "Traceback" not in err and out == ""


def test_the_installed_command_refuses_bad_input_without_a_traceback(tmp_path):
    path, _, says = _bad("non-numeric", tmp_path)
    env = {**os.environ, "PYTHONPATH": str(PIPELINES)}
    done = subprocess.run([sys.executable, "-m", "lsmbench", "track", "detect", str(path)],
                          capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 2 and says in done.stderr
    assert "Traceback" not in done.stderr
