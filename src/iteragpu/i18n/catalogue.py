"""The package's message catalogue: gettext `.mo` files, one per language of the list, read
with the standard library (Babel only writes them, at build time: it would cost the CLI its
start-up budget).

Each language's catalogue is `locale/<code>/LC_MESSAGES/iteragpu.mo`, compiled from the `.po`
beside it by `python -m iteragpu.docs_tools.catalogues --write`; the message ids are the English
texts of the code (marked `N_("...")`, or the first argument of an `InputError`). A test fails when
a language of the list lacks its catalogue, a message, or a translation.
"""

from __future__ import annotations

import gettext
from functools import cache
from pathlib import Path
from typing import Final

DOMAIN: Final = "iteragpu"
LOCALE_DIR: Final = Path(__file__).resolve().parent / "locale"


def N_(message: str) -> str:
    """Mark `message` for the catalogue without translating it here (gettext's `gettext_noop`)."""
    return message


def catalogue_path(lang: str, suffix: str = ".mo", locale_dir: Path = LOCALE_DIR) -> Path:
    """Where the compiled (`.mo`) or source (`.po`) catalogue of `lang` lives."""
    return locale_dir / lang / "LC_MESSAGES" / f"{DOMAIN}{suffix}"


@cache
def translations(lang: str) -> gettext.GNUTranslations:
    """The compiled catalogue of `lang`; FileNotFoundError when the language has none."""
    with catalogue_path(lang).open("rb") as handle:
        return gettext.GNUTranslations(handle)


def translate(message: str, lang: str, **values: object) -> str:
    """`message` in `lang`, its `{name}` fields filled from `values`."""
    text = translations(lang).gettext(message)
    return text.format(**values) if values else text
