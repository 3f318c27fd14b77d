"""The committed rankings.csv.gz belong to the committed rows: the top-k of a task's stored
ranking, fed to a plain scikit-learn SVC with the row's C on the task's split, gives the row's
n_correct (checked on a few tasks of each paper; needs the datasets)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import papers_data
from sklearn.svm import SVC

from fsbench.configuration.parse import load_experiment
from fsbench.datasets import load
from fsbench.evaluation.protocol import outer_splits, standardize

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("paper, dataset, selectors", [
    ("rfs", "glioma", ["rfs", "relieff", "mrmr"]),
    ("dso-fs", "ar", ["dso", "rfs", "l1svm", "mrmr"]),
])
def test_committed_rankings_reproduce_the_committed_rows(paper, dataset, selectors):
    data_dir = papers_data()
    results = ROOT / "results" / "papers" / paper
    rankings = pd.read_csv(results / "rankings.csv.gz")
    runs = pd.read_csv(results / "runs.csv.gz")
    experiment = load_experiment(ROOT / "configs" / "papers" / f"{paper}.yaml")
    data = load(dataset, data_dir)
    X, y = np.asarray(data.X, dtype=float), np.asarray(data.y)
    checked = 0
    for split in outer_splits(y, experiment.protocol, experiment.seed, dataset)[:2]:
        X_train, X_test = standardize(X, split.train, split.test, experiment.standardize)
        for selector in selectors:
            mine = rankings[(rankings.dataset == dataset) & (rankings.repeat == split.repeat)
                            & (rankings.fold == split.fold) & (rankings.selector == selector)]
            order = mine.sort_values("position")["feature"].to_numpy()
            rows = runs[(runs.dataset == dataset) & (runs.repeat == split.repeat) & (runs.fold == split.fold)
                        & (runs.selector == selector)]
            for row in rows[rows.k.isin([int(rows.k.min()), int(rows.k.max())])].itertuples():
                cols = order[: int(row.k)]
                clf = SVC(kernel="linear", C=float(row.C)).fit(X_train[:, cols], y[split.train])
                assert int((clf.predict(X_test[:, cols]) == y[split.test]).sum()) == int(row.n_correct), (
                    selector, split.repeat, split.fold, row.k)
                checked += 1
    assert checked == 2 * len(selectors) * 2
