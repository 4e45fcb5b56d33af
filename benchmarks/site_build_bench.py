"""The site build against a plain Material build of the same pages, full and after an edit.

1. Full build (goal: ratio at most 1.5). Ours: `python -m iteragpu.docs_tools.build_site`,
   every language with --strict, the hooks, the lab downloads, the notebook page, the sizer
   data, the search files and the root page. Plain: one process that builds, with MkDocs' API,
   a generated minimal configuration per language: Material (same features and palette, no
   overrides), its search plugin with the language's search_lang, the same Markdown
   extensions, no hooks, over a copy of the language's pages whose notebook page already holds
   the notebook's Markdown. Both run as fresh processes, alternately, after one warm-up each
   (so both find the project's bytecode compiled).
2. Rebuild after editing one page, as `mkdocs serve` does on save (goal: ratio at most 1.5):
   in one process per side, the Korean site is built once, then a paragraph that the page
   already has is added to the sizing guide and the configuration is loaded and built again
   (MkDocs' serve: a new configuration, the plugins started once); the median of the edits'
   rebuilds, ours over a copy of docs/ and snippets/, plain over its copy of the pages. For
   information, the same with a word no page uses: the first such rebuild of a process loads
   Kiwi to analyse it (iteragpu.docs_tools.site_search), the next ones do not.

The medians and their ratios are printed with the load average, since both sides compete with
whatever else runs on the machine; each goal goes through benchmarks/goals.py. A benchmark, not
a test: it reports, and its exit status says whether the goals held.

    python benchmarks/site_build_bench.py [--runs 5] [--edits 5]   (from the repository root)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from goals import check, exit_status

GOAL = 1.5
REBUILD_GOAL = 1.5
EDITED_PAGE = "sizing.md"
# A word no page uses, for the information line on a new word's first rebuild.
NEW_WORD = {"ko": "벤치마크용새낱말", "id": "katabarupengujian"}


def _plain_configs(work: Path) -> list[Path]:
    """One minimal Material configuration per language, over a copy of its pages."""
    from mkdocs.config import load_config

    from iteragpu.docs_tools.build_site import lab_downloads
    from iteragpu.docs_tools.lab_archive import notebook_name
    from iteragpu.docs_tools.notebook_page import notebook_markdown
    from iteragpu.i18n.languages import LANGUAGES

    configs = []
    for language in LANGUAGES:
        ours = load_config(str(Path("docs") / language.code / "mkdocs.yml"))
        pages = work / "pages" / language.code
        shutil.copytree(ours.docs_dir, pages)
        notebook_page = pages / "notebook.md"
        notebook = lab_downloads()[notebook_name(language.code)]
        notebook_page.write_text(
            f"{notebook_page.read_text('utf-8').rstrip()}\n\n{notebook_markdown(notebook)}", "utf-8"
        )
        extensions = [
            {name: _plain(ours.mdx_configs.get(name, {}))} for name in ours.markdown_extensions
        ]
        plain = {
            "site_name": ours.site_name,
            "docs_dir": str(pages),
            "site_dir": str(work / "plain-site" / language.code),
            "theme": {
                "name": "material",
                "language": language.code,
                "font": False,
                "features": list(ours.theme["features"]),
                "palette": ours.theme["palette"],
            },
            "plugins": [{"search": {"lang": [language.search_lang]}}],
            "markdown_extensions": extensions,
        }
        config = work / f"plain-{language.code}.yml"
        config.write_text(json.dumps(plain, ensure_ascii=False, indent=1), "utf-8")  # YAML too
        configs.append(config)
    return configs


def _plain(value: object) -> object:
    """A Markdown extension's options with MkDocs' path placeholders turned into paths."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return value


def _build_plain(configs: list[str]) -> None:
    """The plain build: every language in one process, as build_site does."""
    import logging

    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    logging.getLogger("mkdocs").setLevel(logging.ERROR)  # the copies' download links dangle
    for config_file in configs:
        config = load_config(config_file)
        config.plugins.on_startup(command="build", dirty=False)
        build(config)
        config.plugins.on_shutdown()


def _edit(page: Path, extra: str) -> None:
    """Add `extra` after the page's text, as a writer saving the page does."""
    page.write_text(f"{page.read_text('utf-8').rstrip()}\n\n{extra}\n", "utf-8")


def _known_paragraph(page: Path) -> str:
    """A paragraph of the page itself, so that the edit brings no new word."""
    for block in page.read_text("utf-8").split("\n\n"):
        text = block.strip()
        if text and not text.startswith(("#", "-", "|", "`", "!", "<", "[", "*", "=")):
            return text
    raise SystemExit(f"{page}: no plain paragraph to repeat")


def _rebuild_server(config_file: str, page: Path, new_word: str) -> None:
    """As `mkdocs serve` does, in this process: build once, then on each line of stdin edit the
    page (`known`: a paragraph it already has; `new`: a word no page uses), load the
    configuration anew, rebuild, and print the rebuild's seconds. The parent alternates the two
    sides edit by edit, so that both meet the same load."""
    import logging

    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    logging.getLogger("mkdocs").setLevel(logging.ERROR)
    config = load_config(config_file)
    config.plugins.on_startup(command="serve", dirty=False)
    build(config)
    paragraph = _known_paragraph(page)
    print("ready", flush=True)
    for line in sys.stdin:
        _edit(page, paragraph if line.strip() == "known" else new_word)
        start = time.perf_counter()
        build(load_config(config_file))
        print(time.perf_counter() - start, flush=True)


