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
  (perkiraan) finds the term the pages use (estimasi).

The worker side, `iteragpu/web/search_language.js`, is the same for every language; what the
text shows and highlights stays the original text (only index terms are added).
"""

from __future__ import annotations

import argparse
import html
import json
import re
import sys
from collections.abc import Iterable, Iterator
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Final

from iteragpu.docs_tools import require_extra
from iteragpu.i18n.languages import CODES, language

require_extra("yaml", "kiwipiepy", "Sastrawi")

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


def index_words(search_index: dict[str, Any]) -> Iterator[str]:
    """Every piece of every token of a built search index, lowercased, in order (titles and
    texts, markup removed as Material's tokenizer does)."""
    for doc in search_index["docs"]:
        for field in ("title", "text"):
            yield from words(html.unescape(_TAG.sub(" ", doc.get(field) or "")))


def words(text: str) -> Iterator[str]:
    """The pieces of `text`, lowercased, as search_language.js cuts them."""
    for token in SEPARATOR.split(text.lower()):
        yield from PIECE.findall(token)


@cache
def _kiwi() -> Any:
    from kiwipiepy import Kiwi  # a 100 MB model: loaded once, and only to build Korean search

    return Kiwi()


def korean_morphemes(
    pieces: Iterable[str],
) -> tuple[dict[str, list[str]], list[str], list[str]]:
    """Each Hangul piece's content morphemes where they differ from the piece itself; every
    content morpheme found; and the surface forms of the particles and endings that followed
    one."""
    kiwi = _kiwi()
    morphemes: dict[str, list[str]] = {}
    stems: set[str] = set()
    suffixes: set[str] = set()
    for piece in sorted({piece for piece in pieces if _HANGUL.search(piece)}):
        tokens = kiwi.tokenize(piece)
        content = [token for token in tokens if token.tag.split("-")[0] in KOREAN_CONTENT_TAGS]
        if not content:
            continue
        forms = [token.form.lower() for token in content]
        # The word as written before its particles and endings: its content morphemes with the
        # noun-forming suffixes that follow them (가중 + 치 is 가중치, in 가중치는).
        end = content[-1].start + content[-1].len
        for token in tokens:
            if token.start >= end and token.tag == "XSN":
                end = token.start + token.len
        forms.append(piece[content[0].start : end])
        forms = list(dict.fromkeys(forms))
        stems.update(forms)
        if forms != [piece]:
            morphemes[piece] = [form for form in forms if form != piece]
        if 0 < end < len(piece):
            suffixes.add(piece[end:])
    return morphemes, sorted(stems), sorted(suffixes)


def indonesian_stems(pieces: Iterable[str]) -> dict[str, str]:
    """Sastrawi's stem of each word made of letters; "" where it is the word itself (the
    browser's stemmer must not second-guess a word of the site)."""
    from Sastrawi.Stemmer.StemmerFactory import StemmerFactory

    stemmer = StemmerFactory().create_stemmer()
    stems = {}
    for piece in sorted({piece for piece in pieces if re.fullmatch("[a-z]+", piece)}):
        stem = stemmer.stem(piece)
        stems[piece] = stem if stem and stem != piece else ""
    return stems


def glossary_synonyms(code: str, glossary: Path = GLOSSARY) -> list[list[str]]:
    """[synonym, term] pairs of the glossary for a language, lowercased: the word a reader may
    type, and the term the pages use for it."""
    import yaml

    terms = yaml.safe_load(glossary.read_text("utf-8"))["terms"]
    pairs = []
    for term in terms:
        for synonym in (term.get("synonyms") or {}).get(code) or []:
            if synonym.lower() != term[code].lower():
                pairs.append([synonym.lower(), term[code].lower()])
    return pairs


def search_data(code: str, search_index: dict[str, Any]) -> dict[str, Any]:
    """What search_language.js needs for a language, from its built search index."""
    synonyms = glossary_synonyms(code)
    data: dict[str, Any] = {
        "code": language(code).search_lang,
        "analyzer": ANALYZERS[code],
        "synonyms": synonyms,
    }
    pieces = [*index_words(search_index), *(w for pair in synonyms for p in pair for w in words(p))]
    if data["analyzer"] == "morphemes":
        data["morphemes"], data["stems"], data["suffixes"] = korean_morphemes(pieces)
    else:
        data["stems"] = indonesian_stems(pieces)
    return data


def language_file(code: str, search_index: dict[str, Any]) -> str:
    """The text of the lunr language file: the analyzer's library, the data, the worker code."""
    data = search_data(code, search_index)
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
    path = site_dir / LANGUAGE_FILE.format(search_lang=language(code).search_lang)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(language_file(code, search_index), "utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    """`python -m iteragpu.docs_tools.site_search --site-dir SITE/ko --lang ko --data`: print the
    search data of a built language (the node tests read it)."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--site-dir", type=Path, required=True)
    parser.add_argument("--lang", choices=sorted(set(CODES) & set(ANALYZERS)), required=True)
    args = parser.parse_args(argv)
    index = json.loads((args.site_dir / "search" / "search_index.json").read_text("utf-8"))
    json.dump(search_data(args.lang, index), sys.stdout, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
