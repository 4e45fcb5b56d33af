"""The short list: statuses per requirement, ranking, evidence from lab results, and the CLI."""

from __future__ import annotations

import inspect
import itertools
import json
import time
from dataclasses import replace
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from lab_support import fake_factory, load_schema, make_clock, validation_argv
from support import per_language
from typer.testing import CliRunner

from iteragpu.cli.app import app
from iteragpu.core.units import bytes_per
from iteragpu.examples import figure
from iteragpu.gpus.catalog import Card, DeclaredMemory, RentalPackage, load_catalog
from iteragpu.gpus.evidence import MAX_EVIDENCE_BYTES, EvidenceError, read_evidence
from iteragpu.gpus.shortlist import Status, shortlist
from iteragpu.i18n.languages import CODES
from iteragpu.i18n.messages import MESSAGES
from iteragpu.lab import mesure_memoire as mm

runner = CliRunner(env={"COLUMNS": "200"})
GUIDE_NEED_GIB = figure("shortlist-7b.need_gib").value  # exact 7e9 x 2 B + 6 GiB, in GiB
GIB = 2**30
MIB = 2**20
RTX_4090 = "NVIDIA GeForce RTX 4090"
RTX_6000 = "NVIDIA RTX 6000 Ada Generation"
# The sizing guide's example compares these two cards of the catalogue.
GUIDE_CARDS = tuple(c for c in load_catalog() if c.id in ("rtx-4090", "rtx-6000-ada"))


def invoke(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args), prog_name="iteragpu")


def by_id(candidates: list[Any]) -> dict[str, Any]:
    return {c.card.id: c for c in candidates}


def memory(candidate: Any) -> Any:
    (requirement,) = [r for r in candidate.requirements if r.name == "memory"]
    return requirement


# ---------------------------------------------------------------------------------------------
# The catalog: nominal, declared
# ---------------------------------------------------------------------------------------------


def test_the_declared_bytes_are_what_the_cited_output_prints() -> None:
    for card in (c for c in load_catalog() if c.declared is not None):
        assert card.declared is not None, card.id
        d = card.declared
        assert d.bytes == d.reported * bytes_per(d.reported_unit), card.id
        assert d.resolution_bytes == bytes_per(d.reported_unit)  # nvidia-smi prints whole MiB
        assert d.url.startswith("https://") and d.date and d.tool
        assert card.device_names, card.id
        # Sold as "24 GB", declared above the decimal reading: the convention is not the memory.
        assert card.nominal_memory_bytes is not None
        assert d.bytes > card.nominal_memory_bytes


def test_guide_example_two_candidates_to_review_and_no_rank() -> None:
    ranked = shortlist(GUIDE_NEED_GIB, 3, catalog=GUIDE_CARDS)
    assert [c.card.id for c in ranked] == ["rtx-4090", "rtx-6000-ada"]  # catalogue order
    for candidate in ranked:
        # Nominal capacity above the need is not proof: memory stays "check needed", no rank.
        assert {r.name: r.status for r in candidate.requirements} == {
            "memory": Status.CHECK_NEEDED,
            "package": Status.FIT,
        }
        assert memory(candidate).reason == "nominal_not_proof"
        assert candidate.status is Status.CHECK_NEEDED
        assert candidate.rank is None
    assert [c.cost for c in ranked] == [Decimal("47.14"), Decimal("55.71")]


def test_a_need_above_nominal_but_within_declared_does_not_exclude_the_4090() -> None:
    # 23 GiB is more than 24 GB read as 22.35 GiB, and less than the 24,564 MiB the card declares.
    candidate = by_id(shortlist(Fraction(23), 3))["rtx-4090"]
    assert memory(candidate).status is Status.CHECK_NEEDED
    assert memory(candidate).reason == "above_nominal_within_declared"
    assert candidate.status is Status.CHECK_NEEDED


def test_only_a_need_above_the_declared_capacity_and_its_rounding_excludes() -> None:
    declared = 24564 * MIB
    at_bound = Fraction(declared + MIB, GIB)  # nvidia-smi's MiB may hide up to one MiB more
    assert memory(by_id(shortlist(at_bound, 3))["rtx-4090"]).status is Status.CHECK_NEEDED
    above = at_bound + Fraction(1, GIB)
    excluded = by_id(shortlist(above, 3))["rtx-4090"]
    assert memory(excluded).status is Status.EXCLUDED
    assert memory(excluded).reason == "declared_below_need"
    assert memory(excluded).detail == {"declared_memory_bytes": declared}
    assert excluded.rank is None


