"""The need the short list compares with the cards (`iteragpu.gpus.need`), from each command:
`train --shortlist` (the fullest GPU's model states + --reserve-gib, the activations to
measure), `model --shortlist` (weights, cache per layer kind, states, reserve; the activations
and the prompt's temporaries to measure) and `shortlist --need-gib` (the reader's own figure,
complete); the review order (cards that hold the need on paper first); bad input one line,
exit 2, in both languages (CliRunner, fixed width)."""

from __future__ import annotations

import json
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from iteragpu.cli.app import app
from iteragpu.gpus.catalog import Card, RentalPackage
from iteragpu.i18n.languages import CODES
from iteragpu.i18n.messages import message
from iteragpu.i18n.numbers import format_number

GIB = 2**30
# A tiny Llama (tests/test_cli_train.py's): sized in milliseconds.
TINY = {
    "model_type": "llama",
    "vocab_size": 256,
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "tie_word_embeddings": False,
    "dtype": "float32",
}


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "model"
    folder.mkdir(exist_ok=True)
    (folder / "config.json").write_text(json.dumps(TINY), "utf-8")
    return folder


def _run(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), prog_name="iteragpu", env={"COLUMNS": "120"})


def _json(*args: str) -> dict[str, Any]:
    result = _run(*args, "--json")
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def _states_bytes(path: Path, **options: str) -> int:
    """The library's own figure: the model states on the run's fullest GPU."""
    from iteragpu.cli.train_request import train_request
    from iteragpu.training.plan import plan_training

    values = {
        "method": "full",
        "precision": "bf16",
        "optimizer": "adamw",
        "fused": False,
        "lora_r": "8",
        "lora_targets": None,
        "lora_bias": "none",
        "modules_to_save": None,
        "adapter_dtype": None,
        "quant_type": "nf4",
        "double_quant": False,
        "shard": "none",
        "gpus": "1",
        "micro_batch": None,
        "sequence_length": None,
        "grad_accum": "1",
        **options,
    }
    plan = plan_training(path, train_request(**values, lang="ko"))  # type: ignore[arg-type]
    return plan.rank_gpu_bytes(plan.first_to_fill)


# ---------------------------------------------------------------------------------------------
# train --shortlist
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "reserve"),
    [
        ({}, "0"),
        ({"precision": "fp32"}, "2"),
        ({"shard": "fsdp2", "gpus": "2"}, "1.5"),
        ({"shard": "zero3", "gpus": "4", "precision": "bf16-master"}, "0.25"),
    ],
)
def test_train_shortlist_need_is_the_fullest_gpus_model_states_and_the_reserve(
    tmp_path: Path, options: dict[str, str], reserve: str
) -> None:
    path = _folder(tmp_path)
    flags = [f"--{k}={v}" for k, v in options.items()]
    data = _json("train", str(path), *flags, "--shortlist", "--days", "3", "--reserve-gib", reserve)
    shortlist = data["shortlist"]
    reserve_bytes = Fraction(reserve) * GIB
    states = _states_bytes(path, **options)
    assert states == data["model_states_bytes"]  # the table's own figure
    assert shortlist["need_bytes"] == states + reserve_bytes
    parts = {p["part"]: p["part_bytes"] for p in shortlist["need_parts"]}
    assert parts["reserve"] == reserve_bytes
    assert sum(parts.values()) == shortlist["need_bytes"]
    assert parts["weights"] == data["weights_bytes"]
    assert parts["optimizer_states"] == data["optimizer_state_bytes"]
    # Activations and the step's temporaries are still to measure: a lower bound.
    assert shortlist["need_complete"] is False
    assert shortlist["need_missing"] == ["activations", "step_temporaries"]
    assert shortlist["cards"] == int(options.get("gpus", "1"))
    assert shortlist["days"] == 3
    assert shortlist["review_order"]["keys"][0] == "holds_need_on_paper_first"
    margins = [c for c in shortlist["candidates"] if c["paper_margin_bytes"] is not None]
    assert margins and all(c["paper_margin_at_most"] for c in margins)
    assert not any(isinstance(v, float) for c in shortlist["candidates"] for v in c.values())


def test_train_without_shortlist_has_a_null_shortlist(tmp_path: Path) -> None:
    assert _json("train", str(_folder(tmp_path)))["shortlist"] is None


@pytest.mark.parametrize("lang", CODES)
def test_train_shortlist_table_says_the_need_is_a_lower_bound(tmp_path: Path, lang: str) -> None:
    path = _folder(tmp_path)
    result = _run(
        "--lang",
        lang,
        "train",
        str(path),
        "--shortlist",
        "--days",
        "3",
        "--reserve-gib",
        "2,5" if lang == "id" else "2.5",
    )
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())  # folded lines joined
    need = Fraction(_states_bytes(path)) / GIB + Fraction(5, 2)
    title = message(
        "shortlist_title", lang, need_gib=format_number(need, 2, lang), cards="1", days="3"
    )
    assert title in text
    missing = ", ".join(
        message(f"need_missing_{code}", lang) for code in ("activations", "step_temporaries")
    )
    assert " ".join(message("need_incomplete", lang, missing=missing).split()) in text
    verdict = message("need_lower_bound_verdict", lang, missing=missing)
    assert " ".join(verdict.split()) in text
    assert message("need_part_reserve", lang) + " " + format_number(Fraction(5, 2), 2, lang) in text
    assert "≤ " in result.stdout  # the margins on paper are upper bounds
    assert message("rank_rule", lang).split()[0] in text


def _bad(lang: str, *args: str) -> str:
    result = _run("--lang", lang, *args)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert "Traceback" not in result.output
    return line


