"""The GPU catalog: nominal capacities as catalogues state them (decimal GB) and rental packages."""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from functools import cache
from importlib import resources

from iteragpu.units import from_unit


@dataclass(frozen=True)
class RentalPackage:
    cards: int
    days: int
    price: Decimal
    currency: str
    price_date: str | None
    source: str


@dataclass(frozen=True)
class Card:
    id: str
    name: str
    nominal_memory_gb: int | None
    nominal_memory_source: str
    packages: tuple[RentalPackage, ...]

    @property
    def nominal_memory_bytes(self) -> Fraction | None:
        """Nominal capacity in bytes: what the catalogue says, not what a process can allocate."""
        if self.nominal_memory_gb is None:
            return None
        return from_unit(self.nominal_memory_gb, "GB")


@cache
def load_catalog() -> tuple[Card, ...]:
    """The cards of `data/gpu_catalog.json`, in file order."""
    text = resources.files("iteragpu").joinpath("data/gpu_catalog.json").read_text("utf-8")
    raw = json.loads(text)
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
                )
                for p in card["packages"]
            ),
        )
        for card in raw["cards"]
    )


def card(card_id: str) -> Card:
    for candidate in load_catalog():
        if candidate.id == card_id:
            return candidate
    raise KeyError(f"no card {card_id!r} in the catalog")
