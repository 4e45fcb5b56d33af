"""The figure checker: clean pages pass, and every mutation of a stated figure fails."""

from __future__ import annotations

import re
from itertools import pairwise
from pathlib import Path

import pytest

from iteragpu import examples
from iteragpu.docs_tools.figure_check import (
    check_page,
    check_tree,
    extract_tokens,
    main,
    page_lang,
    parity_failures,
    read_page,
)
from iteragpu.i18n.languages import CODES

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAGES = sorted(p for lang in CODES for p in (DOCS / lang).rglob("*.md"))


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
    ko = {p.name for p in (DOCS / "ko" / "docs").glob("*.md")}
    id_ = {p.name for p in (DOCS / "id" / "docs").glob("*.md")}
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
    if not any(not str(entry).startswith("lit.") for entry in _doc(path).ledger):
        pytest.skip("page states no computed figure")
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
    path = DOCS / "ko" / "docs" / "measurement.md"
    text = path.read_text("utf-8").replace("17.04 GiB", "17.40 GiB", 1)
    failures = check_page(_doc(path, text)).failures
    assert len(failures) == 1
    line = next(n for n, row in enumerate(text.splitlines(), 1) if "17.40 GiB" in row)
    assert f"measurement.md:{line}: number '17.40'" in failures[0]
    assert "expected '17.04'" in failures[0]


def test_an_undeclared_number_fails() -> None:
    path = DOCS / "id" / "docs" / "sizing.md"
    text = path.read_text("utf-8") + "\nAngka baru: 42 kartu.\n"
    failures = check_page(_doc(path, text)).failures
    assert any("'42'" in f and "undeclared" in f for f in failures)


def test_gb_where_gib_is_meant_fails() -> None:
    path = DOCS / "ko" / "docs" / "measurement.md"
    text = path.read_text("utf-8").replace("13.04 GiB", "13.04 GB", 1)
    failures = check_page(_doc(path, text)).failures
    assert any("unit GB on the page" in f for f in failures)


def test_wrong_locale_format_fails() -> None:
    path = DOCS / "id" / "docs" / "measurement.md"
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
        for lang in CODES:
            assert check_page(_doc(DOCS / lang / "docs" / page)).failures, (lang, page)
    finally:
        examples.registry.cache_clear()


def test_parity_catches_a_dropped_figure_snippet_and_anchor() -> None:
    ko = _doc(DOCS / "ko" / "docs" / "measurement.md")
    id_path = DOCS / "id" / "docs" / "measurement.md"
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

    from iteragpu.docs_tools.figure_check import Token, pint_failures
    from iteragpu.examples import figure

    doc = _doc(DOCS / "ko" / "docs" / "measurement.md")
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
    assert page_lang(DOCS / "ko" / "docs" / "gpus" / "rtx-4090.md") == "ko"
    assert page_lang(DOCS / "id" / "docs" / "sizing.md") == "id"
    with pytest.raises(ValueError):
        page_lang(DOCS / "root" / "index.md")


# --- Table headers: the unit a header names is the unit of the figures in its column ----------

_DELIMITER_ROW = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")
# The ways the pages write a unit in a header, each with the unit it means. Written here
# independently of the checker, so that a header the checker stops reading still gets mutants.
_HEADER_UNIT_TEXT = re.compile(
    r"(?<![A-Za-z])(?P<symbol>GiB|GB|MiB|MB|B|USD)(?![A-Za-z])"
    r"|(?<![A-Za-z])(?P<word>[Bb]ytes?|[Hh]ari)(?![A-Za-z])"
    r"|(?P<korean>바이트)|\((?P<day>일)\)"
)
_UNIT_OF_TEXT = {"byte": "B", "bytes": "B", "바이트": "B", "hari": "day", "일": "day"}
# A different unit to swap in: each of these names a different quantity or scale.
_SWAPPED = {
    "GiB": "GB",
    "GB": "GiB",
    "MiB": "MB",
    "MB": "MiB",
    "B": "GB",
    "USD": "GB",
    "day": "GiB",
}
# Unit columns per page, at least (both languages): a header the test stops finding fails here.
_UNIT_COLUMNS = {
    "measurement.md": 3,
    "sizing.md": 4,
    "gpus/rtx-4090.md": 5,
    "gpus/rtx-6000-ada.md": 5,
}


