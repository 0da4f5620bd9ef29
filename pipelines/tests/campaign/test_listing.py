"""`lsmbench ls CAMPAIGN --repetitions` as people read it, on recorded fixture campaigns: at 60,
80 and 120 columns and piped with no terminal, no word or number is broken across lines (every
token of every cell is whole on one line, and no line holds a fragment), lines keep to the
width, and each repetition shows its own verdict in the JSON's word."""

from __future__ import annotations

import os
from collections.abc import Iterable

import pytest
from lsmbench import listing
from lsmbench.cli import main
from lsmbench.listing import (
    GROUP,
    MAX_SUSTAINABLE,
    P99,
    RUNS,
    RUNS_LABEL,
    VERDICT,
    WHY,
    WRITES,
    Listing,
    campaign_listing,
    footer_lines,
    group_cells,
    reason_line,
    rep_cells,
    rep_label,
)
from lsmbench.store import Store
from repo_paths import TESTS

FIXTURES = TESTS / "fixtures"
# Campaign -> its store: one with three repetitions per group, inconclusive ones among them
# (and criteria not computed), one with a failed point and a long error.
STORES = {
    "repro-lc-schedulers": FIXTURES / "reproduce" / "results" / "reproduce",
    "report-fixture": FIXTURES / "report" / "results",
}
PIPED = None  # no COLUMNS, no terminal on stdin, stdout or stderr


def _no_terminal(fd: int) -> os.terminal_size:
    raise OSError("not a terminal")


def render(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], campaign: str,
           columns: int | None) -> list[str]:
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
        monkeypatch.setattr(os, "get_terminal_size", _no_terminal)
    else:
        monkeypatch.setenv("COLUMNS", str(columns))
    assert main(["ls", campaign, "--results", str(STORES[campaign]), "--repetitions"]) == 0
    return capsys.readouterr().out.splitlines()


def _words(text: str) -> list[str]:
    # The listing joins cells with "; " and a group's reasons after "GROUP: ": separators, not
    # parts of a word.
    return [w.strip(";:,") for w in text.split()]


def cell_texts(campaign: str) -> tuple[Listing, list[str], set[str]]:
    """The listing, every cell's text, and every word the output may hold."""
    store = Store(STORES[campaign])
    data = campaign_listing(store, campaign)
    shown = Listing(data, repetitions=True)
    cells = []
    for g in shown.groups:
        cells += [g.group, *group_cells(g, shown.searched).values(), *g.reasons]
        for pid in g.points:
            r = shown.reps[pid]
            cells += [rep_label(r), *rep_cells(r, shown.searched).values()]
    headings = [GROUP, VERDICT, RUNS, RUNS_LABEL, MAX_SUSTAINABLE, WRITES, P99, WHY]
    footer = footer_lines(data, str(store.campaign_dir(campaign)), repetitions=True)
    known = {w for text in [*cells, *headings, *footer] for w in _words(text)}
    return shown, cells, known


def _fragments(lines: Iterable[str], known: set[str]) -> list[str]:
    return [w for line in lines for w in _words(line) if w and w not in known]


@pytest.mark.parametrize("columns", [60, 80, 120, PIPED])
@pytest.mark.parametrize("campaign", sorted(STORES))
def test_ls_breaks_no_word_at_any_width_nor_piped(monkeypatch, capsys, campaign, columns):
    lines = render(monkeypatch, capsys, campaign, columns)
    _, cells, known = cell_texts(campaign)
    # A word broken across lines leaves fragments ("inconclu", "[1,499-1") that no cell holds.
    assert _fragments(lines, known) == []
    out_words = {w for line in lines for w in _words(line)}
    missing = [w for text in cells for w in _words(text) if w and w not in out_words]
    assert missing == []
    if columns is not None:
        # Within the width, but for a word longer than a line (the store's path).
        too_long = [line for line in lines if len(line.rstrip()) > columns
                    and not any(len(w) > columns - 2 for w in line.split())]
        assert too_long == []
    assert "NO" not in out_words and "yes" not in out_words


