"""The browser sizer: recompute and chart redraw time in Chromium (goal: under one frame, 16 ms)
and the page's script size.

Serves the built site, opens the sizer page in headless Chromium and, inside the page, edits an
input many times: each edit runs the whole recompute (parse, exact arithmetic, short list, DOM
update, memory chart redraw, URL update) synchronously in the input handler, timed with
performance.now(). Prints medians and their ratio to 16 ms, then the size of the script the page
loads (raw and gzip).

The chart is plain SVG drawn by sizer/chart.js (about 9 KB raw, 3 KB gzip of it), measured against
the charting libraries it would otherwise vendor (npm pack, 2025): Chart.js 4.6.1's
dist/chart.umd.min.js is 210,082 B (70,902 B gzip -9), uPlot 1.6.32's dist/uPlot.iife.min.js
51,081 B (22,009 B gzip -9, and it draws no stacked bar without a plugin). In the same headless
Chromium, Chart.js took 721 ms to create a horizontal stacked bar with 13 card marks and
3.4 ms (median; p95 11.2 ms) per update('none') with layout, against the SVG redraw timed below.
A benchmark, not a test: machines differ, so it reports and never fails on time.

    python benchmarks/sizer_bench.py [--site-dir site] [--lang CODE ...] [--runs 500]

By default it measures every language of the list in the built site/ (`nox -s bench` builds it).
"""

from __future__ import annotations

import argparse
import functools
import gzip
import http.server
import shutil
import statistics
import sys
import threading
from pathlib import Path
from typing import Any

from goals import check, exit_status

from iteragpu.docs_tools.chromium import CHROMIUM
from iteragpu.docs_tools.chromium import CHROMIUM_ARGS as TEST_CHROMIUM_ARGS
from iteragpu.i18n.languages import CODES

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "site"

# Chromium throttles history.replaceState after a few hundred calls in a row.
CHROMIUM_ARGS = [*TEST_CHROMIUM_ARGS, "--disable-ipc-flooding-protection"]
FRAME_MS = 16.0
# Inputs the benchmark alternates between, so every edit changes the figures and the URL.
EDITS = ("#sizer-params", ("7e9", "70e9", "1.5B", "13000000001", "40e9"))

_MEASURE = """
([selector, values, runs]) => {
  const PURE_BATCH = 20;
  const input = document.querySelector(selector);
  const data = JSON.parse(document.getElementById('sizer-data').textContent);
  const api = window.IteraGPUSizer;
  const handler = [], layout = [], pure = [], redraw = [];
  // Each timed edit sets a value other than the one before it (the page keeps the nodes of
  // figures that did not change, so an edit to the same value would time next to nothing).
  const at = (k) => values[k % values.length];
  for (let i = 0; i < runs; i += 1) {
    input.value = at(2 * i);
    let start = performance.now();
    input.dispatchEvent(new Event('input', {bubbles: true}));
    handler.push(performance.now() - start);
    input.value = at(2 * i + 1);
    start = performance.now();
    input.dispatchEvent(new Event('input', {bubbles: true}));
    void document.body.offsetHeight;  // force style and layout of the updated page
    layout.push(performance.now() - start);
    // performance.now() is coarse (0.1 ms): time the pure compute in batches.
    start = performance.now();
    for (let j = 0; j < PURE_BATCH; j += 1) api.compute({params: values[j % values.length]}, data);
    pure.push((performance.now() - start) / PURE_BATCH);
    // A chart of another input than the one drawn and the next edit's.
    const result = api.compute({...api.page.read(), params: at(2 * i + 3)}, data);
    start = performance.now();
    api.page.drawChart(result);
    void document.body.offsetHeight;
    redraw.push(performance.now() - start);
  }
  api.page.drawChart(api.compute(api.page.read(), data));
  const marks = document.querySelectorAll('#memory-chart svg [data-mark]').length;
  return {handler, layout, pure, redraw, marks,
          shown: document.getElementById('range-gib').textContent};
}
"""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def _serve(directory: Path) -> http.server.ThreadingHTTPServer:
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _script_sizes(site: Path, lang: str) -> tuple[int, int, int]:
    """The sizer's ES modules (assets/sizer/*.js), summed: bytes raw and gzipped file by file
    (the browser fetches each apart), and how many modules."""
    modules = [
        path.read_bytes() for path in sorted((site / lang / "assets" / "sizer").glob("*.js"))
    ]
    raw = sum(len(module) for module in modules)
    gzipped = sum(len(gzip.compress(module, compresslevel=9, mtime=0)) for module in modules)
    return raw, gzipped, len(modules)


