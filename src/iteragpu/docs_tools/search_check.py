"""Typing the query sets into the built site's real search box, in a browser page.

The query sets (`tests/website/search_queries/<code>.yml`) list, for each query a reader of the
language would type, the pages that answer it. tests/website/test_search.py requires a right
page among the first three results for at least `REQUIRED_SHARE` of each set;
benchmarks/search_bench.py reports the time from the last keystroke to the results.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

from iteragpu.docs_tools import require_extra

require_extra("yaml")

QUERIES: Final = Path(__file__).resolve().parents[3] / "tests" / "website" / "search_queries"
REQUIRED_SHARE: Final = Fraction(9, 10)
TOP: Final = 3
# After the last mutation of the results, how long they must stay unchanged to count as final.
_SETTLE_MS: Final = 300
_WATCH = """() => {
  const results = document.querySelector(".md-search-result")
  const box = document.querySelector("input.md-search__input")
  window.__searchMutated = window.__searchInput = window.__searchKeyUp = performance.now()
  new MutationObserver(() => { window.__searchMutated = performance.now() })
    .observe(results, { childList: true, subtree: true, characterData: true })
  box.addEventListener("input", () => { window.__searchInput = performance.now() })
  box.addEventListener("keyup", () => { window.__searchKeyUp = performance.now() })
}"""
# Results are final when they changed after the query's last character and nothing happened
# since for a while. (Material searches on key events; the last one may come after the results
# when the last character's own key event already searched.)
_SETTLED = f"""() => window.__searchMutated > window.__searchInput &&
  performance.now() - Math.max(window.__searchMutated, window.__searchKeyUp) > {_SETTLE_MS}"""
_QUIET = f"""() => performance.now() -
  Math.max(window.__searchMutated, window.__searchKeyUp) > {_SETTLE_MS}"""


@dataclass(frozen=True)
class Query:
    query: str
    kind: str
    pages: tuple[str, ...]


@dataclass(frozen=True)
class Outcome:
    query: Query
    found: tuple[str, ...]
    """The distinct pages of the results, in order, as paths under the language's root."""
    latency_ms: float
    """From the query's last character to the last change of the results."""

    @property
    def hit(self) -> bool:
        return any(page in self.query.pages for page in self.found[:TOP])


def query_set(code: str) -> list[Query]:
    """A language's query set."""
    import yaml

    entries = yaml.safe_load((QUERIES / f"{code}.yml").read_text("utf-8"))["queries"]
    return [Query(entry["query"], entry["kind"], tuple(entry["pages"])) for entry in entries]


def open_search(page: Any, base_url: str, code: str) -> float:
    """Open the language's home page and its search box, and wait until the search worker has
    built its index; the milliseconds from navigation to that point."""
    page.goto(f"{base_url}/{code}/")
    meta = page.locator(".md-search-result__meta")
    initial = meta.inner_text()
    page.locator("input.md-search__input").click()
    page.wait_for_function(
        "text => document.querySelector('.md-search-result__meta').innerText !== text", arg=initial
    )
    ready_ms: float = page.evaluate("performance.now()")
    page.evaluate(_WATCH)
    return ready_ms


def run_query(page: Any, code: str, query: Query) -> Outcome:
    """Type one query as a reader does, key by key, into an open search box."""
    box = page.locator("input.md-search__input")
    box.fill("")
    box.press("Backspace")  # a keystroke: Material searches on keyboard events
    page.wait_for_function(_QUIET)
    # Characters beyond a US keyboard (Hangul) arrive as text input without key events, as from
    # an input method; Material searches on key events, so the query ends with one, as a reader's
    # input method's last key does.
    page.keyboard.type(query.query)
    box.press("End")
    page.wait_for_function(_SETTLED)
    latency_ms: float = page.evaluate("window.__searchMutated - window.__searchInput")
    hrefs = page.eval_on_selector_all(
        ".md-search-result__item > a", "links => links.map(link => link.href)"
    )
    root = f"/{code}/"
    found = []
    for href in hrefs:
        path = urlsplit(href).path
        found.append(path[path.index(root) + len(root) :] if root in path else path)
    return Outcome(query, tuple(dict.fromkeys(found)), latency_ms)


def share(outcomes: list[Outcome]) -> Fraction:
    return Fraction(sum(outcome.hit for outcome in outcomes), len(outcomes))


def median_latency_ms(outcomes: list[Outcome]) -> float:
    return statistics.median(outcome.latency_ms for outcome in outcomes)
