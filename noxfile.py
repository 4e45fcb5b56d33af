"""nox sessions: `nox` runs the whole test suite; `nox -s serve` builds and serves the site."""

from __future__ import annotations

import atexit
import functools
import hashlib
import os
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nox

nox.needs_version = ">=2024.3.2"
nox.options.default_venv_backend = "venv"
nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = ["lint", "tests", "js", "lab_torch", "models", "training", "ranks", "site"]

ROOT = Path(__file__).parent
SITE = ROOT / "site"
# The CPU build of PyTorch available on the project's machines; an unpinned `torch` would pull
# a CUDA build of several GB.
TORCH = "torch==2.13.0"
# The Transformers whose cache semantics `iteragpu.models` states (tests/models pins it too).
TRANSFORMERS = "transformers==5.24.0"
# Quantized checkpoints written by the library itself, on CPU (test_quantized_libraries.py).
BITSANDBYTES = "bitsandbytes==0.50.2"
# The fine-tuning libraries whose tensors `iteragpu train` states (tests/training).
PEFT = "peft==0.21.2"
ACCELERATE = "accelerate==1.15.0"
# pytest-xdist over the machine's cores: the browser tests mostly wait on Chromium, and the
# unit tests' longest (the wheel installed alone) runs beside the others.
XDIST = ("-n", "2", "--dist", "load")
XDIST_GROUPS = ("-n", "2", "--dist", "loadgroup")
DEEPSPEED = "deepspeed==0.19.8"
# What DeepSpeed 0.19.8 imports beside torch (its requirements.txt), for its estimators.
DEEPSPEED_DEPENDENCIES = (
    "hjson",
    "py-cpuinfo",
    "pydantic>=2",
    "msgpack",
    "psutil",
    "ninja",
    "einops",
)
# The peer `nox -s bench` times `iteragpu model` against (installed in that session only).
VRAMCALC = "vramcalc==0.1.2"
SERVE_ADDRESS = ("127.0.0.1", "8000")
# The two virtualenvs the default sessions share (see `Shared`): one without torch (the default
# suite checks that the lab and the CLI work where PyTorch is absent), one with the torch stack.
BASE_REQUIREMENTS = ("-e", ".[test,docs,browser]", "ruff", "mypy")
TORCH_REQUIREMENTS = (TORCH, TRANSFORMERS, BITSANDBYTES, PEFT, ACCELERATE, "-e", ".[test]")
# Where the site will be served; override for a deployment (the 404 page and sitemaps use it).
SITE_BASE_URL = os.environ.get("ITERAGPU_BASE_URL", f"http://{SERVE_ADDRESS[0]}:{SERVE_ADDRESS[1]}")


# Each session's wall time, printed when nox exits (CI reads where its minutes go).
_DURATIONS: dict[str, tuple[float, bool]] = {}


def timed(function: Callable[[nox.Session], None]) -> Callable[[nox.Session], None]:
    """Record how long a session's body ran (installs included, the venv's creation not)."""

    @functools.wraps(function)
    def run(session: nox.Session) -> None:
        start = time.perf_counter()
        ok = False
        try:
            function(session)
            ok = True
        finally:
            _DURATIONS[session.name] = (time.perf_counter() - start, ok)

    return run


@atexit.register
def _print_durations() -> None:
    if not _DURATIONS:
        return
    total = sum(seconds for seconds, _ in _DURATIONS.values())
    lines = ["", "nox sessions, wall time:"]
    for name, (seconds, ok) in _DURATIONS.items():
        lines.append(f"  {name:<12} {seconds / 60:5.1f} min  {'ok' if ok else 'failed'}")
    lines.append(f"  {'total':<12} {total / 60:5.1f} min")
    print("\n".join(lines), file=sys.stderr)


