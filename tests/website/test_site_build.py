"""The site build's own pieces, without building: the notebook page, the root page, the driver's
refusals. test_site.py checks the built site; test_third_language.py, a third language."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from mkdocs.exceptions import PluginError

from iteragpu.docs_tools.build_site import EXIT_INVALID_INPUT, main, root_page
from iteragpu.docs_tools.notebook_page import fenced, notebook_markdown
from iteragpu.i18n.languages import LANGUAGES, SOURCE

from .conftest import ROOT

# The site's build tools need the docs extra (MkDocs, Jinja): `nox -s site` runs these.
pytestmark = pytest.mark.site


def _notebook(*cells: tuple[str, str | list[str]]) -> str:
    return json.dumps({"cells": [{"cell_type": kind, "source": src} for kind, src in cells]})


def test_notebook_cells_become_markdown_and_python_blocks_in_order() -> None:
    text = notebook_markdown(
        _notebook(
            ("markdown", "# Title\n\nProse."),
            ("code", ["x = 1\n", "print(x)\n"]),  # nbformat's list-of-lines form
            ("code", "   \n"),  # an empty cell shows nothing
            ("markdown", ["## Next\n"]),
        )
    )
    assert text == "# Title\n\nProse.\n\n```python\nx = 1\nprint(x)\n```\n\n## Next\n"


def test_a_code_fence_outlasts_the_backticks_of_the_code() -> None:
    code = 'doc = """\n```python\nx\n````\n"""'
    block = fenced(code, "python")
    assert block.startswith("`````python\n") and block.endswith("\n`````")
    assert block[len("`````python\n") : -len("\n`````")] == code


def test_a_raw_cell_is_refused_not_dropped() -> None:
    with pytest.raises(ValueError, match="cell 1: cannot show a 'raw' cell"):
        notebook_markdown(_notebook(("markdown", "# T"), ("raw", "<b>raw</b>")))


def test_the_root_page_lists_every_language_and_defaults_to_the_source() -> None:
    html = root_page(ROOT / "docs" / "root" / "index.html")
    assert f'<html lang="{SOURCE}">' in html
    links = re.findall(r'<a href="([^"]+)/" hreflang="([^"]+)" lang="([^"]+)">([^<]+)</a>', html)
    assert links == [(lang.code,) * 3 + (lang.name,) for lang in LANGUAGES]
    codes = json.loads(re.search(r"var codes = (\[[^\]]*\]);", html)[1])  # type: ignore[index]
    assert codes == [lang.code for lang in LANGUAGES]
    assert f'var target = "{SOURCE}";' in html


def test_the_driver_refuses_to_run_outside_a_repository_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["--site-dir", str(tmp_path / "site")]) == EXIT_INVALID_INPUT
    err = capsys.readouterr().err
    assert err.startswith("build_site: error: ") and err.count("\n") == 1
    assert "run from the repository root" in err
    assert not (tmp_path / "site").exists()


def test_the_driver_refuses_an_unknown_option_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--colour"])
    assert exit_info.value.code == EXIT_INVALID_INPUT
    err = capsys.readouterr().err
    assert err.startswith("build_site: error: ") and err.count("\n") == 1


def _hooks() -> Any:
    """docs/hooks.py, loaded as MkDocs loads it (a file, not a module of the package)."""
    spec = importlib.util.spec_from_file_location("iteragpu_site_hooks", ROOT / "docs" / "hooks.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_language_without_its_chrome_words_is_refused() -> None:
    hooks = _hooks()
    config = SimpleNamespace(
        config_file_path="docs/xx/mkdocs.yml",
        extra={"chrome": {"dark_palette": "…", "permalink": "…"}},
    )
    with pytest.raises(PluginError, match=r"docs/xx/mkdocs.yml: extra.chrome lacks light_palette"):
        hooks._chrome_of(config)
    source = yaml.safe_load((ROOT / "docs" / SOURCE / "mkdocs.yml").read_text("utf-8"))
    assert set(source["extra"]["chrome"]) == hooks.CHROME_KEYS


def test_the_lab_readme_page_ends_with_its_markdown_file_and_describes_itself() -> None:
    hooks = _hooks()
    hooks._build.update(downloads={"README.xx.md": b"# Title\n\nFirst words\nof it.\n\n## Next\n"})
    config = SimpleNamespace(extra={"chrome": {"readme_source": "The file:"}})
    page = hooks._lab_readme_page("README.xx.md", config)
    assert page.startswith("# Title\n\nFirst words")
    assert page.endswith("\n\n---\n\nThe file: [README.xx.md](../downloads/README.xx.md)\n")
    assert hooks._first_paragraph(page) == "First words of it."
