"""Check every number that a documentation page states, in both languages.

Each page declares, in its front matter, a ledger: one entry per number found in its prose,
tables and admonitions, in order of appearance. An entry is either a figure of the
worked-examples registry (`weights-7b-16bit-reserve-4gib.total_gib`), checked against the exact
value formatted for the page's locale with Babel, or `lit.NAME`, a literal fact declared once in
the page's `literals` map (a YAML number is formatted for the locale, a string is verbatim,
such as the version `2.14`). A number without an entry, or an entry without its number, fails.
Byte figures are also converted with pint, independently of `iteragpu.core.units`.

Tables are read by column: a header that names a unit (`합계(GiB)`, `Bobot (byte)`, `Hari`)
must name the unit of every registry figure in its column, and a column of byte, GB or GiB
figures must say which unit it holds, in its header or in each cell.

    python -m iteragpu.docs_tools.figure_check docs            # check, print per-page counts
    python -m iteragpu.docs_tools.figure_check --suggest PAGE  # draft a ledger for a new page

Pages are found under `docs/<code>/` for each language code of the list, at any depth
(`docs/ko/gpus/rtx-4090.md` or `docs/ko/docs/gpus/rtx-4090.md`); each translation is checked
against the source language's page of the same path.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from itertools import pairwise
from pathlib import Path
from typing import Any

from iteragpu.core.units import BYTES_PER_UNIT
from iteragpu.docs_tools import require_extra
from iteragpu.examples import Figure, figure, registry
from iteragpu.i18n.languages import CODES, SOURCE, language
from iteragpu.i18n.number_symbols import NUMBER_SYMBOLS
from iteragpu.i18n.numbers import format_number

require_extra("yaml", "babel", "pint")

LITERAL_PREFIX = "lit."
BYTE_UNITS = {"B": "byte", "GB": "gigabyte", "GiB": "gibibyte", "MB": "megabyte", "MiB": "mebibyte"}
UNIT_WORDS = {**{u: u for u in BYTE_UNITS}, "USD": "USD", "바이트": "B", "byte": "B"}

# Units a table header may name. Symbols are case-sensitive (GB is not Gb, a gigabit); words
# are not ("Byte (B)"). Korean 일 (day) is too common a syllable to count outside parentheses.
HEADER_UNIT_SYMBOLS = {symbol: symbol for symbol in (*BYTES_PER_UNIT, "USD")}
HEADER_UNIT_WORDS = {"바이트": "B", "byte": "B", "bytes": "B", "hari": "day", "days": "day"}
HEADER_UNIT_IN_PARENTHESES = {"일": "day", "day": "day"}
# The registry states days and bits as plain counts; their keys name the unit.
UNIT_OF_KEY_SUFFIX = {"days": "day", "bits": "bit"}

_UNIT_AFTER = re.compile(
    r"\s(" + "|".join(sorted(UNIT_WORDS, key=len, reverse=True)) + r")(?![A-Za-z])"
)
_FENCE = re.compile(r"^\s*(```|~~~)")
_SNIPPET = re.compile(r'--8<--\s+"([^"]+)"')
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*$")
_ANCHOR = re.compile(r"\{\s*#([A-Za-z0-9_-]+)\s*\}\s*$")
_NUMBER = re.compile(
    r"(?<![A-Za-z0-9_.,])(?P<number>\d+(?:[.,]\d+)*)(?P<suffix>[A-Za-z]*)(?=(?P<after>.{0,12}))"
)
_CLEANERS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"`[^`]*`"), " "),  # inline code is code, checked by the tests that run it
    (re.compile(r"<[^>]+>"), " "),  # HTML tags: 10<sup>9</sup> reads as 10 and 9
    (re.compile(r"\]\([^)]*\)"), "]"),  # link targets
    (re.compile(r"https?://\S+"), " "),
    (re.compile(r"\{[^}]*\}"), " "),  # attribute lists and heading anchors
    (re.compile(r"\[\[[a-z_0-9]+\]\]"), " "),  # build-time placeholders
    (re.compile(r"^(\s*)\d+\.\s"), r"\1   "),  # ordered-list markers
    (re.compile(r"\[\^[^\]]*\]"), " "),  # footnote markers
)
# The language part of a snippet's name (`cli_session.ko.console`), for every language.
_SNIPPET_LANG = re.compile(r"\.(" + "|".join(map(re.escape, CODES)) + r")\.")
_PIPE = re.compile(r"(?<!\\)\|")  # a cell separator; `\|` is a literal pipe
_DELIMITER_CELL = re.compile(r"\s*:?-+:?\s*")
_PARENTHESES = re.compile(r"\(([^()]*)\)")
_HEADER_SYMBOL = re.compile(
    r"(?<![A-Za-z])("
    + "|".join(sorted(map(re.escape, HEADER_UNIT_SYMBOLS), key=len, reverse=True))
    + r")(?![A-Za-z])"
)
_HEADER_WORD = re.compile(
    r"(?<![A-Za-z])("
    + "|".join(sorted(HEADER_UNIT_WORDS, key=len, reverse=True))
    + r")(?![A-Za-z])",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Column:
    """A column of a table, as its header row states it."""

    line: int  # file line of the header row
    index: int  # 1-based, counted from the left
    header: str
    units: frozenset[str]  # the units the header names, normalised ("바이트" -> "B")

    @property
    def where(self) -> str:
        return f"column {self.index} {self.header!r}"


@dataclass(frozen=True)
class Token:
    """A number as a page states it."""

    line: int
    section: str  # anchor of the section it stands in
    text: str  # digits and separators, plus any letters glued to them ("7B")
    multiplier: int
    unit: str | None  # a unit word that follows after a space, normalised ("바이트" -> "B")
    context: str
    column: Column | None = None  # the table column of a body cell it stands in


@dataclass
class PageDoc:
    path: Path
    lang: str
    meta: dict[str, Any]
    body: str
    body_first_line: int  # 1-based line number of the body's first line in the file

    @property
    def ledger(self) -> list[str]:
        return list((self.meta.get("figures") or {}).get("ledger") or [])

    @property
    def literals(self) -> dict[str, Any]:
        return dict((self.meta.get("figures") or {}).get("literals") or {})


@dataclass
class PageReport:
    path: Path
    verified: int = 0
    declared: int = 0
    failures: list[str] = field(default_factory=list)


def page_lang(path: Path, docs: Path | None = None) -> str:
    """The language of a page: under the docs root `docs`, the first folder of its path that
    is a language code of the list; without one, the nearest such folder above the page.
    `docs/ko/gpus/rtx-4090.md` and `docs/ko/docs/sizing.md` are Korean."""
    if docs is not None and path.is_relative_to(docs):
        folders = path.relative_to(docs).parts[:-1]
    else:
        folders = tuple(reversed(path.parts[:-1]))
    for part in folders:
        if part in CODES:
            return part
    raise ValueError(f"{path}: not under a language folder ({', '.join(CODES)})")


def read_page(path: Path, lang: str, text: str | None = None) -> PageDoc:
    import yaml

    raw = path.read_text("utf-8") if text is None else text
    meta: dict[str, Any] = {}
    body, first_line = raw, 1
    if raw.startswith("---\n"):
        end = raw.index("\n---\n", 4)
        meta = yaml.safe_load(raw[4:end]) or {}
        body = raw[end + len("\n---\n") :]
        first_line = raw[: end + len("\n---\n")].count("\n") + 1
    return PageDoc(path, lang, meta, body, first_line)


def prose_lines(doc: PageDoc) -> Iterator[tuple[int, str]]:
    """(file line number, cleaned text) of every line outside code blocks."""
    in_fence = False
    for offset, line in enumerate(doc.body.splitlines()):
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence or _SNIPPET.search(line):
            continue
        for pattern, replacement in _CLEANERS:
            line = pattern.sub(replacement, line)
        yield doc.body_first_line + offset, line


def header_units(header: str) -> frozenset[str]:
    """The units a header cell names: `합계(GiB)` -> GiB, `Byte (B)` -> B, `Hari` -> day."""
    units = {HEADER_UNIT_SYMBOLS[m[1]] for m in _HEADER_SYMBOL.finditer(header)}
    units |= {HEADER_UNIT_WORDS[m[1].lower()] for m in _HEADER_WORD.finditer(header)}
    for inside in _PARENTHESES.findall(header):
        word = inside.strip().lower()
        if word in HEADER_UNIT_IN_PARENTHESES:
            units.add(HEADER_UNIT_IN_PARENTHESES[word])
    return frozenset(units)


def _cell_spans(line: str) -> list[tuple[int, int]]:
    """(start, end) of each cell of a table row; the outer pipes are optional."""
    edges = [m.start() for m in _PIPE.finditer(line)]
    if not edges:
        return []
    stripped = line.strip()
    if not stripped.startswith("|"):
        edges.insert(0, -1)
    if not stripped.endswith("|"):
        edges.append(len(line))
    return [(left + 1, right) for left, right in pairwise(edges)]


@dataclass
class Table:
    """A Markdown table: its header's columns and, per body row, where each cell stands."""

    columns: list[Column]
    cells: dict[int, list[tuple[int, int, Column]]]  # file line -> (start, end, column)


