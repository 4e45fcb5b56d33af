"""The GPU sheets (`docs/<code>/docs/gpus/<card>.md`), written from the catalogue and the
sheets' words (`docs/gpu_sheets.yml`), in every language of the list.

    python -m iteragpu.docs_tools.gpu_sheets --write   # every card, every language
    python -m iteragpu.docs_tools.gpu_sheets --check   # exit 1 if a sheet differs from --write

No sheet is hand-copied: each figure comes from the worked-examples registry (`card-<id>`,
built from the catalogue by `iteragpu.examples`), is formatted for the language and entered in
the page's figure ledger in the order it appears, so `figure_check` verifies every one.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iteragpu.docs_tools import require_extra
from iteragpu.examples import figure, reported_key
from iteragpu.gpus.catalog import Card, HourlyOffer, load_catalog
from iteragpu.i18n.languages import CODES
from iteragpu.i18n.numbers import format_number

require_extra("yaml")

ROOT = Path(__file__).resolve().parents[3]
WORDS = ROOT / "docs" / "gpu_sheets.yml"
GENERATED_NOTE = (
    "# Written by `python -m iteragpu.docs_tools.gpu_sheets --write` from the catalogue and\n"
    "# docs/gpu_sheets.yml: edit those, not this page."
)
# Material's search weight of a sheet's sections: the thirteen sheets share their headings
# (nominal capacity, packages), which would otherwise bury the guide that explains the concept;
# a sheet still comes first for its card's name, in its title.
SEARCH_BOOST = 0.2
# The index is the one page that sets every card's price and capacity side by side: it keeps
# Material's default weight, so a reader's "cheap GPU" can find it.
INDEX_SEARCH_BOOST = 1
UNITS_EXAMPLE = "units-gb-gib"
UNIT_KEYS = ("one_gb", "decimal_base", "gb_exponent", "one_gib", "binary_base", "gib_exponent")
# A number in a card's name, read as the figure checker reads numbers: "4090" in "RTX 4090",
# not the 4 of "T4" or the 100 of "A100" (glued to a letter).
_NAME_NUMBER = re.compile(r"(?<![A-Za-z0-9_.,])(\d+)(?![A-Za-z0-9])(?P<unit> GB)?")
_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")


@dataclass
class Text:
    """Markdown with the ledger entries of the figures it states, in order."""

    markdown: str = ""
    ledger: list[str] = field(default_factory=list)
    literals: dict[str, str] = field(default_factory=dict)

    def __add__(self, other: Text) -> Text:
        return Text(
            self.markdown + other.markdown,
            self.ledger + other.ledger,
            {**self.literals, **other.literals},
        )


def plain(markdown: str) -> Text:
    return Text(markdown)


def stated(reference: str, lang: str) -> Text:
    """A registry figure (`card-t4.nominal_gb`) as the page writes it, with its ledger entry."""
    fig = figure(reference)
    return Text(format_number(fig.value, fig.decimals, lang), [reference])


def card_name(card: Card) -> Text:
    """The card's name; each number in it is a ledger entry: the nominal figure where it is
    followed by GB, else a literal stated verbatim."""
    parts, at = Text(), 0
    for match in _NAME_NUMBER.finditer(card.name):
        parts += plain(card.name[at : match.start()])
        digits = match[1]
        if match["unit"] and card.nominal_memory_gb == int(digits):
            parts += Text(digits, [f"card-{card.id}.nominal_gb"])
        else:
            name = f"model_{digits}"
            parts += Text(digits, [f"lit.{name}"], {name: digits})
        at = match.start(1) + len(digits)
    return parts + plain(card.name[at:])


def fill(template: str, values: Mapping[str, Text]) -> Text:
    """`template` with each `{name}` replaced by its text, ledger entries in reading order."""
    result, at = Text(), 0
    for match in _PLACEHOLDER.finditer(template):
        result += plain(template[at : match.start()]) + values[match[1]]
        at = match.end()
    return result + plain(template[at:])


def table(
    headers: Sequence[Text], rows: Sequence[Sequence[Text]], numeric: int, skip: int = 0
) -> Text:
    """A Markdown table; the `numeric` columns after the first `skip` are right-aligned."""
    aligns = ["---:" if skip <= i < skip + numeric else "---" for i in range(len(headers))]
    text = _row(headers) + plain("\n| " + " | ".join(aligns) + " |\n")
    for row in rows:
        text += _row(row) + plain("\n")
    return text


def _row(cells: Sequence[Text]) -> Text:
    text = plain("| ")
    for i, cell in enumerate(cells):
        text += cell + plain(" | " if i < len(cells) - 1 else " |")
    return text


@dataclass(frozen=True)
class Words:
    texts: Mapping[str, Any]  # key -> language -> text (or list of texts)
    remarks: Mapping[str, Mapping[str, str]]  # card id -> language -> sentence


def load_words(path: Path = WORDS) -> Words:
    """The sheets' words; ValueError if an entry misses a language of the list."""
    import yaml

    data = yaml.safe_load(path.read_text("utf-8"))
    remarks = data.pop("declared_remarks")
    for key, texts in [*data.items(), *remarks.items()]:
        for lang in CODES:
            if lang not in texts:
                raise ValueError(f"{path}: {key!r} has no {lang!r} text")
    return Words(data, remarks)


