"""Read a lab `measure` result (IteraGPU Lab v1 JSON) as evidence about one card model."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class EvidenceError(ValueError):
    """A file that is not a readable lab result."""


@dataclass(frozen=True)
class Evidence:
    path: Path
    device_name: str
    reported_capacity_bytes: int | None  # total memory the device reported (not the nominal GB)
    observed_reserved_peak_bytes: int | None  # highest reserved peak of any phase, if read
    succeeded: bool
    out_of_memory: bool
    failed_phase: str | None

    def is_for(self, card_name: str) -> bool:
        """Whether this run was on the catalog card `card_name` (e.g. `RTX 4090`)."""
        return card_name.casefold() in self.device_name.casefold()


def read_evidence(path: Path) -> Evidence:
    try:
        result = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        raise EvidenceError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise EvidenceError(f"{path}: not a JSON lab result ({error})") from None
    try:
        return _evidence(path, result)
    except (KeyError, TypeError, ValueError, IndexError) as error:
        raise EvidenceError(f"{path}: not an IteraGPU Lab measure result ({error})") from None


def _evidence(path: Path, result: dict[str, Any]) -> Evidence:
    if result["tool"]["name"] != "mesure_memoire.py":
        raise ValueError("not written by mesure_memoire.py")
    index = int(str(result["device"]).partition(":")[2] or 0)
    device = next(d for d in result["environment"]["devices"] if d["index"] == index)
    peaks = [
        phase["peak_reserved_bytes"]
        for phase in result["phases"]
        if phase.get("peak_reserved_bytes") is not None
    ]
    outcome = result["outcome"]
    out_of_memory = any(
        (phase.get("error") or {}).get("out_of_memory") is True for phase in result["phases"]
    )
    return Evidence(
        path=path,
        device_name=device["name"] or "",
        reported_capacity_bytes=device["total_memory_bytes"],
        observed_reserved_peak_bytes=max(peaks) if peaks else None,
        succeeded=outcome["status"] == "ok",
        out_of_memory=out_of_memory,
        failed_phase=outcome["failed_phase"],
    )