def parse_tables(lines: Sequence[tuple[int, str]]) -> list[Table]:
    """The tables among (file line, text) lines.

    A table is a header row, then a delimiter row (`| --- | ---: |`) with as many cells, then
    body rows up to the first line without a pipe. Cells past the header's count belong to
    no column (Markdown drops them).
    """
    tables = []
    index = 0
    while index + 1 < len(lines):
        (header_line, header), (delimiter_line, delimiter) = lines[index], lines[index + 1]
        header_spans, delimiter_spans = _cell_spans(header), _cell_spans(delimiter)
        is_table = (
            delimiter_line == header_line + 1
            and header_spans
            and len(header_spans) == len(delimiter_spans)
            and all(_DELIMITER_CELL.fullmatch(delimiter[a:b]) for a, b in delimiter_spans)
        )
        if not is_table:
            index += 1
            continue
        table = Table([], {})
        for number, (start, end) in enumerate(header_spans, 1):
            text = header[start:end].strip()
            table.columns.append(Column(header_line, number, text, header_units(text)))
        index += 2
        previous = delimiter_line
        while index < len(lines) and lines[index][0] == previous + 1:
            line_number, line = lines[index]
            spans = _cell_spans(line)
            if not spans:
                break
            table.cells[line_number] = [
                (start, end, column)
                for (start, end), column in zip(spans, table.columns, strict=False)
            ]
            previous = line_number
            index += 1
        tables.append(table)
    return tables


