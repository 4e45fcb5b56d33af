"""mesure_memoire.py run as a user runs it: `python -I -S mesure_memoire.py ...` (no torch)."""

from __future__ import annotations

import doctest
import json
import re
import subprocess
import time
from decimal import ROUND_HALF_UP, Decimal, localcontext
from fractions import Fraction
from pathlib import Path

import pytest
from foreign_text import english_sentences, foreign_numbers, number_separators
from lab_support import SCRIPT, fake_factory, run_script
from support import per_language

from iteragpu.i18n.languages import CODES, SOURCE
from iteragpu.lab import mesure_memoire as mm
from iteragpu.lab.mesure_memoire import BYTES_PER_GB, BYTES_PER_GIB, dense_weight_bytes


def expected_decimal(numerator: int, denominator: int) -> str:
    """Independent reference: Decimal, 2 places, half up, trailing zeros dropped."""
    with localcontext() as ctx:
        ctx.prec = 80
        value = (Decimal(numerator) / Decimal(denominator)).quantize(
            Decimal("0.01"), rounding=ROUND_HALF_UP
        )
    text = f"{value:f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def written_in(text: str, lang: str) -> str:
    """A plain number ("1234567.5") as a reader of `lang` writes it, with the separators the
    package's Babel-derived format_number prints (not the script's own table)."""
    decimal, group = number_separators(lang)
    whole, _, fraction = text.partition(".")
    grouped = f"{int(whole):,}".replace(",", group)
    return grouped + (decimal + fraction if fraction else "")


def no_traceback(stderr: str) -> bool:
    return "Traceback" not in stderr


ESTIMATE_CASES = [
    (7_000_000_000, "16", "4"),
    (7_000_000_000, "4", "4"),
    (7_000_000_000, "8", "0"),
    (70_000_000_000, "16", "6"),
    (3, "4", "1.5"),
    (123_456_789, "4.5", "0.25"),
]


def _estimate(
    tmp_path: Path, parameters: int, bits: str, reserve: str, *extra: str
) -> subprocess.CompletedProcess[str]:
    args = ["--parameters", str(parameters), "--bits", bits, "--reserve-gib", reserve, *extra]
    return run_script("estimate", *args, cwd=tmp_path)


def labelled(text: str, label: str) -> str:
    """The value of the `label:` line of a text report."""
    [line] = [line for line in text.splitlines() if line.startswith(label + ":")]
    return line[len(label) + 1 :].strip()