class Sheet:
    """One card's sheet in one language."""

    def __init__(self, card: Card, lang: str, words: Words, catalog: Sequence[Card]) -> None:
        self.card, self.lang, self.words, self.catalog = card, lang, words, catalog
        self.example = f"card-{card.id}"

    def w(self, key: str) -> Any:
        return self.words.texts[key][self.lang]

    def fig(self, key: str) -> Text:
        return stated(f"{self.example}.{key}", self.lang)

    def markdown(self) -> str:
        body = (
            plain("# ")
            + card_name(self.card)
            + plain("\n\n")
            + fill(self.w("intro"), {"name": card_name(self.card)})
            + self.capacity()
            + self.declared()
            + self.not_told()
            + self.packages()
            + self.use_it()
        )
        description = self.w("description").replace("{name}", self.card.name)
        return _front(description, body) + body.markdown.rstrip("\n") + "\n"

    def heading(self, key: str, anchor: str) -> Text:
        return plain(f"\n\n## {self.w(key)} {{ #{anchor} }}\n\n")

    def capacity(self) -> Text:
        units = {key: stated(f"{UNITS_EXAMPLE}.{key}", self.lang) for key in UNIT_KEYS}
        text = self.heading("capacity_heading", "capacity")
        text += fill(self.w("capacity_convention"), units) + plain("\n\n")
        if self.card.nominal_memory_gb is None:
            raise ValueError(f"{self.card.id}: a sheet needs the nominal capacity")
        row = [self.fig("nominal_gb"), self.fig("nominal_bytes"), self.fig("nominal_gib")]
        headers = [plain(h) for h in self.w("capacity_table")]
        text += table(headers, [row], numeric=3) + plain("\n")
        text += plain(self.w("capacity_not_bound") + "\n\n")
        reference = self.card.nominal_reference
        if reference is None:
            text += plain(self.w("nominal_source_guide"))
        else:
            key = f"nominal_source_{reference.kind}"
            text += fill(self.w(key), {"url": plain(reference.url), "seen": plain(reference.seen)})
        return text + plain("\n\n" + self.w("units_source"))

    def declared(self) -> Text:
        text = self.heading("declared_heading", "declared") + plain(self.w("declared_intro"))
        d = self.card.declared
        if d is None:
            unknown = (
                "declared_unknown_readings" if self.card.readings_not_bounds else "declared_unknown"
            )
            text += plain(" " + self.w(unknown))
        else:
            text += plain(" ") + fill(self.w("declared_one_output"), {"tool": plain(d.tool)})
            text += plain("\n\n") + self.output_table(
                d.reported_unit,
                [
                    self.fig(reported_key("declared", d.reported_unit)),
                    self.fig("declared_bytes"),
                    self.fig("declared_gib"),
                ],
                d.tool,
                d.tool_version,
                d.date,
                d.url,
            )
            if d.reported_unit == "MiB":
                text += plain("\n" + self.w("declared_rounding_mib"))
        remark = self.words.remarks.get(self.card.id, {}).get(self.lang)
        if remark:
            text += plain(" " + remark)
        for number, reading in enumerate(self.card.readings_not_bounds, 1):
            text += plain("\n\n" + self.w("readings_intro") + "\n\n")
            key = f"reading_{number}"
            text += self.output_table(
                reading.reported_unit,
                [
                    self.fig(reported_key(key, reading.reported_unit)),
                    self.fig(f"{key}_bytes"),
                    self.fig(f"{key}_gib"),
                ],
                reading.tool,
                reading.tool_version,
                reading.date,
                reading.url,
            )
            why = fill(self.w(f"reading_{reading.why_not_a_bound}"), self.sheet_links())
            text += plain("\n") + why
            if reading.tool_version is None:
                text += plain(" " + self.w("reading_no_version"))
        bound = "declared_bound" if d is not None else "declared_no_bound"
        return text + plain("\n\n" + self.w(bound))

    def output_table(
        self,
        unit: str,
        figures: list[Text],
        tool: str,
        version: str | None,
        date: str | None,
        url: str,
    ) -> Text:
        headers = [plain(h.replace("{unit}", unit)) for h in self.w("declared_table")]
        tool_text = plain(f"`{tool} {version}`" if version else f"`{tool}`")
        date_text = plain(f"`{date}`" if date else self.w("no_date"))
        link = plain(f"[{self.w('source_link')}]({url})")
        return table(headers, [[*figures, tool_text, date_text, link]], numeric=3)

    def sheet_links(self) -> dict[str, Text]:
        example = next(c for c in self.catalog if c.id == "rtx-6000-ada")
        return {"ecc_example": self.sheet_link(example)}

    def sheet_link(self, card: Card) -> Text:
        return plain("[") + card_name(card) + plain(f"]({card.id}.md)")

    def not_told(self) -> Text:
        text = self.heading("not_told_heading", "not-told")
        text += fill(self.w("not_told_intro"), {"nominal_gb": self.fig("nominal_gb")})
        items = "".join(f"- {item}\n" for item in self.w("not_told_items"))
        text += plain("\n\n" + items + "\n" + self.w("not_told_outro") + "\n\n")
        return text + plain(
            f'!!! warning "{self.w("two_cards_title")}"\n    {self.w("two_cards_text")}'
        )

    def packages(self) -> Text:
        text = self.heading("packages_heading", "packages")
        packages, hourly = self.card.fixed_packages, self.card.offers
        if not packages and not hourly:
            # Price unknown is not free: the page says it is never written as zero.
            zero = Text("0", ["lit.zero"], {"zero": "0"})
            text += fill(self.w("packages_none"), {"zero": zero}) + plain(" ")
            return text + self.search_note() + plain("\n\n") + self.price_note()
        if not packages:
            return text + self.hourly_offers(hourly) + self.price_note()
        numbered = list(enumerate(packages, 1))
        guide = [(n, p) for n, p in numbered if p.url is None]
        offers = [(n, p) for n, p in numbered if p.url is not None]
        if guide:
            text += plain(self.w("packages_guide") + "\n\n")
            rows = []
            for number, package in guide:
                key = f"package_{number}"
                date = f"`{package.price_date}`" if package.price_date else self.w("price_no_date")
                rows.append(
                    [
                        self.fig(f"{key}_cards"),
                        self.fig(f"{key}_days"),
                        self.fig(f"{key}_price_usd"),
                        plain(date),
                        plain(self.w("guide_example_link")),
                    ]
                )
            headers = [plain(h) for h in self.w("packages_table")]
            text += table(headers, rows, numeric=3) + plain("\n")
        if offers:
            text += self.offers(offers)
        if hourly:
            text += self.hourly_offers(hourly)
        else:
            text += self.search_note() + plain("\n\n")
        text += self.price_note()
        if not guide:
            return text
        return (
            text
            + plain("\n\n")
            + fill(self.w("packages_guide_source"), {"name": card_name(self.card)})
        )

    def offers(self, offers: Sequence[tuple[int, Any]]) -> Text:
        """Several cards rented together, as a provider's page offers them: the page's hourly
        rate for the package, the price for the days (rate x 24 h x days), the page and the
        date it was seen, and the page's own words."""
        hours = Text("24", ["lit.hours_per_day"], {"hours_per_day": "24"})
        text = fill(self.w("packages_offers"), {"hours": hours}) + plain("\n\n")
        rows = []
        quotes = []
        copies: list[tuple[str, str | None, str | None]] = []
        for number, package in offers:
            key = f"package_{number}"
            # A copy of a provider's page is named as one, with the page it copies and the date
            # its own words give for a change of its prices.
            page = "offer_page" if package.copy_of is None else "offer_copy"
            if package.copy_of is not None and package.copy_of not in [c[0] for c in copies]:
                copies.append((package.copy_of, package.prices_until, package.prices_until_states))
            rows.append(
                [
                    self.fig(f"{key}_cards"),
                    self.fig(f"{key}_days"),
                    self.fig(f"{key}_hourly_usd"),
                    self.fig(f"{key}_price_usd"),
                    plain(f"`{package.seen}`"),
                    plain(f"[{self.w(page)}]({package.url})"),
                ]
            )
            quotes.append(plain(f"- `{package.states}`\n"))
        headers = [plain(h) for h in self.w("packages_offers_table")]
        text += table(headers, rows, numeric=4) + plain("\n")
        text += plain(self.w("packages_offers_quoted") + "\n\n")
        for quote in quotes:
            text += quote
        for original, until, words in copies:
            text += plain("\n") + fill(
                self.w("packages_offers_copy"),
                {
                    "original": plain(original),
                    "date": plain(f"`{until}`"),
                    "words": plain(f"`{words}`"),
                },
            )
            text += plain("\n")
        return text + plain("\n")

    def search_note(self) -> Text:
        """No hourly price found: the date public price lists were searched."""
        search = self.card.price_search
        if search is None or search.found:
            raise ValueError(f"{self.card.id}: a card without an hourly price needs its search")
        return fill(self.w("offers_none"), {"date": plain(f"`{search.searched}`")})

    def hourly_offers(self, offers: Sequence[HourlyOffer]) -> Text:
        """The on-demand hourly prices read on public price lists: the page's rate (per GPU or
        for the whole instance), the exact rate per GPU, the page's date for its price, the date
        it was read, the page (and the provider's own page where it names one), its words."""
        hours = Text("24", ["lit.hours_per_day"], {"hours_per_day": "24"})
        text = fill(self.w("hourly_intro"), {"hours": hours}) + plain("\n\n")
        rows, quotes = [], []
        for number, offer in enumerate(offers, 1):
            key = f"offer_{number}"
            basis = self.w("per_gpu") if offer.price_per == "gpu" else self.w("per_instance")
            date = f"`{offer.page_date}`" if offer.page_date else self.w("hourly_no_page_date")
            link = f"[{self.w(f'hourly_page_{offer.page_kind}')}]({offer.url})"
            if offer.provider_url:
                link += f" · [{self.w('hourly_provider_page')}]({offer.provider_url})"
            rows.append(
                [
                    plain(offer.provider),
                    plain(f"`{offer.product}`"),
                    plain(basis),
                    self.fig(f"{key}_cards"),
                    self.fig(f"{key}_hourly_usd"),
                    self.fig(f"{key}_gpu_hourly_usd"),
                    plain(date),
                    plain(f"`{offer.seen}`"),
                    plain(link),
                ]
            )
            quotes.append(plain(f"- {offer.provider}: `{offer.states}`\n"))
        headers = [plain(h) for h in self.w("hourly_table")]
        text += table(headers, rows, numeric=3, skip=3) + plain("\n")
        text += plain(self.w("packages_offers_quoted") + "\n\n")
        for quote in quotes:
            text += quote
        if any(offer.page_kind == "secondary" for offer in offers):
            text += plain("\n" + self.w("hourly_secondary") + "\n")
        return text + plain("\n")

    def price_note(self) -> Text:
        return plain(f'!!! note "{self.w("price_title")}"\n    {self.w("price_text")}')

    def use_it(self) -> Text:
        text = self.heading("use_heading", "use-it")
        compare = "use_compare_declared" if self.card.declared else "use_compare_unknown"
        steps = [self.w("use_need"), self.w(compare), self.w("use_measure")]
        text += plain("".join(f"{n}. {step}\n" for n, step in enumerate(steps, 1)) + "\n")
        others = [c for c in self.catalog if c.id != self.card.id]
        sheets = Text()
        for i, other in enumerate(others):
            sheets += (plain(", ") if i else Text()) + self.sheet_link(other)
        return text + fill(self.w("use_others"), {"sheets": sheets})


