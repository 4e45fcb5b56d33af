"""Generate the site's code font: the characters of every code element of a built site, cut
from D2Coding, a monospace font in which a wide character (Hangul) is exactly two cells.

    python -m iteragpu.docs_tools.code_font --source-font d2coding.ttf --site-dir SITE

D2Coding comes from npm (`npm pack d2coding@1.3.2`, then `package/src/d2coding.ttf`). Build the
site first (`python -m iteragpu.docs_tools.build_site --site-dir SITE`), then run this from the
repository root: it writes `iteragpu-code.woff2` and `iteragpu-code.json` (the source's name,
version and digest, and the characters it lacks) into `docs/overrides/assets/fonts/`, which
the theme copies into every language. `docs/overrides/assets/stylesheets/iteragpu.css` makes it
the font of code. The site tests fail when a page's code holds a character the font lacks, or
the font holds one no code uses: run this again then.

The CLI pads its tables by terminal cells (a wide or full-width character counts two,
`iteragpu.cli.table.display_width`): every character kept must be as many half-em cells wide
in the font, or the generator refuses it, naming it. The subset is renamed (OFL: a Modified
Version does not carry the original's name); `LICENSE.txt` beside it is the font's licence.

Exit codes: 0 written; 2 bad arguments, a source that is not a font, a site that is not built,
or a character of the wrong width (one line on stderr).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import sys
import unicodedata
from collections.abc import Iterable, Sequence
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, NoReturn

from iteragpu.docs_tools import require_extra

require_extra("fontTools", "brotli")

from fontTools import subset  # noqa: E402  (after the extra's check)
from fontTools.ttLib import TTFont  # noqa: E402

FONT_DIR = Path("docs") / "overrides" / "assets" / "fonts"
FONT_NAME = "iteragpu-code.woff2"
MANIFEST_NAME = "iteragpu-code.json"
FAMILY = "IteraGPU Code"
POSTSCRIPT_NAME = "IteraGPUCode-Regular"
# Printable ASCII is always kept: code of any language is mostly made of it.
ASCII = frozenset(chr(code) for code in range(0x20, 0x7F))
CODE_ELEMENTS = frozenset({"code", "pre", "kbd", "samp"})
# name IDs kept from the source: copyright, version, licence and its URL. Family, style and
# the other names are this subset's own.
KEPT_NAME_IDS = (0, 5, 13, 14)
EXIT_INVALID_INPUT = 2


class CodeFontError(ValueError):
    """A source font or a site the code font cannot be made from."""


def cells(char: str) -> int:
    """Terminal cells of a character, as the CLI counts them (`display_width`)."""
    return 2 if unicodedata.east_asian_width(char) in "WF" else 1


class _CodeText(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.depth = 0
        self.chars: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in CODE_ELEMENTS:
            self.depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in CODE_ELEMENTS and self.depth:
            self.depth -= 1

    def handle_data(self, data: str) -> None:
        if self.depth:
            self.chars.update(data)


def code_characters(pages: Iterable[Path]) -> set[str]:
    """Every character but controls (line breaks) inside a code element (code, pre, kbd, samp)
    of the pages."""
    parser = _CodeText()
    for page in pages:
        parser.feed(page.read_text("utf-8"))
        parser.close()
        parser.depth = 0
    return {char for char in parser.chars if not unicodedata.category(char).startswith("C")}


def site_pages(site_dir: Path) -> list[Path]:
    pages = sorted(site_dir.rglob("*.html"))
    if not pages:
        raise CodeFontError(f"{site_dir} holds no HTML page: build the site first")
    return pages


def code_font(source: Path, chars: set[str]) -> tuple[bytes, dict[str, Any]]:
    """The WOFF2 subset of `source` holding `chars` (and printable ASCII), and its manifest."""
    try:
        font = TTFont(source, recalcTimestamp=False)
        cmap = font.getBestCmap()
    except Exception as exc:  # fontTools raises many kinds for a file that is not a font
        raise CodeFontError(f"{source}: not a font ({exc})") from None
    advances = font["hmtx"].metrics
    source_name = _name(font, 4)
    cell = advances[cmap[ord("0")]][0]
    wanted = sorted(chars | ASCII)
    kept = [char for char in wanted if ord(char) in cmap]
    wrong = [
        f"{char!r} (U+{ord(char):04X}: {advances[cmap[ord(char)]][0]} units, not "
        f"{cells(char)} x {cell})"
        for char in kept
        if advances[cmap[ord(char)]][0] != cells(char) * cell
    ]
    if wrong:
        raise CodeFontError(
            f"{source}: characters not as wide as the CLI counts them: {', '.join(wrong)}"
        )
    options = subset.Options()
    options.flavor = "woff2"
    options.layout_features = []  # no ligature or contextual form may change a width
    options.hinting = False
    options.drop_tables += ["FFTM"]  # FontForge's timestamps
    options.name_IDs = list(KEPT_NAME_IDS)
    options.name_languages = ["*"]
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=[ord(char) for char in kept])
    subsetter.subset(font)
    # The subsetter also maps a kept character's Bidi mirror (≥ beside ≤): the font maps only
    # the characters the site's code uses.
    wanted_codes = {ord(char) for char in kept}
    for table in font["cmap"].tables:
        table.cmap = {code: glyph for code, glyph in table.cmap.items() if code in wanted_codes}
    _rename(font)
    out = io.BytesIO()
    font.flavor = "woff2"
    font.save(out)
    manifest = {
        "family": FAMILY,
        "source": {
            "file": source.name,
            "name": source_name,
            "version": _name(font, 5),
            "sha256": hashlib.sha256(source.read_bytes()).hexdigest(),
        },
        # Characters of the site's code that the source font lacks: the browser draws them
        # with the next font of the code font stack.
        "missing": "".join(char for char in wanted if ord(char) not in cmap),
    }
    return out.getvalue(), manifest


def _name(font: TTFont, name_id: int) -> str:
    record = font["name"].getName(name_id, 3, 1, 0x409) or font["name"].getName(name_id, 1, 0, 0)
    return str(record) if record else ""


def _rename(font: TTFont) -> None:
    names = font["name"]
    for name_id, value in (
        (1, FAMILY),
        (2, "Regular"),
        (3, f"{POSTSCRIPT_NAME};subset"),
        (4, f"{FAMILY} Regular"),
        (6, POSTSCRIPT_NAME),
    ):
        names.setName(value, name_id, 3, 1, 0x409)
        names.setName(value, name_id, 1, 0, 0)
    if "CFF " in font:
        font["CFF "].cff.fontNames = [POSTSCRIPT_NAME]


def write(source: Path, site_dir: Path, out_dir: Path = FONT_DIR) -> Path:
    """Write the code font and its manifest for the site built in `site_dir`; the font's path."""
    data, manifest = code_font(source, code_characters(site_pages(site_dir)))
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / FONT_NAME).write_bytes(data)
    text = json.dumps(manifest, ensure_ascii=False, indent=2) + "\n"
    (out_dir / MANIFEST_NAME).write_text(text, "utf-8")
    return out_dir / FONT_NAME


class _OneLineParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_INVALID_INPUT, f"code_font: error: {' '.join(message.split())}\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = _OneLineParser(
        prog="python -m iteragpu.docs_tools.code_font",
        description="Cut the site's code font from D2Coding, to the characters its code uses.",
        epilog="D2Coding comes from npm: `npm pack d2coding@1.3.2 && tar xzf d2coding-1.3.2.tgz`, "
        "then --source-font package/src/d2coding.ttf. Build the site first "
        "(python -m iteragpu.docs_tools.build_site --site-dir SITE), then --site-dir SITE.",
    )
    parser.add_argument("--source-font", type=Path, required=True, help="D2Coding's .ttf")
    parser.add_argument("--site-dir", type=Path, required=True, help="a built site")
    parser.add_argument("--out-dir", type=Path, default=FONT_DIR, help=f"default: {FONT_DIR}")
    args = parser.parse_args(argv)
    try:
        path = write(args.source_font, args.site_dir, args.out_dir)
    except (CodeFontError, OSError) as exc:
        print(f"code_font: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return EXIT_INVALID_INPUT
    print(f"{path}: {path.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
