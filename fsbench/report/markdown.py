"""Number and table formatting shared by the generated markdown (REPORT.md and its sections)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any


def num(value: Any, fmt: str = ".2f", signed: bool = False) -> str:
    """``value`` formatted, "n/a" for None or NaN."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return format(value, ("+" if signed else "") + fmt)


def pvalue(p: float | None) -> str:
    """A p-value to four decimals, "< 0.0001" below that, "n/a" for None or NaN."""
    if p is None or math.isnan(p):
        return "n/a"
    return "< 0.0001" if p < 1e-4 else f"{p:.4f}"


def share(part: int, whole: int) -> str:
    """"part/whole (percent%)", "n/a" when whole is 0."""
    return f"{part}/{whole} ({100.0 * part / whole:.0f}%)" if whole else "n/a"


def md_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[str]:
    """The lines of a markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return lines


def hours(seconds: float) -> str:
    return f"{seconds:.0f} s ({seconds / 3600:.2f} h)"
