"""The short list: statuses per requirement, ranking, evidence from lab results, and the CLI."""

from __future__ import annotations

import json
import sys
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner

from iteragpu.catalog import Card, RentalPackage, load_catalog
from iteragpu.cli import app
from iteragpu.evidence import EvidenceError, read_evidence
from iteragpu.examples import figure
from iteragpu.formatting import format_number
from iteragpu.lab import mesure_memoire as mm
from iteragpu.shortlist import Status, shortlist

sys.path.insert(0, str(Path(__file__).parent / "lab"))
from lab_support import fake_factory, load_schema, make_clock, validation_argv

runner = CliRunner(env={"COLUMNS": "160"})
GUIDE_NEED_GIB = figure("shortlist-7b.need_gib").value  # exact 7e9 x 2 B + 6 GiB, in GiB
GIB = 2**30


def invoke(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args), prog_name="iteragpu")


def test_guide_example_two_candidates_of_different_capacity() -> None:
    ranked = shortlist(GUIDE_NEED_GIB, 3)
    assert [c.card.id for c in ranked] == ["rtx-4090", "rtx-6000-ada"]  # cheaper first
    for candidate in ranked:
        # Nominal capacity above the need is not proof: memory stays "check needed".
        assert {r.name: r.status for r in candidate.requirements} == {
            "memory": Status.CHECK_NEEDED,
            "package": Status.FIT,
        }
        assert candidate.status is Status.CHECK_NEEDED
    assert [c.cost for c in ranked] == [Decimal("47.14"), Decimal("55.71")]
    margins = [format_number(c.nominal_margin_gib or 0, 2, "ko") for c in ranked]
    assert margins == ["3.31", "25.66"]
    assert ranked[0].nominal_margin_gib == Fraction(24 * 10**9, GIB) - GUIDE_NEED_GIB


def test_a_card_below_the_need_is_excluded_and_ranks_last_whatever_its_price() -> None:
    ranked = shortlist(Fraction(30), 3)
    assert [c.card.id for c in ranked] == ["rtx-6000-ada", "rtx-4090"]
    assert ranked[1].status is Status.EXCLUDED
    assert ranked[1].requirements[0].reason == "nominal_below_need"


def test_a_preference_never_offsets_an_exclusion() -> None:
    ranked = shortlist(
        GUIDE_NEED_GIB, 3, requirements=["context"], failed=[("rtx-4090", "context")]
    )
    assert [c.card.id for c in ranked] == ["rtx-6000-ada", "rtx-4090"]
    assert ranked[1].status is Status.EXCLUDED
    confirmed = shortlist(
        GUIDE_NEED_GIB, 3, requirements=["context"], confirmed=[("rtx-6000-ada", "context")]
    )
    statuses = {c.card.id: {r.name: r.status for r in c.requirements} for c in confirmed}
    assert statuses["rtx-6000-ada"]["context"] is Status.FIT
    assert statuses["rtx-4090"]["context"] is Status.CHECK_NEEDED


def test_missing_package_and_missing_capacity_are_check_needed() -> None:
    ranked = shortlist(GUIDE_NEED_GIB, 2)
    assert all(c.package is None and c.cost is None for c in ranked)
    assert all(c.requirements[1].status is Status.CHECK_NEEDED for c in ranked)
    mystery = Card(
        "mystery", "Mystery GPU", None, "", (RentalPackage(1, 3, Decimal(1), "USD", None, "t"),)
    )
    ranked = shortlist(GUIDE_NEED_GIB, 3, catalog=[*load_catalog(), mystery])
    unknown = next(c for c in ranked if c.card.id == "mystery")
    assert unknown.requirements[0].reason == "nominal_unknown"
    assert unknown.nominal_margin_gib is None
    assert ranked[0].card.id == "mystery"  # same status as the others: cost ranks first