class Shared:
    """A virtualenv that several sessions share, under .nox/_shared/<name>.

    Each default session used to install its own copy of the same packages: the torch stack
    (torch's CPU build alone unpacks to about 700 MB) three times, the docs and test extras
    four times, several minutes of a CI run that has 25. A shared environment is created once;
    a session asks for its requirements, which pip installs only when they (or pyproject.toml)
    changed since the last install into it. Sessions using one are declared with
    `venv_backend="none"`, so each still runs alone (`nox -s models`) on a fresh clone."""

    def __init__(self, session: nox.Session, name: str, requirements: tuple[str, ...]) -> None:
        self.session = session
        self.venv = ROOT / ".nox" / "_shared" / name
        self.bin = self.venv / "bin"
        if not (self.bin / "python").exists():
            session.run(sys.executable, "-m", "venv", str(self.venv), external=True)
        wanted = "\n".join([*requirements, (ROOT / "pyproject.toml").read_text("utf-8")])
        key = hashlib.sha256(wanted.encode("utf-8")).hexdigest()
        stamps = self.venv / "installed-requirements.txt"
        if key not in (stamps.read_text("utf-8").split() if stamps.exists() else []):
            self.run("python", "-m", "pip", "install", "--quiet", *requirements)
            with stamps.open("a", encoding="utf-8") as out:
                out.write(key + "\n")

    def run(self, program: str, *args: str, **kwargs: Any) -> Any:
        """`session.run` of one of the environment's programs, with the environment first on
        PATH (for the programs the tests start themselves: torchrun, pytest's workers)."""
        env = {
            "VIRTUAL_ENV": str(self.venv),
            "PATH": f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}",
            **kwargs.pop("env", {}),
        }
        path = self.bin / program
        command = str(path) if path.exists() else program
        return self.session.run(command, *args, external=True, env=env, **kwargs)


def base_env(session: nox.Session) -> Shared:
    """The shared environment without torch: the package with its test, docs and browser
    extras, ruff and mypy."""
    return Shared(session, "base", BASE_REQUIREMENTS)


def torch_env(session: nox.Session) -> Shared:
    """The shared environment with torch's CPU build, Transformers, bitsandbytes, PEFT and
    Accelerate at the pinned versions, and the package with its test extra."""
    return Shared(session, "torch", TORCH_REQUIREMENTS)


@nox.session(venv_backend="none")
@timed
def lint(session: nox.Session) -> None:
    """ruff check, ruff format --check and mypy on src/."""
    env = base_env(session)
    env.run("ruff", "check", ".")
    env.run("ruff", "format", "--check", ".")
    env.run("mypy")


@nox.session(venv_backend="none")
@timed
def tests(session: nox.Session) -> None:
    """The figure checker, then pytest: unit, CLI, lab, snippet doctests, the wheel installed
    alone in a fresh venv (no torch, no site)."""
    # The docs extra too: the site's build tools have unit tests here, and pytest imports every
    # test module of tests/website before the markers deselect the ones that need a built site.
    env = base_env(session)
    env.run("python", "-m", "iteragpu.docs_tools.figure_check", "docs")
    # Transformers' tests run in `models`, with torch and transformers pinned.
    selection = (
        "not torch and not transformers and not training and not ranks and not site and not browser"
    )
    env.run("pytest", "-m", selection, *XDIST, *session.posargs)


@nox.session
@timed
def figures(session: nox.Session) -> None:
    """Check every figure stated on every page, in both languages, and print a per-page count."""
    session.install("-e", ".[test]")
    session.run("python", "-m", "iteragpu.docs_tools.figure_check", "docs", *session.posargs)


@nox.session(venv_backend="none")
@timed
def js(session: nox.Session) -> None:
    """The browser sizer's pure functions in node against the Python core's vectors."""
    env = base_env(session)  # docs/hooks.py (the page's sizer data) imports mkdocs
    if shutil.which("node") is None:
        session.error("node is not installed: the sizer's tests run with `node --test`")
    tmp = Path(session.create_tmp())
    vectors, data = tmp / "sizer_vectors.json", tmp / "sizer_data.json"
    with vectors.open("w", encoding="utf-8") as out:
        env.run("python", "-m", "iteragpu.docs_tools.sizer_vectors", stdout=out, stderr=None)
    with data.open("w", encoding="utf-8") as out:
        env.run("python", "docs/hooks.py", "--sizer-data", stdout=out, stderr=None)
    env.run(
        "node",
        "--test",
        "tests/js/",
        env={"ITERAGPU_SIZER_VECTORS": str(vectors), "ITERAGPU_SIZER_DATA": str(data)},
    )


