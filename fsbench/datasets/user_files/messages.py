"""The wording of the readers' one-sentence :class:`fsbench.errors.DataError` messages: the file,
its problem and the fix, the settings a fix names (a config's ``label:`` or the command line's
``--label``), and small phrases (counts, quoted lists, an exception's reason).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from fsbench.errors import DataError

__all__ = ["CONFIG_OPTIONS", "count", "fail", "format_bytes", "option", "options_named", "quote_list", "reason",
           "too_few"]

#: how messages name the settings that choose what to read: a config's keys by default, the
#: command line's options for ``fsbench datasets info`` (a fix must name what the user can set)
CONFIG_OPTIONS: Mapping[str, str] = {"label": "label:", "x": "x:", "y": "y:"}
_OPTIONS: ContextVar[Mapping[str, str]] = ContextVar("fsbench_data_options", default=CONFIG_OPTIONS)


@contextmanager
def options_named(names: Mapping[str, str] | None) -> Iterator[None]:
    """Messages raised inside name the settings ``names`` gives (``{"label": "--label", ...}``)."""
    token = _OPTIONS.set({**CONFIG_OPTIONS, **(names or {})})
    try:
        yield
    finally:
        _OPTIONS.reset(token)


def option(key: str) -> str:
    """The setting ``key`` (label, x, y) as messages name it now: ``label:`` or ``--label``."""
    return _OPTIONS.get()[key]


def fail(where: str, problem: str) -> DataError:
    """The DataError "``where`` ``problem``." (the problem is a clause that ends with its fix)."""
    return DataError(f"{where} {problem}.")


def reason(exc: BaseException) -> str:
    """An exception as a short parenthetical: its type and its first 160 characters of text."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:160]}" if text else type(exc).__name__


def count(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless ``n`` is 1: "1 sample", "3 samples"."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def too_few(where: str, n: int) -> DataError:
    """The DataError for a file of fewer than 2 samples."""
    return fail(where, f"has {count(n, 'sample')}; fsbench needs at least 2, one per row")


def quote_list(names: Sequence[Any], *, limit: int = 5) -> str:
    """``names`` quoted and joined by commas, the middle elided past ``limit`` + 1 names."""
    shown = [repr(str(n)) for n in names[:limit]]
    if len(names) > limit + 1:
        return f"{', '.join(shown)}, ... {repr(str(names[-1]))}"
    return ", ".join(repr(str(n)) for n in names)


def format_bytes(n: float) -> str:
    """A size in decimal units, one decimal: "16.0 GB", "48.3 MB", "512 B"."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{int(n)} B"
