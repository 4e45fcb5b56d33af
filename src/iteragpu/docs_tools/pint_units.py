"""pint's registry with exact `Fraction` magnitudes: the independent check of the units.

Built once, and only by the figure checker and the tests: pint takes most of a second to load,
which no command pays, and it is no dependency of the runtime package.
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache
from typing import Any

from iteragpu.docs_tools import require_extra

require_extra("pint")


@cache
def pint_registry() -> Any:
    """The registry: `Quantity(1, "yottabyte").to("byte").magnitude == 10**24` exactly."""
    import pint

    return pint.UnitRegistry(non_int_type=Fraction)
