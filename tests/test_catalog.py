"""The GPU catalogue's schema: every fact has its source, a missing fact is null (never 0)."""

from __future__ import annotations

import datetime
import json
import re
from decimal import Decimal
from fractions import Fraction

import pytest

from iteragpu.core.units import bytes_per
from iteragpu.gpus.catalog import Card, HourlyOffer, RentalPackage, catalog_text, load_catalog

ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
CARD_KEYS = {
    "id",
    "name",
    "device_names",
    "nominal_memory_gb",
    "nominal_memory_source",
    "nominal_memory_reference",
    "declared_memory_bytes",
    "declared_memory_source",
    "readings_not_bounds",
    "packages",
    "hourly_offers",
    "price_search",
}
OFFER_KEYS = {
    "provider",
    "product",
    "cards",
    "price_per",
    "hourly_price",
    "currency",
    "source",
    "url",
    "page_kind",
    "provider_url",
    "page_date",
    "seen",
    "states",
}
# The date the catalogue's prices were last read; no date of the catalogue is after it.
LATEST_SEEN = datetime.date(2026, 12, 6)
# The cards of the sizing guide: their nominal figures and packages come from the guide.
GUIDE_CARD_IDS = {"rtx-4090", "rtx-6000-ada"}


def raw_cards() -> list[dict[str, object]]:
    cards = json.loads(catalog_text())["cards"]
    assert isinstance(cards, list)
    return cards


def test_every_card_states_every_key_and_no_zero_stands_for_unknown() -> None:
    for card in raw_cards():
        assert set(card) == CARD_KEYS, card["id"]
        assert card["declared_memory_bytes"] != 0, card["id"]
        assert card["nominal_memory_gb"] != 0, card["id"]


def test_ids_names_and_device_names_are_unique() -> None:
    cards = load_catalog()
    assert len({c.id for c in cards}) == len(cards)
    assert len({c.name.casefold() for c in cards}) == len(cards)
    names = [" ".join(n.split()).casefold() for c in cards for n in c.device_names]
    assert len(set(names)) == len(names)  # a reported name is one card model, never two


def test_the_issue_s_cards_are_all_there() -> None:
    assert [c.id for c in load_catalog()] == [
        "t4",
        "l4",
        "a10",
        "rtx-3090",
        "rtx-4090",
        "rtx-5090",
        "rtx-6000-ada",
        "l40s",
        "a100-40gb",
        "a100-80gb",
        "h100-80gb",
        "h200",
        "mi300x",
    ]


@pytest.mark.parametrize("card", load_catalog(), ids=lambda c: c.id)
def test_every_nominal_figure_has_its_source(card) -> None:  # type: ignore[no-untyped-def]
    assert isinstance(card.nominal_memory_gb, int) and card.nominal_memory_gb > 0
    assert card.nominal_memory_source.strip()
    ref = card.nominal_reference
    if card.id in GUIDE_CARD_IDS:
        assert ref is None and "sizing guide" in card.nominal_memory_source
        return
    assert ref is not None, card.id
    assert ref.url.startswith("https://") and ISO_DATE.fullmatch(ref.seen)
    assert ref.kind in {"vendor", "secondary"}
    assert str(card.nominal_memory_gb) in ref.states  # the quoted words state the figure


@pytest.mark.parametrize("card", load_catalog(), ids=lambda c: c.id)
def test_a_declared_capacity_is_null_or_has_a_complete_source(card) -> None:  # type: ignore[no-untyped-def]
    d = card.declared
    if d is None:
        assert card.declared_memory_bytes is None
        return
    assert card.device_names, card.id  # a lab run on the card can be matched to it
    assert d.bytes == d.reported * bytes_per(d.reported_unit)
    assert d.resolution_bytes == bytes_per(d.reported_unit)  # the tool prints whole units
    assert d.url.startswith("https://") and ISO_DATE.fullmatch(d.date)
    assert d.tool and d.tool_version and d.note
    assert card.nominal_memory_bytes is not None and d.bytes > card.nominal_memory_bytes


@pytest.mark.parametrize("card", load_catalog(), ids=lambda c: c.id)
def test_a_reading_that_is_no_bound_says_why_and_where(card) -> None:  # type: ignore[no-untyped-def]
    for r in card.readings_not_bounds:
        assert r.bytes == r.reported * bytes_per(r.reported_unit)
        assert r.resolution_bytes == bytes_per(r.reported_unit)
        assert r.why_not_a_bound in {"ecc_on", "ecc_unknown"}
        assert r.url.startswith("https://") and r.note
        assert r.date is None or ISO_DATE.fullmatch(r.date)


def test_no_package_without_a_price_and_its_source() -> None:
    for card in load_catalog():
        for package in card.fixed_packages:
            assert package.price > Decimal(0) and package.currency == "USD"
            assert package.source.strip() and package.cards > 0 and package.days > 0
    # Prices only where a source gives one: the guide's two packages, and the multi-GPU offers
    # read on a provider's page (each with its page, the date it was seen and its words).
    priced = {c.id for c in load_catalog() if c.fixed_packages}
    assert priced == GUIDE_CARD_IDS | {c.id for c in load_catalog() if _offers(c)}
    for card in load_catalog():
        for package in _offers(card):
            assert package.url is not None and package.url.startswith(("https://", "http://"))
            assert package.seen is not None and ISO_DATE.fullmatch(package.seen)
            assert package.states and package.hourly_price is not None
            assert str(package.hourly_price) in package.states  # the rate is the page's
            assert package.price == package.hourly_price * 24 * package.days
            # A copy of a provider's page: the page it copies, and the date its own words give
            # for a change of its prices (its price is of before that date).
            if package.copy_of is not None:
                assert package.copy_of.startswith("https://")
                assert package.prices_until and ISO_DATE.fullmatch(package.prices_until)
                assert package.prices_until_states
                year = package.prices_until[:4]
                assert year in package.prices_until_states
            assert (package.prices_until is None) == (package.copy_of is None)