INDEX = "index"
"""The sheets' index page, `gpus/index.md`: the GPU sheets' section page in the navigation."""


def index_page(lang: str, words: Words, catalog: Sequence[Card]) -> str:
    """The list of every card's sheet, with its nominal and declared capacity and its lowest
    hourly price per GPU (or the date the search found none)."""
    w = {key: texts[lang] for key, texts in words.texts.items()}
    rows = []
    for card in catalog:
        declared = (
            stated(f"card-{card.id}.declared_gib", lang)
            if card.declared is not None
            else plain(w["index_unknown"])
        )
        link = plain("[") + card_name(card) + plain(f"]({card.id}.md)")
        nominal = stated(f"card-{card.id}.nominal_gb", lang)
        rows.append([link, nominal, declared, _price(card, lang, w)])
    body = (
        plain(f"# {w['index_title']}\n\n{w['index_intro']}\n\n")
        + table([plain(h) for h in w["index_table"]], rows, numeric=2, skip=1)
        + plain(f"\n{w['index_outro']}\n")
    )
    front = _front(w["index_description"], body, INDEX_SEARCH_BOOST)
    return front + body.markdown.rstrip("\n") + "\n"


def _price(card: Card, lang: str, w: Mapping[str, Any]) -> Text:
    """The index's price cell: the lowest hourly rate per GPU, its provider and the date the
    page gives for it (else the date it was read); or the date the search found none."""
    lowest = card.lowest_offer()
    if lowest is None:
        search = card.price_search
        if search is None:
            raise ValueError(f"{card.id}: a card without an hourly price needs its search")
        return fill(w["index_no_price"], {"date": plain(f"`{search.searched}`")})
    return fill(
        w["index_price"],
        {
            "price": stated(f"card-{card.id}.lowest_gpu_hourly_usd", lang),
            "provider": plain(lowest.provider),
            "date": plain(f"`{lowest.page_date or lowest.seen}`"),
        },
    )


