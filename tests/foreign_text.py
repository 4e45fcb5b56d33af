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


# ---------------------------------------------------------------------------------------------
# Leftovers of the code and of the other language (issue 20): a raw literal, an identifier or an
# English word left in a reader's sentence, the other language's script, a Korean particle
# chosen without knowing the word it follows.
# ---------------------------------------------------------------------------------------------

# Python's and JSON's literals (and JavaScript's `undefined`) as a word of a sentence: a value
# the code did not say in words. Quoted, in code or in a `{placeholder}` they are masked.
RAW_LITERAL = re.compile(r"(?<![\w'\"`.-])(?:null|None|True|False|undefined)(?![\w'\"`-])")
# A snake_case identifier (`weights_gib`, `per_head`); file names and calls are masked first,
# and an environment variable (`CUDA_VISIBLE_DEVICES`, upper case) is a name the reader sets.
SNAKE_CASE = re.compile(
    r"(?<![A-Za-z0-9_:/-])(?<![A-Za-z0-9_]\.)(?=[A-Z0-9_]*[a-z])[A-Za-z][A-Za-z0-9]*"
    r"(?:_[A-Za-z0-9]+)+(?![A-Za-z0-9_(-])(?!\.[A-Za-z0-9_])"
)
# English words that have been left in Korean or Indonesian text as the code's words: each is a
# leftover in that language (`nominal` and `notebook` are Indonesian words too).
ENGLISH_LEFTOVERS = {
    "ko": frozenset(
        {"unknown", "null", "none", "declared", "nominal", "notebook", "result", "input"}
        | {"figure", "fit", "excluded", "measured", "true", "false", "yes"}
    ),
    "id": frozenset(
        {"unknown", "null", "none", "declared", "result", "figure", "fit", "excluded"}
        | {"measured", "true", "false", "yes"}
    ),
}
_CODE_MASKS = (
    re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|«[^»]*»|「[^」]*」|`[^`]*`"),  # quoted, in code
    re.compile(r"\{[^{}\s]*\}"),  # a template's placeholder
    re.compile(r"https?://\S+"),
    re.compile(r"\S*[/\\]\S*"),  # paths
    re.compile(
        r"[A-Za-z0-9_.-]+\.(?:py|json|md|ipynb|csv|yml|zip|gguf|safetensors|txt)(?![A-Za-z])"
        r"(?:#[\w-]+)?"  # a page's section: load-specification.md#fit
    ),
    # After the file names: an option's pattern would cut `load-specification.md` at its hyphen.
    re.compile(r"--?[A-Za-z][\w-]*"),  # options
    re.compile(r"[A-Za-z_][\w.]*\(\)"),  # a call: empty_cache()
)
_WORDS = re.compile(r"[A-Za-z]+")
HANGUL = re.compile(r"[\u1100-\u11ff\u3130-\u318f\uac00-\ud7a3]+")
# Indonesian words that no Korean sentence contains (they are not English words either).
_INDONESIAN = frozenset(
    """yang dan tidak untuk dengan adalah bukan dapat dalam sebagai jika bila atau dari pada
    oleh juga hanya sudah belum setiap tanpa karena agar saat ketika lebih tetap harus perlu
    bisa akan ini itu""".split()  # noqa: SIM905
)


def _code_masked(text: str) -> str:
    for pattern in _CODE_MASKS:
        text = pattern.sub(" ", text)
    return text


def raw_literals(text: str) -> list[str]:
    """`null`, `None`, `True`, `False`, `undefined` said as words of `text`."""
    return RAW_LITERAL.findall(_code_masked(text))


def code_words(text: str, lang: str, allowed: Iterable[str] = ()) -> list[str]:
    """The code's words in `text` outside quotes and code: snake_case identifiers that are not
    `allowed` (the names a reader types or finds in their own files), and the English words of
    ENGLISH_LEFTOVERS[lang]."""
    allowed = set(allowed)
    masked = _code_masked(text)
    found = [word for word in SNAKE_CASE.findall(masked) if word not in allowed]
    masked = SNAKE_CASE.sub(" ", masked)
    # A metavar in capitals (`RESULT`, `PATH`) is the CLI's placeholder, not a word of a sentence.
    found += [
        w
        for w in _WORDS.findall(masked)
        if w.lower() in ENGLISH_LEFTOVERS[lang] and not w.isupper()
    ]
    return found


def hangul(text: str) -> list[str]:
    """The runs of Korean script in `text`."""
    return HANGUL.findall(text)


def indonesian_runs(text: str) -> list[str]:
    """Indonesian phrases in `text`: two or more words of `_INDONESIAN` in one run of words."""
    found = []
    for run in re.split(r"[^A-Za-z\s,;:()]+", _code_masked(text)):
        words = _WORDS.findall(run)
        if sum(w.lower() in _INDONESIAN for w in words) >= 2:
            found.append(" ".join(words))
    return found


# A Korean particle whose form depends on the last sound of the word before it (은/는, 이/가,
# 을/를, 과/와, 으로/로, 이다, 이어야/여야...) cannot follow a word the program fills in: it is
# chosen before that word is known (`'qwen3_moe'은`, `'null'여야`). What may follow a field is
# a word that never changes: a particle of one form (의, 에, 에서, 도, 만, 까지, 부터, 처럼...),
# 입니다, or a counter (개, 바이트, 비트...).
_INVARIANT_AFTER_A_FIELD = (
    "의", "에", "에서", "에게", "에도", "도", "만", "까지", "부터", "처럼", "보다", "마다", "뿐",
    "입니다", "개", "바이트", "비트", "자리", "행", "열", "번", "장", "일", "단계", "초", "배",
    "자", "째", "분",
)  # fmt: skip
_AFTER_A_FIELD = re.compile(r"\}['\"’”」»)]?([\uac00-\ud7a3]+)")


def particles_after_fields(text: str) -> list[str]:
    """Where `text` (a Korean template) puts a Hangul word that may change with the word before
    it right after a `{field}` (or after `}'`, `}"`, `})`)."""
    return [
        match.group(0)
        for match in _AFTER_A_FIELD.finditer(text)
        if not match.group(1).startswith(_INVARIANT_AFTER_A_FIELD)
    ]
