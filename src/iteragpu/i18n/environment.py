"""The reader's language from the locale environment, for a tool run without `--lang`.

The variables are read as Python's `gettext` and GNU gettext read them: the first of
`LANGUAGE`, `LC_ALL`, `LC_MESSAGES` and `LANG` that is set and not empty decides. Its value is a
locale (`id_ID.UTF-8`, `ko_KR`, `id`) or, for `LANGUAGE`, a `:`-separated list of them in order of
preference; the first whose language is in the list of languages wins. A locale of no language
of the list (`C`, `C.UTF-8`, `en_US.UTF-8`), or no variable at all, gives the source language.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from iteragpu.i18n.languages import CODES, SOURCE

VARIABLES: Final = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")
"""The locale variables, the first set one deciding (the order of Python's `gettext.find`)."""


def locale_language(locale: str) -> str | None:
    """The language of the list a locale name stands for: `id_ID.UTF-8` -> `id`, `C` -> None.

    >>> locale_language("id_ID.UTF-8"), locale_language("ko-KR"), locale_language("C.UTF-8")
    ('id', 'ko', None)
    """
    code = locale.split(".")[0].split("@")[0].replace("-", "_").split("_")[0].lower()
    return code if code in CODES else None


def environment_language(environ: Mapping[str, str]) -> str:
    """The language the locale variables of `environ` ask for, else the source language.

    >>> environment_language({"LANG": "id_ID.UTF-8"})
    'id'
    >>> environment_language({"LANGUAGE": "fr:id", "LANG": "ko_KR.UTF-8"})
    'id'
    >>> environment_language({"LC_ALL": "C.UTF-8", "LANG": "id_ID.UTF-8"})
    'ko'
    """
    for variable in VARIABLES:
        value = environ.get(variable)
        if value:
            for locale in value.split(":"):
                code = locale_language(locale)
                if code is not None:
                    return code
            break
    return SOURCE