def _header_unit_mutants(path: Path):
    """Yield (header line, column number, swapped unit, mutated text) per unit-naming header."""
    lines = path.read_text("utf-8").splitlines(keepends=True)
    in_fence = False
    for index, line in enumerate(lines[:-1]):
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
        if in_fence or "|" not in line or not _DELIMITER_ROW.match(lines[index + 1]):
            continue
        edges = [i for i, ch in enumerate(line) if ch == "|"]
        # The body's cells per column: a column left empty for the reader to fill (a printed
        # load sheet's measured peak) holds no figure whose unit a swap could contradict.
        body = []
        for row in lines[index + 2 :]:
            if not row.lstrip().startswith("|"):
                break
            body.append([c.strip() for c in row.strip().strip("|").split("|")])
        for number, (left, right) in enumerate(pairwise(edges), 1):
            cell = line[left + 1 : right]
            mentions = list(_HEADER_UNIT_TEXT.finditer(cell))
            if not mentions:
                continue
            if body and all(len(row) >= number and not row[number - 1] for row in body):
                continue
            units = {
                _UNIT_OF_TEXT.get(m.group(m.lastgroup).lower(), m.group(m.lastgroup))
                for m in mentions
            }
            assert len(units) == 1, f"{path}:{index + 1}: header {cell!r} names {units}"
            swapped = _SWAPPED[units.pop()]

            def swap(match: re.Match[str], swapped: str = swapped) -> str:
                return f"({swapped})" if match["day"] else swapped

            mutated_line = line[: left + 1] + _HEADER_UNIT_TEXT.sub(swap, cell) + line[right:]
            yield (
                index + 1,
                number,
                swapped,
                "".join([*lines[:index], mutated_line, *lines[index + 1 :]]),
            )


@pytest.mark.parametrize("path", PAGES, ids=[p.relative_to(DOCS).as_posix() for p in PAGES])
def test_swapping_the_unit_of_any_table_header_fails(path: Path) -> None:
    mutants = list(_header_unit_mutants(path))
    name = path.relative_to(DOCS / page_lang(path)).as_posix()
    assert len(mutants) >= _UNIT_COLUMNS.get(name, 0), name
    if not mutants:
        pytest.skip("no table header names a unit")
    for line, number, swapped, text in mutants:
        failures = check_page(_doc(path, text)).failures
        expected = f"{path}:{line}: column {number} "
        assert any(f.startswith(expected) and f"names {swapped}" in f for f in failures), (
            f"swapping the unit of {path.name}:{line} column {number} to {swapped} passed: "
            f"{failures}"
        )


def test_a_gb_header_over_gib_totals_fails_with_file_and_line() -> None:
    path = DOCS / "ko" / "docs" / "sizing.md"
    text = path.read_text("utf-8")
    assert text.count("합계(GiB)") == 1
    failures = check_page(_doc(path, text.replace("합계(GiB)", "합계(GB)"))).failures
    line = next(n for n, row in enumerate(text.splitlines(), 1) if "합계(GiB)" in row)
    [column] = [f for f in failures if "column" in f]
    assert column.startswith(f"{path}:{line}: column 5 '합계(GB)' names GB, but its figures")
    assert "19.04 on line" in column and "total_gib) is in GiB" in column
    # pint reads the cells in the header's unit, independently of the registry's unit
    assert any("pint reads 19.04 GB" in f for f in failures)


