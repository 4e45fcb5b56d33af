"""Site search that follows how each language is written, built into Material's own search.

Material's search worker builds a lunr index in the browser from `search/search_index.json`, and
for a language `xx` other than English it first loads `assets/javascripts/lunr/min/lunr.xx.min.js`.
This module writes that file for each language of the list that has an analyzer, after Material
has written the index (docs/hooks.py, on_post_build):

- Korean (`ko`): lunr cuts text at spaces, so an eojeol (`측정을`, `가중치는`) is one token and a
  stem never meets its inflected forms. Kiwi (kiwipiepy) splits every eojeol of the built index
  into morphemes at build time; the file carries the map eojeol -> content morphemes, and the
  particles and endings Kiwi found, so that the worker indexes `측정을` as `측정을` and `측정`,
  and analyses a typed eojeol the same way, one the pages never use included.
- Indonesian (`id`): lunr has no Indonesian stemmer. Sastrawi (PySastrawi) stems every word of
  the built index and of the glossary's synonyms at build time, and the file carries the map
  word -> stem, used for the index and for the query, so that mengukur, pengukuran and ukur
  meet. A word the site never uses is stemmed in the browser by sastrawijs, Sastrawi's
  JavaScript port, vendored with its licence; it differs from the Python original on about 2 %
  of this site's words (tests/website/test_search.py measures it), which is why the map comes
  first.
- Every language: the glossary's synonyms (docs/glossary.yml), so that a word a reader types
  (perkiraan) finds the term the pages use (estimasi); and counts and number formats in every
  way they are written: a count with the CLI's suffix (`70B`, in `Llama-3.1-70B` too), with the
  language's number word (70억, 7 miliar: `7b`), and a number format's short name (`bf16` is
  `bfloat16`), indexed and looked for as one written form (`COUNT_SUFFIXES`, `FORMAT_NAMES`).

The worker side, `iteragpu/web/search_language.js`, is the same for every language; what the
text shows and highlights stays the original text (only index terms are added).
"""

from __future__ import annotations

import argparse
import html
import json
import logging
import re
import sys
from collections.abc import Iterable, Iterator
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Final

from iteragpu.docs_tools import require_extra
from iteragpu.i18n.languages import CODES, language
from iteragpu.i18n.number_symbols import NUMBER_SYMBOLS

require_extra("yaml", "kiwipiepy", "Sastrawi")

_LOG: Final = logging.getLogger("mkdocs.plugins.iteragpu.search")

# The search's separator (docs/hooks.py gives it to Material's search plugin): a token is what
# lies between spaces; a hyphen stays in its word (`--need-gib`, `warm-up`), whose pieces are
# indexed too.
SEPARATOR: Final = re.compile(r"\s+")
_TAG: Final = re.compile(r"<[^>]+>")
# A token's pieces: words, identifiers (`max_memory_reserved`) and numbers with their decimal or
# group marks (13.04, 13,04, 1.073.741.824). search_language.js cuts with the same pattern:
# /[\p{L}\p{M}\p{N}_]+(?:[.,][0-9]+)*/gu.
PIECE: Final = re.compile(r"\w+(?:[.,][0-9]+)*")
_HANGUL: Final = re.compile("[\uac00-\ud7a3]")
# Kiwi's tags of the morphemes a reader searches for: nouns, numerals, verb and adjective stems,
# roots, and foreign words or numbers written inside an eojeol. Particles (J*), endings (E*),
# suffixes (XS*) and bound nouns (NNB) are left to the whole eojeol.
KOREAN_CONTENT_TAGS: Final = frozenset({"NNG", "NNP", "NR", "VV", "VA", "XR", "SL", "SH", "SN"})
# The lunr language file Material's worker loads, under the built site of a language.
LANGUAGE_FILE: Final = "assets/javascripts/lunr/min/lunr.{search_lang}.min.js"
ANALYZERS: Final = {"ko": "morphemes", "id": "sastrawi"}
"""The analyzer of each language of the list: a language without one searches as lunr does."""
GLOSSARY: Final = Path(__file__).resolve().parents[3] / "docs" / "glossary.yml"
# A count's suffixes as the CLI reads them in `--params 7B` (iteragpu.core.numbers; G, another
# name of B there, is left out: `7g` is not how a page or a reader writes seven billion), as
# exponents of ten. The worker writes every count with them: 70억 and 7 miliar are `7b`.
COUNT_SUFFIXES: Final = {"k": 3, "m": 6, "b": 9, "t": 12}
# The short names of number formats, and the names the pages write (`torch.bfloat16`): `bf16`
# finds `bfloat16`, `fp16` finds `float16`, and the other way round.
FORMAT_NAMES: Final = {"bf": "bfloat", "fp": "float"}


