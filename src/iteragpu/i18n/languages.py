"""The one list of the project's languages. Adding a language is one entry here, plus its pages
(`docs/<code>/`), its message catalogue, its lab README and the results viewer's example file
(`src/iteragpu/web/results-example.<code>.json`, written by `python tests/results_support.py
--write` once `docs_tools.results_page.EXAMPLE_DEVICE` names its simulated device); everything
else follows this list.

Kept free of imports beyond the standard library: the CLI reads it at start-up, the site build,
the figure checker and the tests read it too.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

_NO_WORDS: Final[Mapping[str, int]] = MappingProxyType({})


class Language:
    """One language, read-only. A plain class: the CLI reads the list at every start, where
    creating a NamedTuple class costs about half a millisecond and a dataclass about one
    (benchmarks/cli_startup.py)."""

    __slots__ = ("code", "name", "number_words", "search_lang")

    code: str
    """BCP 47 code, also the Babel locale, the `--lang` value and the site's folder."""
    name: str
    """The language's own name, as the language switcher shows it."""
    search_lang: str
    """The site search's language: Material's worker loads `lunr.<search_lang>.min.js`, which
    iteragpu.docs_tools.site_search writes for the languages it has an analyzer for."""
    number_words: Mapping[str, int]
    """Words that multiply a figure written in prose (억, miliar), for the figure checker."""

    def __init__(
        self, code: str, name: str, search_lang: str, number_words: Mapping[str, int] = _NO_WORDS
    ) -> None:
        for field, value in (
            ("code", code),
            ("name", name),
            ("search_lang", search_lang),
            ("number_words", number_words),
        ):
            object.__setattr__(self, field, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a Language is read-only: {name!r}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Language):
            return NotImplemented
        return self._values() == other._values()

    __hash__ = None  # type: ignore[assignment]  # its number words are a mapping

    def __repr__(self) -> str:
        code, name, search_lang, number_words = self._values()
        return (
            f"Language(code={code!r}, name={name!r}, search_lang={search_lang!r}, "
            f"number_words={number_words!r})"
        )

    def _values(self) -> tuple[str, str, str, Mapping[str, int]]:
        return self.code, self.name, self.search_lang, self.number_words


LANGUAGES: Final[tuple[Language, ...]] = (
    Language("ko", "한국어", "ko", {"억": 10**8, "만": 10**4}),
    Language("id", "Bahasa Indonesia", "id", {"miliar": 10**9, "juta": 10**6}),
)
"""Every language, the source language first (translations are checked against it)."""

CODES: Final[tuple[str, ...]] = tuple(language.code for language in LANGUAGES)
SOURCE: Final[str] = CODES[0]
"""The language other translations keep the structure of; also the default."""


def language(code: str) -> Language:
    """The entry for `code`; KeyError naming the known codes otherwise."""
    for candidate in LANGUAGES:
        if candidate.code == code:
            return candidate
    raise KeyError(f"unknown language {code!r}; known: {', '.join(CODES)}")