def _offers(card: Card) -> list[RentalPackage]:
    return [p for p in card.fixed_packages if p.url is not None]


def _date(text: str) -> datetime.date:
    assert ISO_DATE.fullmatch(text), text
    return datetime.date.fromisoformat(text)


@pytest.mark.parametrize("card", load_catalog(), ids=lambda c: c.id)
def test_every_hourly_price_is_dated_and_sourced(card: Card) -> None:
    (raw,) = [c for c in raw_cards() if c["id"] == card.id]
    for offer in raw["hourly_offers"]:  # type: ignore[attr-defined]
        assert set(offer) == OFFER_KEYS, card.id
        # Money is an exact decimal string, never a float.
        assert isinstance(offer["hourly_price"], str) and re.fullmatch(
            r"\d+\.\d+", offer["hourly_price"]
        )
    for offer in card.offers:
        assert offer.hourly_price > 0 and offer.currency == "USD" and offer.cards > 0
        assert offer.price_per in {"gpu", "instance"}
        assert offer.page_kind in {"provider", "secondary"}
        assert offer.provider.strip() and offer.product.strip() and offer.source.strip()
        assert offer.url.startswith("https://")
        assert offer.provider_url is None or offer.provider_url.startswith("https://")
        # Read on a date, never in the future; the page's own date for its price is not after it.
        seen = _date(offer.seen)
        assert seen <= LATEST_SEEN <= datetime.date.today()
        assert offer.page_date is None or _date(offer.page_date) <= seen
        assert str(offer.hourly_price) in offer.states  # the rate is the page's own words
        assert offer.gpu_hourly_price == Fraction(offer.instance_hourly_price) / offer.cards
        # Priced for any campaign: the instance's rate x 24 h x the days.
        package = offer.package(5)
        assert (package.cards, package.days) == (offer.cards, 5)
        assert package.price == offer.instance_hourly_price * 24 * 5


@pytest.mark.parametrize("card", load_catalog(), ids=lambda c: c.id)
def test_every_card_has_an_hourly_price_or_a_dated_search(card: Card) -> None:
    search = card.price_search
    assert search is not None, card.id
    assert _date(search.searched) <= LATEST_SEEN <= datetime.date.today()
    assert search.found == bool(card.offers), card.id
    assert search.queries and all(q.strip() for q in search.queries)
    for offer in card.offers:
        assert _date(offer.seen) <= _date(search.searched)


def test_the_lowest_hourly_price_is_per_gpu() -> None:
    cards = {c.id: c for c in load_catalog()}
    lowest = cards["a100-80gb"].lowest_offer()
    assert isinstance(lowest, HourlyOffer)
    assert (lowest.provider, lowest.gpu_hourly_price) == ("RunPod", Fraction("1.19"))
    # An instance's rate is divided by its GPUs: 8 x A100 SXM 40 GB at 21.957642 USD/h.
    (aws,) = [o for o in cards["a100-40gb"].offers if o.provider == "AWS"]
    assert aws.gpu_hourly_price == Fraction("2.74470525")
    assert cards["rtx-5090"].lowest_offer() is None


def test_multi_gpu_packages_are_the_offers_found() -> None:
    """2x, 4x and 8x packages only where a public offer was found: two 8-card instances at a
    fixed price for 3 days, and the hourly 8-GPU instances of the price lists."""
    found = {
        (c.id, p.cards, p.days, str(p.price))
        for c in load_catalog()
        for p in c.fixed_packages
        if p.cards > 1
    }
    assert found == {("h100-80gb", 8, 3, "2831.76"), ("a100-40gb", 8, 3, "1062.00")}
    hourly = {(c.id, o.provider, o.cards) for c in load_catalog() for o in c.offers if o.cards > 1}
    assert hourly == {
        ("a100-40gb", "Lambda", 8),
        ("a100-40gb", "AWS", 8),
        ("a100-80gb", "Lambda", 8),
        ("a100-80gb", "AWS", 8),
        ("h100-80gb", "Lambda", 8),
        ("h100-80gb", "AWS", 8),
    }


def test_the_guide_s_two_cards_keep_their_facts_and_sources() -> None:
    cards = {c.id: c for c in load_catalog()}
    rtx_4090, rtx_6000 = cards["rtx-4090"], cards["rtx-6000-ada"]
    assert (rtx_4090.nominal_memory_gb, rtx_6000.nominal_memory_gb) == (24, 48)
    assert rtx_4090.declared is not None and rtx_6000.declared is not None
    assert (rtx_4090.declared.reported, rtx_4090.declared.tool_version) == (24564, "550.163.01")
    assert rtx_4090.declared.url == "https://github.com/RLinf/RLinf/issues/255"
    assert (rtx_6000.declared.reported, rtx_6000.declared.date) == (49140, "2025-05-07")
    assert [str(p.price) for p in rtx_4090.fixed_packages] == ["47.14"]
    assert [str(p.price) for p in rtx_6000.fixed_packages] == ["55.71"]
