"""Where the tests find the repository's files, wherever in pipelines/tests they live."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent
PIPELINES = TESTS.parent
REPO = PIPELINES.parent
