"""The site in headless Chromium (Debian's /usr/bin/chromium driven by Playwright)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from .conftest import SCREENSHOTS

pytestmark = pytest.mark.browser


def test_language_switcher_lands_on_the_indonesian_twin(page, base_url: str) -> None:
    page.goto(f"{base_url}/ko/measurement/")
    assert page.locator("html").get_attribute("lang") == "ko"
    page.locator(".md-header__option .md-select").hover()
    page.locator('a.md-select__link[hreflang="id"]').click()
    page.wait_for_url(re.compile(r"/id/measurement/$"))
    assert page.locator("html").get_attribute("lang") == "id"
    assert page.locator("#two-peaks").count() == 1


def _search(page, query: str) -> list[str]:  # type: ignore[no-untyped-def]
    search = page.locator("input.md-search__input")
    search.click()
    results = page.locator(".md-search-result__item a")
    # Material queries on keyboard events, and drops a query typed before its search worker has
    # built the index: enter it, press a key as a reader would, and retry if needed.
    for _ in range(5):
        search.press("Control+a")
        search.press("Backspace")
        search.fill(query)
        search.press("End")  # a real keystroke: Material queries on keyboard events
        try:
            results.first.wait_for(timeout=4_000)
            break
        except Exception:
            continue
    return [results.nth(i).get_attribute("href") or "" for i in range(results.count())]


# Each query is a word its expected page uses more than any other page of its language ("할당자",
# allocator, stopped being one when the lab page came to explain the allocator too, and
# "sinkronisasi" when the glossary came to define it).
@pytest.mark.parametrize(
    ("lang", "query", "expected_page"),
    [
        ("ko", "워밍업", "measurement/"),
        ("ko", "선호", "sizing/"),
        ("id", "selisih", "measurement/"),
        ("id", "preferensi", "sizing/"),
    ],
)
def test_search_finds_the_right_page_in_each_language(
    page, base_url: str, lang: str, query: str, expected_page: str
) -> None:
    page.goto(f"{base_url}/{lang}/")
    hrefs = _search(page, query)
    pages = list(dict.fromkeys(href.split("?")[0].split("#")[0] for href in hrefs))
    assert pages and pages[0].endswith(f"/{lang}/{expected_page}"), pages
    assert all(f"/{'id' if lang == 'ko' else 'ko'}/" not in href for href in hrefs)


@pytest.mark.parametrize("lang", ["ko", "id"])
def test_archive_download_matches_the_sha256_on_the_page(page, base_url: str, lang: str) -> None:
    page.goto(f"{base_url}/{lang}/lab/")
    shown = re.search(
        r"\b[0-9a-f]{64}\b", page.locator("#downloads ~ *").all_inner_texts().__str__()
    )
    assert shown, "no SHA-256 shown under the downloads heading"
    with page.expect_download() as download_info:
        page.locator('a[href$="iteragpu-lab-v1.zip"]').first.click()
    path = download_info.value.path()
    assert hashlib.sha256(Path(path).read_bytes()).hexdigest() == shown.group(0)


@pytest.mark.parametrize("lang", ["ko", "id"])
@pytest.mark.parametrize("guide", ["measurement", "sizing"])
def test_screenshots_of_both_guides(page, base_url: str, lang: str, guide: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.goto(f"{base_url}/{lang}/{guide}/")
    page.wait_for_load_state("networkidle")
    target = SCREENSHOTS / f"{lang}-{guide}.png"
    page.screenshot(path=str(target), full_page=False)
    assert target.stat().st_size > 10_000