def extract_tokens(doc: PageDoc) -> list[Token]:
    tokens = []
    # Number words that scale the digits before them: 70억 (ko), 7 miliar (id).
    multipliers = language(doc.lang).number_words
    sections = _sections(doc)
    lines = list(prose_lines(doc))
    cells = {line: row for table in parse_tables(lines) for line, row in table.cells.items()}
    for line_number, line in lines:
        for match in _NUMBER.finditer(line):
            after = match["after"]
            multiplier = 1
            for word, factor in multipliers.items():
                if re.match(rf"\s?{word}(?![A-Za-z])", after):
                    multiplier = factor
                    after = after.lstrip()[len(word) :]
                    break
            unit = None
            if not match["suffix"]:
                unit_match = _UNIT_AFTER.match(after)
                if unit_match:
                    unit = UNIT_WORDS[unit_match[1]]
            context = line[max(0, match.start() - 30) : match.end() + 10].strip()
            column = next(
                (
                    col
                    for start, end, col in cells.get(line_number, ())
                    if start <= match.start() < end
                ),
                None,
            )
            tokens.append(
                Token(
                    line_number,
                    sections.get(line_number, ""),
                    match["number"] + match["suffix"],
                    multiplier,
                    unit,
                    context,
                    column,
                )
            )
    return tokens


def _sections(doc: PageDoc) -> dict[int, str]:
    """The anchor of the section each line of the body stands in."""
    current, sections = "", {}
    for offset, line in enumerate(doc.body.splitlines()):
        anchor = _ANCHOR.search(line) if _HEADING.match(line) else None
        if anchor:
            current = anchor[1]
        sections[doc.body_first_line + offset] = current
    return sections