def index_words(search_index: dict[str, Any]) -> Iterator[str]:
    """Every piece of every token of a built search index, lowercased, in order (titles and
    texts, markup removed as Material's tokenizer does)."""
    for doc in search_index["docs"]:
        for field in ("title", "text"):
            yield from words(html.unescape(_TAG.sub(" ", doc.get(field) or "")))


def words(text: str) -> Iterator[str]:
    """The pieces of `text`, lowercased, as search_language.js cuts them (token by token; no
    piece holds a space, so one pass over the whole text finds the same pieces)."""
    yield from PIECE.findall(text.lower())


@cache
def _kiwi() -> Any:
    from kiwipiepy import Kiwi  # a 100 MB model: loaded only for words the table lacks

    return Kiwi()


@cache
def _sastrawi() -> Any:
    from Sastrawi.Stemmer.StemmerFactory import StemmerFactory

    return StemmerFactory().create_stemmer()


KoreanEntry = tuple[tuple[str, ...], str] | None
"""What Kiwi says of one Hangul piece: its content morphemes followed by the word as written
before its particles and endings, and that ending ("" when none); None when Kiwi finds no
content morpheme in it."""


def analyse_korean(piece: str) -> KoreanEntry:
    """Kiwi's analysis of one Hangul piece (each piece is analysed alone, so the result depends
    on the piece only: what makes the table below exact)."""
    tokens = _kiwi().tokenize(piece)
    content = [token for token in tokens if token.tag.split("-")[0] in KOREAN_CONTENT_TAGS]
    if not content:
        return None
    forms = [token.form.lower() for token in content]
    # The word as written before its particles and endings: its content morphemes with the
    # noun-forming suffixes that follow them (가중 + 치 is 가중치, in 가중치는).
    end = content[-1].start + content[-1].len
    for token in tokens:
        if token.start >= end and token.tag == "XSN":
            end = token.start + token.len
    forms.append(piece[content[0].start : end])
    suffix = piece[end:] if 0 < end < len(piece) else ""
    return tuple(dict.fromkeys(forms)), suffix


def analyse_indonesian(piece: str) -> str:
    """Sastrawi's stem of one word; "" where it is the word itself (the browser's stemmer must
    not second-guess a word of the site)."""
    stem = str(_sastrawi().stem(piece))
    return stem if stem and stem != piece else ""


def _korean_pieces(pieces: Iterable[str]) -> list[str]:
    return sorted({piece for piece in pieces if _HANGUL.search(piece)})


def _indonesian_pieces(pieces: Iterable[str]) -> list[str]:
    return sorted({piece for piece in pieces if re.fullmatch("[a-z]+", piece)})


def korean_morphemes(
    pieces: Iterable[str], table: dict[str, KoreanEntry] | None = None
) -> tuple[dict[str, list[str]], list[str], list[str]]:
    """Each Hangul piece's content morphemes where they differ from the piece itself; every
    content morpheme found; and the surface forms of the particles and endings that followed
    one. A piece found in `table` (the committed analysis) is not analysed again, one missing
    from it is analysed and added to it; without a table every piece is analysed."""
    morphemes: dict[str, list[str]] = {}
    stems: set[str] = set()
    suffixes: set[str] = set()
    for piece in _korean_pieces(pieces):
        if table is None:
            entry = analyse_korean(piece)
        elif piece in table:
            entry = table[piece]
        else:
            entry = table[piece] = analyse_korean(piece)
        if entry is None:
            continue
        forms, suffix = entry
        stems.update(forms)
        if list(forms) != [piece]:
            morphemes[piece] = [form for form in forms if form != piece]
        if suffix:
            suffixes.add(suffix)
    return morphemes, sorted(stems), sorted(suffixes)


