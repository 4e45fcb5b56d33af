"""The built site's fixtures: the site folder, a local http server on it (the one `nox -s serve`
runs, `iteragpu.docs_tools.serve`), Debian's Chromium (launched as `iteragpu.docs_tools.chromium`
says, like the benchmarks) and a fresh page."""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from iteragpu.docs_tools.chromium import CHROMIUM, CHROMIUM_ARGS
from iteragpu.docs_tools.serve import SiteHandler
from iteragpu.i18n.languages import CODES

ROOT = Path(__file__).resolve().parents[2]
# The site under test: a built site named by ITERAGPU_SITE_DIR, else this tree's site/ (which
# `nox -s site` builds before running these tests).
SITE = Path(os.environ.get("ITERAGPU_SITE_DIR") or ROOT / "site")
LANGS = CODES
SCREENSHOTS = ROOT / "test-output" / "screenshots"


@pytest.fixture(scope="session")
def site() -> Path:
    """The built site: every language and the root page."""
    missing = [lang for lang in LANGS if not (SITE / lang / "index.html").exists()]
    if missing or not (SITE / "index.html").exists():
        pytest.fail(
            f"{SITE} is not a built site (missing: {', '.join(missing) or 'index.html'}): run "
            "`nox -s site`, or build one with `python -m iteragpu.docs_tools.build_site "
            "--site-dir DIR` and set ITERAGPU_SITE_DIR=DIR"
        )
    return SITE


def site_pages(site: Path, lang: str) -> list[str]:
    """Every page of a language's built site, as paths under site/<lang>/ ("" is the home
    page, "404.html" the not-found page)."""
    pages = []
    for path in sorted((site / lang).rglob("*.html")):
        relative = path.relative_to(site / lang).as_posix()
        pages.append(relative.removesuffix("index.html"))
    return pages


@pytest.fixture(scope="module")
def base_url(site: Path) -> Iterator[str]:
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


class _QuietHandler(SiteHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def browser():  # type: ignore[no-untyped-def]
    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        if os.environ.get("CI"):
            pytest.fail(f"Chromium not found at {CHROMIUM}: .ci/run installs Debian's chromium")
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):  # type: ignore[no-untyped-def]
    context = browser.new_context(accept_downloads=True, viewport={"width": 1280, "height": 900})
    yield context.new_page()
    context.close()


def loaded(page: Any, url: str) -> None:
    """Open `url` and wait until what a reader sees is laid out: the document and its
    resources loaded, and its fonts (the code font changes line widths). Not `networkidle`,
    which waits half a second after the last request on every page; the test that checks a
    page's requests (tests/website/test_layout.py) waits for those."""
    page.goto(url, wait_until="load")
    page.evaluate("document.fonts.ready.then(() => true)")