def _card(card_id: str, nominal_gb: int | None, declared: int | None, price: str) -> Card:
    source = None
    if declared is not None:
        source = DeclaredMemory(
            declared, "nvidia-smi", None, declared // MIB, "MiB", MIB, "d", "u", ""
        )
    return Card(
        card_id,
        card_id.upper(),
        nominal_gb,
        "test",
        (RentalPackage(1, 3, Decimal(price), "USD", None, "test"),),
        source,
        (f"Test {card_id}",),
    )


def test_without_a_declared_capacity_only_the_binary_reading_of_the_nominal_figure_excludes() -> (
    None
):
    cards = [_card("a", 24, None, "1"), _card("b", None, None, "1")]
    # 23 GiB is above "24 GB" read as decimal GB (22.35 GiB), below it read as 24 GiB: a card
    # sold as 24 GB might still hold it, so neither reading decides.
    between = by_id(shortlist(Fraction(23), 3, catalog=cards))
    assert memory(between["a"]).status is Status.CHECK_NEEDED
    assert memory(between["a"]).reason == "above_nominal_declared_unknown"
    assert memory(between["b"]).reason == "nominal_unknown"
    # Exactly 24 GiB is still within the most generous reading; one byte more is not.
    at_bound = by_id(shortlist(Fraction(24), 3, catalog=cards))["a"]
    assert memory(at_bound).status is Status.CHECK_NEEDED
    above = by_id(shortlist(Fraction(24) + Fraction(1, GIB), 3, catalog=cards))
    assert memory(above["a"]).status is Status.EXCLUDED
    assert memory(above["a"]).reason == "above_nominal_binary"
    assert memory(above["a"]).detail == {
        "nominal_memory_bytes": 24 * 10**9,
        "nominal_binary_bytes": 24 * GIB,
    }
    assert above["a"].rank is None
    assert memory(above["b"]).status is Status.CHECK_NEEDED  # no figure, nothing to exclude by


def test_which_card_for_40_gib_offers_no_impossible_card() -> None:
    # The reader: 40 GiB for 2 days. No card whose nominal figure, read as GiB, is
    # below 40 GiB may be left to check, whatever its declared capacity.
    need = 40 * GIB
    for candidate in shortlist(Fraction(40), 2):
        card = candidate.card
        d = card.declared
        if d is not None:  # the device's own figure, with the rounding of the tool
            impossible = d.bytes + d.resolution_bytes < need
        else:  # "N GB" read as N GiB, the most generous reading
            impossible = card.nominal_memory_gb is not None and card.nominal_memory_gb * GIB < need
        assert (candidate.status is Status.EXCLUDED) == impossible, card.id
    excluded = {c.card.id for c in shortlist(Fraction(40), 2) if c.status is Status.EXCLUDED}
    assert {"t4", "l4", "a10"} <= excluded


def _paper_margin(card: Card, need_bytes: int) -> tuple[int | None, str | None]:
    # Read from the catalogue's own fields, as a reader would from the GPU sheets.
    if card.declared is not None:
        return card.declared.bytes - need_bytes, "declared"
    if card.nominal_memory_gb is not None:
        return card.nominal_memory_gb * 10**9 - need_bytes, "nominal"
    return None, None


@pytest.mark.parametrize("days", [2, 3])
@pytest.mark.parametrize("need_gib", [Fraction(19), Fraction(40), Fraction(1904, 100)])
def test_cards_to_check_come_in_review_order_by_cost_then_margin_on_paper(
    days: int, need_gib: Fraction
) -> None:
    ranked = shortlist(need_gib, days)
    statuses = [c.status for c in ranked]
    # Ranked (none without evidence), then to check, then excluded: never interleaved.
    assert statuses == sorted(statuses, key=["fit", "check_needed", "excluded"].index)
    need_bytes = need_gib * GIB
    to_check = [c for c in ranked if c.status is Status.CHECK_NEEDED]
    keys = []
    for c in to_check:
        margin, basis = _paper_margin(c.card, need_bytes)  # type: ignore[arg-type]
        assert (c.paper_basis, c.paper_margin_bytes) == (
            basis,
            None if margin is None else margin // 1,
        )
        assert c.rank is None
        holds = margin is not None and margin >= 0
        keys.append((not holds, c.cost is None, c.cost or 0, margin is None, -(margin or 0)))
    assert keys == sorted(keys)
    catalogue = [card.id for card in load_catalog()]
    ties = [c.card.id for c in to_check]
    for a, b in itertools.pairwise(ties):
        ka, kb = keys[ties.index(a)], keys[ties.index(b)]
        if ka == kb:
            assert catalogue.index(a) < catalogue.index(b)  # ties keep catalogue order


