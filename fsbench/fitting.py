"""Fitting a selector: a built-in or a user's, cached by its inputs and code, within a time limit."""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import inspect
import json
import signal
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from fsbench.errors import FsbenchError
from fsbench.experiment import SelectorConfig
from fsbench.selectors import get_selector, selector_code
from fsbench.store import load_ranking, save_ranking


class FitTimeout(Exception):
    """A selector's fit ran past its ``timeout``."""


@contextlib.contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise FitTimeout in the block after ``seconds`` (None: no limit).

    A POSIX interval timer (SIGALRM) in the main thread, where joblib's workers run tasks; the
    exception is raised when the interpreter next runs Python code, so a single long call into
    compiled code (a BLAS routine, LIBSVM) is stopped when it returns.
    """
    if seconds is None:
        yield
        return
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        raise FsbenchError("A selector's timeout needs a POSIX system and the main thread; remove 'timeout'.")

    def expire(signum: int, frame: Any) -> None:
        raise FitTimeout(f"the fit ran past its timeout of {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def selector_identity(sel: SelectorConfig) -> str:
    """The code identity recorded in a selector's rows: :func:`fsbench.selectors.selector_code` for a
    built-in, :func:`fsbench.plugins.plugin_code` for a user's selector."""
    return _selector_source(sel.name, sel.kind)[1]


def _selector_source(name: str, kind: str) -> tuple[Callable[..., Any], str, bool]:
    """How to build a selector: (build(params, k_max, seed), its code identity, whether it takes a seed)."""
    if kind == "builtin":
        cls = get_selector(name).cls
        uses_seed = "random_state" in inspect.signature(cls.__init__).parameters

        def build(params: dict[str, Any], k_max: int, seed: int | None) -> Any:
            return cls(n_features_to_select=k_max, **params, **({"random_state": seed} if uses_seed else {}))

        return build, selector_code(name), uses_seed
    from fsbench.plugins import build_selector, plugin_code, resolve, uses_random_state

    spec = resolve(class_path=name) if kind == "class" else resolve(score_func=name)
    code = plugin_code(spec)
    module = inspect.getmodule(inspect.unwrap(spec.obj))
    if _user_module(module) and _PLUGIN_LOADED.get(module.__name__) != code:
        # The module in memory may predate an edit of its file (a worker or notebook that imported
        # it before): fits must run the code the rows will name, so import the file again.
        importlib.reload(module)
        spec = resolve(class_path=name) if kind == "class" else resolve(score_func=name)
        code = plugin_code(spec)
        _PLUGIN_LOADED[module.__name__] = code

    def build_plugin(params: dict[str, Any], k_max: int, seed: int | None) -> Any:
        return build_selector(spec, params, n_features_to_select=k_max, random_state=seed)

    return build_plugin, code, uses_random_state(spec)


_PLUGIN_LOADED: dict[str, str] = {}


def _user_module(module: Any) -> bool:
    """A module from a user's source file (not an installed library, whose code its version names)."""
    file = getattr(module, "__file__", None)
    return file is not None and not {"site-packages", "dist-packages"} & set(Path(file).parts)


def ranking_key(name: str, params: dict[str, Any], X: np.ndarray, y: np.ndarray, seed: int | None,
                code: str | None = None) -> str:
    """Cache key of a ranking: a hash of everything it depends on, the selector's code included."""
    h = hashlib.sha256()
    h.update(json.dumps([code or selector_code(name), name, params, seed, X.shape], sort_keys=True,
                        default=repr).encode())
    h.update(np.ascontiguousarray(X, dtype=np.float64).tobytes())
    h.update(np.ascontiguousarray(y, dtype=np.int64).tobytes())
    return h.hexdigest()[:32]


def fit_selector(
    name: str, params: dict[str, Any], X: np.ndarray, y: np.ndarray, seed: int, k_max: int, cache: Path | None,
    *, kind: str = "builtin", timeout: float | None = None,
) -> dict[str, Any]:
    """Fit a selector (or take its ranking from the cache): a registered one, or a user's (``kind``
    ``class`` or ``score_func``, ``name`` its import path), stopped after ``timeout`` seconds.

    Returns ranking, scores, fit_seconds, n_iter, diagnostics, the warnings it raised and, for
    selectors with ``objective_``, that trace as "objective" (also in the cache).
    """
    build, code, uses_seed = _selector_source(name, kind)
    seed_arg = seed if uses_seed else None
    key = ranking_key(name, params, X, y, seed_arg, code)
    if cache is not None and (hit := load_ranking(cache, key)) is not None:
        return hit
    selector = build(params, k_max, seed_arg)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        with time_limit(timeout):
            selector.fit(X, y)
        seconds = time.perf_counter() - t0
    ranking = np.asarray(selector.ranking_, dtype=np.int64)
    if ranking.shape != (X.shape[1],) or not np.array_equal(np.sort(ranking), np.arange(X.shape[1])):
        raise RuntimeError(f"selector {name!r} returned a ranking that is not a permutation of the features")
    messages = sorted({str(w.message).split("\n")[0] for w in caught
                       if not issubclass(w.category, DeprecationWarning)})
    diagnostics = {k: (v.item() if isinstance(v, np.generic) else v)
                   for k, v in getattr(selector, "diagnostics_", {}).items()}
    meta = {"fit_seconds": seconds, "n_iter": int(getattr(selector, "n_iter_", 0) or 0),
            "diagnostics": diagnostics, "warnings": messages}
    if hasattr(selector, "objective_"):
        # kept with the ranking so that the objective figures reuse this fit (fsbench.traces)
        meta["objective"] = np.asarray(selector.objective_, dtype=float).ravel().tolist()
    if cache is not None:
        save_ranking(cache, key, ranking, np.asarray(selector.scores_, dtype=float), meta)
    return {"ranking": ranking, "scores": np.asarray(selector.scores_, dtype=float), **meta}