def _front(description: str, body: Text, boost: float = SEARCH_BOOST) -> str:
    """A generated page's front matter: the note, its description, its figure ledger."""
    literals = "".join(f"    {k}: '{v}'\n" for k, v in sorted(body.literals.items()))
    ledger = "".join(f"  - {entry}\n" for entry in body.ledger)
    return (
        "---\n"
        f"{GENERATED_NOTE}\n"
        f"description: {_yaml_string(description)}\n"
        f"search:\n  boost: {boost}\n"
        "figures:\n"
        + (f"  literals:\n{literals}" if literals else "")
        + (f"  ledger:\n{ledger}" if ledger else "  ledger: []\n")
        + "---\n"
    )


def _yaml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def sheets(words: Words, catalog: Sequence[Card]) -> dict[tuple[str, str], str]:
    """(language, page) -> the page's Markdown: every card's sheet and the index (`INDEX`),
    in every language."""
    pages = {
        (lang, card.id): Sheet(card, lang, words, catalog).markdown()
        for lang in CODES
        for card in catalog
    }
    pages.update({(lang, INDEX): index_page(lang, words, catalog) for lang in CODES})
    return pages


def stale_sheets(docs: Path, words: Words, catalog: Sequence[Card]) -> list[Path]:
    """Sheets missing or differing from what `--write` writes, and sheets of no card."""
    expected = sheets(words, catalog)
    stale = []
    for (lang, card_id), text in expected.items():
        path = docs / lang / "docs" / "gpus" / f"{card_id}.md"
        if not path.is_file() or path.read_text("utf-8") != text:
            stale.append(path)
    for lang in CODES:
        known = {card.id for card in catalog} | {INDEX}
        stale += [
            path
            for path in sorted((docs / lang / "docs" / "gpus").glob("*.md"))
            if path.stem not in known
        ]
    return stale


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args not in (["--write"], ["--check"]):
        print("usage: python -m iteragpu.docs_tools.gpu_sheets --write | --check", file=sys.stderr)
        return 2
    words, catalog, docs = load_words(), load_catalog(), WORDS.parent
    if args == ["--write"]:
        for (lang, card_id), text in sheets(words, catalog).items():
            path = docs / lang / "docs" / "gpus" / f"{card_id}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, "utf-8")
        return 0
    stale = stale_sheets(docs, words, catalog)
    for path in stale:
        print(f"{path}: not written from the catalogue; run --write", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
