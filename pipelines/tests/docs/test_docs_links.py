"""Every relative link in the project's Markdown resolves: the file exists, and a `#anchor`
names a heading of the page it points to (GitHub's slugs)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from repo_paths import REPO

SKIP_DIRS = {".git", ".venv", "build", "build-asan", "results", "node_modules"}
LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)|!\[[^\]\n]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~)")


def markdown_files() -> list[Path]:
    return sorted(p for p in REPO.rglob("*.md")
                  if not SKIP_DIRS & set(p.relative_to(REPO).parts))


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, markup and punctuation dropped (hyphens and
    underscores kept), spaces to hyphens."""
    text = re.sub(r"`|\*|\[|\]\([^)]*\)", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    fenced = False
    for line in page.read_text(errors="replace").splitlines():
        if FENCE.match(line):
            fenced = not fenced
        if fenced or not line.startswith("#"):
            continue
        base = slug(line.lstrip("#"))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def links(page: Path) -> list[tuple[int, str]]:
    out = []
    fenced = False
    for number, line in enumerate(page.read_text(errors="replace").splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        line = re.sub(r"`[^`]*`", "", line)  # a link inside code is an example, not a link
        for m in LINK.finditer(line):
            target = m.group(1) or m.group(2)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, mailto:, ...
                continue
            out.append((number, target))
    return out


def broken(page: Path) -> list[str]:
    out = []
    for number, target in links(page):
        path_part, _, anchor = target.partition("#")
        dest = (page.parent / path_part).resolve() if path_part else page
        where = f"{page.relative_to(REPO)}:{number}: {target}"
        if not dest.exists():
            out.append(f"{where}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            out.append(f"{where}: no heading #{anchor} in {dest.relative_to(REPO)}")
    return out


def test_every_relative_link_resolves() -> None:
    problems = [p for page in markdown_files() for p in broken(page)]
    assert not problems, "\n".join(problems)


def test_the_checker_finds_a_broken_link_and_a_missing_anchor(tmp_path: Path) -> None:
    global REPO
    (tmp_path / "a.md").write_text("# Title\n\n## The `x` part\n\n[ok](b.md#sub-part) "
                                   "[self](#the-x-part) [gone](nope.md) [bad](b.md#nope)\n"
                                   "```\n[in code](nope.md)\n```\n")
    (tmp_path / "b.md").write_text("# B\n\n## Sub part\n")
    old, REPO = REPO, tmp_path
    try:
        found = broken(tmp_path / "a.md")
    finally:
        REPO = old
    assert found == ["a.md:5: nope.md: no such file",
                     "a.md:5: b.md#nope: no heading #nope in b.md"], found


@pytest.mark.parametrize("heading, anchor", [
    ("Predicting a campaign (`lsmbench plan --predict`)",
     "predicting-a-campaign-lsmbench-plan---predict"),
    ("Repetitions: one result per group", "repetitions-one-result-per-group"),
    ("The stall criterion judges the engine's stall time (2026-12-02, issue 55)",
     "the-stall-criterion-judges-the-engines-stall-time-2026-12-02-issue-55"),
])
def test_slugs_are_githubs(heading: str, anchor: str) -> None:
    assert slug(heading) == anchor
