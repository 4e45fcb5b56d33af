"""The code font generator (`iteragpu.docs_tools.code_font`) on small fonts made here: it keeps
the characters of the code, refuses one whose width is not what the CLI counts, and renames
the subset. test_theme.py checks the committed font against the built site."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from fontTools.fontBuilder import FontBuilder
from fontTools.pens.ttGlyphPen import TTGlyphPen
from fontTools.ttLib import TTFont

from iteragpu.docs_tools.code_font import (
    ASCII,
    EXIT_INVALID_INPUT,
    FAMILY,
    CodeFontError,
    code_characters,
    code_font,
    main,
)

CELL = 500


def _font(path: Path, widths: dict[str, int]) -> Path:
    """A TrueType font with an empty glyph per character, `widths` overriding one cell."""
    chars = sorted(ASCII | set(widths))
    names = [".notdef", *(f"u{ord(char):04X}" for char in chars)]
    builder = FontBuilder(1000, isTTF=True)
    builder.setupGlyphOrder(names)
    builder.setupCharacterMap({ord(char): f"u{ord(char):04X}" for char in chars})
    empty = TTGlyphPen(None).glyph()
    builder.setupGlyf(dict.fromkeys(names, empty))
    advances = {f"u{ord(c):04X}": (widths.get(c, CELL), 0) for c in chars}
    builder.setupHorizontalMetrics({".notdef": (CELL, 0), **advances})
    builder.setupHorizontalHeader(ascent=800, descent=-200)
    builder.setupNameTable(
        {"familyName": "Source Mono", "styleName": "Regular", "fullName": "Source Mono Regular"}
    )
    builder.setupOS2()
    builder.setupPost()
    builder.save(str(path))
    return path


def test_it_keeps_the_codes_characters_and_ascii_and_renames_the_font(tmp_path: Path) -> None:
    source = _font(tmp_path / "source.ttf", {"한": 2 * CELL, "글": 2 * CELL, "·": CELL})
    data, manifest = code_font(source, {"한", "·", "٣"})
    font = TTFont(io.BytesIO(data))
    assert {chr(code) for code in font.getBestCmap()} == ASCII | {"한", "·"}
    assert font["name"].getDebugName(1) == FAMILY
    assert manifest["missing"] == "٣"  # not in the source: drawn by the next font
    assert manifest["source"]["name"] == "Source Mono Regular"
    assert data[:4] == b"wOF2"


def test_it_refuses_a_character_narrower_than_the_cli_counts_it(tmp_path: Path) -> None:
    # Noto Sans Mono CJK's Hangul is 920 units: not two cells of 500.
    source = _font(tmp_path / "source.ttf", {"한": 920})
    with pytest.raises(CodeFontError, match=r"'한' \(U\+D55C: 920 units, not 2 x 500\)"):
        code_font(source, {"한"})


def test_it_reads_every_code_element_and_nothing_else(tmp_path: Path) -> None:
    page = tmp_path / "index.html"
    page.write_text(
        "<p>산문 é</p><pre><code>가<span>나</span>\n</code></pre><kbd>Ctrl</kbd><samp>×</samp>",
        "utf-8",
    )
    assert code_characters([page]) == {"가", "나", "C", "t", "r", "l", "×"}


def test_it_writes_the_font_and_its_manifest(tmp_path: Path) -> None:
    source = _font(tmp_path / "source.ttf", {"한": 2 * CELL})
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<code>한</code>", "utf-8")
    out = tmp_path / "fonts"
    argv = ["--source-font", str(source), "--site-dir", str(site), "--out-dir", str(out)]
    assert main(argv) == 0
    assert "한" in {chr(c) for c in TTFont(out / "iteragpu-code.woff2").getBestCmap()}
    assert json.loads((out / "iteragpu-code.json").read_text("utf-8"))["missing"] == ""


def test_it_refuses_a_site_that_is_not_built(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _font(tmp_path / "source.ttf", {})
    argv = ["--source-font", str(source), "--site-dir", str(tmp_path / "none")]
    assert main(argv) == EXIT_INVALID_INPUT
    err = capsys.readouterr().err
    assert err.startswith("code_font: error: ") and err.count("\n") == 1
    assert "build the site first" in err
