"""Locale-aware figures: `ko` 13.04 and 1,073,741,824; `id` 13,04 and 1.073.741.824.

The symbols are Babel's, cached at build time in `number_symbols` (written by
`python -m iteragpu.docs_tools.number_symbols --write`), so that no command loads Babel's locale
data: the tests check that the table is Babel's and that `format_number` prints what Babel's
`format_decimal` prints, for every language of the list.
"""

from __future__ import annotations

from fractions import Fraction

from iteragpu.core.numbers import round_half_up
from iteragpu.i18n.number_symbols import NUMBER_SYMBOLS

GROUP_SIZE = 3  # the "#,##0" pattern: thousands, then every three digits


def format_number(value: int | Fraction, decimals: int, lang: str) -> str:
    """`value` rounded half-up to exactly `decimals` places, grouped and punctuated for `lang`.

    >>> from iteragpu.core.units import gib
    >>> format_number(gib(14_000_000_000), 2, "id")
    '13,04'
    >>> format_number(1_073_741_824, 0, "ko")
    '1,073,741,824'
    """
    symbols = NUMBER_SYMBOLS[lang]
    rounded = round_half_up(Fraction(value), decimals)
    # copy_abs() and format "f" keep every digit of a 400-digit byte count (abs() would round
    # to the context's 28 digits); a rounded -0.001 stays "-0.00", as Babel prints it.
    whole, _, fraction = format(rounded.copy_abs(), "f").partition(".")
    first = len(whole) % GROUP_SIZE or GROUP_SIZE
    groups = [whole[:first]] + [
        whole[i : i + GROUP_SIZE] for i in range(first, len(whole), GROUP_SIZE)
    ]
    text = symbols["group"].join(groups)
    if decimals:
        text += symbols["decimal"] + fraction
    return symbols["minus"] + text if rounded.is_signed() else text
