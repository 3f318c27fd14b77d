"""What the printed numbers reveal about the protocol that produced them.

An accuracy printed to four decimals from a single test set is ``100 * correct / n_test``
rounded; only some test-set sizes can produce every printed value of a row. SL2P says it
split each dataset 50/50, but its printed values are fractions of other test-set sizes.
"""

from __future__ import annotations

from collections.abc import Iterable

from fsbench.papers import PrintedTable


def consistent_test_sizes(values: Iterable[float], n_max: int, decimals: int = 4) -> list[int]:
    """Test-set sizes n <= n_max such that every value is 100 * c / n (for some integer c) when rounded."""
    values = list(values)
    tolerance = 0.5 * 10.0**-decimals + 1e-9
    sizes = []
    for n in range(1, n_max + 1):
        if all(abs(100.0 * round(v * n / 100.0) / n - v) <= tolerance for v in values):
            sizes.append(n)
    return sizes


def implied_test_sizes(tables: Iterable[PrintedTable], n_samples: dict[str, int]) -> dict[str, list[int]]:
    """Per dataset, the test-set sizes consistent with every printed cell of its rows in ``tables``."""
    values: dict[str, list[float]] = {}
    for table in tables:
        for cell in table.cells:
            values.setdefault(cell.dataset, []).append(cell.value)
    return {d: consistent_test_sizes(v, n_samples[d]) for d, v in values.items() if d in n_samples}
