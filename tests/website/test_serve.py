"""`iteragpu.docs_tools.serve`, the server of `nox -s serve` and of the browser tests: UTF-8
text types (the lab README opened as mojibake) and each language's 404 page. No built site
needed: it serves a small folder made here."""

from __future__ import annotations

import http.server
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from iteragpu.docs_tools.serve import EXIT_INVALID_INPUT, handler, main

README = "# IteraGPU Lab v1 사용 안내\n"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    (tmp_path / "index.html").write_text("<!doctype html><title>root</title>", "utf-8")
    for lang in ("ko", "id"):
        downloads = tmp_path / lang / "downloads"
        downloads.mkdir(parents=True)
        (downloads / f"README.{lang}.md").write_text(README, "utf-8")
        (downloads / "mesure_memoire.py").write_text("# 측정\n", "utf-8")
        (tmp_path / lang / "404.html").write_text(f"<html lang={lang}>not found</html>", "utf-8")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler(tmp_path))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _get(url: str) -> tuple[int, str, bytes]:
    try:
        with urllib.request.urlopen(url) as response:
            return response.status, response.headers["Content-Type"], response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers["Content-Type"], error.read()


@pytest.mark.parametrize("lang", ["ko", "id"])
def test_a_readme_is_utf8_markdown(served: str, lang: str) -> None:
    status, kind, body = _get(f"{served}/{lang}/downloads/README.{lang}.md")
    assert status == 200
    assert kind == "text/markdown; charset=utf-8"
    assert body.decode("utf-8") == README


def test_every_text_type_says_utf8(served: str) -> None:
    status, kind, _ = _get(f"{served}/ko/downloads/mesure_memoire.py")
    assert status == 200 and kind.startswith("text/") and kind.endswith("; charset=utf-8")
    status, kind, _ = _get(f"{served}/")
    assert status == 200 and kind == "text/html; charset=utf-8"


@pytest.mark.parametrize("lang", ["ko", "id"])
def test_a_missing_page_gets_its_languages_404_page(served: str, lang: str) -> None:
    status, kind, body = _get(f"{served}/{lang}/no/such/page/")
    assert status == 404
    assert kind == "text/html; charset=utf-8"
    assert body.decode("utf-8") == f"<html lang={lang}>not found</html>"


def test_a_missing_file_outside_the_languages_gets_the_plain_404(served: str) -> None:
    status, _, body = _get(f"{served}/favicon.ico")
    assert status == 404 and b"not found</html>" not in body


def test_a_folder_that_is_not_a_built_site_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--site-dir", str(tmp_path / "nothing")]) == EXIT_INVALID_INPUT
    err = capsys.readouterr().err
    assert err.startswith("serve: error: ") and err.count("\n") == 1
