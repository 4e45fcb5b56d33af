"""The lab's tests run in the source language unless they ask for another: the machine's locale
(LANG=id_ID.UTF-8 on a developer's laptop) must not change what `mm.main` prints in-process."""

from __future__ import annotations

import pytest
from lab_support import LOCALE_VARIABLES


@pytest.fixture(autouse=True)
def source_language_locale(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in LOCALE_VARIABLES:
        monkeypatch.delenv(name, raising=False)