def test_ls_piped_is_one_line_per_group_and_repetition_with_its_own_verdict(monkeypatch,
                                                                            capsys):
    lines = render(monkeypatch, capsys, "repro-lc-schedulers", PIPED)
    shown, _, _ = cell_texts("repro-lc-schedulers")
    assert lines[0].split() == [*GROUP.split(), *VERDICT.split(), *RUNS.split(),
                                *WRITES.split(), *P99.split()]
    for g in shown.groups:
        at = next(i for i, line in enumerate(lines) if line.startswith(g.group + " "))
        row = lines[at]
        # Every cell of the group on its line, in order.
        cells = list(group_cells(g, shown.searched).values())
        positions = [row.index(c) for c in cells]
        assert positions == sorted(positions), row
        for offset, pid in enumerate(g.points, 1):
            r = shown.reps[pid]
            # The JSON's own word for the repetition: never "NO" for an inconclusive one.
            assert _words(lines[at + offset])[:3] == ["rep", str(r.rep), r.verdict]
        assert reason_line(g) in lines
    verdicts = [shown.reps[p].verdict for g in shown.groups for p in g.points]
    assert verdicts.count("inconclusive") == 5  # the fixture's inconclusive runs, as such
    greedy = next(g for g in shown.groups if g.group == "policy=leveling,scheduler=greedy")
    assert group_cells(greedy, False)[RUNS] == "3 inconclusive of 3"  # not "-" nor "0/0"


def test_ls_narrow_stacks_each_group_with_its_label_never_wrapped(monkeypatch, capsys):
    lines = render(monkeypatch, capsys, "repro-lc-schedulers", 60)
    shown, _, _ = cell_texts("repro-lc-schedulers")
    for g in shown.groups:
        at = lines.index(g.group)  # the group's id alone on its line
        block = lines[at + 1:at + 4]
        assert _words(block[0]) == [VERDICT, g.verdict]
        assert block[1].split()[0] == RUNS_LABEL
        assert block[2].startswith(f"  {WRITES}  ")


def test_the_width_comes_from_columns_else_any_terminal_else_none(monkeypatch):
    monkeypatch.setenv("COLUMNS", "97")
    assert listing.terminal_width() == 97
    monkeypatch.delenv("COLUMNS")

    def stdin_only(fd: int) -> os.terminal_size:
        if fd != 0:
            raise OSError("not a terminal")
        return os.terminal_size((133, 40))

    monkeypatch.setattr(os, "get_terminal_size", stdin_only)
    assert listing.terminal_width() == 133  # `ls | cat` in a terminal: the terminal's width
    monkeypatch.setattr(os, "get_terminal_size", _no_terminal)
    assert listing.terminal_width() is None


# ---------------------------------------------------------------- planned, run, interrupted


def test_a_finished_adaptive_campaign_lists_its_unneeded_repetitions_as_not_needed(
        tmp_path, monkeypatch, capsys):
    """repetitions {min: 2, max: 3}, every group decided by its first two (the failed group at
    its max): 7 of 9 planned points ran and 2 were not needed, not missing (ls said 'points 9,
    complete ...' as if they were)."""
    from track_nights import adaptive_night

    camp = adaptive_night(tmp_path, {"policy=leveling,memtable_bytes=1M": 2,
                                     "policy=tiering,memtable_bytes=1M": 2,
                                     "policy=tiering,memtable_bytes=1K": 3})
    monkeypatch.setenv("COLUMNS", "1000")
    assert main(["ls", "--results", str(camp.parent)]) == 0
    out = capsys.readouterr().out
    assert "9 planned, 7 run (2 not needed: groups decided)" in out
    assert "interrupted" not in out
    assert main(["ls", "--results", str(camp.parent), "--json"]) == 0
    import json

    [row] = json.loads(capsys.readouterr().out)["campaigns"]
    assert (row["planned"], row["run"], row["not_needed"], row["not_run"]) == (9, 7, 2, 0)
    assert row["last_run_state"] == "finished"
    assert main(["ls", camp.name, "--results", str(camp.parent)]) == 0
    out = capsys.readouterr().out
    assert "3 groups, points 9 planned, 7 run (2 not needed: groups decided)" in out


