"""The short list: every candidate card under the same requirements, with a status per requirement.

Statuses follow the sizing guide: `fit` (evidence confirms it within its scope), `check_needed`
(no evidence yet) and `excluded` (an established failure). Only candidates whose requirements
are all met are kept ahead; the rest follow, ranked by total package cost, effective margin and
documented timeline. A preference never offsets an exclusion: an excluded card ranks last.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from fractions import Fraction

from iteragpu.catalog import Card, RentalPackage, load_catalog
from iteragpu.evidence import Evidence
from iteragpu.units import from_unit, gib


class Status(StrEnum):
    FIT = "fit"
    CHECK_NEEDED = "check_needed"
    EXCLUDED = "excluded"


BUILT_IN_REQUIREMENTS = ("memory", "package")
STATUS_ORDER = {Status.FIT: 0, Status.CHECK_NEEDED: 1, Status.EXCLUDED: 2}


@dataclass(frozen=True)
class Requirement:
    """One requirement's status for one card, with the reason (a message key) and its values."""

    name: str
    status: Status
    reason: str
    detail: dict[str, str]


@dataclass(frozen=True)
class Candidate:
    card: Card
    package: RentalPackage | None
    need_bytes: Fraction
    requirements: tuple[Requirement, ...]

    @property
    def status(self) -> Status:
        return max((r.status for r in self.requirements), key=STATUS_ORDER.__getitem__)

    @property
    def nominal_gib(self) -> Fraction | None:
        nominal = self.card.nominal_memory_bytes
        return None if nominal is None else gib(nominal)

    @property
    def nominal_margin_gib(self) -> Fraction | None:
        """Nominal capacity minus the need: an upper bound, not the memory a process gets."""
        nominal = self.card.nominal_memory_bytes
        return None if nominal is None else gib(nominal - self.need_bytes)

    @property
    def cost(self) -> Decimal | None:
        return None if self.package is None else self.package.price

    @property
    def currency(self) -> str | None:
        return None if self.package is None else self.package.currency

    def rank_key(self) -> tuple[int, int, Decimal, Fraction, int, str]:
        margin = self.nominal_margin_gib
        return (
            STATUS_ORDER[self.status],
            self.cost is None,
            self.cost if self.cost is not None else Decimal(0),
            -(margin if margin is not None else Fraction(-(10**30))),
            self.package.days if self.package else 0,
            self.card.name,
        )


def _memory(
    card: Card, need_bytes: Fraction, margin_bytes: Fraction, evidence: Sequence[Evidence]
) -> Requirement:
    for run in (e for e in evidence if e.is_for(card.name)):
        source = {"evidence": str(run.path)}
        if run.out_of_memory:
            return Requirement("memory", Status.EXCLUDED, "evidence_out_of_memory", source)
        if run.succeeded and run.observed_reserved_peak_bytes is not None:
            capacity = run.reported_capacity_bytes
            if capacity is not None and run.observed_reserved_peak_bytes + margin_bytes <= capacity:
                return Requirement("memory", Status.FIT, "evidence_fits", source)
            return Requirement("memory", Status.CHECK_NEEDED, "evidence_margin_not_met", source)
    nominal = card.nominal_memory_bytes
    if nominal is None:
        return Requirement("memory", Status.CHECK_NEEDED, "nominal_unknown", {})
    if nominal < need_bytes:
        return Requirement("memory", Status.EXCLUDED, "nominal_below_need", {})
    return Requirement("memory", Status.CHECK_NEEDED, "nominal_not_proof", {})


def _package(card: Card, days: int, cards: int) -> tuple[RentalPackage | None, Requirement]:
    for package in card.packages:
        if package.days == days and package.cards == cards:
            return package, Requirement("package", Status.FIT, "package_listed", {})
    return None, Requirement("package", Status.CHECK_NEEDED, "package_missing", {})


def shortlist(
    need_gib: Fraction,
    days: int,
    *,
    cards: int = 1,
    margin_gib: Fraction = Fraction(0),
    requirements: Iterable[str] = (),
    confirmed: Iterable[tuple[str, str]] = (),
    failed: Iterable[tuple[str, str]] = (),
    evidence: Sequence[Evidence] = (),
    catalog: Sequence[Card] | None = None,
) -> list[Candidate]:
    """Rank every catalog card for a need in GiB over `days` on `cards` cards.

    `requirements` are other stated requirements (context, software...): `check_needed` for a
    card unless `confirmed` or `failed` holds a (card id, requirement) pair for it.
    """
    if need_gib <= 0 or days <= 0 or cards <= 0 or margin_gib < 0:
        raise ValueError("need, days and cards must be positive and the margin not negative")
    for name in requirements:
        if name in BUILT_IN_REQUIREMENTS:
            raise ValueError(f"{name!r} is always assessed; state other requirements")
    need_bytes = from_unit(need_gib, "GiB")
    margin_bytes = from_unit(margin_gib, "GiB")
    confirmed_pairs, failed_pairs = set(confirmed), set(failed)
    stated = list(dict.fromkeys(requirements))
    catalog_cards = load_catalog() if catalog is None else catalog
    known = {c.id for c in catalog_cards}
    for card_id, _ in confirmed_pairs | failed_pairs:
        if card_id not in known:
            raise ValueError(f"no card {card_id!r} in the catalog")
    candidates = []
    for card in catalog_cards:
        package, package_status = _package(card, days, cards)
        statuses = [_memory(card, need_bytes, margin_bytes, evidence), package_status]
        for name in stated:
            if (card.id, name) in failed_pairs:
                statuses.append(Requirement(name, Status.EXCLUDED, "user_failed", {}))
            elif (card.id, name) in confirmed_pairs:
                statuses.append(Requirement(name, Status.FIT, "user_confirmed", {}))
            else:
                statuses.append(Requirement(name, Status.CHECK_NEEDED, "no_evidence", {}))
        candidates.append(Candidate(card, package, need_bytes, tuple(statuses)))
    return sorted(candidates, key=Candidate.rank_key)
