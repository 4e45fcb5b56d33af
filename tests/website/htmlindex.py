"""A small crawler's view of the built site: links, ids and <html lang> of every page."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

LINK_ATTRIBUTES = {"a": "href", "link": "href", "script": "src", "img": "src", "source": "src"}


@dataclass
class ParsedPage:
    lang: str | None = None
    ids: set[str] = field(default_factory=set)
    links: list[str] = field(default_factory=list)


class _Parser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.page = ParsedPage()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "html":
            self.page.lang = values.get("lang")
        if values.get("id"):
            self.page.ids.add(values["id"] or "")
        if tag == "a" and values.get("name"):
            self.page.ids.add(values["name"] or "")
        attribute = LINK_ATTRIBUTES.get(tag)
        if attribute and values.get(attribute):
            self.page.links.append(values[attribute] or "")


def parse(path: Path) -> ParsedPage:
    parser = _Parser()
    parser.feed(path.read_text("utf-8"))
    return parser.page


def resolve(site: Path, page: Path, link: str) -> tuple[Path, str] | None:
    """The file and fragment an internal link points to; None for external links."""
    parts = urlsplit(link)
    if parts.scheme or parts.netloc or link.startswith(("mailto:", "javascript:", "data:")):
        return None
    base = page.parent
    target = (base / unquote(parts.path)).resolve() if parts.path else page.resolve()
    if parts.path.startswith("/"):
        target = (site / unquote(parts.path).lstrip("/")).resolve()
    if target.is_dir():
        target = target / "index.html"
    return target, parts.fragment


# What a reader sees of a page, for the language tests (test_theme.py).
_NOT_PROSE = frozenset({"script", "style", "svg", "code", "pre", "kbd", "samp", "template"})
_BLOCKS = frozenset(
    """address article aside blockquote button caption dd details div dl dt fieldset figcaption
    figure footer form h1 h2 h3 h4 h5 h6 header label legend li main nav ol option p section
    summary table tbody td tfoot th thead title tr ul""".split()  # noqa: SIM905
)
_VOID = frozenset(
    """area base br col embed hr img input link meta param source track wbr""".split()  # noqa: SIM905
)
_LABELS = ("title", "aria-label", "placeholder", "alt")


@dataclass
class ReaderText:
    prose: str = ""
    """Visible text outside code (and the <title>), one blank line between blocks."""
    labels: list[str] = field(default_factory=list)
    """Tooltips, accessible names, placeholders, alternative texts, the meta description."""


class _ReaderParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[str] = []
        self.chunks: list[str] = []
        self.labels: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._attributes(tag, dict(attrs))
        if tag in _BLOCKS:
            self.chunks.append("\n\n")
        if tag not in _VOID:
            self.open.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._attributes(tag, dict(attrs))

    def handle_endtag(self, tag: str) -> None:
        if tag in self.open:
            while self.open.pop() != tag:
                pass
        if tag in _BLOCKS:
            self.chunks.append("\n\n")

    def handle_data(self, data: str) -> None:
        if not _NOT_PROSE.intersection(self.open):
            self.chunks.append(data)

    def _attributes(self, tag: str, values: dict[str, str | None]) -> None:
        self.labels.extend(values[name] or "" for name in _LABELS if values.get(name))
        if tag == "meta" and values.get("name") == "description":
            self.labels.append(values.get("content") or "")


def reader_text(path: Path) -> ReaderText:
    parser = _ReaderParser()
    parser.feed(path.read_text("utf-8"))
    parser.close()
    return ReaderText("".join(parser.chunks), [label for label in parser.labels if label])
