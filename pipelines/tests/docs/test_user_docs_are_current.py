"""The user pages describe what the product does now: no dates, no diary. A user page is the
README and every page under docs/ but docs/results/ (the reproduced pages and their results
carry the runs' dates); research/ holds the investigations and CHANGELOG.md what changed when.

Code is not prose: fenced blocks, inline code, link targets and paths into research/ (whose
file names are dated) are left out before the page is read, so an example's timestamp, a cron
line or a link to a dated research page is fine."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from repo_paths import REPO
from test_docs_links import markdown_files

MONTH = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
         r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?")
YEAR = r"(?:19|20)\d{2}"
DATE = (rf"(?:\b{YEAR}-\d{{2}}-\d{{2}}\b|\b{YEAR}/\d{{1,2}}/\d{{1,2}}\b"
        rf"|\b(?:\d{{1,2}} )?{MONTH} (?:\d{{1,2}}, )?{YEAR}\b)")
COMMIT = r"(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b"
# What a lab notebook says and a manual does not. Each is a whole phrase, so "since the last
# sealing", "the issue's targets" or "until decided" in a sentence about the product pass.
DIARY = [
    ("a date", DATE),
    ("a sitting", r"\bsittings?\b"),
    ("an issue number", r"\bissues? #?\d+\b"),
    ("since <when>", rf"\b(?:since|until|before|after) (?:{YEAR}\b|{MONTH} |commit \b|{COMMIT})"),
    ("today / yesterday", r"\b(?:today|yesterday|tonight)\b"),
    ("this session", r"\bthis (?:session|sitting|morning|afternoon|evening|week)\b"),
    ("we did", r"\bwe (?:tried|measured|found|ran|saw|decided|changed|fixed)\b"),
]
PATTERNS = [(what, re.compile(rx, re.I)) for what, rx in DIARY]

FENCE = re.compile(r"^\s*(```|~~~)")
CODE = re.compile(r"(`+)(?:(?!\n\s*\n).)+?\1", re.S)
TARGET = re.compile(r"\]\([^)]*\)")
RESEARCH_PATH = re.compile(r"(?:\.\./)*research/[\w./#-]*")


def user_pages() -> list[Path]:
    """README.md and docs/**/*.md, but docs/results/ (and nothing else: research/,
    CHANGELOG.md and the package's READMEs are not user pages)."""
    return [p for p in markdown_files()
            if (p == REPO / "README.md" or p.relative_to(REPO).parts[0] == "docs")
            and p.relative_to(REPO).parts[:2] != ("docs", "results")]


def indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def code_blocks_blanked(text: str) -> str:
    """Fenced blocks, and indented ones: after a blank line, 4 columns deeper than the text
    before it (a list item's own paragraphs are indented too, and are prose)."""
    out: list[str] = []
    fenced = False
    code_at = None  # the indent of the indented block we are in
    context = 0  # the indent of the last prose line
    for line in text.split("\n"):
        if FENCE.match(line):
            fenced = not fenced
            out.append("")
            continue
        if fenced:
            out.append("")
            continue
        if not line.strip():
            out.append(line)
            continue
        if code_at is not None and indent(line) >= code_at:
            out.append("")
            continue
        code_at = None
        if out and not out[-1].strip() and indent(line) >= context + 4:
            code_at = indent(line)
            out.append("")
            continue
        context = indent(line)
        out.append(line)
    return "\n".join(out)


def prose(text: str) -> str:
    """The page with its code, link targets and research paths blanked, line for line."""
    text = code_blocks_blanked(text)
    blank = lambda m: re.sub(r"[^\n]", " ", m.group(0))  # noqa: E731
    for rx in (CODE, TARGET, RESEARCH_PATH):
        text = rx.sub(blank, text)
    return text


def dated(page: Path, root: Path = REPO) -> list[str]:
    out = []
    for number, line in enumerate(prose(page.read_text()).splitlines(), 1):
        for what, rx in PATTERNS:
            for m in rx.finditer(line):
                out.append(f"{page.relative_to(root)}:{number}: {what}: {m.group(0).strip()!r}")
    return out


def test_there_are_user_pages() -> None:
    names = {p.relative_to(REPO).as_posix() for p in user_pages()}
    assert {"README.md", "docs/campaign-specs.md", "docs/tracking.md"} <= names, names
    assert not any(n.startswith(("docs/results/", "research/")) for n in names), names


def test_no_user_page_has_a_date_or_a_diary() -> None:
    hits = [h for page in user_pages() for h in dated(page)]
    assert not hits, ("user pages say what the product does now; move the history to "
                      "CHANGELOG.md and the measurements to research/ or docs/results/:\n"
                      + "\n".join(hits))


@pytest.mark.parametrize("line", [
    "`cycles` is the default since 2026-11-24, `intervals` before.",
    "Measured on 2026-11-26 (commit ea17c5b).",
    "The quickstart of Nov 2026 ran once per point.",
    "Issue 33's acceptance, one sitting at a time.",
    "It took 3 minutes today.",
    "What we tried in this session did not help.",
    "The rule changed since ea17c5b.",
    "Run on 26 November 2026.",
    "1. **step**: a list item\n   that goes on.\n\n     Its second paragraph, measured 2026-11-29.",
])
def test_the_checker_finds_dates_and_diary_words(tmp_path: Path, line: str) -> None:
    (tmp_path / "a.md").write_text(f"# A\n\n{line}\n")
    assert dated(tmp_path / "a.md", tmp_path), line


@pytest.mark.parametrize("text", [
    "Luo & Carey (PVLDB 2019) and Fleming et al., ICPE 2023.",
    "A cut since the last sealing; the issue's targets; until decided, before the load.",
    "```yaml\nschedule:\n  - cron: '30 2 * * *'   # 2026-11-24 is fine in code\n```",
    "    {\"time\": \"2026-09-30\"}",
    "The lock names its holder (`pid 4711 on ctl1 since\n2026-11-24T02:00:03Z`).",
    "Why: [research/change-detectors.md](../research/change-detectors.md).",
    "[measured](../research/x.md#paired-nights-2026-11-28), on 8 of 12 nights, 3 since the last.",
])
def test_the_checker_passes_code_links_and_citations(tmp_path: Path, text: str) -> None:
    (tmp_path / "a.md").write_text(f"# A\n\n{text}\n")
    assert dated(tmp_path / "a.md", tmp_path) == []
