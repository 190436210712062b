"""Numbers as a person reads them: three significant digits, never exponent notation."""

from __future__ import annotations

import math


def three_digits(value: float | None) -> str:
    """12345.6 -> '12,346'; 0.012345 -> '0.0123'; NaN or None -> '–'."""
    if value is None or not math.isfinite(float(value)):
        return "–"
    value = float(value)
    if value == 0:
        return "0"
    digits = max(0, 2 - int(math.floor(math.log10(abs(value)))))
    return f"{value:,.{digits}f}"