def _data_size(site: Path, lang: str) -> int:
    html = (site / lang / "sizer" / "index.html").read_text("utf-8")
    start = html.index('id="sizer-data">') + len('id="sizer-data">')
    return len(html[start : html.index("</script>", start)].encode("utf-8"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site-dir", type=Path, default=SITE, help="a built site (default: site)")
    parser.add_argument("--lang", choices=CODES, action="append", help="default: every language")
    parser.add_argument("--runs", type=int, default=500)
    args = parser.parse_args(argv)
    site: Path = args.site_dir
    langs = args.lang or list(CODES)
    if not all((site / lang / "sizer" / "index.html").exists() for lang in langs):
        sys.exit(
            f"{site} is not a built site: run `nox -s docs` (or `nox -s bench`, which builds it)"
        )
    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        sys.exit(f"Chromium not found at {CHROMIUM}: apt-get install chromium")
    held: list[bool] = []
    for lang in langs:
        held += _report(site, lang, args.runs, _measure(site, lang, args.runs))
    return exit_status(held)


def _measure(site: Path, lang: str, runs: int) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    server = _serve(site)
    url = f"http://127.0.0.1:{server.server_address[1]}/{lang}/sizer/"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(url)
            page.wait_for_selector("#sizer-results[data-state=ok]", state="attached")
            selector, values = EDITS
            page.evaluate(_MEASURE, [selector, list(values), 50])  # warm the JIT
            result: dict[str, Any] = page.evaluate(_MEASURE, [selector, list(values), runs])
            browser.close()
    finally:
        server.shutdown()
    if not result["marks"]:
        sys.exit("the page draws no memory chart")
    if not result["shown"] or result["shown"] == "—":
        sys.exit(f"the page shows no figure after the edits: {result['shown']!r}")
    return result


def _report(site: Path, lang: str, runs: int, result: dict[str, Any]) -> list[bool]:
    print(f"sizer recompute in Chromium ({lang}, {runs} edits, medians)")
    rows = (
        ("pure compute (parse, exact arithmetic, short list)*", result["pure"]),
        ("input handler (compute, DOM, chart, URL update)", result["handler"]),
        ("input handler + style and layout", result["layout"]),
        (f"memory chart redraw alone + layout ({result['marks']} marks)", result["redraw"]),
    )
    held = []
    for name, times in rows:
        median = statistics.median(times)
        print(f"  {name:<52} median {median:7.3f} ms  p95 {_p95(times):7.3f} ms")
        what = f"ratio to {FRAME_MS:.0f} ms"
        held.append(check(f"sizer {lang}: {name}", median / FRAME_MS, 1, what, "<"))
    print("  * mean of a batch of 20 calls (the timer's resolution is 0.1 ms), median over edits")
    raw, gzipped, count = _script_sizes(site, lang)
    print(
        f"page scripts (the sizer's {count} modules summed, chart included): {raw} bytes raw, "
        f"{gzipped} bytes gzip -9 (file by file)"
    )
    print(f"embedded sizer data (catalog, defaults, symbols): {_data_size(site, lang)} bytes")
    return held


def _p95(times: list[float]) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


if __name__ == "__main__":
    sys.exit(main())
