"""Which language a run of the CLI speaks and reads numbers in, known before anything is shown.

The help texts are built with the command, so the language is found first, from the raw
arguments: the last `--lang CODE` or `--lang=CODE` before a `--`, at any level (`iteragpu --lang id
weights ...` as well as `iteragpu weights ... --lang id`), as click keeps the last value given.
Without one, or with a code not in the list (click then refuses it, in the language found
here), the locale environment decides (`iteragpu.i18n.environment`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from iteragpu.i18n.environment import environment_language
from iteragpu.i18n.languages import CODES
from iteragpu.i18n.number_symbols import NUMBER_SYMBOLS

OPTION = "--lang"


def argument_language(args: Sequence[str]) -> str | None:
    """The code of the last `--lang` in `args`, if any, else None.

    >>> argument_language(["weights", "--lang", "ko", "--params", "7", "--lang=id"])
    'id'
    >>> argument_language(["convert", "--", "--lang", "id"]) is None
    True
    """
    found = None
    tokens = iter(args)
    for token in tokens:
        if token == "--":
            break
        if token == OPTION:
            found = next(tokens, None)
        elif token.startswith(OPTION + "="):
            found = token.partition("=")[2]
    return found


def reader_language(args: Sequence[str], environ: Mapping[str, str]) -> str:
    """The language of a run: `--lang` when it names a language of the list, else the locale's."""
    asked = argument_language(args)
    if asked is not None and asked in CODES:
        return asked
    return environment_language(environ)


def reads_decimal_comma(lang: str) -> bool:
    """Whether numbers typed by a reader of `lang` may use a decimal comma (`24,5`): where the
    language writes its own decimals so (Babel's symbols, cached in `number_symbols`)."""
    return NUMBER_SYMBOLS[lang]["decimal"] == ","
