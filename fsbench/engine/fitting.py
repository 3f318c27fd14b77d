"""Fitting a selector: a built-in or a user's, cached by its inputs and code, within a time limit.

A user's selector is fitted on its own copy of the data (:func:`fit_selector`): whatever its fit
writes into X or y (``X -= X.min(axis=0)`` before chi2, a common idiom) cannot reach the
evaluation, which uses the same arrays, nor another selector; a fit that did write is named in
the result's ``input_written`` and warnings. A built-in selector, fsbench's own code, is fitted
on read-only views instead (no copy, no comparison: a write is an error of its fit). A user's
selector prints to standard error (:func:`fsbench.plugins.output_to_stderr`), so fsbench's table
on standard output stays clean.

Sparse data (a ``scipy.sparse.csr_matrix`` X, from a file that stores it sparse): a built-in
selector that takes sparse input (``fsbench.selectors.accepts_sparse(name)``) is fitted by
``fsbench.selectors.fit_sparse(selector, X, y)`` on read-only views of X's ``data``, ``indices``
and ``indptr`` (:func:`fsbench.datasets.user_files.validation.read_only_sparse`), and its rows
record ``fsbench.selectors.sparse_code(name)``; any other built-in is fitted on the training part
densified (a read-only array the fit owns), and a user's selector on the training part densified
(its own copy, compared with X after the fit). Whether densifying fits under the limit
(:func:`fsbench.engine.data.dense_limit`) is checked before any task runs
(:func:`fsbench.engine.data.refuse_dense_over_limit`). The rankings cache keys a sparse X by its
format, shape, ``indptr``, ``indices`` and ``data``.
"""

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
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse

from fsbench.configuration.experiment import SelectorConfig
from fsbench.datasets.user_files.validation import read_only_sparse
from fsbench.errors import FsbenchError
from fsbench.selectors import get_selector, selector_code
from fsbench.storage.ranking_cache import load_ranking, save_ranking


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


def selector_identity(sel: SelectorConfig, sparse: bool = False) -> str:
    """The code identity recorded in a selector's rows: :func:`fsbench.selectors.selector_code` for a
    built-in (``fsbench.selectors.sparse_code`` for one fitted on sparse data through its sparse
    route: ``sparse`` and ``fsbench.selectors.accepts_sparse``), :func:`fsbench.plugins.plugin_code`
    for a user's selector."""
    return (_selector_source(sel.name, sel.kind, sparse) if sparse else _selector_source(sel.name, sel.kind))[1]


def sparse_route(name: str, kind: str) -> bool:
    """Whether selector ``name`` fits sparse data as it is: a built-in for which
    ``fsbench.selectors.accepts_sparse(name)``."""
    import fsbench.selectors

    return kind == "builtin" and bool(fsbench.selectors.accepts_sparse(name))


def _selector_source(name: str, kind: str, sparse: bool = False) -> tuple[Callable[..., Any], str, bool]:
    """How to build a selector: (build(params, k_max, seed), its code identity, whether it takes a seed);
    ``sparse``: for sparse data (the code identity of its sparse route, if it has one)."""
    if kind == "builtin":
        cls = get_selector(name).cls
        uses_seed = "random_state" in inspect.signature(cls.__init__).parameters

        def build(params: dict[str, Any], k_max: int, seed: int | None) -> Any:
            return cls(n_features_to_select=k_max, **params, **({"random_state": seed} if uses_seed else {}))

        if sparse and sparse_route(name, kind):
            import fsbench.selectors

            return build, fsbench.selectors.sparse_code(name), uses_seed
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


class _Deferred(threading.local):
    pending: list[tuple[Any, ...]] | None = None


_DEFERRED = _Deferred()


@contextlib.contextmanager
def deferred_cache_writes() -> Iterator[list[tuple[Any, ...]]]:
    """Within the block, fits keep their rankings-cache entries in the yielded list instead of
    writing them: a worker process returns them with its result and only the process holding the
    results folder's lock writes (:func:`write_cache_entries`), so a worker that outlives a killed
    run writes nothing. Reads of the cache are unaffected."""
    previous, _DEFERRED.pending = _DEFERRED.pending, []
    try:
        yield _DEFERRED.pending
    finally:
        _DEFERRED.pending = previous