def _old_review_key(c: Any) -> tuple[Any, ...]:
    """The review order before the need's group: cost (no package last), then paper margin."""
    margin = c.paper_margin_bytes
    return (c.cost is None, c.cost or 0, margin is None, -(margin or 0))


def test_cards_that_hold_the_need_on_paper_come_first_whatever_their_cost() -> None:
    # 23 GiB: above "24 GB" read as decimal GB (a negative margin on paper), within 24 GiB (so
    # not excluded). The cheap card does not hold the need on paper; the dear one and the one
    # without a package do.
    cheap = _card("cheap", 24, None, "1")
    dear = _card("dear", 48, None, "9")
    unpriced = Card("unpriced", "UNPRICED", 80, "test", (), None, ("Test unpriced",))
    catalog = [cheap, unpriced, dear]
    ranked = shortlist(Fraction(23), 3, catalog=catalog)
    assert all(c.status is Status.CHECK_NEEDED and c.rank is None for c in ranked)
    assert [c.card.id for c in ranked] == ["dear", "unpriced", "cheap"]
    assert [c.holds_need_on_paper for c in ranked] == [True, True, False]
    assert ranked[-1].paper_margin_bytes is not None and ranked[-1].paper_margin_bytes < 0
    # The order before: the cheapest first, though its capacity on paper is below the need.
    assert min(ranked, key=_old_review_key).card.id == "cheap"
    # At the bound: a margin of exactly 0 holds the need.
    exact = shortlist(Fraction(24 * 10**9, GIB), 3, catalog=[dear, cheap])
    assert [c.card.id for c in exact] == ["cheap", "dear"]  # both hold it: by cost
    assert by_id(exact)["cheap"].paper_margin_bytes == 0
    assert by_id(exact)["cheap"].holds_need_on_paper


def test_an_incomplete_need_is_a_lower_bound_for_every_candidate() -> None:
    from iteragpu.gpus.need import ACTIVATIONS, Need, NeedPart, stated_need

    cards = [_card("a", 24, None, "1"), _card("b", 16, None, "1")]
    need = Need((NeedPart("weights", Fraction(20 * GIB)),), (ACTIVATIONS,))
    assert not need.complete and need.gib == 20
    ranked = shortlist(need.gib, 3, catalog=cards, need_missing=need.missing)
    complete = shortlist(need.gib, 3, catalog=cards)
    # The verdicts are the lower bound's: an exclusion stands, the margins are the same figures.
    assert [(c.card.id, c.status) for c in ranked] == [(c.card.id, c.status) for c in complete]
    assert by_id(ranked)["b"].status is Status.EXCLUDED
    assert all(c.need_missing == ("activations",) and not c.need_complete for c in ranked)
    assert all(c.need_complete for c in complete)
    assert stated_need(Fraction(19)).complete and stated_need(Fraction(19)).stated
    with pytest.raises(ValueError):
        Need((), ("weather",))


def test_a_card_above_its_declared_capacity_is_listed_last_with_why() -> None:
    ranked = shortlist(Fraction(30), 3, catalog=GUIDE_CARDS)
    assert [c.card.id for c in ranked] == ["rtx-6000-ada", "rtx-4090"]
    assert ranked[1].status is Status.EXCLUDED and ranked[1].rank is None
    assert memory(ranked[1]).reason == "declared_below_need"


def test_a_preference_never_offsets_an_exclusion() -> None:
    ranked = shortlist(
        GUIDE_NEED_GIB,
        3,
        requirements=["context"],
        failed=[("rtx-4090", "context")],
        catalog=GUIDE_CARDS,
    )
    assert [c.card.id for c in ranked] == ["rtx-6000-ada", "rtx-4090"]
    assert ranked[1].status is Status.EXCLUDED
    confirmed = shortlist(
        GUIDE_NEED_GIB,
        3,
        requirements=["context"],
        confirmed=[("rtx-6000-ada", "context")],
        catalog=GUIDE_CARDS,
    )
    statuses = {c.card.id: {r.name: r.status for r in c.requirements} for c in confirmed}
    assert statuses["rtx-6000-ada"]["context"] is Status.FIT
    assert statuses["rtx-4090"]["context"] is Status.CHECK_NEEDED


