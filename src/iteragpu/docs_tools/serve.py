"""Serve a built site over HTTP, as `nox -s serve` does and the browser tests do.

    python -m iteragpu.docs_tools.serve [--site-dir site] [--bind 127.0.0.1] [--port 8000]

Python's http.server, with two differences a reader meets:

- text files say their encoding: a lab README (`.md`) is `text/markdown; charset=utf-8`, and
  every other `text/*` file is UTF-8 too, so that a browser does not guess another encoding
  and show Korean as mojibake;
- an address under a language's folder that holds no file gets that language's 404 page
  (`<code>/404.html`), with status 404, as a static host configured for the site would.

Exit codes: 0 stopped (Ctrl+C); 2 bad arguments or a site folder that is not there (one line
on stderr).
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn
from urllib.parse import unquote, urlsplit

UTF8 = "; charset=utf-8"
EXIT_INVALID_INPUT = 2


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    """Serves a built site: UTF-8 text types and each language's 404 page."""

    def guess_type(self, path: str | os.PathLike[str]) -> str:
        if os.fspath(path).lower().endswith(".md"):
            # Not left to mimetypes: it knows Markdown only from the system's tables or 3.13 on.
            return "text/markdown" + UTF8
        kind = super().guess_type(path)
        return kind + UTF8 if kind.startswith("text/") and "charset=" not in kind else kind

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        page = self._not_found_page() if code == 404 else None
        if page is None:
            super().send_error(code, message, explain)
            return
        body = page.read_bytes()
        self.send_response(404)
        self.send_header("Content-Type", "text/html" + UTF8)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _not_found_page(self) -> Path | None:
        """The 404 page of the language whose folder the requested address is under."""
        folder = unquote(urlsplit(self.path).path).lstrip("/").split("/", 1)[0]
        if not folder or folder in (".", ".."):
            return None
        page = Path(self.directory) / folder / "404.html"
        return page if page.is_file() else None


def handler(site_dir: Path) -> functools.partial[SiteHandler]:
    """The request handler class for `http.server`, serving `site_dir`."""
    return functools.partial(SiteHandler, directory=str(site_dir))


class _OneLineParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_INVALID_INPUT, f"serve: error: {' '.join(message.split())}\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = _OneLineParser(
        prog="python -m iteragpu.docs_tools.serve", description="Serve a built site over HTTP."
    )
    parser.add_argument("--site-dir", type=Path, default=Path("site"), help="default: site")
    parser.add_argument("--bind", default="127.0.0.1", help="default: 127.0.0.1")
    parser.add_argument("--port", type=int, default=8000, help="default: 8000")
    args = parser.parse_args(argv)
    if not (args.site_dir / "index.html").is_file():
        print(f"serve: error: {args.site_dir} is not a built site (no index.html)", file=sys.stderr)
        return EXIT_INVALID_INPUT
    server = http.server.ThreadingHTTPServer((args.bind, args.port), handler(args.site_dir))
    print(f"Serving {args.site_dir} at http://{args.bind}:{args.port}/ (Ctrl+C stops)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