def indonesian_stems(pieces: Iterable[str], table: dict[str, str] | None = None) -> dict[str, str]:
    """Sastrawi's stem of each word made of letters; "" where it is the word itself. A word
    found in `table` is not stemmed again, one missing from it is stemmed and added to it;
    without a table every word is stemmed."""
    stems = {}
    for piece in _indonesian_pieces(pieces):
        if table is None:
            stems[piece] = analyse_indonesian(piece)
        else:
            if piece not in table:
                table[piece] = analyse_indonesian(piece)
            stems[piece] = table[piece]
    return stems


# The analysis of every word the pages use, committed and generated (like
# iteragpu/i18n/number_symbols.py), so that a build loads neither Kiwi's 100 MB model nor
# Sastrawi unless a page brings a word the table lacks: the search files are the same byte for
# byte either way (tests/website/test_search.py builds both). `python -m
# iteragpu.docs_tools.site_search --update-tables --site-dir site` writes them anew from a built
# site; tests/website/test_search.py fails when a built page holds a word they lack.
TABLES: Final = Path(__file__).resolve().parent / "search_tables"


def table_path(code: str) -> Path:
    return TABLES / f"{code}.json"


@cache
def analysis_table(code: str) -> dict[str, Any]:
    """The committed analysis of a language ({} when it has none yet), cached per process and
    completed in place by `korean_morphemes` and `indonesian_stems`."""
    path = table_path(code)
    if not path.exists():
        return {}
    table: dict[str, Any] = json.loads(path.read_text("utf-8"))["words"]
    if ANALYZERS[code] == "morphemes":
        return {
            piece: None if entry is None else (tuple(entry[0]), entry[1])
            for piece, entry in table.items()
        }
    return table


def missing_words(code: str, pieces: Iterable[str]) -> list[str]:
    """The words of `pieces` that the language's committed table lacks."""
    table = analysis_table(code)
    select = _korean_pieces if ANALYZERS[code] == "morphemes" else _indonesian_pieces
    return [piece for piece in select(pieces) if piece not in table]


def table_text(code: str, pieces: Iterable[str]) -> str:
    """The table file of a language, analysed from scratch for `pieces`."""
    words_analysed: dict[str, Any]
    if ANALYZERS[code] == "morphemes":
        words_analysed = {}
        for piece in _korean_pieces(pieces):
            entry = analyse_korean(piece)
            words_analysed[piece] = None if entry is None else [list(entry[0]), entry[1]]
    else:
        words_analysed = {piece: analyse_indonesian(piece) for piece in _indonesian_pieces(pieces)}
    document = {
        "generated_by": "python -m iteragpu.docs_tools.site_search --update-tables",
        "analyzer": ANALYZERS[code],
        "words": words_analysed,
    }
    return json.dumps(document, ensure_ascii=False, sort_keys=True, indent=0) + "\n"


@cache
def _glossary_terms(glossary: Path, mtime_ns: int) -> list[dict[str, Any]]:
    """The glossary's terms, parsed once per state of the file (PyYAML's pure-Python loader
    takes a third of a second over it; its C loader, where built, a tenth of that)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    terms: list[dict[str, Any]] = yaml.load(glossary.read_text("utf-8"), Loader=loader)["terms"]
    return terms


def glossary_synonyms(code: str, glossary: Path = GLOSSARY) -> list[list[str]]:
    """[synonym, term] pairs of the glossary for a language, lowercased: the word a reader may
    type, and the term the pages use for it."""
    terms = _glossary_terms(glossary, glossary.stat().st_mtime_ns)
    pairs = []
    for term in terms:
        for synonym in (term.get("synonyms") or {}).get(code) or []:
            if synonym.lower() != term[code].lower():
                pairs.append([synonym.lower(), term[code].lower()])
    return pairs


def count_data(code: str) -> dict[str, Any]:
    """How a count is written in a language, for the worker: the CLI's suffixes, the language's
    number words (its `number_words`: 억, miliar) and decimal sign, as exponents of ten."""
    words = {}
    for word, value in language(code).number_words.items():
        exponent = len(str(value)) - 1
        if value != 10**exponent:
            raise ValueError(f"number word {word!r} of {code!r} is not a power of ten: {value}")
        words[word.lower()] = exponent
    return {
        "suffixes": COUNT_SUFFIXES,
        "words": words,
        "decimal": NUMBER_SYMBOLS[code]["decimal"],
    }


def search_pieces(code: str, search_index: dict[str, Any]) -> list[str]:
    """Every piece the language's search file analyses: the built index's and the synonyms'."""
    synonyms = glossary_synonyms(code)
    return [*index_words(search_index), *(w for pair in synonyms for p in pair for w in words(p))]