def _alternate_rebuilds(sides: dict[str, tuple[list[str], Path]], edits: int) -> dict[str, Any]:
    """Start both rebuild servers, then alternate their edits; the rebuild seconds per side."""
    servers = {
        name: subprocess.Popen(
            command, cwd=folder, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        for name, (command, folder) in sides.items()
    }
    results: dict[str, Any] = {name: {"times": []} for name in servers}

    def ask(name: str, what: str) -> float:
        server = servers[name]
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write(f"{what}\n")
        server.stdin.flush()
        return float(server.stdout.readline())

    try:
        for server in servers.values():
            assert server.stdout is not None
            if server.stdout.readline().strip() != "ready":
                raise SystemExit("a rebuild server did not start")
        for _ in range(edits):
            for name in servers:
                results[name]["times"].append(ask(name, "known"))
        for name in servers:
            results[name]["new_word"] = ask(name, "new")
    finally:
        for server in servers.values():
            if server.stdin is not None:
                server.stdin.close()
            server.wait(timeout=60)
    return results


def _rebuild_sides(work: Path) -> dict[str, tuple[list[str], Path]]:
    """The two rebuild commands: ours over a copy of the tree, plain over its copy of pages."""
    tree = work / "tree"
    for name in ("docs", "snippets"):
        shutil.copytree(name, tree / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy("mkdocs.yml", tree / "mkdocs.yml")
    code = "ko"
    ours_config = tree / "docs" / code / "mkdocs.yml"
    plain_config = work / f"plain-{code}.yml"
    command = [sys.executable, str(Path(__file__).resolve()), "--rebuild"]
    ours_page = tree / "docs" / code / "docs" / EDITED_PAGE
    plain_page = work / "pages" / code / EDITED_PAGE
    # Each side with its command and folder: ours reads docs/root/ and the like from its tree.
    return {
        "ours": ([*command, str(ours_config), str(ours_page), NEW_WORD[code]], tree),
        "plain": ([*command, str(plain_config), str(plain_page), NEW_WORD[code]], Path.cwd()),
    }


def _timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs of each build")
    parser.add_argument("--edits", type=int, default=5, help="timed rebuilds of each side")
    parser.add_argument("--plain-build", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument("--rebuild", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.plain_build:
        _build_plain(args.plain_build)
        return 0
    if args.rebuild:
        config_file, page, new_word = args.rebuild
        _rebuild_server(config_file, Path(page), new_word)
        return 0
    held = []
    with tempfile.TemporaryDirectory(prefix="iteragpu-site-bench-") as tmp:
        work = Path(tmp)
        configs = [str(config) for config in _plain_configs(work)]
        ours = [sys.executable, "-m", "iteragpu.docs_tools.build_site", "--quiet"]
        ours += ["--site-dir", str(work / "site")]
        plain = [sys.executable, __file__, "--plain-build", *configs]
        load_before = os.getloadavg()
        times: dict[str, list[float]] = {"ours": [], "plain": []}
        for run in range(args.runs + 1):
            for name, command in (("ours", ours), ("plain", plain)):
                elapsed = _timed(command)
                if run:  # run 0 warms both up (bytecode, file cache)
                    times[name].append(elapsed)
        ours_s, plain_s = statistics.median(times["ours"]), statistics.median(times["plain"])
        print(f"site build, every language ({args.runs} alternating runs each, medians)")
        for label, name, median in (
            ("ours (build_site --strict, hooks, downloads)", "ours", ours_s),
            ("plain Material, same pages", "plain", plain_s),
        ):
            spread = f"min {min(times[name]):.2f} s, max {max(times[name]):.2f} s"
            print(f"  {label:<46} {median:6.2f} s  ({spread})")
        held.append(check("site build, every language", ours_s / plain_s, GOAL))

        rebuilds = _alternate_rebuilds(_rebuild_sides(work), args.edits)
        load_after = os.getloadavg()
    medians = {name: statistics.median(r["times"]) for name, r in rebuilds.items()}
    edits = f"{args.edits} edits, medians"
    print(f"rebuild after editing ko/{EDITED_PAGE}, as mkdocs serve does ({edits}, alternating)")
    print(f"  ours (hooks, search table)                     {medians['ours']:6.2f} s")
    print(f"  plain Material, same pages                     {medians['plain']:6.2f} s")
    held.append(
        check("rebuild after editing one page", medians["ours"] / medians["plain"], REBUILD_GOAL)
    )
    print(
        f"  for information: the first rebuild after a word no page uses: ours "
        f"{rebuilds['ours']['new_word']:.2f} s (Kiwi loaded once per process), plain "
        f"{rebuilds['plain']['new_word']:.2f} s"
    )
    print(
        f"  load average (1 min) {load_before[0]:.2f} before, {load_after[0]:.2f} after, "
        f"on {os.cpu_count()} CPUs"
    )
    return exit_status(held)


if __name__ == "__main__":
    sys.exit(main())
