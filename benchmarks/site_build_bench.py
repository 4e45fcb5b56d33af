"""The site build against a plain Material build of the same pages (goal: ratio at most 1.5).

Ours: `python -m iteragpu.docs_tools.build_site`, every language with --strict, the hooks, the
lab downloads, the notebook page, the sizer data and the root page. Plain: one process that
builds, with MkDocs' API, a generated minimal configuration per language: Material (same
features and palette, no overrides), its search plugin with the language's search_lang, the
same Markdown extensions, no hooks, over a copy of the language's pages whose notebook page
already holds the notebook's Markdown. Both run as fresh processes, alternately, after one
warm-up each (so both find the project's bytecode compiled); the medians and their ratio are
printed with the load average, since both compete with whatever else runs on the machine.
A benchmark, not a test: it reports and never fails on time.

    python benchmarks/site_build_bench.py [--runs 5]     (from the repository root)
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

GOAL = 1.5


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


def _timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs of each build")
    parser.add_argument("--plain-build", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.plain_build:
        _build_plain(args.plain_build)
        return 0
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
        load_after = os.getloadavg()
    ours_s, plain_s = statistics.median(times["ours"]), statistics.median(times["plain"])
    ratio = ours_s / plain_s
    verdict = "ok" if ratio <= GOAL else "over goal"
    print(f"site build, every language ({args.runs} alternating runs each, medians)")
    for label, name, median in (
        ("ours (build_site --strict, hooks, downloads)", "ours", ours_s),
        ("plain Material, same pages", "plain", plain_s),
    ):
        spread = f"min {min(times[name]):.2f} s, max {max(times[name]):.2f} s"
        print(f"  {label:<46} {median:6.2f} s  ({spread})")
    print(f"  ratio {ratio:.2f}  goal <= {GOAL}  {verdict}")
    print(
        f"  load average (1 min) {load_before[0]:.2f} before, {load_after[0]:.2f} after, "
        f"on {os.cpu_count()} CPUs"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