def search_data(
    code: str, search_index: dict[str, Any], *, from_scratch: bool = False
) -> dict[str, Any]:
    """What search_language.js needs for a language, from its built search index: the words the
    committed table holds are read from it, the others analysed (and kept for the process, so
    that `mkdocs serve` analyses a new word once);
    `from_scratch` analyses every word, as the table's test does."""
    data: dict[str, Any] = {
        "code": language(code).search_lang,
        "analyzer": ANALYZERS[code],
        "synonyms": glossary_synonyms(code),
        "counts": count_data(code),
        "formats": FORMAT_NAMES,
    }
    pieces = search_pieces(code, search_index)
    table = None if from_scratch else analysis_table(code)
    if data["analyzer"] == "morphemes":
        data["morphemes"], data["stems"], data["suffixes"] = korean_morphemes(pieces, table)
    else:
        data["stems"] = indonesian_stems(pieces, table)
    return data


def language_file(code: str, search_index: dict[str, Any], *, from_scratch: bool = False) -> str:
    """The text of the lunr language file: the analyzer's library, the data, the worker code."""
    data = search_data(code, search_index, from_scratch=from_scratch)
    web = resources.files("iteragpu").joinpath("web")
    parts = []
    if data["analyzer"] == "sastrawi":
        parts.append(web.joinpath("vendor/sastrawijs.umd.js").read_text("utf-8"))
    data_json = json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    parts.append(f"self.lunr.iteragpuSearch = {data_json};")
    parts.append(web.joinpath("search_language.js").read_text("utf-8"))
    return "\n".join(parts)


def write_language_file(code: str, site_dir: Path) -> Path | None:
    """Write a built language site's lunr language file; None for a language without an
    analyzer (its search stays Material's)."""
    if code not in ANALYZERS:
        return None
    search_index = json.loads((site_dir / "search" / "search_index.json").read_text("utf-8"))
    missing = missing_words(code, search_pieces(code, search_index))
    if missing:
        # Not a warning: `mkdocs build --strict` must still build a page with a new word.
        # tests/website/test_search.py fails on them until the table is written anew.
        _LOG.info(
            "search: %d word(s) of %s not in %s, analysed now (%s); "
            "python -m iteragpu.docs_tools.site_search --update-tables --site-dir SITE adds them",
            len(missing),
            code,
            table_path(code).name,
            ", ".join(missing[:5]),
        )
    path = site_dir / LANGUAGE_FILE.format(search_lang=language(code).search_lang)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(language_file(code, search_index), "utf-8")
    return path


def update_tables(site: Path, codes: Iterable[str]) -> list[Path]:
    """Write each language's table anew, from scratch, from its built site `site/<code>/`."""
    written = []
    for code in codes:
        index = json.loads((site / code / "search" / "search_index.json").read_text("utf-8"))
        path = table_path(code)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(table_text(code, search_pieces(code, index)), "utf-8")
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    """`python -m iteragpu.docs_tools.site_search --site-dir SITE/ko --lang ko`: print the search
    data of a built language (the node tests read it). `--update-tables --site-dir SITE`: write
    every language's committed analysis table anew from the built site SITE/<code>/."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--site-dir", type=Path, required=True)
    analysed = sorted(set(CODES) & set(ANALYZERS))
    parser.add_argument("--lang", choices=analysed)
    parser.add_argument("--update-tables", action="store_true")
    args = parser.parse_args(argv)
    if args.update_tables:
        for path in update_tables(args.site_dir, [args.lang] if args.lang else analysed):
            print(f"wrote {path}")
        return 0
    if args.lang is None:
        parser.error("--lang is required without --update-tables")
    index = json.loads((args.site_dir / "search" / "search_index.json").read_text("utf-8"))
    json.dump(search_data(args.lang, index), sys.stdout, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