@nox.session(venv_backend="none")
@timed
def lab_torch(session: nox.Session) -> None:
    """The lab with PyTorch (CPU build) installed: no GPU, so `measure` must refuse, and both
    notebooks run to the end headless ("Run All"), saying in their language why they cannot
    measure."""
    # The shared torch environment holds Transformers and Accelerate too: the lab page's
    # TrainerCallback example is replayed on the CPU.
    torch_env(session).run("pytest", "-m", "torch", "tests/lab", *session.posargs)


@nox.session(venv_backend="none")
@timed
def models(session: nox.Session) -> None:
    """The model reader against the real thing: small models of each family built with
    Transformers on torch's CPU build, their KV cache and weights compared byte for byte."""
    env = torch_env(session)
    # Every family twice (meta device, then a tiny model with its cache): spread over two
    # workers, as the unit tests are.
    # Grouped per family (xdist_group): a family's meta build and tiny model are made once.
    env.run(
        "pytest",
        "-m",
        "transformers",
        "-n",
        "2",
        "--dist",
        "loadgroup",
        "tests/models",
        *session.posargs,
    )


@nox.session(venv_backend="none")
@timed
def training(session: nox.Session) -> None:
    """The training sizes against the real thing: one optimizer step per setup with PyTorch,
    PEFT and bitsandbytes on CPU, FSDP2 over gloo processes, every tensor's bytes compared."""
    env = torch_env(session)
    # `iteragpu train --compare deepspeed` is checked against DeepSpeed's own estimators, which
    # import and run on a CPU: built without its ops, against the shared environment's torch
    # (pip skips both installs once they are satisfied).
    env.run(
        "python", "-m", "pip", "install", "--quiet", "setuptools", "wheel", *DEEPSPEED_DEPENDENCIES
    )
    env.run(
        "python",
        "-m",
        "pip",
        "install",
        "--quiet",
        "--no-build-isolation",
        "--no-deps",
        DEEPSPEED,
        env={"DS_BUILD_OPS": "0"},
    )
    # Grouped per family (xdist_group): a family's meta build serves all its setups.
    env.run("pytest", "-m", "training", *XDIST_GROUPS, "tests/training", *session.posargs)


@nox.session(venv_backend="none")
@timed
def ranks(session: nox.Session) -> None:
    """What each GPU holds when a model is split, against the real thing: tiny models of five
    families loaded by Transformers with tp_plan="auto", pp_size and ep_size under torchrun
    (gloo, CPU) on 2 and 4 processes, every rank's parameters and cache compared with
    iteragpu.parallel's plan; Transformers' own TP/EP plans against the recorded ones."""
    # One worker: the torchrun runs start their own processes (2, then 4) on the machine.
    torch_env(session).run("pytest", "-m", "ranks", "-n", "0", "tests/parallel", *session.posargs)


@nox.session(default=False)
@timed
def gpu(session: nox.Session) -> None:
    """The lab on a real GPU, in under 3 minutes: measure against predict, exit codes, and the
    expandable_segments and cudaMallocAsync allocators (reported); then both notebooks run
    headless on the GPU, in their language. `nox -s gpu -- FOLDER` writes the result files to
    FOLDER (default: a new folder under .nox/gpu/tmp)."""
    # On a GPU machine, PyPI's torch==2.13.0 for Linux is a CUDA build; nvidia-ml-py lets the
    # environment report list every GPU through NVML without creating CUDA contexts.
    session.install(TORCH, "nvidia-ml-py")
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    folder = session.posargs[:1] or [str(Path(session.create_tmp()) / f"gpu-results-{stamp}")]
    session.run("python", "tests/gpu/lab_gpu_check.py", *folder, *session.posargs[1:])
    session.install("-e", ".[test]")  # the notebooks are built from their source, then run
    session.run("pytest", "-m", "torch", "tests/lab/test_lab_notebook.py", "-k", "on_a_gpu")