def write_cache_entries(entries: Iterable[tuple[Any, ...]]) -> None:
    """Write rankings-cache entries a :func:`deferred_cache_writes` block collected."""
    for entry in entries:
        save_ranking(*entry)


def _user_module(module: Any) -> bool:
    """A module from a user's source file (not an installed library, whose code its version names)."""
    file = getattr(module, "__file__", None)
    return file is not None and not {"site-packages", "dist-packages"} & set(Path(file).parts)


def ranking_key(name: str, params: dict[str, Any], X: Any, y: np.ndarray, seed: int | None,
                code: str | None = None) -> str:
    """Cache key of a ranking: a hash of everything it depends on, the selector's code included. A
    sparse X counts by its format, shape, ``indptr``, ``indices`` and ``data`` (a dense X by its
    shape and values, as keys were computed before sparse data existed)."""
    h = hashlib.sha256()
    if scipy.sparse.issparse(X):
        h.update(json.dumps([code or selector_code(name), name, params, seed, X.shape, X.format],
                            sort_keys=True, default=repr).encode())
        for part, dtype in ((X.indptr, np.int64), (X.indices, np.int64), (X.data, np.float64)):
            h.update(np.ascontiguousarray(part, dtype=dtype).tobytes())
    else:
        h.update(json.dumps([code or selector_code(name), name, params, seed, X.shape], sort_keys=True,
                            default=repr).encode())
        h.update(np.ascontiguousarray(X, dtype=np.float64).tobytes())
    h.update(np.ascontiguousarray(y, dtype=np.int64).tobytes())
    return h.hexdigest()[:32]


def _unchanged(given: Any, seen: np.ndarray) -> bool:
    """Whether the fit's copy ``seen`` still holds what ``given`` holds (NaN equal to NaN); a sparse
    ``given`` is compared on its stored values and the count of non-zeros, never densified."""
    if scipy.sparse.issparse(given):
        if not isinstance(seen, np.ndarray) or seen.shape != given.shape:
            return False
        rows = np.repeat(np.arange(given.shape[0]), np.diff(given.indptr))
        return bool(np.count_nonzero(seen) == given.nnz
                    and np.array_equal(seen[rows, given.indices], given.data, equal_nan=True))
    return bool(np.array_equal(given, seen, equal_nan=given.dtype.kind in "fc"))


def _read_only(a: np.ndarray) -> np.ndarray:
    """A view of ``a`` that cannot be written through (``a`` itself stays writeable)."""
    view = a.view()
    view.flags.writeable = False
    return view


#: the words that mark, in a row's ``selector_warnings``, a fit that wrote into its input
INPUT_WRITTEN = "wrote into the training data it was given"


def input_written_warning(name: str, written: list[str]) -> str:
    """The warning recorded for a fit that wrote into its input (``written``: "X", "y")."""
    what = " and ".join(written)
    return (f"selector {name} {INPUT_WRITTEN} ({what}) while fitting; fsbench fits every selector on its own "
            f"copy, so no result is affected, but the selector should copy {what} before changing it")