def test_missing_package_and_missing_capacity_are_check_needed() -> None:
    # The guide's cards with their fixed 3-day packages alone (no hourly offer prices 2 days).
    fixed_only = [
        replace(c, packages=tuple(p for p in c.packages if isinstance(p, RentalPackage)))
        for c in GUIDE_CARDS
    ]
    ranked = shortlist(GUIDE_NEED_GIB, 2, catalog=fixed_only)
    assert all(c.package is None and c.cost is None for c in ranked)
    assert all(c.requirements[1].status is Status.CHECK_NEEDED for c in ranked)
    mystery = Card(
        "mystery", "Mystery GPU", None, "", (RentalPackage(1, 3, Decimal(1), "USD", None, "t"),)
    )
    ranked = shortlist(GUIDE_NEED_GIB, 3, catalog=[*GUIDE_CARDS, mystery])
    assert memory(by_id(ranked)["mystery"]).reason == "nominal_unknown"
    # Cheapest, but no figure: no margin on paper, so it does not hold the need on paper and
    # comes after the cards that do; still to review, so no rank.
    assert [c.card.id for c in ranked] == ["rtx-4090", "rtx-6000-ada", "mystery"]
    assert all(c.rank is None for c in ranked)
    mystery_row = by_id(ranked)["mystery"]
    assert (mystery_row.paper_margin_bytes, mystery_row.paper_basis) == (None, None)


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


# ---------------------------------------------------------------------------------------------
# Evidence from lab results
# ---------------------------------------------------------------------------------------------


def _lab_result(
    tmp_path: Path,
    name: str,
    device_name: str,
    capacity: int | None,
    peak: int | None = None,
    **fake: Any,
) -> Path:
    """A real lab result written by mesure_memoire.main with the test-only fake backend.

    The fake allocates a few kB; `peak` sets the highest reserved peak to a chosen load.
    """
    out = tmp_path / f"{name}.json"
    code = mm.main(validation_argv(out), backend_factory=fake_factory(**fake), clock=make_clock())
    assert code in (mm.EXIT_OK, mm.EXIT_PHASE_FAILED)
    result = json.loads(out.read_text("utf-8"))
    device: dict[str, Any] = {
        "index": 0,
        "name": device_name,
        "total_memory_bytes": capacity,
        "compute_capability": None,
        "free_bytes": None,
        "mem_get_info_total_bytes": None,
    }
    if result["schema_version"] != "1.0.0":  # schema 1.1.0 also names the measured device
        device.update(requested=True, uuid=None, pci_bus_id=None, arch_name=None)
    result["environment"]["devices"] = [device]
    if peak is not None:
        result["phases"][-1]["peak_reserved_bytes"] = peak
    jsonschema.validate(result, load_schema())
    out.write_text(json.dumps(result), "utf-8")
    return out


def _need_bytes(need_gib: Fraction) -> Fraction:
    return need_gib * GIB


def test_a_small_successful_run_is_no_evidence_for_a_large_need(tmp_path: Path) -> None:
    # The defect: with a need of 500 GiB, a successful RTX 4090 run made the card "fit".
    run = read_evidence(_lab_result(tmp_path, "ok", RTX_4090, 24 * GIB, peak=2 * GIB))
    assert run.succeeded
    candidate = by_id(shortlist(Fraction(500), 3, evidence=[run]))["rtx-4090"]
    assert candidate.status is not Status.FIT and candidate.rank is None
    assert memory(candidate).reason == "declared_below_need"  # the card declares 23.99 GiB
    # Within the declared capacity, the small run says only that a smaller load worked.
    smaller = by_id(shortlist(GUIDE_NEED_GIB, 3, evidence=[run]))["rtx-4090"]
    assert memory(smaller).status is Status.CHECK_NEEDED
    assert memory(smaller).reason == "evidence_below_need"
    assert memory(smaller).detail["peak_reserved_bytes"] == 2 * GIB
    # Without a declared capacity either, the same run still proves nothing about 500 GiB...
    unknown = read_evidence(_lab_result(tmp_path, "x", "Test x", 24 * GIB, peak=2 * GIB))
    (only,) = shortlist(Fraction(500), 3, evidence=[unknown], catalog=[_card("x", None, None, "1")])
    assert memory(only).reason == "evidence_below_need"
    # ... and a card sold as 24 GB cannot hold 500 GiB under any reading of its figure.
    (sold,) = shortlist(Fraction(500), 3, evidence=[unknown], catalog=[_card("x", 24, None, "1")])
    assert memory(sold).reason == "above_nominal_binary"


