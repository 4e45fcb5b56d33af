"""Check every number that a documentation page states, in both languages.

Each page declares, in its front matter, a ledger: one entry per number found in its prose,
tables and admonitions, in order of appearance. An entry is either a figure of the
worked-examples registry (`weights-7b-16bit-reserve-4gib.total_gib`), checked against the exact
value formatted for the page's locale with Babel, or `lit.NAME`, a literal fact declared once in
the page's `literals` map (a YAML number is formatted for the locale, a string is verbatim,
such as the version `2.14`). A number without an entry, or an entry without its number, fails.
Byte figures are also converted with pint, independently of `iteragpu.units`.

    python -m iteragpu.figure_check docs            # check, print per-page counts
    python -m iteragpu.figure_check --suggest PAGE  # draft a ledger for a new page
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

from iteragpu.examples import Figure, figure, registry
from iteragpu.formatting import LANGS, format_number

LITERAL_PREFIX = "lit."
BYTE_UNITS = {"B": "byte", "GB": "gigabyte", "GiB": "gibibyte", "MB": "megabyte", "MiB": "mebibyte"}
UNIT_WORDS = {**{u: u for u in BYTE_UNITS}, "USD": "USD", "바이트": "B", "byte": "B"}
# Number words that scale the digits before them: 70억 (ko), 7 miliar (id).
MULTIPLIERS = {"ko": {"억": 10**8, "만": 10**4}, "id": {"miliar": 10**9, "juta": 10**6}}

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


@dataclass(frozen=True)
class Token:
    """A number as a page states it."""

    line: int
    section: str  # anchor of the section it stands in
    text: str  # digits and separators, plus any letters glued to them ("7B")
    multiplier: int
    unit: str | None  # a unit word that follows after a space, normalised ("바이트" -> "B")
    context: str


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


def page_lang(path: Path) -> str:
    """The language of a page from its tree: `docs/ko/gpus/rtx-4090.md` is Korean."""
    for part in reversed(path.parts[:-1]):
        if part in LANGS:
            return part
    raise ValueError(f"{path}: not under a language folder ({', '.join(LANGS)})")


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


def extract_tokens(doc: PageDoc) -> list[Token]:
    tokens = []
    multipliers = MULTIPLIERS[doc.lang]
    sections = _sections(doc)
    for line_number, line in prose_lines(doc):
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
            tokens.append(
                Token(
                    line_number,
                    sections.get(line_number, ""),
                    match["number"] + match["suffix"],
                    multiplier,
                    unit,
                    context,
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
    report.failures.extend(pint_failures(doc, resolved))
    return report


def pint_failures(doc: PageDoc, resolved: Sequence[tuple[Token, Figure]]) -> list[str]:
    """Byte figures converted by pint: each against its exact bytes, and pairs on one line."""
    from babel.numbers import parse_decimal

    from iteragpu.quantity import pint_registry

    ureg = pint_registry()
    failures = []
    stated: list[tuple[Token, Fraction, Fraction]] = []  # token, bytes per pint, tolerance
    for token, fig in resolved:
        exact = fig.exact_bytes
        if token.unit not in BYTE_UNITS or exact is None:
            continue
        number = (
            Fraction(parse_decimal(token.text, locale=doc.lang, strict=True)) * token.multiplier
        )
        unit_bytes = Fraction(ureg.Quantity(1, BYTE_UNITS[token.unit]).to("byte").magnitude)
        decimals = (
            len(token.text.rpartition("," if doc.lang == "id" else ".")[2])
            if (("," if doc.lang == "id" else ".") in token.text)
            else 0
        )
        tolerance = unit_bytes * token.multiplier / (2 * 10**decimals)
        as_bytes = number * unit_bytes
        stated.append((token, as_bytes, tolerance))
        if abs(as_bytes - exact) > tolerance:
            failures.append(
                f"{doc.path}:{token.line}: pint reads {token.text} {token.unit} as "
                f"{float(as_bytes):.0f} B, but the figure is {float(exact):.0f} B"
            )
    for i, (first, first_bytes, first_tol) in enumerate(stated):
        for second, second_bytes, second_tol in stated[i + 1 :]:
            same_line = first.line == second.line and first.unit != second.unit
            if same_line and abs(first_bytes - second_bytes) <= first_tol + second_tol:
                continue  # a consistent "X GB ... Y GiB" pair
            if same_line and _same_quantity(resolved, first, second):
                failures.append(
                    f"{doc.path}:{first.line}: pint finds {first.text} {first.unit} and "
                    f"{second.text} {second.unit} differ"
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
    snippets = [re.sub(r"\.(ko|id)\.", ".LANG.", name) for name in _SNIPPET.findall(doc.body)]
    return anchors, snippets, missing


def parity_failures(ko: PageDoc, id_: PageDoc) -> list[str]:
    failures = []
    ko_anchors, ko_snippets, ko_missing = structure(ko)
    id_anchors, id_snippets, id_missing = structure(id_)
    for doc, missing in ((ko, ko_missing), (id_, id_missing)):
        failures += [f"{doc.path}: heading without an explicit anchor: {h!r}" for h in missing]
    if ko_anchors != id_anchors:
        failures.append(f"{id_.path}: anchors {id_anchors} differ from {ko.path}: {ko_anchors}")
    if ko_snippets != id_snippets:
        failures.append(f"{id_.path}: snippets {id_snippets} differ from {ko.path}: {ko_snippets}")
    ko_refs, id_refs = set(ko.ledger), set(id_.ledger)
    for missing_ref in sorted(ko_refs - id_refs):
        failures.append(f"{id_.path}: states no figure {missing_ref} that {ko.path} states")
    for missing_ref in sorted(id_refs - ko_refs):
        failures.append(f"{ko.path}: states no figure {missing_ref} that {id_.path} states")
    for name in sorted(set(ko.literals) | set(id_.literals)):
        if ko.literals.get(name) != id_.literals.get(name):
            failures.append(
                f"{id_.path}: literal {name!r} is {id_.literals.get(name)!r}, "
                f"{ko.path} declares {ko.literals.get(name)!r}"
            )
    return failures


def check_tree(docs: Path) -> tuple[list[PageReport], list[str]]:
    reports, failures = [], []
    names = sorted(
        {
            p.relative_to(docs / lang).as_posix()
            for lang in LANGS
            for p in (docs / lang).rglob("*.md")
        }
    )
    for name in names:
        pages = {}
        for lang in LANGS:
            path = docs / lang / name
            if not path.exists():
                failures.append(f"{path}: missing (the other language has it)")
                continue
            pages[lang] = read_page(path, lang)
            reports.append(check_page(pages[lang]))
        if len(pages) == len(LANGS):
            failures += parity_failures(pages["ko"], pages["id"])
    return reports, failures


def suggest(path: Path, lang: str) -> str:
    """A draft ledger: the registry figure (preferring this page's examples) or a literal."""
    doc = read_page(path, lang)
    page = path.name
    lines = ["figures:", "  ledger:"]
    literals: dict[str, str] = {}
    for token in extract_tokens(doc):
        candidates = []
        for example in registry().values():
            for fig in example.figures:
                unit_ok = token.unit is None or token.unit == fig.unit
                if unit_ok and expected_text(fig, token, lang) == token.text:
                    local = f"{page}#{token.section}" in example.where
                    unit_rank = fig.unit != (token.unit or "")
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
            print(suggest(path, page_lang(path)))
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