@pytest.mark.parametrize(
    "kwargs",
    [
        {"need_gib": Fraction(0), "days": 3},
        {"need_gib": Fraction(1), "days": 0},
        {"need_gib": Fraction(1), "days": 3, "margin_gib": Fraction(-1)},
        {"need_gib": Fraction(1), "days": 3, "requirements": ["memory"]},
        {"need_gib": Fraction(1), "days": 3, "failed": [("no-such-card", "context")]},
    ],
)
def test_bad_shortlist_input(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        shortlist(**kwargs)


def _lab_result(tmp_path: Path, name: str, device_name: str, capacity: int, **fake: Any) -> Path:
    """A real lab result written by mesure_memoire.main with the test-only fake backend."""
    out = tmp_path / f"{name}.json"
    mm.main(validation_argv(out), backend_factory=fake_factory(**fake), clock=make_clock())
    result = json.loads(out.read_text("utf-8"))
    result["environment"]["devices"] = [
        {
            "index": 0,
            "name": device_name,
            "total_memory_bytes": capacity,
            "compute_capability": None,
            "free_bytes": None,
            "mem_get_info_total_bytes": None,
        }
    ]
    jsonschema.validate(result, load_schema())
    out.write_text(json.dumps(result), "utf-8")
    return out


def test_evidence_can_make_memory_fit_or_excluded(tmp_path: Path) -> None:
    ok = read_evidence(_lab_result(tmp_path, "ok", "NVIDIA GeForce RTX 4090", 23 * GIB))
    assert ok.succeeded and not ok.out_of_memory and ok.observed_reserved_peak_bytes
    fits = shortlist(GUIDE_NEED_GIB, 3, margin_gib=Fraction(1), evidence=[ok])
    statuses = {c.card.id: c.requirements[0] for c in fits}
    assert statuses["rtx-4090"].status is Status.FIT
    assert statuses["rtx-4090"].reason == "evidence_fits"
    assert statuses["rtx-6000-ada"].status is Status.CHECK_NEEDED  # evidence is per card model
    assert fits[0].card.id == "rtx-4090" and fits[0].status is Status.FIT

    too_tight = shortlist(GUIDE_NEED_GIB, 3, margin_gib=Fraction(23), evidence=[ok])
    assert too_tight[0].requirements[0].reason == "evidence_margin_not_met"

    oom_path = _lab_result(
        tmp_path, "oom", "NVIDIA RTX 6000 Ada Generation", 47 * GIB, fail_on_forward=1
    )
    oom = read_evidence(oom_path)
    assert oom.out_of_memory and not oom.succeeded and oom.failed_phase == "cold_forward"
    ranked = shortlist(GUIDE_NEED_GIB, 3, evidence=[ok, oom])
    by_card = {c.card.id: c for c in ranked}
    assert by_card["rtx-6000-ada"].status is Status.EXCLUDED
    assert by_card["rtx-6000-ada"].requirements[0].reason == "evidence_out_of_memory"
    assert ranked[-1].card.id == "rtx-6000-ada"


def test_cli_shortlist_json_and_tables(tmp_path: Path) -> None:
    result = invoke("shortlist", "--need-gib", "19.04", "--days", "3", "--json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["need_bytes"] == -(-1904 * GIB // 100)  # 19.04 GiB rounded up to a byte
    first, second = payload["candidates"]
    assert (first["name"], first["nominal_memory_gb"], first["cost"]) == ("RTX 4090", 24, "47.14")
    assert first["nominal_memory_bytes"] == 24_000_000_000
    # The guide gives no date for its prices: the catalog says so with null, not a made-up date.
    assert first["price_date"] is None and "sizing guide" in first["price_source"]
    assert second["status"] == "check_needed"
    assert {r["name"]: r["status"] for r in first["requirements"]} == {
        "memory": "check_needed",
        "package": "fit",
    }
    for lang, texts in {
        "ko": ["22.35", "44.70", "확인 필요", "47.14"],
        "id": ["22,35", "44,70", "perlu diverifikasi", "47,14"],
    }.items():
        table = invoke("shortlist", "--need-gib", "19.04", "--days", "3", "--lang", lang)
        assert table.exit_code == 0
        for text in texts:
            assert text in table.stdout, (lang, text)
    evidence = _lab_result(tmp_path, "ok", "NVIDIA GeForce RTX 4090", 23 * GIB)
    with_evidence = invoke(
        "shortlist",
        "--need-gib",
        "19.04",
        "--days",
        "3",
        "--margin-gib",
        "1",
        "--evidence",
        str(evidence),
        "--json",
    )
    assert json.loads(with_evidence.stdout)["candidates"][0]["status"] == "fit"


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--need-gib", "-1", "--days", "3"], "positive"),
        (["--need-gib", "19.04", "--days", "0"], "positive"),
        (["--need-gib", "19.04", "--days", "3", "--failed", "rtx-4090"], "CARD:REQUIREMENT"),
        (["--need-gib", "19.04", "--days", "3", "--failed", "nope:context"], "nope"),
        (["--need-gib", "19.04", "--days", "3", "--evidence", "/no/such.json"], "no such file"),
    ],
)
def test_cli_shortlist_bad_input(args: list[str], needle: str) -> None:
    result = invoke("shortlist", *args)
    assert result.exit_code == 2, result.output
    assert len(result.stderr.strip().splitlines()) == 1 and needle in result.stderr


def test_evidence_that_is_not_a_lab_result(tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    other.write_text('{"hello": 1}', "utf-8")
    with pytest.raises(EvidenceError):
        read_evidence(other)
    broken = tmp_path / "broken.json"
    broken.write_text("{", "utf-8")
    with pytest.raises(EvidenceError):
        read_evidence(broken)