def test_a_run_at_the_need_within_the_reported_capacity_fits_and_ranks(tmp_path: Path) -> None:
    need = _need_bytes(GUIDE_NEED_GIB)
    peak = int(need) + 1
    run = read_evidence(_lab_result(tmp_path, "ok", RTX_4090, 23 * GIB, peak=peak))
    ranked = shortlist(GUIDE_NEED_GIB, 3, margin_gib=Fraction(1), evidence=[run])
    first = ranked[0]
    assert first.card.id == "rtx-4090" and first.status is Status.FIT and first.rank == 1
    assert memory(first).reason == "evidence_fits"
    assert first.effective_margin_bytes == 23 * GIB - peak
    assert ranked[1].rank is None  # evidence is per card model

    too_tight = by_id(shortlist(GUIDE_NEED_GIB, 3, margin_gib=Fraction(4), evidence=[run]))
    assert memory(too_tight["rtx-4090"]).reason == "evidence_margin_not_met"
    assert memory(too_tight["rtx-4090"]).detail["margin_bytes"] == 4 * GIB
    assert too_tight["rtx-4090"].rank is None


def test_fit_candidates_rank_by_cost_then_effective_margin_then_name(tmp_path: Path) -> None:
    cards = [
        _card("dear", 80, None, "9"),
        _card("tight", 80, None, "5"),
        _card("roomy", 80, None, "5"),
        _card("unproven", 80, None, "1"),
    ]
    runs = [
        read_evidence(_lab_result(tmp_path, name, f"Test {name}", capacity, peak=10 * GIB))
        for name, capacity in (("dear", 80 * GIB), ("tight", 12 * GIB), ("roomy", 40 * GIB))
    ]
    ranked = shortlist(Fraction(10), 3, evidence=runs, catalog=cards)
    assert [(c.card.id, c.rank) for c in ranked] == [
        ("roomy", 1),
        ("tight", 2),
        ("dear", 3),
        ("unproven", None),  # the cheapest, but not fit: never ranked
    ]


def test_out_of_memory_at_or_below_the_need_excludes(tmp_path: Path) -> None:
    oom = read_evidence(
        _lab_result(tmp_path, "oom", RTX_6000, 47 * GIB, peak=GIB, fail_on_forward=1)
    )
    assert oom.out_of_memory and not oom.succeeded and oom.failed_phase == "cold_forward"
    ranked = shortlist(GUIDE_NEED_GIB, 3, evidence=[oom])
    assert ranked[-1].card.id == "rtx-6000-ada"
    assert ranked[-1].status is Status.EXCLUDED and ranked[-1].rank is None
    assert memory(ranked[-1]).reason == "evidence_out_of_memory"


def test_out_of_memory_above_the_need_neither_fits_nor_excludes(tmp_path: Path) -> None:
    need = _need_bytes(GUIDE_NEED_GIB)
    path = _lab_result(tmp_path, "big", RTX_6000, 47 * GIB, peak=int(need) + GIB, fail_on_forward=1)
    candidate = by_id(shortlist(GUIDE_NEED_GIB, 3, evidence=[read_evidence(path)]))["rtx-6000-ada"]
    assert memory(candidate).status is Status.CHECK_NEEDED
    assert memory(candidate).reason == "evidence_out_of_memory_above_need"


def test_runs_that_disagree_leave_memory_to_check(tmp_path: Path) -> None:
    need = int(_need_bytes(GUIDE_NEED_GIB)) + 1
    fits = read_evidence(_lab_result(tmp_path, "fits", RTX_4090, 23 * GIB, peak=need))
    oom = read_evidence(_lab_result(tmp_path, "oom", RTX_4090, 23 * GIB, fail_on_forward=1))
    candidate = by_id(shortlist(GUIDE_NEED_GIB, 3, evidence=[fits, oom]))["rtx-4090"]
    assert memory(candidate).reason == "evidence_conflict"
    assert candidate.rank is None


def test_a_run_with_unread_counters_or_no_capacity_proves_nothing(tmp_path: Path) -> None:
    need = int(_need_bytes(GUIDE_NEED_GIB)) + 1
    path = _lab_result(tmp_path, "partial", RTX_4090, 23 * GIB, peak=need)
    result = json.loads(path.read_text("utf-8"))
    result["outcome"]["complete_readings"] = False
    path.write_text(json.dumps(result), "utf-8")
    candidate = by_id(shortlist(GUIDE_NEED_GIB, 3, evidence=[read_evidence(path)]))["rtx-4090"]
    assert memory(candidate).reason == "evidence_readings_incomplete"
    no_capacity = read_evidence(_lab_result(tmp_path, "nocap", RTX_4090, None, peak=need))
    candidate = by_id(shortlist(GUIDE_NEED_GIB, 3, evidence=[no_capacity]))["rtx-4090"]
    assert memory(candidate).reason == "evidence_capacity_unknown"


