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
# Material's search (mkdocs-material 9.x, integrations/search/worker and components/search/
# {query,result}) posts one QUERY message (type 2) per distinct value of the box to its worker,
# and renders the first ten results synchronously when the worker's RESULT message (type 3)
# arrives. Counting both makes "the results are final" exact, with no quiet period to wait out:
# every query posted has been answered, and the last one posted is what the box holds. The
# wrapper is installed before Material creates its worker (an init script), once per document.
_COUNT_WORKER = """(() => {
  if (window.__searchCounted) return
  window.__searchCounted = true
  window.__searchQueries = 0
  window.__searchResults = 0
  window.__searchLast = null
  const Native = window.Worker
  window.Worker = class extends Native {
    constructor(...args) {
      super(...args)
      this.addEventListener("message", event => {
        if (event.data && event.data.type === 3) window.__searchResults += 1
      })
    }
    postMessage(message, ...rest) {
      if (message && message.type === 2) {
        window.__searchQueries += 1
        window.__searchLast = message.data
      }
      return super.postMessage(message, ...rest)
    }
  }
})()"""
# For the search bench's latency: from the query's last character to the last change of the
# results, watched by a MutationObserver.
_WATCH = """() => {
  const results = document.querySelector(".md-search-result")
  const box = document.querySelector("input.md-search__input")
  window.__searchMutated = window.__searchInput = performance.now()
  new MutationObserver(() => { window.__searchMutated = performance.now() })
    .observe(results, { childList: true, subtree: true, characterData: true })
  box.addEventListener("input", () => { window.__searchInput = performance.now() })
}"""
# Every query posted answered, the last one the box's value, and at least `after` posted.
_ANSWERED = """(after) => window.__searchResults === window.__searchQueries &&
  window.__searchQueries >= after &&
  window.__searchLast === document.querySelector("input.md-search__input").value"""


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
    page.add_init_script(_COUNT_WORKER)
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
    page.wait_for_function(_ANSWERED, arg=0)
    posted: int = page.evaluate("window.__searchQueries")
    # Characters beyond a US keyboard (Hangul) arrive as text input without key events, as from
    # an input method; Material searches on key events, so the query ends with one, as a reader's
    # input method's last key does.
    page.keyboard.type(query.query)
    box.press("End")
    page.wait_for_function(_ANSWERED, arg=posted + 1)
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