def _build_site(session: nox.Session, env: Shared | None = None) -> None:
    """Every language of src/iteragpu/i18n/languages.py into site/<code>/, then site/index.html,
    in one process so that the lab downloads are built once (iteragpu.docs_tools.build_site).
    In `env` when given, else in the session's own virtualenv with the docs extra alone (what
    `nox -s serve` needs on a fresh machine)."""
    if env is None:
        session.install("-e", ".[docs]")
    run = session.run if env is None else env.run
    if SITE.exists():
        shutil.rmtree(SITE)
    run(
        "python",
        "-m",
        "iteragpu.docs_tools.build_site",
        "--site-dir",
        str(SITE),
        "--base-url",
        f"{SITE_BASE_URL}/",
        env={"NO_MKDOCS_2_WARNING": "1"},
    )


@nox.session(default=False)
@timed
def docs(session: nox.Session) -> None:
    """Build every language with --strict into site/<code>/, plus the root page."""
    _build_site(session)


@nox.session(venv_backend="none")
@timed
def site(session: nox.Session) -> None:
    """Build the site, then test it: pages, links, downloads, and headless Chromium."""
    env = base_env(session)
    _build_site(session, env)
    # loadgroup: the tests that read one crawl of the site (tests/website/crawl.py: every page
    # of a language loaded once per viewport) run on one worker, so the pages load once.
    env.run("pytest", "-m", "site or browser", *XDIST_GROUPS, *session.posargs)


@nox.session(default=False)
@timed
def serve(session: nox.Session) -> None:
    """Build the whole site and serve it at http://127.0.0.1:8000/ (Ctrl+C stops)."""
    _build_site(session)
    host, port = SERVE_ADDRESS
    # http.server, with UTF-8 text types (the lab READMEs) and each language's 404 page.
    session.run(
        "python",
        "-m",
        "iteragpu.docs_tools.serve",
        "--site-dir",
        str(SITE),
        "--bind",
        host,
        "--port",
        port,
    )


@nox.session(default=False)
@timed
def archive(session: nox.Session) -> None:
    """Write dist/iteragpu-lab-v1.zip and its .sha256, reproducibly (SOURCE_DATE_EPOCH)."""
    session.install("-e", ".[docs]")
    session.run("python", "-m", "iteragpu.docs_tools.lab_archive", "--out", "dist")


@nox.session(default=False)
@timed
def bench(session: nox.Session) -> None:
    """Speed and size goals, as ratios measured side by side in one run: the site build and a
    rebuild after an edit against a plain Material build of the same pages; CLI start-up
    against `import typer` and the lab's `estimate` against a bare interpreter; `iteragpu
    model` against vramcalc (the nearest offline peer, installed here only); reading a ~100 GB
    model's headers and the largest accepted lab result (each under 1 s); the browser sizer's
    recompute against one frame (16 ms) and its script size; the site search's index size per
    language and the time from a keystroke to results (both need Chromium). Each goal prints
    ok or over; the last line sums them up, and the session fails when one was missed."""
    session.install("-e", ".[docs,browser]", VRAMCALC)
    results = Path(session.create_tmp()) / "bench-goals.jsonl"
    results.unlink(missing_ok=True)
    env = {"NO_MKDOCS_2_WARNING": "1", "ITERAGPU_BENCH_RESULTS": str(results)}
    # Every benchmark runs even when an earlier one missed its goal; the summary decides.
    run = functools.partial(session.run, env=env, success_codes=[0, 1])
    run("python", "benchmarks/site_build_bench.py")
    run("python", "benchmarks/cli_startup.py", *session.posargs)
    run("python", "benchmarks/model_bench.py")
    run("python", "benchmarks/model_headers_bench.py")
    run("python", "benchmarks/split_bench.py")
    run("python", "benchmarks/evidence_bench.py")
    _build_site(session)  # the sizer bench measures the pages this tree builds
    run("python", "benchmarks/sizer_bench.py", "--site-dir", str(SITE))
    run("python", "benchmarks/search_bench.py", "--site-dir", str(SITE))
    session.run("python", "benchmarks/goals.py", "--summary", str(results))


if os.environ.get("CI"):
    nox.options.error_on_missing_interpreters = True
