from __future__ import annotations

import pint
import pytest


@pytest.fixture(scope="session")
def ureg() -> pint.UnitRegistry:
    """pint's own registry: the independent check of the units module."""
    return pint.UnitRegistry()


@pytest.fixture(autouse=True)
def _no_reader_locale(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run every test under the C locale: the CLI and the lab take their default language from
    LANGUAGE, LC_ALL, LC_MESSAGES and LANG, which a developer's shell sets; tests that mean a
    language say `--lang` or set these themselves."""
    for variable in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("LANG", "C.UTF-8")