def test_a_run_on_a_card_outside_the_catalog_is_refused(tmp_path: Path) -> None:
    laptop = read_evidence(
        _lab_result(tmp_path, "laptop", "NVIDIA GeForce RTX 4090 Laptop GPU", GIB)
    )
    with pytest.raises(ValueError, match="no card of the catalog"):
        shortlist(GUIDE_NEED_GIB, 3, evidence=[laptop])


def test_every_reason_code_has_a_text_in_every_language() -> None:
    source = Path(inspect.getfile(Status)).read_text("utf-8")
    codes = set(
        __import__("re").findall(
            r'"((?:evidence|nominal|declared|above|package|user|no)_[a-z_]+)"', source
        )
    )
    assert {"evidence_fits", "evidence_below_need", "declared_below_need"} <= codes
    for code in codes:
        assert set(MESSAGES[f"reason_{code}"]) == set(CODES), code


# ---------------------------------------------------------------------------------------------
# The CLI
# ---------------------------------------------------------------------------------------------


def test_cli_shortlist_json_has_no_rank_for_candidates_to_review() -> None:
    result = invoke("shortlist", "--need-gib", "19.04", "--days", "3", "--json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["need_bytes"] == -(-1904 * GIB // 100)  # 19.04 GiB rounded up to a byte
    assert payload["need_gib"] == "19.04"
    first = next(c for c in payload["candidates"] if c["card_id"] == "rtx-4090")
    assert (first["name"], first["nominal_memory_gb"], first["cost"]) == ("RTX 4090", "24", "47.14")
    assert first["nominal_memory_bytes"] == 24_000_000_000
    assert first["declared_memory_bytes"] == 24564 * MIB
    assert first["declared_memory_gib"] == "23.98828125"
    assert first["declared_memory_source"]["url"].startswith("https://github.com/")
    assert first["declared_memory_source"]["reported_unit"] == "MiB"
    # The guide gives no date for its prices: the catalog says so with null, not a made-up date.
    assert first["price_date"] is None and "sizing guide" in first["price_source"]
    assert all(c["rank"] is None for c in payload["candidates"])
    # Only a card sold as 16 GB is out: 16 GiB is below the need under any reading.
    statuses = {c["card_id"]: c["status"] for c in payload["candidates"]}
    assert {k for k, v in statuses.items() if v == "excluded"} == {"t4"}
    assert set(statuses.values()) == {"check_needed", "excluded"}
    assert first["requirements"][0] == {
        "name": "memory",
        "status": "check_needed",
        "reason": "nominal_not_proof",
        "nominal_memory_bytes": 24_000_000_000,
    }
    assert not any(isinstance(v, float) for c in payload["candidates"] for v in c.values())
    need = payload["need_bytes"]
    assert first["paper_margin_basis"] == "declared"
    # 19.04 GiB is not a whole number of bytes: the margin is rounded down, never up.
    assert first["paper_margin_bytes"] == 24564 * MIB - need or (
        first["paper_margin_bytes"] == 24564 * MIB - need + 1
    )
    assert first["paper_margin_bytes"] <= 24564 * MIB - Fraction(1904, 100) * GIB
    assert payload["review_order"]["is_rank"] is False


@pytest.mark.parametrize(
    ("lang", "texts"),
    per_language(
        {
            "ko": ["23.99", "47.99", "확인 필요", "47.14", "관례", "RLinf/RLinf/issues/255"],
            "id": ["23,99", "47,99", "perlu diverifikasi", "47,14", "konvensi", "RLinf"],
        }
    ),
)
def test_cli_shortlist_table_leaves_the_rank_of_candidates_to_review_empty(
    lang: str, texts: list[str]
) -> None:
    table = invoke("shortlist", "--need-gib", "19.04", "--days", "3", "--lang", lang)
    assert table.exit_code == 0
    for text in texts:
        assert text in table.stdout, (lang, text)
    rows = [line for line in table.stdout.splitlines() if "RTX" in line and "·" not in line]
    assert len(rows) == sum("RTX" in card.name for card in load_catalog())
    assert all(row.startswith("-") for row in rows), rows  # no rank 1 and 2 any more
    for wrong in ("상한", "batas atas", "22.35", "22,35"):
        assert wrong not in table.stdout


def test_cli_evidence_that_fits_ranks_first(tmp_path: Path) -> None:
    peak = int(_need_bytes(Fraction(1904, 100))) + 1
    evidence = _lab_result(tmp_path, "ok", RTX_4090, 23 * GIB, peak=peak)
    args = ["--need-gib", "19.04", "--days", "3", "--margin-gib", "1", "--evidence", str(evidence)]
    payload = json.loads(invoke("shortlist", *args, "--json").stdout)
    first = payload["candidates"][0]
    assert (first["card_id"], first["status"], first["rank"]) == ("rtx-4090", "fit", 1)
    assert first["requirements"][0]["reason"] == "evidence_fits"
    assert first["effective_margin_bytes"] == 23 * GIB - peak
    assert payload["candidates"][1]["rank"] is None
    table = invoke("shortlist", *args, "--lang", "ko").stdout
    assert any(line.startswith("1 ") and "RTX 4090" in line for line in table.splitlines())


def test_cli_small_run_and_big_need_is_not_fit(tmp_path: Path) -> None:
    evidence = _lab_result(tmp_path, "ok", RTX_4090, 24 * GIB, peak=GIB)
    result = invoke("shortlist", "--need-gib", "23", "--days", "3", "--evidence", str(evidence))
    assert result.exit_code == 0
    # Notes are folded to the column: a note is its line and the indented lines after it.
    notes = result.stdout.replace("\n  ", " ").splitlines()
    line = next(line for line in notes if "RTX 4090 · 메모리" in line)
    assert "더 작은 부하" in line  # "the card worked at a smaller load"
    payload = json.loads(
        invoke(
            "shortlist", "--need-gib", "23", "--days", "3", "--evidence", str(evidence), "--json"
        ).stdout
    )
    rtx_4090 = next(c for c in payload["candidates"] if c["card_id"] == "rtx-4090")
    memory_json = rtx_4090["requirements"][0]
    assert memory_json["reason"] == "evidence_below_need"
    assert memory_json["peak_reserved_bytes"] == GIB
    assert memory_json["reported_capacity_bytes"] == 24 * GIB


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--need-gib", "-1", "--days", "3"], "--need-gib"),
        (["--need-gib", "19.04", "--days", "0"], "양수여야"),  # Korean: the C locale
        (["--need-gib", "19.04", "--days", "3", "--failed", "rtx-4090"], "카드:요건"),
        (["--need-gib", "19.04", "--days", "3", "--failed", "nope:context"], "nope"),
        (["--need-gib", "19.04", "--days", "3", "--evidence", "/no/such.json"], "파일이 없습니다"),
    ],
)
def test_cli_shortlist_bad_input(args: list[str], needle: str) -> None:
    result = invoke("shortlist", *args)
    assert result.exit_code == 2, result.output
    assert len(result.stderr.strip().splitlines()) == 1 and needle in result.stderr