@pytest.mark.parametrize("lang", CODES)
def test_a_gb_header_over_a_gib_conversion_fails_on_a_gpu_sheet(lang: str) -> None:
    path = DOCS / lang / "docs" / "gpus" / "rtx-4090.md"
    text = path.read_text("utf-8")
    # the first GiB column: the nominal capacity converted
    failures = check_page(_doc(path, text.replace("(GiB) |", "(GB) |", 1))).failures
    assert any(": column 3 " in f and "names GB" in f and "nominal_gib" in f for f in failures)


def _synthetic(lang: str, table: str, ledger: list[str], literals: dict[str, object] | None = None):
    import yaml

    front = yaml.safe_dump({"figures": {"ledger": ledger, "literals": literals or {}}})
    return _doc(DOCS / lang / "docs" / "synthetic.md", f"---\n{front}---\n# T\n\n{table}\n")


TOTAL_16 = "weights-7b-16bit-reserve-6gib.total_gib"


def test_a_column_without_a_unit_must_not_hold_gib_figures() -> None:
    failures = check_page(_synthetic("ko", "| 합계 |\n| ---: |\n| 19.04 |", [TOTAL_16])).failures
    assert len(failures) == 1
    assert "synthetic.md:" in failures[0] and "names no unit" in failures[0]
    assert "19.04 on line" in failures[0] and "is in GiB" in failures[0]
    # ... unless each cell states its unit after the number
    assert (
        check_page(_synthetic("ko", "| 합계 |\n| ---: |\n| 19.04 GiB |", [TOTAL_16])).failures == []
    )
    assert (
        check_page(_synthetic("ko", "| 합계(GiB) |\n| ---: |\n| 19.04 |", [TOTAL_16])).failures
        == []
    )


def test_a_cell_unit_that_contradicts_its_header_fails() -> None:
    gb = "weights-7b-16bit-reserve-6gib.weights_gb"
    failures = check_page(_synthetic("ko", "| 가중치(GiB) |\n| --- |\n| 14 GB |", [gb])).failures
    assert any("column 1 '가중치(GiB)' names GiB" in f and "is in GB" in f for f in failures)


def test_a_header_naming_two_units_fails() -> None:
    failures = check_page(
        _synthetic("id", "| Total (GB/GiB) |\n| ---: |\n| 19,04 |", [TOTAL_16])
    ).failures
    assert any("names several units (GB, GiB)" in f for f in failures)


def test_a_byte_column_holds_registry_figures_only() -> None:
    table = "| Bobot (byte) |\n| ---: |\n| 42 |"
    failures = check_page(_synthetic("id", table, ["lit.answer"], {"answer": 42})).failures
    assert any("names B" in f and "is a literal" in f for f in failures)


def test_tables_are_read_by_column_with_or_without_outer_pipes() -> None:
    days = "card-rtx-4090.package_1_days"
    price = "card-rtx-4090.package_1_price_usd"
    good = "Hari | Harga (USD)\n---|---:\n3 | 47,14"
    assert check_page(_synthetic("id", good, [days, price])).failures == []
    swapped = "Harga (USD) | Hari\n---|---:\n3 | 47,14"
    failures = check_page(_synthetic("id", swapped, [days, price])).failures
    assert any("column 1 'Harga (USD)' names USD" in f and "is in day" in f for f in failures)
    assert any("column 2 'Hari' names day" in f and "is in USD" in f for f in failures)
    # a pipe in prose or in a code fence makes no table
    fenced = "```\n| 합계(GB) |\n| --- |\n| 19.04 |\n```\n\n합계는 19.04 GiB | 끝"
    assert check_page(_synthetic("ko", fenced, [TOTAL_16])).failures == []


def test_parity_catches_a_header_unit_dropped_in_one_language() -> None:
    ko = _doc(DOCS / "ko" / "docs" / "sizing.md")
    id_path = DOCS / "id" / "docs" / "sizing.md"
    text = id_path.read_text("utf-8")
    assert text.count("Margin (GiB)") == 1
    dropped = _doc(id_path, text.replace("Margin (GiB)", "Margin"))
    assert any("table header units" in f for f in parity_failures(ko, dropped))
