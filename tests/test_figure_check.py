"""The figure checker: clean pages pass, and every mutation of a stated figure fails."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from iteragpu import examples
from iteragpu.figure_check import (
    check_page,
    check_tree,
    extract_tokens,
    main,
    page_lang,
    parity_failures,
    read_page,
)
from iteragpu.formatting import LANGS

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAGES = sorted(p for lang in LANGS for p in (DOCS / lang).rglob("*.md"))


def _doc(path: Path, text: str | None = None):
    return read_page(path, page_lang(path), text)


def test_clean_pages_pass(capsys) -> None:
    assert main([str(DOCS)]) == 0
    out = capsys.readouterr().out
    assert "verified" in out and "declared" in out and "failed" in out
    reports, failures = check_tree(DOCS)
    assert failures == []
    assert sum(r.verified for r in reports) >= 150


def test_every_page_has_both_languages() -> None:
    ko = {p.name for p in (DOCS / "ko").glob("*.md")}
    id_ = {p.name for p in (DOCS / "id").glob("*.md")}
    assert ko == id_
    assert {"index.md", "measurement.md", "sizing.md", "lab.md", "cli.md"} <= ko


def _mutate_digit(token_text: str) -> str:
    """Change the last digit: 13.04 -> 13.05, 4 -> 5."""
    index = max(i for i, ch in enumerate(token_text) if ch.isdigit())
    digit = int(token_text[index])
    return token_text[:index] + str((digit + 1) % 10) + token_text[index + 1 :]


_NON_PROSE = re.compile(r"`[^`]*`|<[^>]+>|\]\([^)]*\)|https?://\S+|\{[^}]*\}|^\s*\d+\.\s")


def _mask_non_prose(line: str) -> str:
    """Blank out what the checker does not read, keeping every column in place."""
    return _NON_PROSE.sub(lambda m: "\0" * len(m.group()), line)


def _mutants(path: Path, want_literal: bool):
    """Yield (description, mutated text) for each stated figure of one kind on a page."""
    doc = _doc(path)
    raw = path.read_text("utf-8")
    lines = raw.splitlines(keepends=True)
    ledger = doc.ledger
    for index, token in enumerate(extract_tokens(doc)):
        if ledger[index].startswith("lit.") != want_literal:
            continue
        line = lines[token.line - 1]
        # Mutate this occurrence: the n-th time the token text stands on its line.
        occurrence = sum(
            1 for t in extract_tokens(doc)[:index] if t.line == token.line and t.text == token.text
        )
        masked = _mask_non_prose(line)
        spans = [
            m.span()
            for m in re.finditer(rf"(?<![0-9.,A-Za-z]){re.escape(token.text)}(?![0-9])", masked)
        ]
        start, end = spans[occurrence]
        mutated_line = line[:start] + _mutate_digit(token.text) + line[end:]
        mutated = "".join([*lines[: token.line - 1], mutated_line, *lines[token.line :]])
        yield f"{path.name}:{token.line} {token.text} ({ledger[index]})", mutated


@pytest.mark.parametrize("path", PAGES, ids=[p.relative_to(DOCS).as_posix() for p in PAGES])
def test_changing_any_digit_of_a_computed_figure_fails(path: Path) -> None:
    mutants = list(_mutants(path, want_literal=False))
    if not _doc(path).ledger:
        pytest.skip("page states no figure")
    assert mutants
    for description, text in mutants:
        report = check_page(_doc(path, text))
        assert report.failures, f"mutant passed: {description}"
        assert any(":" in f and "expected" in f for f in report.failures), description


@pytest.mark.parametrize("path", PAGES, ids=[p.relative_to(DOCS).as_posix() for p in PAGES])
def test_changing_a_declared_literal_fails(path: Path) -> None:
    mutants = list(_mutants(path, want_literal=True))
    if not mutants:
        pytest.skip("page declares no literal")
    for description, text in mutants:
        assert check_page(_doc(path, text)).failures, f"mutant passed: {description}"


def test_failure_names_file_line_found_and_expected() -> None:
    path = DOCS / "ko" / "measurement.md"
    text = path.read_text("utf-8").replace("17.04 GiB", "17.40 GiB", 1)
    failures = check_page(_doc(path, text)).failures
    assert len(failures) == 1
    line = next(n for n, row in enumerate(text.splitlines(), 1) if "17.40 GiB" in row)
    assert f"measurement.md:{line}: number '17.40'" in failures[0]
    assert "expected '17.04'" in failures[0]


def test_an_undeclared_number_fails() -> None:
    path = DOCS / "id" / "sizing.md"
    text = path.read_text("utf-8") + "\nAngka baru: 42 kartu.\n"
    failures = check_page(_doc(path, text)).failures
    assert any("'42'" in f and "undeclared" in f for f in failures)


def test_gb_where_gib_is_meant_fails() -> None:
    path = DOCS / "ko" / "measurement.md"
    text = path.read_text("utf-8").replace("13.04 GiB", "13.04 GB", 1)
    failures = check_page(_doc(path, text)).failures
    assert any("unit GB on the page" in f for f in failures)


def test_wrong_locale_format_fails() -> None:
    path = DOCS / "id" / "measurement.md"
    text = path.read_text("utf-8").replace("13,04 GiB", "13.04 GiB", 1)
    failures = check_page(_doc(path, text)).failures
    assert any("expected '13,04'" in f for f in failures)


@pytest.mark.parametrize(
    ("field", "value", "page"),
    [
        ("GUIDE_RESERVES_GIB", {"measurement": 6, "sizing": 6}, "measurement.md"),
        ("GUIDE_RESERVES_GIB", {"measurement": 4, "sizing": 8}, "sizing.md"),
        ("PARAMETERS_7B", 8_000_000_000, "measurement.md"),
        ("KV_EXAMPLE", {**examples.KV_EXAMPLE, "tokens": 4096}, "measurement.md"),
        ("CONVERT_EXAMPLE_BYTES", 25_000_000_000, "sizing.md"),
    ],
)
def test_changing_a_registry_input_fails_the_dependent_pages(
    monkeypatch, field, value, page
) -> None:
    monkeypatch.setattr(examples, field, value)
    examples.registry.cache_clear()
    try:
        for lang in LANGS:
            assert check_page(_doc(DOCS / lang / page)).failures, (lang, page)
    finally:
        examples.registry.cache_clear()


def test_parity_catches_a_dropped_figure_snippet_and_anchor() -> None:
    ko = _doc(DOCS / "ko" / "measurement.md")
    id_path = DOCS / "id" / "measurement.md"
    text = id_path.read_text("utf-8")
    assert parity_failures(ko, _doc(id_path)) == []
    dropped_snippet = text.replace('--8<-- "kv_cache.pycon"', "", 1)
    assert any("snippets" in f for f in parity_failures(ko, _doc(id_path, dropped_snippet)))
    dropped_anchor = text.replace("{ #two-peaks }", "{ #dua-puncak }", 1)
    assert any("anchors" in f for f in parity_failures(ko, _doc(id_path, dropped_anchor)))
    dropped_figure = text.replace("  - two-peaks.difference_of_peaks_gib\n", "", 1)
    assert any(
        "two-peaks.difference_of_peaks_gib" in f
        for f in parity_failures(ko, _doc(id_path, dropped_figure))
    )


def test_pint_catches_a_byte_figure_that_disagrees_with_its_bytes() -> None:
    from dataclasses import replace

    from iteragpu.examples import figure
    from iteragpu.figure_check import Token, pint_failures

    doc = _doc(DOCS / "ko" / "measurement.md")
    gib_figure = figure("weights-7b-16bit-reserve-4gib.weights_gib")
    gb_figure = figure("weights-7b-16bit-reserve-4gib.weights_gb")
    gib_token = Token(1, "", "13.04", 1, "GiB", "")
    gb_token = Token(1, "", "14", 1, "GB", "")
    assert pint_failures(doc, [(gb_token, gb_figure), (gib_token, gib_figure)]) == []
    # A figure whose value claims GiB but holds GB arithmetic (14e9 / 10^9): pint disagrees.
    confused = replace(gib_figure, value=gb_figure.value)
    failures = pint_failures(doc, [(gb_token, gb_figure), (gib_token, confused)])
    assert any("pint reads 13.04 GiB" in f for f in failures)


def test_page_language_comes_from_its_tree() -> None:
    assert page_lang(DOCS / "ko" / "gpus" / "rtx-4090.md") == "ko"
    assert page_lang(DOCS / "id" / "sizing.md") == "id"
    with pytest.raises(ValueError):
        page_lang(DOCS / "root" / "index.md")
