"""What a Korean or Indonesian reader should never meet in the CLI's output: an English sentence,
or a number written in the other language's format.

Both detectors look at what a reader reads, not at code: quoted text (the reader's own input,
examples such as '24e9 B'), option names (`--bits`), environment variables, identifiers
(`kv_cache_gib`, `rtx-4090`, `environment.devices`), URLs, paths and Unicode character names
(`U+0663 ARABIC-INDIC DIGIT THREE`) are masked first.

- English: a run of ASCII words, one after the other with only spaces or light punctuation
  between them, is English when two of its words are English function or interface words
  (`STOP_WORDS`, none of which is an Indonesian word); click's interface words (`Usage`,
  `Options`...) are English alone.
- Numbers: each number written with separators (`13.04`, `1.073.741.824`, `13,04`) must read in
  the language's own format (Babel's symbols, `NUMBER_SYMBOLS`); one that only reads in another
  format is foreign. `1.073` or `1,234` read in both and pass; version numbers (`550.163.01`)
  are no figure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from iteragpu.i18n.number_symbols import NUMBER_SYMBOLS

_STOP_WORDS = """
    a an the of to in on at by for from with without and or nor not no is are was were be been
    being has have had do does did this that these those it its as such than then there here
    which what when where who how why must can cannot could should would will shall may might
    use using got get missing option options argument arguments command commands usage invalid
    value values error errors exit help message show required default choose mean try see
    other only each every any some more most less least too many much number numbers whole
    positive negative digits exponent range unknown quantity file folder found expected given
    allowed between into over under above below your you we our they them their if else also
    either neither both one two three
"""
STOP_WORDS = frozenset(_STOP_WORDS.split())
# click's and typer's interface words: English even alone.
INTERFACE_WORDS = frozenset(
    {"Usage", "Options", "Commands", "Arguments", "TEXT", "INTEGER", "FLOAT", "Error", "Aborted"}
    | {"required", "default", "PATH", "FILENAME", "BOOLEAN"}
)

_MASKS = (
    re.compile(r"'[^']*'|\"[^\"]*\"|«[^»]*»|「[^」]*」"),  # quoted: input, examples, column names
    re.compile(r"https?://\S+"),
    re.compile(r"U\+[0-9A-F]{4,6}(?: [A-Z0-9-]+)*"),  # a Unicode character's name
    re.compile(r"--?[A-Za-z][\w-]*(?:=\S*)?"),  # options
    re.compile(r"\S*[/\\]\S*"),  # paths
    # Identifiers, with a letter: kv_cache_gib, rtx-4090:context, environment.devices.
    re.compile(r"(?=[\w.:-]*[A-Za-z])[A-Za-z0-9]+(?:[_.:-][A-Za-z0-9]+)+"),
    re.compile(r"`[^`]*`"),
)
_WORD = re.compile(r"[A-Za-z]+")
# What may stand between two words of one English run.
_LIGHT_PUNCTUATION = re.compile(r"[\s,;:()\[\]!?.]*")
_NUMBER = re.compile(r"\d[\d.,]*\d")


def masked(text: str) -> str:
    for pattern in _MASKS:
        text = pattern.sub(" ", text)
    return text


def english_runs(text: str) -> list[str]:
    """The English phrases of `text` (empty when there are none)."""
    text = masked(text)
    found = []
    words = list(_WORD.finditer(text))
    run: list[re.Match[str]] = []

    def close() -> None:
        english = [w.group() for w in run if w.group().lower() in STOP_WORDS]
        alone = [w.group() for w in run if w.group() in INTERFACE_WORDS]
        if len(english) >= 2 or alone:
            found.append(" ".join(w.group() for w in run))

    for word in words:
        if run and not _LIGHT_PUNCTUATION.fullmatch(text[run[-1].end() : word.start()]):
            close()
            run = []
        run.append(word)
    if run:
        close()
    return found


def english_sentences(text: str, allow: Iterable[str] = ()) -> list[str]:
    """`english_runs` of `text` once the allowed names (proper names, Unicode character names the
    reader is shown on purpose) are taken out."""
    for name in allow:
        text = text.replace(name, " ")
    return english_runs(text)


def number_separators(lang: str) -> tuple[str, str]:
    """The decimal and group symbols `lang` writes numbers with (Babel's, cached)."""
    symbols = NUMBER_SYMBOLS[lang]
    return symbols["decimal"], symbols["group"]


def _reads_in(number: str, lang: str) -> bool:
    decimal, group = NUMBER_SYMBOLS[lang]["decimal"], NUMBER_SYMBOLS[lang]["group"]
    d, g = re.escape(decimal), re.escape(group)
    return bool(
        re.fullmatch(rf"\d{{1,3}}(?:{g}\d{{3}})*(?:{d}\d+)?", number)
        or re.fullmatch(rf"\d+(?:{d}\d+)?", number)
    )


def _is_version(number: str) -> bool:
    """`550.163.01`: dots only, two or more, some group after the first not of three digits."""
    parts = number.split(".")
    return "," not in number and len(parts) > 2 and any(len(part) != 3 for part in parts[1:])


def foreign_numbers(text: str, lang: str) -> list[str]:
    """Numbers of `text` that read only in another language's format than `lang`'s."""
    found = []
    for match in _NUMBER.finditer(masked(text)):
        number = match.group()
        if _reads_in(number, lang) or _is_version(number):
            continue
        if any(_reads_in(number, other) for other in NUMBER_SYMBOLS if other != lang):
            found.append(number)
    return found
