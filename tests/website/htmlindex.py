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
