from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "site"
LANGS = ("ko", "id")


@pytest.fixture(scope="session")
def site() -> Path:
    """The built site (`nox -s site` builds it before running these tests)."""
    if not (SITE / "ko" / "index.html").exists() or not (SITE / "id" / "index.html").exists():
        pytest.fail("site/ is not built: run `nox -s site` (or `nox -s docs` first)")
    return SITE
