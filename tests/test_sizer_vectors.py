"""The sizer's test vectors come from the same core as the CLI and the registry."""

from __future__ import annotations

from iteragpu.examples import figure
from iteragpu.formatting import format_number
from iteragpu.sizer_vectors import CASES, DEFAULT_QUERY, expected, vectors


def test_defaults_reproduce_the_guides_worked_examples() -> None:
    default = expected({})
    assert default["valid"]
    assert default["total_bytes"] == str(
        int(figure("weights-7b-16bit-reserve-6gib.total_gib").exact_bytes or 0)
    )
    for lang in ("ko", "id"):
        texts = default["text"][lang]
        total = figure("weights-7b-16bit-reserve-6gib.total_gib")
        assert texts["range-gib"] == format_number(total.value, 2, lang)
        kv = figure("kv-cache-1-sequence.kv_cache_bytes")
        assert texts["kv-bytes"] == format_number(kv.value, 0, lang)
    assert [c["card_id"] for c in default["candidates"]] == ["rtx-4090", "rtx-6000-ada"]


def test_invalid_queries_are_flagged_not_computed() -> None:
    for query in ({"params": "-7e9"}, {"bits": "nan"}, {"task": "dreaming"}, {"params": "0"}):
        result = expected(query)
        assert result == {"valid": False, "error": result["error"]}
        assert result["error"]


def test_vectors_cover_every_case_and_each_input() -> None:
    data = vectors()
    assert len(data["cases"]) == len(CASES)
    varied = {key for case in CASES for key in case}
    assert varied >= set(DEFAULT_QUERY) - {"window"} | {"window"}
    assert sum(1 for c in data["cases"] if c["expected"]["valid"]) >= 10
    fractional = expected({"bits": "4.5", "reserve_gib": "0"})
    assert "/" not in fractional["weights_bytes"]  # 7e9 x 4.5 / 8 is a whole number of bytes
    assert expected({"params": "13000000001", "bits": "3"})["weights_bytes"].endswith("/8")