# ---------------------------------------------------------------------------------------------
# Malformed evidence: one line, exit 2, never a traceback nor a silent fit
# ---------------------------------------------------------------------------------------------


def _good_result(tmp_path: Path) -> dict[str, Any]:
    peak = int(_need_bytes(Fraction(1904, 100))) + 1
    path = _lab_result(tmp_path, "good", RTX_4090, 23 * GIB, peak=peak)
    result: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return result


def _set(result: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    target = result
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return result


MUTATIONS: dict[str, Any] = {
    "missing device index": lambda r: _set(r, ("device",), "cuda:3"),
    "device name a number": lambda r: _set(r, ("environment", "devices", 0, "name"), 4090),
    "device name not read": lambda r: _set(r, ("environment", "devices", 0, "name"), None),
    "capacity a string": lambda r: _set(
        r, ("environment", "devices", 0, "total_memory_bytes"), "24000000000"
    ),
    "peak a string": lambda r: _set(r, ("phases", -1, "peak_reserved_bytes"), "9" * 12),
    "peak above capacity": lambda r: _set(r, ("phases", -1, "peak_reserved_bytes"), 24 * GIB),
    "index listed twice": lambda r: _set(
        r, ("environment", "devices"), [r["environment"]["devices"][0]] * 2
    ),
    "ok outcome with a failed phase": lambda r: _set(
        r,
        ("phases", 0),
        {
            **r["phases"][0],
            "status": "failed",
            "error": {"step": "run", "type": "X", "message": "x", "out_of_memory": True},
        },
    ),
    "not a lab result": lambda r: {"hello": 1},
}


@pytest.mark.parametrize("mutation", MUTATIONS, ids=list(MUTATIONS))
def test_a_malformed_lab_result_is_refused_in_one_line(tmp_path: Path, mutation: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(MUTATIONS[mutation](_good_result(tmp_path))), "utf-8")
    _assert_refused(path)


RAW_FILES: dict[str, Any] = {
    "nesting 200,000 deep": "[" * 200_000 + "]" * 200_000,
    "nesting 50 deep": "[" * 50 + "]" * 50,
    "total_memory_bytes 1e999": None,  # built from a good result below
    "NaN": '{"a": NaN}',
    "Infinity": '{"a": -Infinity}',
    "5,000-digit integer": '{"a": ' + "9" * 5000 + "}",
    "integer beyond 64 bits": '{"a": 18446744073709551616}',
    "duplicate key": '{"a": 1, "a": 2}',
    "broken JSON": "{",
    "not UTF-8": b"\xff\xfe{",
    "too large": b" " * (MAX_EVIDENCE_BYTES + 1),
}


@pytest.mark.parametrize("case", RAW_FILES, ids=list(RAW_FILES))
def test_a_hostile_file_is_refused_in_one_line_and_quickly(tmp_path: Path, case: str) -> None:
    path = tmp_path / "bad.json"
    content = RAW_FILES[case]
    if content is None:
        text = json.dumps(_good_result(tmp_path))
        content = text.replace(f'"total_memory_bytes": {23 * GIB}', '"total_memory_bytes": 1e999')
        assert content != text
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, "utf-8")
    started = time.perf_counter()
    _assert_refused(path)
    assert time.perf_counter() - started < 10  # a hang guard; speed: benchmarks/evidence_bench.py


