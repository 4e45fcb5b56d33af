"""Build the whole site: every language of `iteragpu.i18n.languages`, then the root page.

    python -m iteragpu.docs_tools.build_site [--site-dir site] [--base-url URL] [--quiet]

Run it from the repository root (`nox -s docs`, `site`, `serve` and `bench` do). Each language
is built from its `docs/<code>/mkdocs.yml`, which inherits the shared base `mkdocs.yml`, with
MkDocs' API and in this one process, so that the lab downloads are built once and every
language publishes the same files (`lab_downloads`, which `docs/hooks.py` calls). The root page
(`docs/root/index.html`, a Jinja template) lists every language and sends readers to theirs.

Exit codes: 0 built; 1 a language failed to build (MkDocs said why above: with `strict`, any
warning); 2 bad arguments, not run from a repository root, or the `docs` extra missing (one
line on stderr).
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import os
import sys
import tempfile
from collections.abc import Sequence
from importlib.util import find_spec
from pathlib import Path
from typing import NoReturn

from iteragpu.docs_tools.lab_archive import LAB_DIR, build_downloads, license_path
from iteragpu.i18n.languages import LANGUAGES, SOURCE

DEFAULT_BASE_URL = "http://127.0.0.1:8000/"
ROOT_TEMPLATE = Path("docs") / "root" / "index.html"
EXIT_BUILD_FAILED = 1
EXIT_INVALID_INPUT = 2

# Published file name -> content, by digest of the sources they are built from.
_downloads: dict[str, dict[str, bytes]] = {}


def lab_downloads() -> dict[str, bytes]:
    """The lab downloads (`lab_archive.build_downloads`): file name -> content.

    Built once per process and state of the lab's sources: every language of a site build, and
    every rebuild of `mkdocs serve` that left the lab alone, shares one build.
    """
    key = _lab_sources_digest()
    if key not in _downloads:
        _downloads.clear()
        with tempfile.TemporaryDirectory(prefix="iteragpu-downloads-") as tmp:
            paths = build_downloads(Path(tmp))
            _downloads[key] = {name: path.read_bytes() for name, path in paths.items()}
    return _downloads[key]


def _lab_sources_digest() -> str:
    digest = hashlib.sha256()
    sources = [p for p in LAB_DIR.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    for path in [*sorted(sources), license_path()]:
        digest.update(f"{path.name}\0{path.stat().st_size}\0".encode())
        digest.update(path.read_bytes())
    digest.update(os.environ.get("SOURCE_DATE_EPOCH", "").encode())
    return digest.hexdigest()


def root_page(template: Path = ROOT_TEMPLATE) -> str:
    """The site's root page: every language, the source language first and as the default."""
    import jinja2

    environment = jinja2.Environment(autoescape=True, keep_trailing_newline=True)
    page = environment.from_string(template.read_text("utf-8"))
    return page.render(languages=LANGUAGES, source=SOURCE)


def build_site(site_dir: Path, base_url: str = DEFAULT_BASE_URL) -> None:
    """Build every language into `site_dir/<code>/` and write `site_dir/index.html`.

    `base_url` is where `site_dir` will be served; each language lives under `<base_url><code>/`.
    Raises mkdocs.exceptions.MkDocsException when a language fails to build.
    """
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    site_dir = site_dir.resolve()  # MkDocs reads a relative site_dir from the config's folder
    for language in LANGUAGES:
        config = load_config(
            str(Path("docs") / language.code / "mkdocs.yml"),
            site_dir=str(site_dir / language.code),
            site_url=base_url,
        )
        config.plugins.on_startup(command="build", dirty=False)
        try:
            build(config)
        finally:
            config.plugins.on_shutdown()
    (site_dir / "index.html").write_text(root_page(), "utf-8")


class _OneLineParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_INVALID_INPUT, f"build_site: error: {' '.join(message.split())}\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = _OneLineParser(
        prog="python -m iteragpu.docs_tools.build_site",
        description="Build every language of the site with --strict, then the root page.",
    )
    parser.add_argument("--site-dir", type=Path, default=Path("site"), help="default: site")
    parser.add_argument(
        "--base-url",
        default=DEFAULT_BASE_URL,
        help=f"where the site will be served (sitemaps, 404 page); default: {DEFAULT_BASE_URL}",
    )
    parser.add_argument("--quiet", action="store_true", help="report warnings and errors only")
    args = parser.parse_args(argv)
    missing = [
        str(config)
        for language in LANGUAGES
        if not (config := Path("docs") / language.code / "mkdocs.yml").is_file()
    ]
    if missing or not ROOT_TEMPLATE.is_file():
        print(
            f"build_site: error: {', '.join(missing) or ROOT_TEMPLATE} not found: "
            "run from the repository root",
            file=sys.stderr,
        )
        return EXIT_INVALID_INPUT
    if find_spec("mkdocs") is None or find_spec("material") is None:
        print(
            "build_site: error: building the site needs the 'docs' extra: pip install -e '.[docs]'",
            file=sys.stderr,
        )
        return EXIT_INVALID_INPUT
    _log_like_mkdocs(logging.WARNING if args.quiet else logging.INFO)
    from mkdocs.exceptions import MkDocsException

    try:
        build_site(args.site_dir, args.base_url.rstrip("/") + "/")
    except MkDocsException as exc:
        print(f"build_site: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return EXIT_BUILD_FAILED
    return 0


def _log_like_mkdocs(level: int) -> None:
    # What `mkdocs build` shows: MkDocs' and its plugins' messages, "WARNING -  ..." style.
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(levelname)-7s -  %(message)s"))
    logger = logging.getLogger("mkdocs")
    logger.addHandler(handler)
    logger.setLevel(level)


if __name__ == "__main__":
    sys.exit(main())