def fit_selector(
    name: str, params: dict[str, Any], X: np.ndarray, y: np.ndarray, seed: int, k_max: int, cache: Path | None,
    *, kind: str = "builtin", timeout: float | None = None,
) -> dict[str, Any]:
    """Fit a selector (or take its ranking from the cache): a registered one, or a user's (``kind``
    ``class`` or ``score_func``, ``name`` its import path), stopped after ``timeout`` seconds.

    ``X`` and ``y`` are never changed: the caller evaluates the ranking on the same arrays, and a
    selector that edits its input in place would otherwise change what the classifiers are
    trained on. A user's selector is fitted on copies, compared with the originals after the fit:
    ``input_written`` lists what the fit changed ("X", "y"), also said in ``warnings``. A
    built-in is fitted on read-only views (a write raises ValueError; ``input_written`` is
    empty), which costs neither a copy of X nor a comparison. A user's selector's standard output
    goes to standard error during its fit.
    An exception of the fit (a user's selector whose output cannot rank: PluginError) propagates,
    ``SystemExit`` and ``KeyboardInterrupt`` included.

    Returns ranking, scores, fit_seconds, n_iter, diagnostics, the warnings it raised,
    input_written and, for selectors with ``objective_``, that trace as "objective" (also in the
    cache).
    """
    sparse = bool(scipy.sparse.issparse(X))
    build, code, uses_seed = _selector_source(name, kind, sparse) if sparse else _selector_source(name, kind)
    seed_arg = seed if uses_seed else None
    key = ranking_key(name, params, X, y, seed_arg, code)
    if cache is not None and (hit := load_ranking(cache, key)) is not None:
        hit.setdefault("input_written", [])  # cached before fsbench compared the input
        return hit
    selector = build(params, k_max, seed_arg)
    fit_sparse = sparse and sparse_route(name, kind)
    if kind == "builtin":
        if fit_sparse:
            X_fit: Any = read_only_sparse(X)
        else:  # densified (a dense-only built-in on sparse data), read-only as any built-in's input
            X_fit = _read_only(X.toarray() if sparse else X)
        y_fit = _read_only(y)
        output: contextlib.AbstractContextManager[Any] = contextlib.nullcontext()
    else:
        from fsbench.plugins import output_to_stderr

        X_fit = X.toarray() if sparse else np.array(X, copy=True, order="K")
        y_fit = np.array(y, copy=True, order="K")
        output = output_to_stderr()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        with output, time_limit(timeout):
            if fit_sparse:
                import fsbench.selectors

                selector = fsbench.selectors.fit_sparse(selector, X_fit, y_fit)
            else:
                selector.fit(X_fit, y_fit)
        seconds = time.perf_counter() - t0
    written = [] if kind == "builtin" else [label for label, given, seen in (("X", X, X_fit), ("y", y, y_fit))
                                            if not _unchanged(given, seen)]
    ranking = np.asarray(selector.ranking_, dtype=np.int64)
    if ranking.shape != (X.shape[1],) or not np.array_equal(np.sort(ranking), np.arange(X.shape[1])):
        raise RuntimeError(f"selector {name!r} returned a ranking that is not a permutation of the features")
    messages = sorted({str(w.message).split("\n")[0] for w in caught
                       if not issubclass(w.category, DeprecationWarning)})
    if written:
        messages.insert(0, input_written_warning(name, written))
    diagnostics = {k: (v.item() if isinstance(v, np.generic) else v)
                   for k, v in getattr(selector, "diagnostics_", {}).items()}
    meta = {"fit_seconds": seconds, "n_iter": int(getattr(selector, "n_iter_", 0) or 0),
            "diagnostics": diagnostics, "warnings": messages, "input_written": written}
    if hasattr(selector, "objective_"):
        # kept with the ranking so that the objective figures reuse this fit (fsbench.engine.traces)
        meta["objective"] = np.asarray(selector.objective_, dtype=float).ravel().tolist()
    if cache is not None:
        entry = (cache, key, ranking, np.asarray(selector.scores_, dtype=float), meta)
        if _DEFERRED.pending is not None:
            _DEFERRED.pending.append(entry)
        else:
            save_ranking(*entry)
    return {"ranking": ranking, "scores": np.asarray(selector.scores_, dtype=float), **meta}


def input_written_note(rows: Iterable[Mapping[str, Any]]) -> str | None:
    """The run's note naming the selectors whose fits wrote into their input, from the result
    rows' ``selector_warnings`` (:func:`input_written_warning`), with their number of tasks; None
    when no fit did. For the runner, which gathers notes in the main process while fits run in
    workers."""
    tasks: dict[str, set[tuple[Any, ...]]] = {}
    for row in rows:
        text = row.get("selector_warnings")
        if isinstance(text, str) and INPUT_WRITTEN in text:
            label = str(row.get("selector"))
            tasks.setdefault(label, set()).add((row.get("dataset"), row.get("repeat"), row.get("fold")))
    if not tasks:
        return None
    named = ", ".join(f"{label} ({len(ids)} task{'s' if len(ids) > 1 else ''})" for label, ids in sorted(tasks.items()))
    return (f"selectors that wrote into the training data they were given while fitting: {named}; fsbench fits every "
            "selector on its own copy, so no result is affected, but such a selector should copy its input before "
            "changing it (the rows' selector_warnings say so too)")
