"""A task: one selector fitted on one outer split of one dataset, its identity on disk, its data
and its selector's fit (shared by the runner and the regeneration of rankings, fsbench.engine.regenerate_rankings)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse

from fsbench.configuration.experiment import Experiment, SelectorConfig
from fsbench.engine.fitting import fit_selector
from fsbench.evaluation.protocol import Split, derive_seed, standardize
from fsbench.evaluation.sparse_scaling import scale_sparse


@dataclass(frozen=True)
class Task:
    dataset: str
    split: Split
    selector: SelectorConfig

    @property
    def id(self) -> str:
        """The task's file name: readable, and distinct for distinct tasks.

        Dataset and label are shortened to safe characters for reading; the hash of the exact
        (dataset, repeat, fold, label) keeps ids of labels like ``x/y`` and ``x_y`` (or ``A`` and
        ``a`` on a case-insensitive file system) apart.
        """
        exact = json.dumps([self.dataset, self.split.repeat, self.split.fold, self.selector.label])
        digest = hashlib.sha256(exact.encode()).hexdigest()[:12]
        return (f"{_readable(self.dataset)}__r{self.split.repeat:03d}f{self.split.fold:02d}__"
                f"{_readable(self.selector.label)}__{digest}")


def _readable(text: str) -> str:
    return "".join(ch if ch.isascii() and (ch.isalnum() or ch in "-.") else "_" for ch in text)[:48]


def selection_seed(experiment: Experiment, task: Task) -> int:
    """The seed of a task's selector fit (recorded as the row's ``seed``)."""
    if experiment.protocol.select_on == "all":
        return derive_seed(experiment.seed, "task", task.dataset, "all", task.selector.label)
    return derive_seed(experiment.seed, "task", task.dataset, task.split.repeat, task.split.fold,
                       task.selector.label)


@dataclass(frozen=True)
class TaskData:
    """A task's parts of the data, preprocessed as the experiment says, and its seeds. For a sparse
    dataset the X parts are CSR matrices scaled without centring (fsbench.evaluation.sparse_scaling)."""

    X_train: Any
    y_train: np.ndarray
    X_test: Any
    y_test: np.ndarray
    X_sel: Any  # what the selector is fitted on: the training part, or all data (select_on: all)
    y_sel: np.ndarray
    eval_seed: int  # inner folds and classifier seeds: the split's, the same for every selector
    sel_seed: int  # the selector's fit (selection_seed)

    @property
    def sparse(self) -> bool:
        return bool(scipy.sparse.issparse(self.X_train))


def task_data(experiment: Experiment, task: Task, X: Any, y: np.ndarray) -> TaskData:
    """Split and standardize a dataset ``(X, y)`` for ``task`` (fsbench.evaluation.protocol's steps 1-2).

    A sparse X (scipy) is scaled without centring by :func:`fsbench.evaluation.sparse_scaling.scale_sparse`,
    its standard deviations from the same reference part as the dense z-score; its parts stay sparse."""
    split = task.split
    scale = scale_sparse if scipy.sparse.issparse(X) else standardize
    X_train, X_test = scale(X, split.train, split.test, experiment.standardize)
    y_train, y_test = y[split.train], y[split.test]
    if experiment.protocol.select_on == "all":
        # The leakage protocol: one selection on the whole dataset, before any split.
        everything = np.arange(y.size)
        X_sel, _ = scale(X, everything, everything[:0], experiment.standardize)
        y_sel = y
    else:
        X_sel, y_sel = X_train, y_train
    # Inner folds and classifier seeds depend on the split only: every selector of a split is
    # evaluated on the same inner folds, so two selectors with one ranking get identical rows.
    eval_seed = derive_seed(experiment.seed, "evaluate", task.dataset, split.repeat, split.fold)
    return TaskData(X_train, y_train, X_test, y_test, X_sel, y_sel, eval_seed, selection_seed(experiment, task))


def fit_task_selector(experiment: Experiment, task: Task, data: TaskData, params: dict[str, Any],
                      cache: Path | None) -> dict[str, Any]:
    """The task's selector fitted with ``params`` (its fixed params and, if tuned, the chosen grid
    point) on the task's selection data: the fit whose ranking the task's rows evaluate
    (:func:`fsbench.engine.fitting.fit_selector`'s result)."""
    sel = task.selector
    return fit_selector(sel.name, params, data.X_sel, data.y_sel, data.sel_seed, max(experiment.n_features), cache,
                        kind=sel.kind, timeout=sel.timeout)


def top_columns(data: TaskData, ranking: np.ndarray, k_max: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The training and test parts of a sparse task restricted to the ranking's first ``k_max``
    features, in ranking order, densified (n x k_max, never n x d), and the ranking they are
    evaluated with, ``arange(k_max)``: the protocol then sees exactly the columns, values and order
    it would take from the densified matrix with the full ranking."""
    columns = np.asarray(ranking, dtype=np.int64)[:k_max]
    return (np.ascontiguousarray(data.X_train[:, columns].toarray()),
            np.ascontiguousarray(data.X_test[:, columns].toarray()), np.arange(columns.size))


def ranking_margins(scores: np.ndarray | None, ranking: np.ndarray, ks: Sequence[int]) -> list[float]:
    """For every k, how far the k-th ranked feature's score stands above the (k+1)-th's, relative
    to the larger magnitude: ``(s_k - s_(k+1)) / max(|s_k|, |s_(k+1)|)``, recorded in each row as
    ``ranking_margin``.

    A margin at the level of rounding (about 1e-15 for a score computed in a few operations, more
    for an iterative solver's) says that which features enter the top k was decided by the last
    bits of two scores, which BLAS kernels or libraries may set otherwise on another machine:
    ``fsbench check`` reports such rows as decided by rounding instead of failing. Exact ties
    (margin 0) are broken by index and do not depend on rounding when the scores are computed in
    a fixed order (fsbench.fixed_order), but an iterative solver's equal scores may not be exactly
    equal elsewhere, so 0 counts as decided by rounding too. NaN where the ranking does not
    follow the scores (a greedy selector such as mRMR, whose scores are not its order), where
    the scores are not finite, and at k = d.
    """
    ks = np.asarray(list(ks), dtype=int)
    margins = np.full(ks.size, np.nan)
    if scores is None:
        return margins.tolist()
    scores = np.asarray(scores, dtype=float)
    ranking = np.asarray(ranking)
    ordered = scores[ranking] if scores.shape == ranking.shape else np.empty(0)
    if ordered.size < 2 or not np.all(np.isfinite(ordered)) or np.any(np.diff(ordered) > 0):
        return margins.tolist()
    upper, lower = ordered[:-1], ordered[1:]  # the k-th and (k+1)-th scores, k = 1 .. d - 1
    scale = np.maximum(np.abs(upper), np.abs(lower))
    with np.errstate(invalid="ignore", divide="ignore"):
        gaps = np.where(scale == 0, 0.0, (upper - lower) / scale)
    inside = (ks > 0) & (ks < ordered.size)
    margins[inside] = gaps[ks[inside] - 1]
    return margins.tolist()
