"""The GPU catalog: nominal and declared capacities of each card, rental packages, and the
hourly on-demand offers read on public price lists (`hourly_offers`, with the date each page was
read, and each card's `price_search`: when price lists were searched, and whether one was found).

Three capacities are never mixed:

- nominal: the figure a catalogue states ("24 GB"). By the sizing guide's convention it is read
  as decimal GB (10^9 B). That is a way of reading the label, not the card's memory, and it
  proves nothing either way about a load.
- declared: the bytes a device reports (`nvidia-smi`, `torch.cuda.get_device_properties`),
  taken from a dated public output. The memory a process can ever reserve on that device is
  below it, so a need above it cannot fit.
- usable: what a process actually gets, known only from a run on the device (`evidence`).

A public reading that does not bound the card model (taken with ECC on, or with the ECC state
unknown, on a card whose ECC can be switched off to declare more) is kept as a reading, shown
with its source, and never used to exclude a card.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from functools import cache
from importlib import resources
from typing import Any

from iteragpu.core.units import from_unit


@dataclass(frozen=True)
class RentalPackage:
    cards: int
    days: int
    price: Decimal
    currency: str
    price_date: str | None
    source: str
    # A provider's offer read on a public page: its hourly rate for the whole package (the price
    # is that rate x 24 h x the days), the page, the date it was seen, the page's words.
    hourly_price: Decimal | None = None
    url: str | None = None
    seen: str | None = None
    states: str | None = None
    # When the page read is a copy of a provider's page (the only public page found to state
    # the price): the page it copies, and the date after which the page itself says its prices
    # change, with its words. Its price is of before that date, not today's.
    copy_of: str | None = None
    prices_until: str | None = None
    prices_until_states: str | None = None


HOURS_PER_DAY = 24


@dataclass(frozen=True)
class HourlyOffer:
    """An on-demand offer read on a public price list: an hourly rate for an instance of `cards`
    GPUs, rented for as long as the renter keeps it, so it prices any number of days.

    The rate is recorded as the page states it: per GPU (`price_per` "gpu") or for the whole
    instance (`price_per` "instance"). `page_kind` says whose page was read: "provider" (the
    provider's own price list) or "secondary" (a page reporting the provider's price, with the
    provider's page in `provider_url` where it names one). `page_date` is the date the page gives
    for its price (None: it gives none), `seen` the date the page was read, `states` its words.
    """

    cards: int
    hourly_price: Decimal
    price_per: str
    currency: str
    provider: str
    product: str
    source: str
    url: str
    page_kind: str
    provider_url: str | None
    page_date: str | None
    seen: str
    states: str
    days: None = None  # no fixed length: `package(days)` prices any campaign

    @property
    def instance_hourly_price(self) -> Decimal:
        """The hourly rate of the whole instance of `cards` GPUs."""
        return self.hourly_price * self.cards if self.price_per == "gpu" else self.hourly_price

    @property
    def gpu_hourly_price(self) -> Fraction:
        """The hourly rate per GPU, exact (an instance's rate divided by its GPUs)."""
        return Fraction(self.instance_hourly_price) / self.cards

    def package(self, days: int) -> RentalPackage:
        """The offer as a package of `days` days: the instance's hourly rate x 24 h x days."""
        return RentalPackage(
            cards=self.cards,
            days=days,
            price=self.instance_hourly_price * HOURS_PER_DAY * days,
            currency=self.currency,
            price_date=self.page_date,
            source=f"{self.provider}, {self.product}: {self.source}",
            hourly_price=self.instance_hourly_price,
            url=self.url,
            seen=self.seen,
            states=self.states,
        )


@dataclass(frozen=True)
class PriceSearch:
    """When public price lists were searched for the card's hourly price, and with what."""

    searched: str
    found: bool
    queries: tuple[str, ...]


@dataclass(frozen=True)
class DeclaredMemory:
    """What one public output of a tool showed for the card's total memory."""

    bytes: int
    tool: str
    tool_version: str | None
    reported: int  # the figure as the tool printed it, in `reported_unit`
    reported_unit: str
    resolution_bytes: int  # the tool rounds to this many bytes (1 MiB for nvidia-smi)
    date: str
    url: str
    note: str

    @property
    def bound_bytes(self) -> int:
        """No process on the card can hold this many bytes: the figure plus its rounding."""
        return self.bytes + self.resolution_bytes


@dataclass(frozen=True)
class NominalReference:
    """Where the nominal figure was read: a public page, the date it was seen, its words."""

    url: str
    seen: str
    kind: str  # "vendor" or "secondary" (a page that is not the vendor's datasheet)
    states: str  # the page's words for the figure, quoted


@dataclass(frozen=True)
class Reading:
    """A public output of a tool for the card's total memory that is no bound for the model."""

    bytes: int
    tool: str
    tool_version: str | None
    reported: int
    reported_unit: str
    resolution_bytes: int
    date: str | None
    url: str
    why_not_a_bound: str  # "ecc_on" or "ecc_unknown"
    note: str


@dataclass(frozen=True)
class Card:
    id: str
    name: str
    nominal_memory_gb: int | None
    nominal_memory_source: str
    # Fixed-price packages (cards, days, price) first, then the hourly offers, priced for any
    # number of days (`HourlyOffer.package`).
    packages: tuple[RentalPackage | HourlyOffer, ...]
    declared: DeclaredMemory | None = None
    device_names: tuple[str, ...] = ()  # the names a device of this model reports
    nominal_reference: NominalReference | None = None  # None: the sizing guide is the source
    readings_not_bounds: tuple[Reading, ...] = ()
    price_search: PriceSearch | None = None  # None: no search recorded

    @property
    def fixed_packages(self) -> tuple[RentalPackage, ...]:
        return tuple(p for p in self.packages if isinstance(p, RentalPackage))

    @property
    def offers(self) -> tuple[HourlyOffer, ...]:
        return tuple(p for p in self.packages if isinstance(p, HourlyOffer))

    def lowest_offer(self) -> HourlyOffer | None:
        """The offer with the lowest hourly rate per GPU (the first of equals), or None."""
        offers = self.offers
        return min(offers, key=lambda o: o.gpu_hourly_price) if offers else None

    @property
    def nominal_memory_bytes(self) -> Fraction | None:
        """The nominal figure read as decimal GB: a convention, not the card's memory."""
        if self.nominal_memory_gb is None:
            return None
        return from_unit(self.nominal_memory_gb, "GB")

    @property
    def nominal_binary_bytes(self) -> int | None:
        """The nominal figure read as binary GiB (2^30 B each), the most generous reading of
        "N GB": no card sold as N GB holds more, so a need above it is excluded."""
        if self.nominal_memory_gb is None:
            return None
        return self.nominal_memory_gb * 2**30

    @property
    def declared_memory_bytes(self) -> int | None:
        return None if self.declared is None else self.declared.bytes

    def is_device(self, device_name: str) -> bool:
        """Whether a device that reports `device_name` is this card model (exact, any case)."""
        wanted = _normalized(device_name)
        return any(_normalized(name) == wanted for name in self.device_names)


def _normalized(name: str) -> str:
    return " ".join(name.split()).casefold()


def _declared(raw: dict[str, Any] | None, declared_bytes: int | None) -> DeclaredMemory | None:
    if raw is None or declared_bytes is None:
        if raw is not None or declared_bytes is not None:
            raise ValueError("declared_memory_bytes and declared_memory_source go together")
        return None
    return DeclaredMemory(
        bytes=declared_bytes,
        tool=raw["tool"],
        tool_version=raw["tool_version"],
        reported=raw["reported"],
        reported_unit=raw["reported_unit"],
        resolution_bytes=raw["resolution_bytes"],
        date=raw["date"],
        url=raw["url"],
        note=raw["note"],
    )


def _nominal_reference(raw: dict[str, str] | None) -> NominalReference | None:
    return None if raw is None else NominalReference(**raw)


def _offer(raw: dict[str, Any]) -> HourlyOffer:
    return HourlyOffer(**{**raw, "hourly_price": Decimal(raw["hourly_price"])})


def _price_search(raw: dict[str, Any] | None) -> PriceSearch | None:
    if raw is None:
        return None
    return PriceSearch(raw["searched"], raw["found"], tuple(raw["queries"]))


CATALOG_FILE = "gpu_catalog.json"  # beside this module; the sizer page embeds it as it is


def catalog_text() -> str:
    """The catalogue file's text, as the CLI reads it and the sizer page embeds it."""
    return resources.files("iteragpu.gpus").joinpath(CATALOG_FILE).read_text("utf-8")


@cache
def load_catalog() -> tuple[Card, ...]:
    """The cards of `gpu_catalog.json`, in file order."""
    raw = json.loads(catalog_text())
    return tuple(
        Card(
            id=card["id"],
            name=card["name"],
            nominal_memory_gb=card["nominal_memory_gb"],
            nominal_memory_source=card["nominal_memory_source"],
            packages=tuple(
                RentalPackage(
                    cards=p["cards"],
                    days=p["days"],
                    price=Decimal(p["price"]),
                    currency=p["currency"],
                    price_date=p["price_date"],
                    source=p["source"],
                    hourly_price=None if "hourly_price" not in p else Decimal(p["hourly_price"]),
                    url=p.get("url"),
                    seen=p.get("seen"),
                    states=p.get("states"),
                    copy_of=p.get("copy_of"),
                    prices_until=p.get("prices_until"),
                    prices_until_states=p.get("prices_until_states"),
                )
                for p in card["packages"]
            )
            + tuple(_offer(o) for o in card.get("hourly_offers", [])),
            declared=_declared(card["declared_memory_source"], card["declared_memory_bytes"]),
            device_names=tuple(card["device_names"]),
            nominal_reference=_nominal_reference(card["nominal_memory_reference"]),
            readings_not_bounds=tuple(Reading(**r) for r in card["readings_not_bounds"]),
            price_search=_price_search(card.get("price_search")),
        )
        for card in raw["cards"]
    )


def card(card_id: str) -> Card:
    for candidate in load_catalog():
        if candidate.id == card_id:
            return candidate
    raise KeyError(f"no card {card_id!r} in the catalog")
