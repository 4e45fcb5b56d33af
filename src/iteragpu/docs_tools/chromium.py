"""How the project launches Debian's Chromium headless: the browser tests (tests/website) and
the sizer's benchmark (benchmarks/sizer_bench.py) import these settings from here."""

from __future__ import annotations

import os

CHROMIUM = os.environ.get("ITERAGPU_CHROMIUM", "/usr/bin/chromium")
# Without the background-networking flags Chromium tries to reach Google's hosts at every start,
# which this project's machines cannot (and should not) do.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
