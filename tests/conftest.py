from __future__ import annotations

import pint
import pytest


@pytest.fixture(scope="session")
def ureg() -> pint.UnitRegistry:
    """pint's own registry: the independent check of the units module."""
    return pint.UnitRegistry()
