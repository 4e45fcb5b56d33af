"""Plain-text tables for the terminal, aligned by display width (Hangul counts as two columns)."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence


def display_width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def render_table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], left_columns: int = 1
) -> str:
    """The first `left_columns` columns left-aligned (labels), the others right-aligned (numbers).

    >>> print(render_table(["x", "bytes (B)"], [["a", "1,024"]]))
    x  bytes (B)
    -  ---------
    a      1,024
    """
    widths = [max(display_width(row[i]) for row in [headers, *rows]) for i in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        padded = []
        for i, cell in enumerate(cells):
            pad = " " * (widths[i] - display_width(cell))
            padded.append(cell + pad if i < left_columns else pad + cell)
        return "  ".join(padded).rstrip()

    rule = ["-" * w for w in widths]
    return "\n".join([line(headers), line(rule), *(line(row) for row in rows)])
