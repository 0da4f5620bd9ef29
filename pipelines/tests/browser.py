"""Headless Chromium for the tests of rendered pages: run it, read the DOM after load and
the console, and parse the tables and images of a page."""

from __future__ import annotations

import struct
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"


class Tables(HTMLParser):
    """Rows of every table by id: a list of {"attrs": tr attributes, "cells": [(attrs, text)]}."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: dict[str, list[dict[str, Any]]] = {}
        self.images: list[dict[str, str | None]] = []
        self.body_attrs: dict[str, str | None] = {}
        self._table: str | None = None
        self._row: dict[str, Any] | None = None
        self._cell: list[Any] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "table":
            self._table = a.get("id") or f"table{len(self.tables)}"
            self.tables[self._table] = []
        elif tag == "tr" and self._table is not None:
            self._row = {"attrs": a, "cells": []}
        elif tag in ("td", "th") and self._row is not None:
            self._cell = [a, ""]
        elif tag == "img":
            self.images.append(a)
        elif tag == "body":
            self.body_attrs = a

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell[1] += data

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row["cells"].append((self._cell[0], self._cell[1].strip()))
            self._cell = None
        elif tag == "tr" and self._row is not None and self._table is not None:
            self.tables[self._table].append(self._row)
            self._row = None
        elif tag == "table":
            self._table = None


def parse(html: str) -> Tables:
    p = Tables()
    p.feed(html)
    return p


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


_PROBE = """<script>
window.addEventListener("load", function () {
  document.querySelectorAll("figure img").forEach(function (img) {
    var r = img.getBoundingClientRect();
    img.setAttribute("data-probe-size", [img.naturalWidth, img.naturalHeight,
      Math.round(r.width), Math.round(r.height)].join("x"));
  });
  document.querySelector("#summary-table th:nth-child(3)").click();
  document.body.setAttribute("data-probe-sorted",
    document.querySelector("#summary-table th:nth-child(3)").getAttribute("aria-sort"));
  document.body.setAttribute("data-probe-name",
    document.getElementById("campaign-name").textContent);
  document.body.setAttribute("data-probe-counts", document.scripts.length + " scripts, " +
    document.images.length + " images");
  console.log("lsmbench-probe-marker");
});
</script>"""

_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
          "--disable-background-networking", "--disable-component-update", "--disable-sync",
          "--hide-scrollbars"]


def run_chromium(args: list[str], profile: Path) -> subprocess.CompletedProcess[str]:
    profile.mkdir(parents=True, exist_ok=True)
    return subprocess.run([CHROMIUM, *_FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=120, check=False)


def chromium_dom(html_path: Path, workdir: Path, probe: str = _PROBE) -> tuple[str, list[str]]:
    """The DOM after load (with a probe script added to a copy of the page) and every console
    message except the probe's own marker, which proves the console is being read at all (a
    probe logs "lsmbench-probe-marker" when it has run)."""
    workdir.mkdir(parents=True, exist_ok=True)
    probed = workdir / "probed.html"
    probed.write_text(html_path.read_text().replace("</body>", probe + "</body>"))
    r = run_chromium(["--enable-logging=stderr", "--v=0", "--dump-dom", probed.as_uri()],
                  workdir / "profile")
    assert r.returncode == 0, r.stderr[-2000:]
    console = [ln for ln in r.stderr.splitlines() if ":CONSOLE" in ln]
    assert any("lsmbench-probe-marker" in ln for ln in console), (
        "the console was not captured: " + r.stderr[-2000:])
    return r.stdout, [ln for ln in console if "lsmbench-probe-marker" not in ln]