def test_the_largest_result_accepted_is_read(tmp_path: Path) -> None:
    # How fast it is read is measured by benchmarks/evidence_bench.py (`nox -s bench`).
    result = _good_result(tmp_path)
    phase = result["phases"][-1]
    while len(json.dumps(result, indent=2)) < MAX_EVIDENCE_BYTES - 1000:
        result["phases"].append(dict(phase))
    path = tmp_path / "long.json"
    path.write_text(json.dumps(result, indent=2), "utf-8")  # indented, as the lab writes it
    assert read_evidence(path).succeeded


def _assert_refused(path: Path) -> None:
    with pytest.raises(EvidenceError):
        read_evidence(path)
    result = invoke("shortlist", "--need-gib", "19.04", "--days", "3", "--evidence", str(path))
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("iteragpu: 오류: ") and str(path) in line
    assert "Traceback" not in result.stderr


# ---------------------------------------------------------------------------------------------
# The pages say what the short list does
# ---------------------------------------------------------------------------------------------

DOCS = Path(__file__).parents[1] / "docs"
SHORTLIST_PAGES = ["cli.md", "sizer.md", "sizing.md", "gpus/rtx-4090.md", "gpus/rtx-6000-ada.md"]


@pytest.mark.parametrize("lang", CODES)
def test_no_page_calls_a_nominal_figure_an_upper_bound(lang: str) -> None:
    # "상한" / "batas atas" is right in the measurement guide (cudaMallocAsync), not here.
    for page in SHORTLIST_PAGES:
        for line in (DOCS / lang / "docs" / page).read_text("utf-8").splitlines():
            nominal = "공칭" in line or "nominal" in line.lower()
            assert not (nominal and ("상한" in line or "batas atas" in line)), (page, line)
            assert "nominal_margin" not in line and "Margin nominal" not in line, (page, line)


@pytest.mark.parametrize("lang", CODES)
def test_the_cli_page_lists_every_stable_reason_code(lang: str) -> None:
    text = (DOCS / lang / "docs" / "cli.md").read_text("utf-8")
    section = text[text.index("{ #shortlist }") : text.index("{ #json }")]
    codes = {code for code in MESSAGES if code.startswith("reason_")}
    for code in codes:
        assert f"`{code.removeprefix('reason_')}`" in section, code


@pytest.mark.parametrize("lang", CODES)
def test_gpu_sheets_cite_the_declared_capacity_source(lang: str) -> None:
    for card in (c for c in load_catalog() if c.declared is not None):
        assert card.declared is not None
        text = (DOCS / lang / "docs" / "gpus" / f"{card.id}.md").read_text("utf-8")
        assert "{ #declared }" in text and card.declared.url in text
        assert f"`{card.declared.date}`" in text
