"""Plain-text tables for the terminal, aligned by display width (Hangul counts as two columns)."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import Final

TABLE_WIDTH: Final = 96
"""The widest a table is drawn when it can be narrower, in display columns: what the site's code
column shows without scrolling at its widest layout (688 px of the code font, about 97 columns),
and less than a wide terminal. A wider table first puts each header that is wider than its
column's values on as many lines as its words need, then, where that makes it fit, folds its
labels at their spaces; its values are never folded, so a table whose values are wider than
this stays wider."""

TEXT_WIDTH: Final = 80
"""The widest a line of prose is printed, in display columns: a classic terminal's width, the
width click gives the commands' help, and well within the site's code column."""


def display_width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _fold(text: str, limit: int) -> list[str]:
    """`text` cut at its spaces into lines of at most `limit` display columns (a longer word
    keeps a line of its own)."""
    lines: list[str] = []
    for word in text.split(" "):
        if lines and display_width(lines[-1]) + 1 + display_width(word) <= limit:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


def fold_text(text: str, width: int = TEXT_WIDTH, indent: str = "  ") -> str:
    """Each line of `text` cut at its spaces into lines of at most `width` display columns, the
    lines after the first indented by `indent`; a longer word (an address) keeps a line of its
    own. For the notes under a table (the CLI's views call it).

    >>> print(fold_text("RTX 4090 · memory: the nominal capacity exceeds the need", width=30))
    RTX 4090 · memory: the nominal
      capacity exceeds the need
    """
    folded = []
    for line in text.split("\n"):
        first, *rest = _fold(line, width) if line else [""]
        rest = _fold(" ".join(rest), width - display_width(indent)) if rest else []
        folded += [first, *(indent + part for part in rest)]
    return "\n".join(folded)


def _longest_word(cells: Sequence[str]) -> int:
    return max((display_width(word) for cell in cells for word in cell.split(" ")), default=0)


def render_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    left_columns: int = 1,
    width: int = TABLE_WIDTH,
) -> str:
    """The first `left_columns` columns left-aligned (labels), the others right-aligned (numbers).

    >>> print(render_table(["x", "bytes (B)"], [["a", "1,024"]]))
    x  bytes (B)
    -  ---------
    a      1,024

    A table wider than `width` puts a header wider than its values on several lines, the last
    one next to the rule; then, if still too wide, it folds its labels:

    >>> print(render_table(["card", "declared (GiB)"], [["RTX 6000 Ada", "47.99"]], width=20))
              declared
    card         (GiB)
    --------  --------
    RTX 6000     47.99
    Ada

    A label is not folded when the table would stay too wide for its values anyway:

    >>> print(render_table(["card", "status"], [["RTX 6000 Ada", "check needed"]], width=16))
    card                status
    ------------  ------------
    RTX 6000 Ada  check needed
    """
    columns = range(len(headers))
    head = [[header] for header in headers]
    body = [[[cell] for cell in row] for row in rows]

    def widths() -> list[int]:
        return [
            max(display_width(line) for cells in [head, *body] for line in cells[i])
            for i in columns
        ]

    def total() -> int:
        return sum(widths()) + 2 * (len(headers) - 1)

    if total() > width:
        for i in columns:
            values = max((display_width(row[i]) for row in rows), default=0)
            if display_width(headers[i]) > values:
                head[i] = _fold(headers[i], max(values, _longest_word([headers[i]])))
    # Labels are folded only where that makes the table fit: a card's name cut in two is
    # harder to read, and no help to a table that stays too wide for its figures.
    labels = range(min(left_columns, len(headers)))
    words = {i: _longest_word([headers[i], *(row[i] for row in rows)]) for i in labels}
    if sum(words.values()) - sum(widths()[i] for i in labels) + total() > width:
        labels = range(0)
    for i in sorted(labels, key=lambda i: -widths()[i]):
        excess = total() - width
        if excess <= 0:
            break
        limit = max(words[i], widths()[i] - excess)
        head[i] = _fold(headers[i], limit)
        for j, row in enumerate(rows):
            body[j][i] = _fold(row[i], limit)

    final = widths()

    def lines(cells: Sequence[Sequence[str]], bottom: bool) -> list[str]:
        height = max(len(cell) for cell in cells)
        drawn = []
        for k in range(height):
            padded = []
            for i, cell in enumerate(cells):
                at = k - (height - len(cell)) if bottom else k
                text = cell[at] if 0 <= at < len(cell) else ""
                pad = " " * (final[i] - display_width(text))
                padded.append(text + pad if i < left_columns else pad + text)
            drawn.append("  ".join(padded).rstrip())
        return drawn

    rule = "  ".join("-" * w for w in final)
    return "\n".join(
        [*lines(head, True), rule, *(line for row in body for line in lines(row, False))]
    )