@pytest.mark.parametrize("lang", CODES)
@pytest.mark.parametrize(
    ("args", "key"),
    [
        (["--days", "3"], "--days applies to --shortlist"),
        (["--shortlist"], "--shortlist needs --days"),
        (["--reserve-gib", "2"], "--reserve-gib applies to --shortlist"),
        (["--shortlist", "--days", "3", "--reserve-gib", "-1"], None),
        (["--shortlist", "--days", "3", "--reserve-gib", "abc"], None),
        (["--shortlist", "--days", "0"], None),
        (["--shortlist", "--days", "x"], None),
        (["--shortlist", "--days", "3", "--reserve-gib", "1e7"], None),
    ],
)
def test_train_shortlist_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, lang: str, args: list[str], key: str | None
) -> None:
    line = _bad(lang, "train", str(_folder(tmp_path)), *args)
    if key is not None:
        from iteragpu.i18n.catalogue import translate

        assert translate(key, lang) in line
    else:
        option = "--reserve-gib" if "--reserve-gib" in args else "--days"
        assert option in line


# ---------------------------------------------------------------------------------------------
# model --shortlist and shortlist --need-gib
# ---------------------------------------------------------------------------------------------


def test_model_shortlist_need_is_the_total_and_incomplete(tmp_path: Path) -> None:
    data = _json(
        "model", str(_folder(tmp_path)), "--tokens", "4096", "--sequences", "2",
        "--reserve-gib", "1", "--shortlist", "--days", "3",
    )  # fmt: skip
    shortlist = data["shortlist"]
    assert shortlist["need_bytes"] == data["total_bytes"]
    parts = shortlist["need_parts"]
    assert [p["part"] for p in parts] == ["weights", "kv_cache", "reserve"]
    assert parts[1]["layer_kind"] == "full_attention"
    assert parts[1]["part_bytes"] == data["kv_cache_bytes"]
    assert sum(p["part_bytes"] for p in parts) == data["total_bytes"]
    assert shortlist["need_complete"] is False
    assert shortlist["need_missing"] == ["activations", "prefill_temporaries"]


@pytest.mark.parametrize("lang", CODES)
def test_model_shortlist_text_says_the_need_is_incomplete(tmp_path: Path, lang: str) -> None:
    result = _run(
        "--lang", lang, "model", str(_folder(tmp_path)), "--tokens", "4096",
        "--shortlist", "--days", "3",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    missing = ", ".join(
        message(f"need_missing_{code}", lang) for code in ("activations", "prefill_temporaries")
    )
    assert " ".join(message("need_incomplete", lang, missing=missing).split()) in text
    assert (
        message("need_part_kv_cache_kind", lang, kind=message("layer_kind_full_attention", lang))
        in text
    )


def test_the_readers_own_need_is_complete() -> None:
    shortlist = _json("shortlist", "--need-gib", "19.04", "--days", "3")
    assert shortlist["need_complete"] is True and shortlist["need_missing"] == []
    assert [p["part"] for p in shortlist["need_parts"]] == ["stated"]
    assert not any(c["paper_margin_at_most"] for c in shortlist["candidates"])
    result = _run("shortlist", "--need-gib", "19.04", "--days", "3")
    assert "≤" not in result.stdout
    lower_bound = message("need_incomplete", "ko", missing="{}").split("{}")[0]
    assert lower_bound and lower_bound not in result.stdout


# ---------------------------------------------------------------------------------------------
# The review order, through the commands, on a catalogue where the old order differs
# ---------------------------------------------------------------------------------------------


def _card(card_id: str, nominal_gb: int, price: str | None) -> Card:
    packages = () if price is None else (RentalPackage(1, 3, Decimal(price), "USD", None, "t"),)
    return Card(card_id, card_id.upper(), nominal_gb, "test", packages, None, (card_id,))


@pytest.fixture
def catalog(monkeypatch: pytest.MonkeyPatch) -> list[Card]:
    # "24 GB" with a package at 1, "48 GB" at 9, "80 GB" without a package. A need between
    # 24e9 B and 24 GiB: the cheapest card's capacity on paper is below it, not excluded.
    cards = [_card("cheap", 24, "1"), _card("roomy", 80, None), _card("dear", 48, "9")]
    monkeypatch.setattr("iteragpu.gpus.shortlist.load_catalog", lambda: tuple(cards))
    return cards


def test_shortlist_lists_the_cards_that_hold_the_need_on_paper_first(catalog: list[Card]) -> None:
    shortlist = _json("shortlist", "--need-gib", "23", "--days", "3")
    order = [c["card_id"] for c in shortlist["candidates"]]
    # Before, by cost first: cheap, dear, roomy.
    assert order == ["dear", "roomy", "cheap"]
    assert [c["holds_need_on_paper"] for c in shortlist["candidates"]] == [True, True, False]
    assert {c["status"] for c in shortlist["candidates"]} == {"check_needed"}


def test_train_shortlist_follows_the_same_order(tmp_path: Path, catalog: list[Card]) -> None:
    path = _folder(tmp_path)
    states = _states_bytes(path)
    # A reserve that brings the need to 23 GiB exactly.
    reserve = Fraction(23 * GIB - states, GIB)
    shortlist = _json(
        "train", str(path), "--shortlist", "--days", "3", "--reserve-gib", str(float(reserve))
    )["shortlist"]
    assert abs(shortlist["need_bytes"] - 23 * GIB) < GIB // 100
    assert [c["card_id"] for c in shortlist["candidates"]] == ["dear", "roomy", "cheap"]
    result = _run("--lang", "ko", "train", str(path), "--shortlist", "--days", "3",
                  "--reserve-gib", str(float(reserve)))  # fmt: skip
    lines = [line.split()[1] for line in result.stdout.splitlines() if line.startswith("-  ")]
    assert lines == ["DEAR", "ROOMY", "CHEAP"]
