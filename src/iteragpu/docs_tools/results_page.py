"""What the results page (`results: true` in its front matter) embeds beside
`src/iteragpu/web/results.js`: the lab's result schema the browser checks files against, the
CLI's own words for `iteragpu report` in the page's language, and the example result offered for
a first look.

The example files, `web/results-example.<code>.json` (forward passes) and
`web/results-example-train.rank<R>.<code>.json` (a training run of two processes, each recorded by
the Recorder), are written by the lab on its test-only simulated backends
(`python tests/results_support.py --write`): synthetic counters, never a measurement, and the page
says so wherever an example appears. Their device's name says so too.

`python -m iteragpu.docs_tools.results_page LANG` prints the data (without Babel's symbols,
which docs/hooks.py adds as the sizer gets them).
"""

from __future__ import annotations

import json
import sys
from importlib import resources
from pathlib import Path
from typing import Any

from iteragpu.i18n.messages import message

WEB = Path(str(resources.files("iteragpu").joinpath("web")))
SCHEMA = Path(str(resources.files("iteragpu").joinpath("lab/result.schema.json")))
# The simulated device's name in each language's example: the label the page gives the example.
EXAMPLE_DEVICE = {
    "ko": "시뮬레이션 장치 (측정값이 아닌 예시 데이터)",
    "id": "perangkat simulasi, data contoh (bukan hasil pengukuran)",
}
# The CLI messages of `iteragpu report` the page says (iteragpu.i18n.messages), by key.
MESSAGE_KEYS = (
    "figure",
    "bytes_header",
    "report_phase",
    "report_counter",
    "counter_start_allocated_bytes",
    "counter_start_reserved_bytes",
    "counter_peak_allocated_bytes",
    "counter_peak_reserved_bytes",
    "counter_end_allocated_bytes",
    "counter_end_reserved_bytes",
    "not_measured",
    "phase_status_ok",
    "phase_status_failed",
    "phase_status_interrupted",
    "report_phase_error",
    "report_out_of_memory",
    "report_counters_unavailable",
    "report_estimate_recorded",
    "report_estimate_given",
    "report_estimated_weights",
    "report_model_load_allocated",
    "report_difference_row",
    "report_share",
    "explain_rounding",
    "explain_rounding_not_attributable",
    "explain_unexplained",
    "explain_not_measured",
    "explain_segments",
    "explain_context",
    "explain_cublas",
    # lab schema 1.3.0: the training step, the parts, several processes
    "report_task_line",
    "report_parts_title",
    "part_parameters",
    "part_gradients",
    "part_optimizer_state",
    "part_activations",
    "part_peak_excess",
    "report_steps_title",
    "report_first_step",
    "report_warm_steps",
    "report_no_network",
    "report_train_title",
    "report_train_fused",
    "report_estimated",
    "report_counted",
    "report_difference",
    "not_counted",
    "train_item_gradients",
    "train_item_optimizer_gpu",
    "train_item_optimizer_host",
    "train_item_master_weights",
    "train_item_master_gradients",
    "report_train_no_groups",
    "report_train_no_phase",
    "report_highest_peak",
    "report_highest_peak_none",
)
# The training example: one file per process of a two-process run.
TRAIN_RANKS = (0, 1)


def example_path(lang: str) -> Path:
    return WEB / f"results-example.{lang}.json"


def train_example_path(lang: str, rank: int) -> Path:
    return WEB / f"results-example-train.rank{rank}.{lang}.json"


def results_data(lang: str) -> dict[str, Any]:
    """The page's data for `lang`, less the number symbols."""
    return {
        "lang": lang,
        "schema": json.loads(SCHEMA.read_text("utf-8")),
        "messages": {key: message(key, lang) for key in MESSAGE_KEYS},
        "example": example_path(lang).read_text("utf-8"),
        "example_name": example_path(lang).name,
        "example_train": [train_example_path(lang, r).read_text("utf-8") for r in TRAIN_RANKS],
        "example_train_names": [train_example_path(lang, r).name for r in TRAIN_RANKS],
    }


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m iteragpu.docs_tools.results_page LANG")
    json.dump(results_data(sys.argv[1]), sys.stdout, ensure_ascii=False, indent=1)
    sys.stdout.write("\n")