def literal_text(value: Any, lang: str) -> str:
    """A declared literal as the page must state it: numbers per locale, strings verbatim."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"literal values are numbers or strings, got {value!r}")
    if isinstance(value, str):
        return value
    text = repr(value)
    decimals = len(text.split(".")[1]) if "." in text else 0
    return format_number(Fraction(Decimal(text)), decimals, lang)


def expected_text(fig: Figure, token: Token, lang: str) -> str:
    if token.multiplier == 1:
        return format_number(fig.value, fig.decimals, lang)
    scaled = fig.value / token.multiplier
    decimals = 0
    while (scaled * 10**decimals).denominator != 1 and decimals < 6:
        decimals += 1
    return format_number(scaled, decimals, lang)


def check_page(doc: PageDoc) -> PageReport:
    report = PageReport(doc.path)
    tokens = extract_tokens(doc)
    ledger = doc.ledger
    literals = doc.literals
    where = f"{doc.path}"
    for name, value in literals.items():
        try:
            literal_text(value, doc.lang)
        except ValueError as error:
            report.failures.append(f"{where}: literal {name!r}: {error}")
    used_literals: set[str] = set()
    resolved: list[tuple[Token, Figure]] = []
    in_columns: list[tuple[Token, str, Figure | None]] = []  # None: a declared literal
    for index, token in enumerate(tokens):
        position = f"{where}:{token.line}: number {token.text!r} ({token.context!r})"
        if index >= len(ledger):
            report.failures.append(f"{position}: not in the ledger (undeclared number)")
            continue
        reference = ledger[index]
        if reference.startswith(LITERAL_PREFIX):
            name = reference[len(LITERAL_PREFIX) :]
            if name not in literals:
                report.failures.append(f"{position}: ledger entry {reference!r} is not declared")
                continue
            used_literals.add(name)
            if token.column is not None:
                in_columns.append((token, reference, None))
            expected = literal_text(literals[name], doc.lang)
            found = token.text if token.multiplier == 1 else f"{token.text}x{token.multiplier}"
            if found != expected:
                report.failures.append(f"{position}: expected {expected!r} ({reference})")
            elif token.unit in BYTE_UNITS:
                report.failures.append(
                    f"{position}: a {token.unit} figure must come from the registry, "
                    f"not {reference}"
                )
            else:
                report.declared += 1
            continue
        try:
            fig = figure(reference)
        except KeyError as error:
            report.failures.append(f"{position}: {error.args[0]}")
            continue
        if token.column is not None:
            in_columns.append((token, reference, fig))
        expected = expected_text(fig, token, doc.lang)
        if token.text != expected:
            report.failures.append(f"{position}: expected {expected!r} ({reference})")
        elif token.unit is not None and token.unit != fig.unit:
            report.failures.append(
                f"{position}: unit {token.unit} on the page, {fig.unit or 'none'} in {reference}"
            )
        else:
            report.verified += 1
            resolved.append((token, fig))
    for reference in ledger[len(tokens) :]:
        report.failures.append(f"{where}: ledger entry {reference!r} has no number on the page")
    for name in sorted(set(literals) - used_literals):
        report.failures.append(f"{where}: literal {name!r} is declared but never stated")
    report.failures.extend(column_failures(doc, in_columns))
    report.failures.extend(pint_failures(doc, resolved))
    return report


def figure_unit(fig: Figure) -> str:
    """The unit of a registry figure; a plain count whose key names a unit takes that unit."""
    if fig.unit:
        return fig.unit
    suffix = fig.key.rpartition("_")[2]
    return UNIT_OF_KEY_SUFFIX.get(suffix, "")


def stated_unit(token: Token) -> str | None:
    """The unit a page gives a number: after it, or else in its column's header."""
    if token.unit is not None:
        return token.unit
    if token.column is not None and len(token.column.units) == 1:
        (unit,) = token.column.units
        return unit
    return None


def column_failures(doc: PageDoc, stated: Sequence[tuple[Token, str, Figure | None]]) -> list[str]:
    """Each table column against its header: the unit it names is the unit of its figures.

    `stated` holds the numbers of table body cells with their ledger reference and registry
    figure (None for a declared literal). A column whose header names no unit may hold figures
    that have one (bytes, GB, GiB, USD) only when each cell states it after its number; plain
    counts (bits, days) may stand there unlabelled.
    """
    by_column: dict[Column, list[tuple[Token, str, Figure | None]]] = {}
    for entry in stated:
        if entry[0].column is not None:
            by_column.setdefault(entry[0].column, []).append(entry)
    failures = []
    for column, entries in by_column.items():
        where = f"{doc.path}:{column.line}: {column.where}"
        named = sorted(column.units)
        if len(named) > 1:
            failures.append(f"{where} names several units ({', '.join(named)})")
            continue
        disagreeing = []
        for token, reference, fig in entries:
            cell = f"{token.text} on line {token.line} ({reference})"
            if fig is None:
                if named and named[0] in BYTE_UNITS:
                    disagreeing.append(f"{cell} is a literal, not a registry figure")
                continue
            unit = figure_unit(fig)
            if named and unit != named[0]:
                disagreeing.append(f"{cell} is in {unit or 'no unit'}")
            elif not named and fig.unit and token.unit is None:
                disagreeing.append(f"{cell} is in {fig.unit}")
        if disagreeing and named:
            failures.append(
                f"{where} names {named[0]}, but its figures disagree: " + "; ".join(disagreeing)
            )
        elif disagreeing:
            failures.append(
                f"{where} names no unit, but holds figures that have one (name it in the "
                "header or after each number): " + "; ".join(disagreeing)
            )
    return failures


