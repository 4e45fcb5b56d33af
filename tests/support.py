"""Helpers shared by the tests (on sys.path through pytest's `pythonpath`)."""

from __future__ import annotations

from typing import Any

from iteragpu.i18n.languages import CODES


def per_language(expected: dict[str, Any]) -> list[tuple[str, Any]]:
    """(language, expected) for every language of the list, to parametrize a test: a language
    of the list without its expectation here fails the collection, loudly, instead of going
    untested."""
    assert sorted(expected) == sorted(CODES), f"expectations for {sorted(expected)}, not {CODES}"
    return [(lang, expected[lang]) for lang in CODES]
