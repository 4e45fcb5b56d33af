"""The package's message catalogue: gettext `.mo` files, one per language of the list, read
with the standard library (Babel only writes them, at build time: it would cost the CLI its
start-up budget).

Each language's catalogue is `locale/<code>/LC_MESSAGES/iteragpu.mo`, compiled from the `.po`
beside it by `python -m iteragpu.docs_tools.catalogues --write`; the message ids are the English
texts of the code (marked `N_("...")`, or the first argument of an `InputError`). A test fails when
a language of the list lacks its catalogue, a message, or a translation.

A run of the CLI looks up a dozen of the catalogue's several hundred messages, so `translations`
answers as `gettext.GNUTranslations` does but reads only what is looked up (`MoCatalogue`):
parsing the whole file cost every text command about 2 ms of its start-up
(`benchmarks/cli_startup.py`). tests/test_catalogues.py checks that it answers as
`GNUTranslations` does for every message of every catalogue.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Final, Literal

DOMAIN: Final = "iteragpu"
LOCALE_DIR: Final = Path(__file__).resolve().parent / "locale"

_LE_MAGIC: Final = 0x950412DE
_BE_MAGIC: Final = 0xDE120495
_VERSIONS: Final = (0, 1)  # the major versions GNUTranslations reads


def N_(message: str) -> str:
    """Mark `message` for the catalogue without translating it here (gettext's `gettext_noop`)."""
    return message


def catalogue_path(lang: str, suffix: str = ".mo", locale_dir: Path = LOCALE_DIR) -> Path:
    """Where the compiled (`.mo`) or source (`.po`) catalogue of `lang` lives."""
    return locale_dir / lang / "LC_MESSAGES" / f"{DOMAIN}{suffix}"


class MoCatalogue:
    """A compiled catalogue that answers `gettext` and `ngettext` as `gettext.GNUTranslations`
    does (no fallback, no context), reading a message only when it is looked up.

    The `.mo` format sorts its original strings (GNU's and Babel's compilers both do), so a
    message is found by a binary search over them, as GNU's own libintl finds it: nothing is
    decoded or indexed ahead. The header gives the charset, and its plural rule is compiled
    (with gettext's own `c2py`) only when a plural message is asked for. A string that ends
    at or past the end of the file is refused (OSError) when it is read.
    """

    def __init__(self, data: bytes, filename: str = "") -> None:
        magic = int.from_bytes(data[:4], "little")
        order: Literal["little", "big"]
        if magic == _LE_MAGIC:
            order = "little"
        elif magic == _BE_MAGIC:
            order = "big"
        else:
            raise OSError(0, "Bad magic number", filename)
        version, count, originals, translated = (
            int.from_bytes(data[offset : offset + 4], order) for offset in (4, 8, 12, 16)
        )
        if version >> 16 not in _VERSIONS:
            raise OSError(0, "Bad version number " + str(version >> 16), filename)
        self._data, self._filename, self._count = data, filename, count
        self._originals = _words(data, originals, count, order, filename)
        self._translations = _words(data, translated, count, order, filename)
        self._charset = "ascii"
        self._plural_rule = "n != 1"  # gettext's default: the Germanic rule
        self._plural: Callable[[int], int] | None = None
        if count and not self._string(self._originals, 0):  # the header sorts first
            self._read_header(self._string(self._translations, 0).decode())

    def _string(self, table: list[int], entry: int) -> bytes:
        length, start = table[2 * entry], table[2 * entry + 1]
        if start + length >= len(self._data):
            raise OSError(0, "File is corrupt", self._filename)
        return self._data[start : start + length]

    def _first_at_or_after(self, key: bytes) -> int:
        """The first entry whose original string is not below `key`, in bytes order (the
        order of the file: a plural entry, `singular NUL plural`, sorts by its singular)."""
        low, high = 0, self._count
        while low < high:
            middle = (low + high) // 2
            if self._string(self._originals, middle) < key:
                low = middle + 1
            else:
                high = middle
        return low

    def _find(self, key: bytes, plural: bool) -> int | None:
        """The entry of `key`, a plain message or (`plural`) the plural entry of a singular."""
        wanted = key + b"\x00" if plural else key
        entry = self._first_at_or_after(wanted)
        if entry == self._count:
            return None
        found = self._string(self._originals, entry)
        return entry if (found.startswith(wanted) if plural else found == key) else None

    def _read_header(self, text: str) -> None:
        # As GNUTranslations reads it: `Key: value` lines, the last Content-Type and
        # Plural-Forms winning.
        for line in text.split("\n"):
            key, colon, value = line.strip().partition(":")
            if not colon:
                continue
            key, value = key.strip().lower(), value.strip()
            if key == "content-type":
                self._charset = value.split("charset=")[1]
            elif key == "plural-forms":
                self._plural_rule = value.split(";")[1].split("plural=")[1]

    def plural(self, n: int) -> int:
        """The index of the plural form for `n`, by the catalogue's Plural-Forms."""
        if self._plural is None:
            import gettext  # click has imported it already; its c2py checks the expression

            self._plural = gettext.c2py(self._plural_rule)
        return self._plural(n)

    def _key(self, message: str) -> bytes | None:
        try:
            return message.encode(self._charset)
        except UnicodeError:
            return None  # no original string of this charset spells it

    def _form(self, entry: int, n: int) -> str | None:
        forms = self._string(self._translations, entry).split(b"\x00")
        form = self.plural(n)
        return forms[form].decode(self._charset) if 0 <= form < len(forms) else None

    def gettext(self, message: str) -> str:
        key = self._key(message)
        if key is None:
            return message
        entry = self._find(key, plural=False)
        if entry is not None:
            return self._string(self._translations, entry).decode(self._charset)
        # As GNUTranslations: a plural message asked for as a singular gives its form for 1.
        entry = self._find(key, plural=True)
        text = None if entry is None else self._form(entry, 1)
        return message if text is None else text

    def ngettext(self, singular: str, plural: str, n: int) -> str:
        key = self._key(singular)
        entry = None if key is None else self._find(key, plural=True)
        text = None if entry is None else self._form(entry, n)
        if text is not None:
            return text
        return singular if n == 1 else plural


def _words(
    data: bytes, start: int, count: int, order: Literal["little", "big"], filename: str
) -> list[int]:
    """The `count` (length, offset) pairs of a string table, flattened: 32-bit words."""
    table = data[start : start + 8 * count]
    if len(table) < 8 * count:
        raise OSError(0, "File is corrupt", filename)
    view = memoryview(table).cast("I")
    if order == sys.byteorder and view.itemsize == 4:
        return view.tolist()  # one call instead of a conversion per word
    return [int.from_bytes(table[i : i + 4], order) for i in range(0, len(table), 4)]


@cache
def translations(lang: str) -> MoCatalogue:
    """The compiled catalogue of `lang`; FileNotFoundError when the language has none."""
    path = catalogue_path(lang)
    return MoCatalogue(path.read_bytes(), str(path))


def translate(message: str, lang: str, **values: object) -> str:
    """`message` in `lang`, its `{name}` fields filled from `values`."""
    text = translations(lang).gettext(message)
    return text.format(**values) if values else text