@pytest.mark.parametrize("lang", CODES)
@pytest.mark.parametrize(("parameters", "bits", "reserve"), ESTIMATE_CASES)
def test_estimate_text_matches_exact_arithmetic(
    tmp_path: Path, parameters: int, bits: str, reserve: str, lang: str
) -> None:
    done = _estimate(tmp_path, parameters, bits, reserve, "--lang", lang)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    exact = Fraction(parameters) * Fraction(bits) / 8
    # integer arithmetic, independent of the script's formatting code
    num, den = exact.numerator, exact.denominator
    weights_bytes = -(-num // den)
    reserve_exact = Fraction(reserve) * BYTES_PER_GIB
    total_exact = exact + reserve_exact
    out = done.stdout
    assert labelled(out, mm.say(lang, "label_weights")).startswith(
        written_in(str(weights_bytes), lang) + " B"
    )
    gb = written_in(expected_decimal(num, den * BYTES_PER_GB), lang)
    assert labelled(out, mm.say(lang, "label_weights_gb")).startswith(f"{gb} GB ")
    gib = written_in(expected_decimal(num, den * BYTES_PER_GIB), lang)
    assert labelled(out, mm.say(lang, "label_weights_gib")).startswith(f"{gib} GiB ")
    total = expected_decimal(total_exact.numerator, total_exact.denominator * BYTES_PER_GIB)
    total_line = labelled(out, mm.say(lang, "label_total_gib"))
    assert total_line.startswith(f"{written_in(total, lang)} GiB ")
    not_counted = labelled(out, mm.say(lang, "label_not_counted"))
    for code in ("activations", "gradients", "kv_cache", "optimizer_states"):
        assert mm.say(lang, code) in not_counted
    quantized = mm.say(lang, "quantization_scales_and_metadata")
    assert (quantized in not_counted) == (Fraction(bits) < 16)
    assert foreign_numbers(out, lang) == []


GUIDE_FIGURES = per_language(
    {
        "ko": ("14,000,000,000 B", "14 GB", "13.04 GiB", "4 GiB", "17.04 GiB"),
        "id": ("14.000.000.000 B", "14 GB", "13,04 GiB", "4 GiB", "17,04 GiB"),
    }
)


@pytest.mark.parametrize(("lang", "figures"), GUIDE_FIGURES)
def test_estimate_text_reproduces_the_guide(
    tmp_path: Path, lang: str, figures: tuple[str, ...]
) -> None:
    done = run_script(
        *["estimate", "--parameters", "7000000000", "--bits", "16", "--reserve-gib", "4"],
        *["--lang", lang],
        cwd=tmp_path,
    )
    assert done.returncode == 0
    assert dense_weight_bytes(7_000_000_000, 16) == 14 * BYTES_PER_GB
    for needle in figures:
        assert needle in done.stdout
    # GB and GiB never share a line
    for line in done.stdout.splitlines():
        assert not (" GB" in line and " GiB" in line), line


@pytest.mark.parametrize(
    ("lang", "bits", "reserve"),
    [("id", "4,5", "0,25"), ("id", "4.5", "0.25"), (SOURCE, "4.5", "0.25")],
)
def test_estimate_reads_the_readers_decimal_mark(
    tmp_path: Path, lang: str, bits: str, reserve: str
) -> None:
    done = _estimate(tmp_path, 123_456_789, bits, reserve, "--lang", lang, "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert (data["bits"], data["reserve_gib"], data["language"]) == ("4.5", "0.25", lang)


@pytest.mark.parametrize(
    ("lang", "text", "reason"),
    [
        ("id", "1,500", "ambiguous_separator"),
        ("id", "1.500", "ambiguous_separator"),
        ("id", "1,5,0", "not_number"),
        (SOURCE, "4,5", "not_number"),
        (SOURCE, "1,500", "not_number"),
    ],
)
def test_an_ambiguous_or_foreign_decimal_mark_is_refused_with_an_explanation(
    tmp_path: Path, lang: str, text: str, reason: str
) -> None:
    done = _estimate(tmp_path, 7, text, "0", "--lang", lang)
    assert done.returncode == 2 and done.stdout == ""
    [line] = done.stderr.splitlines()
    with pytest.raises(mm.NumberError) as refused:
        mm.parse_decimal(text, lang, maximum=mm.MAX_BITS, allow_zero=False)
    assert refused.value.reason == reason
    assert refused.value.text(lang) in line
    if reason == "ambiguous_separator":  # the two readings, written out with the user's mark
        assert "1500" in line and f"1{text[1]}5" in line


@pytest.mark.parametrize(("parameters", "bits", "reserve"), ESTIMATE_CASES)
def test_estimate_json(tmp_path: Path, parameters: int, bits: str, reserve: str) -> None:
    done = _estimate(tmp_path, parameters, bits, reserve, "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    exact = dense_weight_bytes(parameters, Fraction(bits))
    reserve_exact = Fraction(reserve) * BYTES_PER_GIB
    total_exact = exact + reserve_exact
    assert data["parameters"] == parameters
    for key in ("weights_bytes", "reserve_bytes", "total_bytes", "bytes_per_gb", "bytes_per_gib"):
        assert type(data[key]) is int, key
    assert data["weights_bytes"] == -(-exact.numerator // exact.denominator)
    assert Fraction(data["weights_bytes_exact"]) == exact
    assert data["reserve_bytes"] == -(-reserve_exact.numerator // reserve_exact.denominator)
    assert data["total_bytes"] == -(-total_exact.numerator // total_exact.denominator)
    # exact decimal strings (the JSON convention), checked with Decimal, not the script's code
    assert Decimal(data["weights_gb"]) * BYTES_PER_GB == Decimal(exact.numerator) / Decimal(
        exact.denominator
    )
    assert Fraction(Decimal(data["weights_gib"])) == exact / BYTES_PER_GIB
    assert Fraction(Decimal(data["weights_bytes_exact"])) == exact
    assert Fraction(Decimal(data["reserve_gib"])) == Fraction(reserve)
    assert Fraction(Decimal(data["total_gib"])) == total_exact / BYTES_PER_GIB
    for key in ("weights_gb", "weights_gib", "reserve_gib", "total_gib", "bits"):
        assert "e" not in data[key].lower() and "/" not in data[key], (key, data[key])
    assert {"activations", "gradients", "kv_cache", "optimizer_states"} <= set(data["not_counted"])
    quantized = {"quantization_scales_and_metadata", "modules_kept_at_another_precision"}
    assert (quantized <= set(data["not_counted"])) == (Fraction(bits) < 16)


def test_estimate_json_guide_values(tmp_path: Path) -> None:
    done = run_script(
        "estimate",
        "--parameters",
        "7000000000",
        "--bits",
        "16",
        "--reserve-gib",
        "4",
        "--json",
        cwd=tmp_path,
    )
    data = json.loads(done.stdout)
    assert data["weights_bytes"] == 14_000_000_000
    assert (data["weights_gb"], data["weights_gib"]) == ("14", "13.03851604461669921875")
    assert (data["reserve_gib"], data["total_gib"]) == ("4", "17.03851604461669921875")


@pytest.mark.parametrize("lang", CODES)
def test_measure_without_torch_exits_2_and_writes_nothing(tmp_path: Path, lang: str) -> None:
    done = run_script(
        "--lang",
        lang,
        "measure",
        "--device",
        "cuda:0",
        "--batch",
        "2",
        "--context",
        "128",
        "--width",
        "1024",
        "--dtype",
        "float32",
        "--warmup",
        "3",
        "--repeats",
        "5",
        "--output",
        "mesures.json",
        cwd=tmp_path,
    )
    assert done.returncode == 2
    assert list(tmp_path.iterdir()) == []
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    missing = mm.say(lang, "torch_missing_for_measure", error="ModuleNotFoundError")
    assert len(lines) == 1 and missing in lines[0]
    assert no_traceback(done.stderr)


@pytest.mark.parametrize("lang", CODES)
@pytest.mark.parametrize("as_json", [False, True])
def test_environment_reports_missing_torch(tmp_path: Path, as_json: bool, lang: str) -> None:
    done = run_script(
        *["environment", "--device", "cuda:0", "--lang", lang],
        *(["--json"] if as_json else []),
        cwd=tmp_path,
    )
    missing = mm.say(lang, "torch_not_installed", error="ModuleNotFoundError")
    assert done.returncode == 2
    assert no_traceback(done.stderr)
    assert len(done.stderr.splitlines()) == 1
    if as_json:
        env = json.loads(done.stdout)
        assert env["torch"]["installed"] is False
        assert env["torch"]["version"] is None
        assert env["requested_device_usable"] is False
        assert missing in env["missing"]
        assert env["language"] == lang
        assert set(env["allocator"]["settings"]) == {
            "PYTORCH_ALLOC_CONF",
            "PYTORCH_CUDA_ALLOC_CONF",
            "PYTORCH_HIP_ALLOC_CONF",
            "PYTORCH_NO_CUDA_MEMORY_CACHING",
            "CUDA_MODULE_LOADING",
        }
        assert set(env["blas_workspace"]) == {"CUBLAS_WORKSPACE_CONFIG", "CUBLASLT_WORKSPACE_SIZE"}
        assert set(env["visible_devices"]) == {
            "CUDA_VISIBLE_DEVICES",
            "CUDA_DEVICE_ORDER",
            "HIP_VISIBLE_DEVICES",
            "ROCR_VISIBLE_DEVICES",
        }
        assert env["seed"] == 0
        assert env["devices"] == []
        assert env["nvml_devices"] is None  # nvidia-ml-py is not importable under -I -S
        assert any("nvidia-ml-py" in m for m in env["missing"])
    else:
        assert labelled(done.stdout, "PyTorch") == mm.say(lang, "not_installed")
        missing_lines = [
            line.split(":", 1)[1].strip()
            for line in done.stdout.splitlines()
            if line.startswith(mm.say(lang, "label_missing") + ":")
        ]
        assert missing in missing_lines


def test_existing_output_is_refused_and_untouched(tmp_path: Path) -> None:
    target = tmp_path / "mesures.json"
    original = b'{"keep": "me"}\n\x00\xff'
    target.write_bytes(original)
    done = run_script(
        "measure",
        "--batch",
        "1",
        "--context",
        "16",
        "--width",
        "64",
        "--output",
        "mesures.json",
        cwd=tmp_path,
    )
    assert done.returncode == mm.EXIT_OUTPUT_EXISTS == 3
    assert target.read_bytes() == original
    refusal = mm.say(SOURCE, "output_exists", path=repr("mesures.json"))
    assert done.stderr.splitlines() == [
        f"mesure_memoire.py: {mm.say(SOURCE, 'error_word')}: {refusal}"
    ]
    assert no_traceback(done.stderr)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mesures.json"]


def test_existing_output_is_refused_before_torch_is_imported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "taken.json"
    target.write_text("already here")

    def forbidden(*args: object, **kwargs: object) -> object:
        raise AssertionError("PyTorch must not be imported before the output check")

    monkeypatch.setattr(mm, "import_torch", forbidden)
    argv = ["measure", "--batch", "1", "--context", "1", "--width", "1", "--output", str(target)]
    assert mm.main(argv, backend_factory=forbidden) == 3
    assert target.read_text() == "already here"
    assert "Traceback" not in capsys.readouterr().err


def test_race_for_the_same_name_is_lost_cleanly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Another run creates the file after our pre-check: we must not overwrite it."""
    target = tmp_path / "race.json"
    inner = fake_factory()

    def racing_factory(args: object) -> object:
        backend = inner(args)  # type: ignore[arg-type]
        target.write_text("the other run's result")
        return backend

    argv = ["measure", "--batch", "1", "--context", "1", "--width", "1", "--output", str(target)]
    assert mm.main(argv, backend_factory=racing_factory) == 3  # type: ignore[arg-type]
    assert target.read_text() == "the other run's result"
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "Traceback" not in err


MEASURE_OK = ["--batch", "1", "--context", "16", "--width", "64", "--output", "out.json"]


def _replace(args: list[str], flag: str, value: str | None) -> list[str]:
    out = list(args)
    if flag in out:
        i = out.index(flag)
        if value is None:
            del out[i : i + 2]
        else:
            out[i + 1] = value
    elif value is not None:
        out += [flag, value]
    return out


BAD_ARGUMENTS = [
    ("batch-negative", ["measure", *_replace(MEASURE_OK, "--batch", "-1")]),
    ("batch-zero", ["measure", *_replace(MEASURE_OK, "--batch", "0")]),
    ("batch-nan", ["measure", *_replace(MEASURE_OK, "--batch", "nan")]),
    ("batch-text", ["measure", *_replace(MEASURE_OK, "--batch", "two")]),
    ("batch-float", ["measure", *_replace(MEASURE_OK, "--batch", "1.5")]),
    ("batch-empty", ["measure", *_replace(MEASURE_OK, "--batch", "")]),
    ("context-fraction", ["measure", *_replace(MEASURE_OK, "--context", "1e-1")]),
    ("context-huge", ["measure", *_replace(MEASURE_OK, "--context", "1e40")]),
    ("context-32k", ["measure", *_replace(MEASURE_OK, "--context", "32k")]),
    ("width-1M", ["measure", *_replace(MEASURE_OK, "--width", "1M")]),
    ("width-arabic-digit", ["measure", *_replace(MEASURE_OK, "--width", "\u0666\u0664")]),
    ("width-fullwidth-digit", ["measure", *_replace(MEASURE_OK, "--width", "\uff16\uff14")]),
    ("width-underscore-edge", ["measure", *_replace(MEASURE_OK, "--width", "64_")]),
    ("batch-5000-digits", ["measure", *_replace(MEASURE_OK, "--batch", "9" * 5000)]),
    ("batch-exponent-huge", ["measure", *_replace(MEASURE_OK, "--batch", "1e99999999")]),
    ("repeats-too-many", ["measure", *MEASURE_OK, "--repeats", "10001"]),
    ("device-index-5000-digits", ["measure", *MEASURE_OK, "--device", "cuda:" + "9" * 5000]),
    ("width-inf", ["measure", *_replace(MEASURE_OK, "--width", "inf")]),
    ("width-missing", ["measure", *_replace(MEASURE_OK, "--width", None)]),
    ("dtype-unknown", ["measure", *MEASURE_OK, "--dtype", "float8"]),
    ("dtype-int", ["measure", *MEASURE_OK, "--dtype", "int64"]),
    ("warmup-negative", ["measure", *MEASURE_OK, "--warmup", "-1"]),
    ("repeats-zero", ["measure", *MEASURE_OK, "--repeats", "0"]),
    ("repeats-nan", ["measure", *MEASURE_OK, "--repeats", "NaN"]),
    ("output-missing", ["measure", *_replace(MEASURE_OK, "--output", None)]),
    ("output-dir-missing", ["measure", *_replace(MEASURE_OK, "--output", "no/such/dir.json")]),
    ("device-cpu", ["measure", *MEASURE_OK, "--device", "cpu"]),
    ("device-mps", ["measure", *MEASURE_OK, "--device", "mps"]),
    ("device-bad-index", ["measure", *MEASURE_OK, "--device", "cuda:x"]),
    ("unknown-option", ["measure", *MEASURE_OK, "--frobnicate"]),
    ("parameters-zero", ["estimate", "--parameters", "0", "--bits", "16"]),
    ("parameters-negative", ["estimate", "--parameters", "-7", "--bits", "16"]),
    ("parameters-float", ["estimate", "--parameters", "7.5", "--bits", "16"]),
    ("parameters-fraction-suffix", ["estimate", "--parameters", "1.0000000001K", "--bits", "16"]),
    ("parameters-unknown-suffix", ["estimate", "--parameters", "7X", "--bits", "16"]),
    ("parameters-e400", ["estimate", "--parameters", "1e400", "--bits", "16"]),
    ("parameters-too-many", ["estimate", "--parameters", "2e15", "--bits", "16"]),
    ("parameters-5000-digits", ["estimate", "--parameters", "7" * 5000, "--bits", "16"]),
    ("parameters-arabic-digit", ["estimate", "--parameters", "\u0663", "--bits", "16"]),
    ("parameters-hex", ["estimate", "--parameters", "0x10", "--bits", "16"]),
    ("bits-tiny-exponent", ["estimate", "--parameters", "7", "--bits", "1e-20000000"]),
    ("bits-too-wide", ["estimate", "--parameters", "7", "--bits", "65"]),
    ("bits-devanagari", ["estimate", "--parameters", "7", "--bits", "\u0967\u096c"]),
    ("bits-zero", ["estimate", "--parameters", "7", "--bits", "0"]),
    ("bits-negative", ["estimate", "--parameters", "7", "--bits", "-4"]),
    ("bits-nan", ["estimate", "--parameters", "7", "--bits", "nan"]),
    ("bits-text", ["estimate", "--parameters", "7", "--bits", "sixteen"]),
    ("reserve-negative", ["estimate", "--parameters", "7", "--bits", "16", "--reserve-gib", "-1"]),
    ("reserve-inf", ["estimate", "--parameters", "7", "--bits", "16", "--reserve-gib", "inf"]),
    ("reserve-nan", ["estimate", "--parameters", "7", "--bits", "16", "--reserve-gib", "nan"]),
    (
        "reserve-too-big",
        ["estimate", "--parameters", "7", "--bits", "16", "--reserve-gib", "1e7"],
    ),
    ("predict-width-zero", ["predict", "--batch", "1", "--context", "1", "--width", "0"]),
    ("predict-missing-batch", ["predict", "--context", "1", "--width", "1"]),
    ("estimate-missing-bits", ["estimate", "--parameters", "7"]),
    ("no-command", []),
    ("unknown-command", ["benchmark"]),
]


@pytest.mark.parametrize("lang", CODES)
@pytest.mark.parametrize("argv", [a for _, a in BAD_ARGUMENTS], ids=[n for n, _ in BAD_ARGUMENTS])
def test_bad_arguments(tmp_path: Path, argv: list[str], lang: str) -> None:
    started = time.perf_counter()
    done = run_script(*argv, cwd=tmp_path, locale={"LANG": f"{lang}.UTF-8"})
    assert time.perf_counter() - started < 5  # well under a second of work: no hang
    assert done.returncode == 2, done
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    # one line in the reader's language: its word for error, no English, its number format
    assert f": {mm.say(lang, 'error_word')}: " in lines[0]
    assert english_sentences(lines[0], allow=UNICODE_NAMES) == []
    # what the user typed is quoted back as typed
    assert foreign_numbers(re.sub(r"'[^']*'", "''", lines[0]), lang) == []
    assert no_traceback(done.stderr)
    assert done.stdout == ""
    assert list(tmp_path.iterdir()) == []


# Unicode's character names (the refused digits) are proper names, in English everywhere.
UNICODE_NAMES = ("ARABIC-INDIC DIGIT", "DEVANAGARI DIGIT", "FULLWIDTH DIGIT")


EXIT_CODES = (0, 1, 2, 3, 4, 5, 130, 143)


@pytest.mark.parametrize("lang", CODES)
@pytest.mark.parametrize("command", [[], ["estimate"], ["predict"], ["environment"], ["measure"]])
def test_help_documents_every_exit_code(tmp_path: Path, command: list[str], lang: str) -> None:
    done = run_script(*command, "--help", "--lang", lang, cwd=tmp_path)
    assert done.returncode == 0
    heading = mm.say(lang, "epilog").splitlines()[0]
    assert f"\n{heading}\n" in done.stdout
    for code in EXIT_CODES:
        assert f"\n  {code} " in done.stdout
    assert "SIGTERM" in done.stdout and "SIGINT" in done.stdout


def test_readmes_and_pages_document_every_exit_code() -> None:
    repo = SCRIPT.parents[3]
    for lang in CODES:
        text = (SCRIPT.parent / f"README.{lang}.md").read_text(encoding="utf-8")
        page = (repo / "docs" / lang / "docs" / "lab.md").read_text(encoding="utf-8")
        for code in EXIT_CODES:
            assert f"| {code} |" in text, (lang, code)
            assert f"| `{code}` |" in page, (lang, code)
        assert "SIGTERM" in text and "SIGTERM" in page
        for command in (
            "estimate --parameters 7000000000 --bits 16 --reserve-gib 4",
            "predict --batch 1 --context 16 --width 64 --dtype float32",
            "environment --device cuda:0",
        ):
            assert f"python mesure_memoire.py {command}" in text
    readme = (repo / "README.md").read_text(encoding="utf-8")
    for code in EXIT_CODES:
        assert f"`{code}`" in readme
    assert "SIGTERM" in readme


@pytest.mark.parametrize("lang", CODES)
def test_readme_and_page_state_the_current_schema_version(lang: str) -> None:
    repo = SCRIPT.parents[3]
    readme = (SCRIPT.parent / f"README.{lang}.md").read_text(encoding="utf-8")
    page = (repo / "docs" / lang / "docs" / "lab.md").read_text(encoding="utf-8")
    assert mm.SCHEMA_VERSION in readme
    assert f"`{mm.SCHEMA_VERSION}`" in page

    # Every version the page names is one the schema reads: the current one or an older one.
    def version(text: str) -> tuple[int, ...]:
        return tuple(int(part) for part in text.split("."))

    stated = set(re.findall(r"`(\d+\.\d+\.\d+)`", page))
    assert stated and all(version(v) <= version(mm.SCHEMA_VERSION) for v in stated), stated


def test_version_option(tmp_path: Path) -> None:
    done = run_script("--version", cwd=tmp_path)
    assert done.returncode == 0 and mm.__version__ in done.stdout


def test_script_doctests() -> None:
    failures, tried = doctest.testmod(mm)
    assert tried > 0 and failures == 0


def test_script_imports_only_the_standard_library() -> None:
    """The module-level imports are all standard library (torch is imported lazily)."""
    import ast
    import sys

    tree = ast.parse(SCRIPT.read_text(encoding="utf-8"))
    names = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    assert names - {"__future__"} <= set(sys.stdlib_module_names)


# --- estimate's arguments without argparse ----------------------------------------------------

# (arguments, read without argparse): the plain valid forms are; anything else is argparse's.
ESTIMATE_ARGV = [
    (["estimate", "--parameters", "7e9", "--bits", "16"], True),
    (["estimate", "--bits=4.5", "--parameters=70M", "--reserve-gib", "4", "--json"], True),
    (["estimate", "--parameters", "7B", "--bits", "16", "--reserve-gib=0.5", "--lang", "id"], True),
    (["estimate", "--lang=id", "--parameters", "1,5B", "--bits", "4,5"], True),
    (["estimate", "--param", "7e9", "--bits", "16"], False),  # an abbreviation
    (["estimate", "--parameters", "7e9"], False),  # --bits missing
    (["estimate", "--parameters", "7e9", "--bits", "16", "--bits", "8"], False),  # repeated
    (["estimate", "--parameters", "-7", "--bits", "16"], False),
    (["estimate", "--parameters", "7e9", "--bits", "0"], False),
    (["estimate", "--parameters", "7e9", "--bits", "16", "extra"], False),
    (["estimate", "--parameters", "7e9", "--bits", "16", "--help"], False),
    (["estimate", "--parameters", "7e9", "--bits"], False),
    (["--lang", "id", "estimate", "--parameters", "7e9", "--bits", "16"], False),
]


@pytest.mark.parametrize(
    ("argv", "fast_path"), ESTIMATE_ARGV, ids=[" ".join(a) for a, _ in ESTIMATE_ARGV]
)
def test_estimate_read_without_argparse_is_read_as_argparse_reads_it(
    argv: list[str],
    fast_path: bool,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """estimate_arguments (the start-up's fast path) gives argparse's values or leaves the
    arguments to argparse; what a reader sees and the exit code are the same either way."""
    lang = mm.requested_language(argv, {})
    fast = mm.estimate_arguments(argv, lang)
    assert (fast is not None) == fast_path
    if fast is not None:
        with mm._ArgparseLanguage(lang):
            parsed = mm.build_parser(lang, "estimate").parse_args(argv)
        for name in ("parameters", "bits", "reserve_gib", "json"):
            assert getattr(fast, name) == getattr(parsed, name), name
    code = mm.main(argv, environ={})
    seen = capsys.readouterr()
    monkeypatch.setattr(mm, "estimate_arguments", lambda argv, lang: None)
    assert (mm.main(argv, environ={}), capsys.readouterr()) == (code, seen)