def pint_failures(doc: PageDoc, resolved: Sequence[tuple[Token, Figure]]) -> list[str]:
    """Byte figures converted by pint: each against its exact bytes, and pairs on one line."""
    from babel.numbers import parse_decimal

    from iteragpu.docs_tools.pint_units import pint_registry

    ureg = pint_registry()
    failures = []
    # token, its unit (after it or in its column's header), bytes per pint, tolerance
    stated: list[tuple[Token, str, Fraction, Fraction]] = []
    for token, fig in resolved:
        exact = fig.exact_bytes
        unit = stated_unit(token)
        if unit is None or unit not in BYTE_UNITS or exact is None:
            continue
        number = (
            Fraction(parse_decimal(token.text, locale=doc.lang, strict=True)) * token.multiplier
        )
        unit_bytes = Fraction(ureg.Quantity(1, BYTE_UNITS[unit]).to("byte").magnitude)
        decimal_symbol = NUMBER_SYMBOLS[doc.lang]["decimal"]
        decimals = (
            len(token.text.rpartition(decimal_symbol)[2]) if decimal_symbol in token.text else 0
        )
        tolerance = unit_bytes * token.multiplier / (2 * 10**decimals)
        as_bytes = number * unit_bytes
        stated.append((token, unit, as_bytes, tolerance))
        if abs(as_bytes - exact) > tolerance:
            failures.append(
                f"{doc.path}:{token.line}: pint reads {token.text} {unit} as "
                f"{float(as_bytes):.0f} B, but the figure is {float(exact):.0f} B"
            )
    for i, (first, first_unit, first_bytes, first_tol) in enumerate(stated):
        for second, second_unit, second_bytes, second_tol in stated[i + 1 :]:
            same_line = first.line == second.line and first_unit != second_unit
            if same_line and abs(first_bytes - second_bytes) <= first_tol + second_tol:
                continue  # a consistent "X GB ... Y GiB" pair, or a table row of one size
            if same_line and _same_quantity(resolved, first, second):
                failures.append(
                    f"{doc.path}:{first.line}: pint finds {first.text} {first_unit} and "
                    f"{second.text} {second_unit} differ"
                )
    return failures


def _same_quantity(resolved: Sequence[tuple[Token, Figure]], a: Token, b: Token) -> bool:
    by_token = {id(token): fig for token, fig in resolved}
    fig_a, fig_b = by_token.get(id(a)), by_token.get(id(b))
    return fig_a is not None and fig_b is not None and fig_a.exact_bytes == fig_b.exact_bytes


def structure(doc: PageDoc) -> tuple[list[str], list[str], list[str]]:
    """(heading anchors, snippet includes with the language neutralised, headings lacking one)."""
    anchors, missing = [], []
    in_fence = False
    for line in doc.body.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        heading = _HEADING.match(line)
        if heading and not in_fence and len(heading[1]) >= 2:
            anchor = _ANCHOR.search(heading[2])
            if anchor:
                anchors.append(anchor[1])
            else:
                missing.append(heading[2])
    snippets = [_SNIPPET_LANG.sub(".LANG.", name) for name in _SNIPPET.findall(doc.body)]
    return anchors, snippets, missing


def column_units(doc: PageDoc) -> list[tuple[str, ...]]:
    """The units each table's header names, column by column ("-" for none)."""
    return [
        tuple("/".join(sorted(column.units)) or "-" for column in table.columns)
        for table in parse_tables(list(prose_lines(doc)))
    ]


