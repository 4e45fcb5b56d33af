"""Locale-aware figures with Babel: `ko` 13.04 and 1,073,741,824; `id` 13,04 and 1.073.741.824."""

from __future__ import annotations

from decimal import localcontext
from fractions import Fraction
from typing import Final, Literal

from iteragpu.units import round_half_up

Lang = Literal["ko", "id"]
LANGS: Final[tuple[Lang, ...]] = ("ko", "id")


def format_number(value: int | Fraction, decimals: int, lang: str) -> str:
    """`value` rounded half-up to exactly `decimals` places, grouped and punctuated for `lang`.

    >>> from iteragpu.units import gib
    >>> format_number(gib(14_000_000_000), 2, "id")
    '13,04'
    >>> format_number(1_073_741_824, 0, "ko")
    '1,073,741,824'
    """
    # Babel is imported here, not at module import, to keep `iteragpu --help` fast.
    from babel.numbers import format_decimal

    rounded = round_half_up(Fraction(value), decimals)
    pattern = "#,##0" + ("." + "0" * decimals if decimals else "")
    # Babel quantizes in the current decimal context: give it room for every digit, so a
    # 400-digit byte count is printed exactly instead of raising InvalidOperation.
    with localcontext() as context:
        context.prec = max(context.prec, len(rounded.as_tuple().digits) + decimals + 2)
        return str(format_decimal(rounded, format=pattern, locale=lang, decimal_quantization=True))
