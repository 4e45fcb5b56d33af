"""The site search: what a reader downloads for it, and how fast results follow a keystroke.

For each language of the built site: the bytes of the search index Material writes and of the
language file the project adds (iteragpu.docs_tools.site_search: Korean morphemes; Indonesian
stems and Sastrawi's stemmer), raw and gzip; then, in headless Chromium, the time from opening
the home page to a ready search, and the median time from the last character of each query of
the language's query set (tests/website/search_queries/) to its results, with its ratio to
100 ms (the delay under which a response feels instant: a reference, not a goal; the search's
goals are the query sets' hit rates, which tests/website/test_search.py holds). A benchmark: it
reports, never fails on time.

    python benchmarks/search_bench.py [--site-dir site] [--lang CODE ...]
"""

from __future__ import annotations

import argparse
import functools
import gzip
import http.server
import threading
from pathlib import Path

from iteragpu.docs_tools import search_check
from iteragpu.docs_tools.chromium import CHROMIUM, CHROMIUM_ARGS
from iteragpu.docs_tools.site_search import LANGUAGE_FILE
from iteragpu.i18n.languages import CODES, language

ROOT = Path(__file__).resolve().parents[1]
INSTANT_MS = 100.0


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def _sizes(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    return len(data), len(gzip.compress(data, 9))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site-dir", type=Path, default=ROOT / "site")
    parser.add_argument("--lang", action="append", choices=CODES)
    args = parser.parse_args()
    codes = args.lang or list(CODES)

    for code in codes:
        index = _sizes(args.site_dir / code / "search" / "search_index.json")
        lang_file = (
            args.site_dir / code / LANGUAGE_FILE.format(search_lang=language(code).search_lang)
        )
        added = _sizes(lang_file) if lang_file.exists() else (0, 0)
        ratio = (index[1] + added[1]) / index[1]
        print(
            f"search {code}: index {index[0]:,} B ({index[1]:,} B gzip), language file "
            f"{added[0]:,} B ({added[1]:,} B gzip); together {ratio:.2f}x the index alone (gzip)"
        )

    from playwright.sync_api import sync_playwright

    handler = functools.partial(_QuietHandler, directory=str(args.site_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base_url = f"http://127.0.0.1:{server.server_address[1]}"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for code in codes:
            page = browser.new_page()
            ready_ms = search_check.open_search(page, base_url, code)
            outcomes = [search_check.run_query(page, code, q) for q in search_check.query_set(code)]
            median = search_check.median_latency_ms(outcomes)
            print(
                f"search {code}: ready {ready_ms:.0f} ms after opening the page; keystroke to "
                f"results median {median:.1f} ms = {median / INSTANT_MS:.2f}x {INSTANT_MS:.0f} ms "
                f"over {len(outcomes)} queries; right page in the top {search_check.TOP} for "
                f"{float(search_check.share(outcomes)):.1%}"
            )
            page.close()
        browser.close()
    server.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