def parity_failures(source: PageDoc, translation: PageDoc) -> list[str]:
    """A translation against the source language's page of the same path: the same table
    header units, heading anchors, snippets, figures and literals."""
    failures = []
    source_columns, columns = column_units(source), column_units(translation)
    if source_columns != columns:
        failures.append(
            f"{translation.path}: table header units {columns} differ from {source.path}: "
            f"{source_columns}"
        )
    source_anchors, source_snippets, source_missing = structure(source)
    anchors, snippets, missing = structure(translation)
    for doc, headings in ((source, source_missing), (translation, missing)):
        failures += [f"{doc.path}: heading without an explicit anchor: {h!r}" for h in headings]
    if source_anchors != anchors:
        failures.append(
            f"{translation.path}: anchors {anchors} differ from {source.path}: {source_anchors}"
        )
    if source_snippets != snippets:
        failures.append(
            f"{translation.path}: snippets {snippets} differ from {source.path}: {source_snippets}"
        )
    source_refs, refs = set(source.ledger), set(translation.ledger)
    for missing_ref in sorted(source_refs - refs):
        failures.append(
            f"{translation.path}: states no figure {missing_ref} that {source.path} states"
        )
    for missing_ref in sorted(refs - source_refs):
        failures.append(
            f"{source.path}: states no figure {missing_ref} that {translation.path} states"
        )
    for name in sorted(set(source.literals) | set(translation.literals)):
        if source.literals.get(name) != translation.literals.get(name):
            failures.append(
                f"{translation.path}: literal {name!r} is {translation.literals.get(name)!r}, "
                f"{source.path} declares {source.literals.get(name)!r}"
            )
    return failures


def language_pages(docs: Path) -> dict[str, dict[str, Path]]:
    """{language: {page path relative to its language folder: file}} for every language of the
    list that has a folder under `docs`."""
    trees = {}
    for lang in CODES:
        if (docs / lang).is_dir():
            pages = sorted((docs / lang).rglob("*.md"))
            trees[lang] = {p.relative_to(docs / lang).as_posix(): p for p in pages}
    return trees


def check_tree(docs: Path) -> tuple[list[PageReport], list[str]]:
    """Every page of every language, and each translation against the source language's."""
    reports, failures = [], []
    trees = language_pages(docs)
    for lang in CODES:
        if lang not in trees:
            failures.append(f"{docs / lang}: missing (every language of the list has its pages)")
    names = sorted({name for pages in trees.values() for name in pages})
    for name in names:
        pages = {}
        for lang, tree in trees.items():
            if name not in tree:
                failures.append(f"{docs / lang / name}: missing (another language has it)")
                continue
            pages[lang] = read_page(tree[name], lang)
            reports.append(check_page(pages[lang]))
        if SOURCE in pages:
            for lang, translation in pages.items():
                if lang != SOURCE:
                    failures += parity_failures(pages[SOURCE], translation)
    return reports, failures


def suggest(path: Path, lang: str) -> str:
    """A draft ledger: the registry figure (preferring this page's examples) or a literal."""
    doc = read_page(path, lang)
    page = path.name
    lines = ["figures:", "  ledger:"]
    literals: dict[str, str] = {}
    for token in extract_tokens(doc):
        candidates = []
        unit = stated_unit(token)
        for example in registry().values():
            for fig in example.figures:
                unit_ok = unit is None or unit == figure_unit(fig)
                if unit_ok and expected_text(fig, token, lang) == token.text:
                    local = f"{page}#{token.section}" in example.where
                    unit_rank = figure_unit(fig) != (unit or "")
                    candidates.append((not local, unit_rank, f"{example.id}.{fig.key}"))
        if candidates:
            reference = sorted(candidates)[0][2]
        else:
            name = "n_" + re.sub(r"\W", "_", token.text)
            literals[name] = token.text
            reference = LITERAL_PREFIX + name
        lines.append(f"    - {reference}  # {token.line}: {token.context}")
    if literals:
        lines.append("  literals:")
        lines += [f"    {name}: {value!r}" for name, value in literals.items()]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--suggest"]:
        for name in args[1:]:
            path = Path(name)
            print(suggest(path, page_lang(path, Path("docs"))))
        return 0
    docs = Path(args[0] if args else "docs")
    reports, failures = check_tree(docs)
    width = max(len(str(r.path)) for r in reports)
    print(f"{'page':<{width}}  verified  declared  failed")
    for r in reports:
        print(f"{r.path!s:<{width}}  {r.verified:>8}  {r.declared:>8}  {len(r.failures):>6}")
        failures += r.failures
    total_verified = sum(r.verified for r in reports)
    total_declared = sum(r.declared for r in reports)
    print(f"{'total':<{width}}  {total_verified:>8}  {total_declared:>8}  {len(failures):>6}")
    for failure in failures:
        print(f"FAIL {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
