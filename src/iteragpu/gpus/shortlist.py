"""The short list: every candidate card under the same requirements, with a status per requirement.

Statuses follow the sizing guide: `fit` (evidence confirms it within its scope), `check_needed`
(no evidence yet) and `excluded` (an established failure). Only candidates whose requirements
are all `fit` get a rank: by total package cost, then effective margin (largest first), then
documented timeline. Candidates that still need checks follow without a rank, in review order:
first the cards whose capacity on paper holds the need (margin on paper 0 or more), then the
others (a negative margin on paper, or none known); within each group by the ranking's keys as
far as they are known on paper (package cost for the period, cards without a package last, then
the margin on paper, largest first, then catalogue order). That order helps the reader review
them; it is not a rank. Then the excluded ones with the reason. A preference never offsets an
exclusion.

The need is one GPU's, the fullest (`iteragpu.gpus.need`): everything the sizing computed.
When parts of it are still to measure (`need_missing`: the activations, a forward pass's or a
training step's temporary buffers), it is a lower bound: an exclusion on paper stands (the
known part already exceeds the card), a margin on paper is at most its figure, and a card
"holds the need on paper" only as far as the need is known.

Memory, for one card, by the first rule that applies:

1. Lab runs on that card model (`evidence`). A run that succeeded with a reserved peak at least
   the need, and that peak plus the margin within the capacity the device reported, makes it
   `fit`. An out-of-memory run at a peak at or below the need makes it `excluded`. Runs that
   disagree leave it `check_needed`.
2. The declared capacity: a need above what the device declares (plus the rounding of that
   figure) cannot fit, so `excluded`.
3. Without a declared capacity, the nominal figure read in binary units: a need above N GB
   read as N GiB (N x 2^30 B, the most generous reading of "N GB") cannot fit on any card sold
   as N GB, so `excluded`. A declared capacity, where known, is the device's own figure and
   speaks instead.
4. Otherwise `check_needed`, with the reason of the first run, or of the nominal figure. Below
   that bound the nominal figure neither excludes nor proves: read as decimal GB it is a
   convention, not the card's memory.

The margin on paper is the declared capacity minus the need when the device's declared figure
is known, else the nominal figure read as decimal GB minus the need (rounded down to a byte;
negative when the need is above it): a figure for review, labelled with its basis, never
evidence.

An out-of-memory run at a peak above the need leaves memory `check_needed`: the card held more
than the need before failing, which is neither a failure nor a success of the need's load.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from enum import StrEnum
from fractions import Fraction

from iteragpu.core.numbers import InputError
from iteragpu.core.units import from_unit
from iteragpu.gpus.catalog import Card, RentalPackage, load_catalog
from iteragpu.gpus.evidence import Evidence


class Status(StrEnum):
    FIT = "fit"
    CHECK_NEEDED = "check_needed"
    EXCLUDED = "excluded"


BUILT_IN_REQUIREMENTS = ("memory", "package")
STATUS_ORDER = {Status.FIT: 0, Status.CHECK_NEEDED: 1, Status.EXCLUDED: 2}


@dataclass(frozen=True)
class Requirement:
    """One requirement's status for one card, with a stable reason code and its values.

    `detail` holds the evidence path under `evidence` and byte counts under `*_bytes` keys.
    """

    name: str
    status: Status
    reason: str
    detail: Mapping[str, str | int]


@dataclass(frozen=True)
class Candidate:
    card: Card
    package: RentalPackage | None
    need_bytes: Fraction
    requirements: tuple[Requirement, ...]
    effective_margin_bytes: int | None = None  # capacity minus peak of the run that fits
    rank: int | None = None  # only when every requirement is fit
    # Capacity on paper minus the need, rounded down to a byte, and which capacity: "declared"
    # or "nominal" (decimal GB); None when the catalogue has neither figure.
    paper_margin_bytes: int | None = None
    paper_basis: str | None = None
    # The parts of the need still to measure (iteragpu.gpus.need): none when it is complete;
    # else `need_bytes` is a lower bound and `paper_margin_bytes` an upper bound.
    need_missing: tuple[str, ...] = ()

    @property
    def need_complete(self) -> bool:
        return not self.need_missing

    @property
    def holds_need_on_paper(self) -> bool:
        """The capacity on paper (declared, else nominal as decimal GB) is at least the need:
        the first group of the review order. Not evidence."""
        return self.paper_margin_bytes is not None and self.paper_margin_bytes >= 0

    @property
    def status(self) -> Status:
        return max((r.status for r in self.requirements), key=STATUS_ORDER.__getitem__)

    @property
    def cost(self) -> Decimal | None:
        return None if self.package is None else self.package.price

    @property
    def currency(self) -> str | None:
        return None if self.package is None else self.package.currency


def _requirement(status: Status, reason: str, **detail: str | int | None) -> Requirement:
    kept = {key: value for key, value in detail.items() if value is not None}
    return Requirement("memory", status, reason, kept)


def _run_verdict(run: Evidence, need_bytes: Fraction, margin_bytes: Fraction) -> Requirement:
    """What one lab run on the card says about the need."""
    peak, capacity = run.observed_reserved_peak_bytes, run.reported_capacity_bytes
    values = {
        "evidence": str(run.path),
        "peak_reserved_bytes": peak,
        "reported_capacity_bytes": capacity,
    }
    if not run.complete_readings:
        # An unread counter may hide a higher peak: neither bound below can be trusted.
        return _requirement(Status.CHECK_NEEDED, "evidence_readings_incomplete", **values)
    if peak is None:
        return _requirement(Status.CHECK_NEEDED, "evidence_peak_unknown", **values)
    if run.out_of_memory:
        if peak <= need_bytes:
            return _requirement(Status.EXCLUDED, "evidence_out_of_memory", **values)
        return _requirement(Status.CHECK_NEEDED, "evidence_out_of_memory_above_need", **values)
    if not run.succeeded:
        return _requirement(Status.CHECK_NEEDED, "evidence_not_completed", **values)
    if peak < need_bytes:
        return _requirement(Status.CHECK_NEEDED, "evidence_below_need", **values)
    if capacity is None:
        return _requirement(Status.CHECK_NEEDED, "evidence_capacity_unknown", **values)
    if peak + margin_bytes > capacity:
        return _requirement(
            Status.CHECK_NEEDED,
            "evidence_margin_not_met",
            margin_bytes=math.ceil(margin_bytes),  # a margin in GiB rounded up to a byte
            **values,
        )
    return _requirement(Status.FIT, "evidence_fits", **values)


def _without_evidence(card: Card, need_bytes: Fraction) -> Requirement:
    nominal = card.nominal_memory_bytes
    declared = card.declared_memory_bytes
    nominal_bytes = None if nominal is None else int(nominal)
    if nominal is None:
        return _requirement(Status.CHECK_NEEDED, "nominal_unknown", declared_memory_bytes=declared)
    if need_bytes <= nominal:
        return _requirement(
            Status.CHECK_NEEDED, "nominal_not_proof", nominal_memory_bytes=nominal_bytes
        )
    reason = (
        "above_nominal_declared_unknown" if declared is None else "above_nominal_within_declared"
    )
    return _requirement(
        Status.CHECK_NEEDED,
        reason,
        nominal_memory_bytes=nominal_bytes,
        declared_memory_bytes=declared,
    )


def _memory(
    card: Card, need_bytes: Fraction, margin_bytes: Fraction, evidence: Sequence[Evidence]
) -> Requirement:
    verdicts = [
        _run_verdict(run, need_bytes, margin_bytes)
        for run in evidence
        if card.is_device(run.device_name)
    ]
    decisive = [v for v in verdicts if v.status is not Status.CHECK_NEEDED]
    if {v.status for v in decisive} == {Status.FIT, Status.EXCLUDED}:
        paths = ", ".join(str(v.detail["evidence"]) for v in decisive)
        return _requirement(Status.CHECK_NEEDED, "evidence_conflict", evidence=paths)
    if decisive:
        # Of several runs that fit, the one that left the least room speaks for the card.
        return min(decisive, key=_effective_margin)
    declared = card.declared
    if declared is not None and need_bytes > declared.bound_bytes:
        return _requirement(
            Status.EXCLUDED, "declared_below_need", declared_memory_bytes=declared.bytes
        )
    binary = card.nominal_binary_bytes
    if declared is None and binary is not None and need_bytes > binary:
        return _requirement(
            Status.EXCLUDED,
            "above_nominal_binary",
            nominal_memory_bytes=binary // 2**30 * 10**9,  # N GB read as decimal GB
            nominal_binary_bytes=binary,
        )
    return verdicts[0] if verdicts else _without_evidence(card, need_bytes)


def _effective_margin(requirement: Requirement) -> int:
    """Reported capacity minus observed peak of a run whose both figures are known, else 0."""
    capacity = requirement.detail.get("reported_capacity_bytes")
    peak = requirement.detail.get("peak_reserved_bytes")
    if isinstance(capacity, int) and isinstance(peak, int):
        return capacity - peak
    return 0


def _paper_margin(card: Card, need_bytes: Fraction) -> tuple[int | None, str | None]:
    """The margin on paper and its basis: the declared capacity, else the nominal figure."""
    if card.declared_memory_bytes is not None:
        return math.floor(card.declared_memory_bytes - need_bytes), "declared"
    nominal = card.nominal_memory_bytes
    if nominal is not None:
        return math.floor(nominal - need_bytes), "nominal"
    return None, None


def _package(card: Card, days: int, cards: int) -> tuple[RentalPackage | None, Requirement]:
    """The card's package of `cards` cards for `days` days: a fixed-price package of exactly
    those days where the catalogue lists one (the offer made for that campaign, such as the
    sizing guide's), else the cheapest hourly offer for `cards` cards, priced as its instance's
    rate x 24 h x days (the first of equal prices, in catalogue order)."""
    for package in card.fixed_packages:
        if package.days == days and package.cards == cards:
            return package, Requirement("package", Status.FIT, "package_listed", {})
    hourly = [offer.package(days) for offer in card.offers if offer.cards == cards]
    if hourly:
        cheapest = min(hourly, key=lambda package: package.price)
        return cheapest, Requirement("package", Status.FIT, "package_listed", {})
    return None, Requirement("package", Status.CHECK_NEEDED, "package_missing", {})


def _rank_key(candidate: Candidate) -> tuple[Decimal, int, int, str]:
    # Every requirement of a ranked candidate is fit: its package and its fitting run are known.
    package, margin = candidate.package, candidate.effective_margin_bytes
    if package is None or margin is None:
        raise ValueError(f"{candidate.card.id} is not fit and cannot be ranked")
    return (package.price, -margin, package.days, candidate.card.name)


def _review_key(candidate: Candidate) -> tuple[bool, bool, Decimal, bool, int]:
    """The cards whose capacity on paper holds the need first; then, in each group, the
    ranking's keys as far as paper knows them: cost (no package last), then the margin on paper
    (largest first, unknown last). `sorted` is stable: ties keep catalogue order."""
    package, margin = candidate.package, candidate.paper_margin_bytes
    return (
        not candidate.holds_need_on_paper,
        package is None,
        Decimal(0) if package is None else package.price,
        margin is None,
        0 if margin is None else -margin,
    )


def _ordered(candidates: Sequence[Candidate]) -> list[Candidate]:
    """Ranked fit candidates, then those to review in review order (those that hold the need
    on paper first), then the excluded in catalogue order."""
    fit = sorted((c for c in candidates if c.status is Status.FIT), key=_rank_key)
    to_review = sorted((c for c in candidates if c.status is Status.CHECK_NEEDED), key=_review_key)
    excluded = [c for c in candidates if c.status is Status.EXCLUDED]
    ranked = [replace(c, rank=rank) for rank, c in enumerate(fit, 1)]
    return ranked + to_review + excluded


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
    need_missing: Iterable[str] = (),
) -> list[Candidate]:
    """Every catalog card for a need in GiB over `days` on `cards` cards, ranked where fit.

    `requirements` are other stated requirements (context, software...): `check_needed` for a
    card unless `confirmed` or `failed` holds a (card id, requirement) pair for it. Each run of
    `evidence` must be on a card model of the catalog. `need_missing` names the parts of the
    need still to measure (`iteragpu.gpus.need`): the need is then a lower bound, which every
    candidate records.
    """
    if need_gib <= 0 or days <= 0 or cards <= 0 or margin_gib < 0:
        raise ValueError("need, days and cards must be positive and the margin not negative")
    for name in requirements:
        if name in BUILT_IN_REQUIREMENTS:
            raise InputError(
                "{requirement} is always assessed; state other requirements",
                "built_in_requirement",
                requirement=repr(name),
            )
    need_bytes = from_unit(need_gib, "GiB")
    margin_bytes = from_unit(margin_gib, "GiB")
    confirmed_pairs, failed_pairs = set(confirmed), set(failed)
    missing = tuple(dict.fromkeys(need_missing))
    stated = list(dict.fromkeys(requirements))
    catalog_cards = load_catalog() if catalog is None else catalog
    known = {c.id for c in catalog_cards}
    for card_id, _ in confirmed_pairs | failed_pairs:
        if card_id not in known:
            raise InputError(
                "no card {card} in the catalog; known: {known}",
                "unknown_card",
                card=repr(card_id),
                known=", ".join(sorted(known)),
            )
    for run in evidence:
        if not any(card.is_device(run.device_name) for card in catalog_cards):
            raise InputError(
                "{path}: device {device} is no card of the catalog ({names})",
                "unknown_device",
                path=str(run.path),
                device=repr(run.device_name),
                names=", ".join(repr(n) for card in catalog_cards for n in card.device_names),
            )
    candidates = []
    for card in catalog_cards:
        package, package_status = _package(card, days, cards)
        memory = _memory(card, need_bytes, margin_bytes, evidence)
        statuses = [memory, package_status]
        for name in stated:
            if (card.id, name) in failed_pairs:
                statuses.append(Requirement(name, Status.EXCLUDED, "user_failed", {}))
            elif (card.id, name) in confirmed_pairs:
                statuses.append(Requirement(name, Status.FIT, "user_confirmed", {}))
            else:
                statuses.append(Requirement(name, Status.CHECK_NEEDED, "no_evidence", {}))
        margin = _effective_margin(memory) if memory.status is Status.FIT else None
        paper_margin, basis = _paper_margin(card, need_bytes)
        candidates.append(
            Candidate(
                card,
                package,
                need_bytes,
                tuple(statuses),
                margin,
                None,
                paper_margin,
                basis,
                missing,
            )
        )
    return _ordered(candidates)