def test_an_interrupted_campaign_says_so_and_a_running_one_is_not_called_interrupted(
        tmp_path, monkeypatch, capsys):
    """The last run never finished (killed, or ^C): both forms of ls say it was interrupted,
    and what finishes it; while a live process holds the store's lock it is running."""
    import json

    from lsmbench.util.filelock import exclusive
    from track_nights import make_night

    camp = make_night(tmp_path, 1)
    doc = json.loads((camp / "campaign.json").read_text())
    doc["runs"][-1]["finished"] = None
    (camp / "campaign.json").write_text(json.dumps(doc))
    monkeypatch.setenv("COLUMNS", "1000")
    assert main(["ls", "--results", str(tmp_path)]) == 0
    assert "(interrupted)" in capsys.readouterr().out
    assert main(["ls", camp.name, "--results", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "was interrupted: it never finished; `lsmbench run --resume` finishes it" in out
    # A killed run leaves its pid in the lock file: a process that no longer exists.
    (camp / ".lock").write_text(f"pid {2 ** 22 + 1} on {__import__('socket').gethostname()} "
                                "since 2026-01-01T00:00:00Z\n")
    assert main(["ls", camp.name, "--results", str(tmp_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["last_run_state"] == "interrupted"
    with exclusive(camp / ".lock"):
        assert main(["ls", "--results", str(tmp_path)]) == 0
        out = capsys.readouterr().out
        # (the store's path, in the last line, is named after this test: "interrupted")
        table = out.replace(str(tmp_path), "STORE")
        assert "(running)" in table and "interrupted" not in table


def test_groups_are_listed_by_their_matrix_values_numerically():
    """size_ratio=4 before size_ratio=10 (text put 10 first), sizes by their bytes, other
    values in the matrix's order, the first dimension first; in ls, the report's tables and
    track record alike (they all take groups.group_repetitions' order)."""
    from lsmbench.method.groups import Repetition, group_repetitions
    from lsmbench.points import group_id

    combos = [{"policy": p, "size_ratio": t, "memtable_bytes": m}
              for p in ("tiering", "leveling") for t in (10, 4, "2") for m in ("1M", "512K")]
    reps = [Repetition(point=group_id(c) + ",rep=0", group=group_id(c), rep=0, params=c,
                       state="complete") for c in combos]
    got = [(g.params["policy"], g.params["size_ratio"], g.params["memtable_bytes"])
           for g in group_repetitions(reps)]
    assert got == [(p, t, m) for p in ("tiering", "leveling") for t in ("2", 4, 10)
                   for m in ("512K", "1M")]


def test_ls_lists_groups_in_numeric_order_whatever_the_directory_names(tmp_path, monkeypatch,
                                                                        capsys):
    store = Store(tmp_path)
    for i, t in enumerate((4, 10, 2)):
        pid = f"size_ratio={t},rep=0"
        w = store.begin_point("c", pid)
        w.commit({"campaign": "c", "point": pid, "index": i, "state": "complete",
                  "params": {"size_ratio": t}, "rep": 0,
                  "verdict": {"sustainable": True, "p99_write_latency_s": 0.01}})
    monkeypatch.setenv("COLUMNS", "1000")
    assert main(["ls", "c", "--results", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    rows = [line.split()[0] for line in out.splitlines() if line.startswith("size_ratio=")]
    assert rows[:3] == ["size_ratio=2", "size_ratio=4", "size_ratio=10"]
