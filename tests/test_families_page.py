"""The "supported families" pages: written from the families the package reads, in each language."""

from __future__ import annotations

from pathlib import Path

import pytest

from iteragpu.docs_tools import families_page
from iteragpu.i18n.languages import CODES
from iteragpu.models import config as model_config
from iteragpu.models.recipe import recipe_types


def test_the_pages_are_written_from_the_families() -> None:
    assert families_page.stale_pages() == []


@pytest.mark.parametrize("lang", CODES)
def test_every_family_the_reader_knows_has_its_row(lang: str) -> None:
    text = families_page.page_path(lang).read_text("utf-8")
    exact = text.split("{ #exact }")[1].split("{ #gguf }")[0]
    rows = [line for line in exact.splitlines() if line.startswith("| `")]
    listed = [row.split("`")[1] for row in rows]
    assert listed == model_config.known_families()
    assert set(recipe_types()) <= set(listed)
    for model_type in model_config.refused_state_families():
        assert f"`{model_type}`" in text.split("{ #refused }")[1]


@pytest.mark.parametrize("lang", CODES)
def test_every_gguf_architecture_the_reader_reads_has_its_row(lang: str) -> None:
    """The GGUF section lists what iteragpu.models.gguf reads, each with its families and what
    its cache follows, in the page's language."""
    from iteragpu.models import gguf

    text = families_page.page_path(lang).read_text("utf-8")
    section = text.split("{ #gguf }")[1].split("{ #refused }")[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    words = families_page.load_words()
    expected = gguf.architectures()
    assert [row.split("`")[1] for row in rows] == [arch for arch, _, _ in expected]
    for row, (arch, types, rule) in zip(rows, expected, strict=True):
        assert all(f"`{t}`" in row for t in types), arch
        assert row.rstrip(" |").endswith(words["gguf_rules"][rule][lang]), arch
    assert {"mamba", "jamba", "qwen3next", "lfm2", "llama4", "gemma3n", "deepseek2"} <= {
        arch for arch, _, _ in expected
    }


def test_a_new_recipe_makes_the_pages_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for lang in CODES:
        target = families_page.page_path(lang, tmp_path)
        target.parent.mkdir(parents=True)
        target.write_text(families_page.page_markdown(lang), "utf-8")
    assert families_page.stale_pages(tmp_path) == []
    known = model_config.known_families()
    monkeypatch.setattr(model_config, "known_families", lambda: [*known, "zzz_new"])
    assert families_page.stale_pages(tmp_path) == [
        families_page.page_path(lang, tmp_path) for lang in CODES
    ]


def test_the_nav_lists_the_page() -> None:
    nav = (families_page.ROOT / "mkdocs.yml").read_text("utf-8")
    assert f"      - {families_page.PAGE}\n" in nav
