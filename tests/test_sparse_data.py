"""Sparse data end to end: reading (svmlight, sparse .mat v5 and v7.3, save_npz archives, wide
mostly-zero CSV), scaling without centring, the rankings cache, read-only fits, the refusal of a
densification over the limit, rows equal to the dense route's on the same scaled matrix, resume,
and ``fsbench datasets info`` without densifying.

The selectors' own sparse route (``fsbench.selectors.accepts_sparse``, ``fit_sparse``,
``sparse_code``, ``dense_fit_bytes``) is replaced here by a stub (:func:`stub_selectors`), so these
tests check the data layer and the engine against the interface, whatever the selectors do.
"""

from __future__ import annotations

import importlib
import json
import math
import textwrap
import uuid
from pathlib import Path

import h5py
import numpy as np
import pandas as pd
import pytest
import scipy.io
import scipy.sparse
from click.testing import CliRunner
from sklearn.datasets import dump_svmlight_file, load_svmlight_file
from sklearn.preprocessing import StandardScaler

import fsbench.selectors
from fsbench.cli import main
from fsbench.configuration.parse import load_experiment
from fsbench.datasets import read_data_file
from fsbench.datasets.user_files import delimited
from fsbench.engine.fitting import fit_selector, ranking_key
from fsbench.engine.runner import plan, run_experiment
from fsbench.errors import FsbenchError
from fsbench.evaluation import protocol_code
from fsbench.evaluation.protocol import derive_seed, evaluate_classifiers
from fsbench.evaluation.sparse_scaling import scale_sparse, segment_sums
from fsbench.selectors import make_selector, selector_code

# ----------------------------------------------------------------------------- problems


def sparse_problem(n: int = 60, d: int = 40, density: float = 0.15, c: int = 3, seed: int = 0):
    """A CSR matrix with an informative block (feature j < c is non-zero mostly in class j) and
    scattered noise; labels 0..c-1 balanced."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % c
    X = scipy.sparse.random(n, d, density=density, random_state=np.random.RandomState(seed), format="csr",
                            data_rvs=lambda m: np.round(rng.standard_normal(m), 3))
    X = X.tolil()
    for j in range(c):
        rows = np.flatnonzero(y == j)
        X[rows[: len(rows) * 2 // 3], j] = 2.0 + rng.random(len(rows) * 2 // 3).round(3)[:, None]
    X = scipy.sparse.csr_matrix(X)
    X.eliminate_zeros()
    X.sort_indices()
    return X, y


def same_sparse(A, B) -> bool:
    """Equal shape and values, both sparse."""
    return scipy.sparse.issparse(A) and scipy.sparse.issparse(B) and A.shape == B.shape and (A != B).nnz == 0


def assert_canonical_read_only(X) -> None:
    assert isinstance(X, scipy.sparse.csr_matrix) and X.dtype == np.float64
    assert np.all(np.diff(X.indices[X.indptr[0]:X.indptr[1]]) > 0) if X.shape[0] else True
    for i in range(X.shape[0]):  # indices sorted within every row (the definition, row by row)
        row = X.indices[X.indptr[i]:X.indptr[i + 1]]
        assert np.all(np.diff(row) > 0)
    for arr in (X.data, X.indices, X.indptr):
        assert not arr.flags.writeable


# ----------------------------------------------------------------------------- the selectors' interface, stubbed
DENSE_ONLY = {"relieff"}


def stub_selectors(monkeypatch, sparse_codes: dict[str, str] | None = None) -> list[str]:
    """``fsbench.selectors``' sparse interface replaced: every selector but relieff accepts sparse
    data, its ``fit_sparse`` densifies and calls ``fit`` (so its ranking is the dense fit's), its
    sparse code is ``"sparse-" + name`` (or ``sparse_codes[name]``) and a dense fit takes 8 n d bytes.
    Returns the names ``fit_sparse`` was called with."""
    calls: list[str] = []
    codes = sparse_codes or {}

    def fit_sparse(selector, X, y):
        assert scipy.sparse.issparse(X)
        calls.append(type(selector).registry_name)
        return selector.fit(X.toarray(), y)

    monkeypatch.setattr(fsbench.selectors, "accepts_sparse", lambda name: name not in DENSE_ONLY, raising=False)
    monkeypatch.setattr(fsbench.selectors, "fit_sparse", fit_sparse, raising=False)
    monkeypatch.setattr(fsbench.selectors, "sparse_code", lambda name: codes.get(name, f"sparse-{name}"),
                        raising=False)
    monkeypatch.setattr(fsbench.selectors, "dense_fit_bytes", lambda name, n, d: 8 * n * d, raising=False)
    monkeypatch.setattr(fsbench.selectors, "sparse_fit_bytes", lambda name, n, d, nnz: 0, raising=False)
    return calls


# ----------------------------------------------------------------------------- 1. formats stay sparse
def test_svmlight_reads_as_scikit_learn_reads_it_and_stays_sparse(tmp_path):
    X, y = sparse_problem()
    path = tmp_path / "text.svm"
    dump_svmlight_file(X, y + 10, str(path), zero_based=False)
    data = read_data_file(path)
    ref_X, ref_y = load_svmlight_file(str(path))
    assert same_sparse(data.X, ref_X) and data.sparse
    assert_canonical_read_only(data.X)
    np.testing.assert_array_equal(data.classes[data.y], ref_y)
    assert data.nnz == ref_X.nnz


def test_sparse_mat_v5_and_v73_read_as_scipy_reads_them(tmp_path):
    X, y = sparse_problem(seed=1)
    v5 = tmp_path / "v5.mat"
    scipy.io.savemat(v5, {"X": X.tocsc(), "Y": (y + 1).reshape(-1, 1)})
    data = read_data_file(v5)
    assert same_sparse(data.X, scipy.io.loadmat(v5)["X"])
    assert_canonical_read_only(data.X)
    np.testing.assert_array_equal(data.y, y)

    # MATLAB v7.3 (HDF5): a sparse variable is a group of jc (column pointers), ir (row indices)
    # and data, as MATLAB writes it; here written by hand from the CSC arrays
    v73 = tmp_path / "v73.mat"
    csc = X.tocsc()
    with h5py.File(v73, "w", userblock_size=512) as fh:
        group = fh.create_group("X")
        group.attrs["MATLAB_class"] = np.bytes_("double")
        group.attrs["MATLAB_sparse"] = np.uint64(X.shape[0])
        group.create_dataset("jc", data=csc.indptr.astype(np.uint64))
        group.create_dataset("ir", data=csc.indices.astype(np.uint64))
        group.create_dataset("data", data=csc.data)
        labels = fh.create_dataset("Y", data=(y + 1).astype(np.float64).reshape(1, -1))
        labels.attrs["MATLAB_class"] = np.bytes_("double")
    data = read_data_file(v73)
    assert same_sparse(data.X, X)
    assert_canonical_read_only(data.X)
    np.testing.assert_array_equal(data.y, y)


def test_save_npz_archive_with_labels_reads_as_load_npz_and_one_without_is_refused(tmp_path):
    X, y = sparse_problem(seed=2)
    matrix = tmp_path / "matrix.npz"
    scipy.sparse.save_npz(matrix, X.tocsc())  # any layout save_npz writes
    both = tmp_path / "both.npz"
    with np.load(matrix) as arrays:
        np.savez(both, y=np.array(["a", "b", "c"])[y], **arrays)
    data = read_data_file(both)
    assert same_sparse(data.X, scipy.sparse.load_npz(both))
    assert_canonical_read_only(data.X)
    assert list(data.classes) == ["a", "b", "c"]
    with pytest.raises(FsbenchError) as info:
        read_data_file(matrix)
    assert "scipy.sparse.save_npz" in str(info.value) and "np.savez(path, y=y" in str(info.value)
    assert str(info.value).count(". ") == 0  # one sentence
    # today's dense .npz stays dense
    dense = tmp_path / "dense.npz"
    np.savez(dense, X=X.toarray(), y=y)
    assert isinstance(read_data_file(dense).X, np.ndarray)


def wide_csv(path: Path, X, y, index: bool = False) -> pd.DataFrame:
    frame = pd.DataFrame(X.toarray(), columns=[f"w{j}" for j in range(X.shape[1])])
    frame["class"] = np.array(["neg", "neu", "pos"])[y]
    frame.to_csv(path, index=index)
    return frame


def test_wide_mostly_zero_csv_is_read_sparse_in_blocks_as_pandas_reads_it(tmp_path, monkeypatch):
    X, y = sparse_problem(n=50, d=1200, density=0.01, seed=3)
    path = tmp_path / "words.csv"
    wide_csv(path, X, y)
    monkeypatch.setattr(delimited, "BLOCK_VALUES", 16 * 1201)  # blocks of 16 rows: 4 blocks
    assert delimited.block_rows(1201) == 16
    data = read_data_file(path, label="class")
    ref = pd.read_csv(path)
    assert data.sparse
    assert_canonical_read_only(data.X)
    np.testing.assert_array_equal(data.X.toarray(), ref.drop(columns="class").to_numpy(dtype=float))
    np.testing.assert_array_equal(data.classes[data.y], ref["class"].to_numpy())
    assert data.feature_names == tuple(ref.columns[:-1])

    # pandas' row index (unnamed first column 0..n-1) is left out, as on the dense path
    indexed = tmp_path / "indexed.csv"
    wide_csv(indexed, X, y, index=True)
    with_index = read_data_file(indexed, label="class")
    assert with_index.sparse and same_sparse(with_index.X, data.X)
    assert any("row index" in note for note in with_index.notes)


def test_narrow_or_dense_csv_stays_dense(tmp_path):
    X, y = sparse_problem(n=30, d=40, density=0.02, seed=4)  # mostly zero, but 41 columns
    narrow = tmp_path / "narrow.csv"
    wide_csv(narrow, X, y)
    assert isinstance(read_data_file(narrow).X, np.ndarray)
    rng = np.random.default_rng(0)
    full = scipy.sparse.csr_matrix(rng.standard_normal((30, 1100)))  # wide, no zero
    wide = tmp_path / "wide.csv"
    wide_csv(wide, full, y)
    data = read_data_file(wide)
    assert isinstance(data.X, np.ndarray)
    np.testing.assert_array_equal(data.X, pd.read_csv(wide).drop(columns="class").to_numpy())


def test_sparse_checks_read_the_stored_values(tmp_path):
    X, y = sparse_problem(seed=5)
    X = X.tolil()
    X[7, 11] = np.nan
    X = scipy.sparse.csr_matrix(X)
    path = tmp_path / "nan.npz"
    np.savez(path, y=y, format=b"csr", shape=np.array(X.shape), data=X.data, indices=X.indices, indptr=X.indptr)
    with pytest.raises(FsbenchError, match=r"1 NaN and 0 infinite values \(the first at sample 7, feature 11"):
        read_data_file(path)


# ----------------------------------------------------------------------------- 2. scaling
def test_segment_sums_are_the_sequential_sums():
    rng = np.random.default_rng(0)
    lengths = rng.integers(0, 40, 300)
    lengths[:5] = [0, 1, 2, 3, 100]
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    values = rng.standard_normal(indptr[-1]) * 10.0 ** rng.integers(-8, 8, indptr[-1])
    got = segment_sums(values, indptr)
    for j in range(lengths.size):  # the definition: one rounding per step, in order
        s = 0.0
        for v in values[indptr[j]:indptr[j + 1]]:
            s = s + float(v)
        assert got[j] == s


@pytest.mark.parametrize("mode", ["train", "global", "none"])
def test_sparse_scaling_is_standard_scaler_without_mean_and_keeps_zeros(mode):
    X, _ = sparse_problem(n=80, d=30, density=0.2, seed=6)
    X = X.tolil()
    X[:, 5] = 0.0  # a column of zeros
    X[:, 6] = 3.5  # a constant, stored column
    X = scipy.sparse.csr_matrix(X)
    X.eliminate_zeros()
    rng = np.random.default_rng(1)
    order = rng.permutation(80)
    train, test = np.sort(order[:50]), np.sort(order[50:])
    X_train, X_test = scale_sparse(X, train, test, mode)
    assert isinstance(X_train, scipy.sparse.csr_matrix) and isinstance(X_test, scipy.sparse.csr_matrix)
    dense = X.toarray()
    if mode == "none":
        np.testing.assert_array_equal(X_train.toarray(), dense[train])
        np.testing.assert_array_equal(X_test.toarray(), dense[test])
        return
    scaler = StandardScaler(with_mean=False).fit(X[train] if mode == "train" else X)
    for got, rows in ((X_train, train), (X_test, test)):
        expected = scaler.transform(X[rows]).toarray()
        np.testing.assert_allclose(got.toarray(), expected, rtol=1e-12, atol=0)
        # zeros stay zeros: the same stored positions as the unscaled rows
        np.testing.assert_array_equal(got.indptr, X[rows].indptr)
        np.testing.assert_array_equal(got.indices, X[rows].indices)


# ----------------------------------------------------------------------------- 3. cache key, read-only fits
def test_cache_key_depends_on_every_stored_value_and_index():
    X, y = sparse_problem(seed=7)
    key = ranking_key("fisher", {}, X, y, None, "code")
    assert ranking_key("fisher", {}, X.copy(), y.copy(), None, "code") == key
    value = X.copy()
    value.data[3] = np.nextafter(value.data[3], np.inf)
    moved = X.copy()
    row = 4
    start, stop = moved.indptr[row], moved.indptr[row + 1]
    free = next(j for j in range(X.shape[1]) if j not in set(moved.indices[start:stop]))
    moved.indices[stop - 1] = free  # one index moved to a column the row does not store
    moved.sort_indices()
    assert not same_sparse(moved, X)
    keys = {key, ranking_key("fisher", {}, value, y, None, "code"), ranking_key("fisher", {}, moved, y, None, "code"),
            ranking_key("fisher", {}, X.toarray(), y, None, "code")}
    assert len(keys) == 4


WRITERS = """
import numpy as np
from sklearn.base import BaseEstimator


class ZeroesInput(BaseEstimator):
    def fit(self, X, y):
        self.scores_ = np.asarray(X).var(axis=0)
        X[...] = 0.0  # writes into the dense copy it was given
        return self
"""


def test_a_builtin_cannot_write_into_the_sparse_views_and_a_plugin_writes_only_its_copy(monkeypatch, tmp_path):
    stub_selectors(monkeypatch)
    X, y = sparse_problem(seed=8)
    X0 = X.copy()

    def writes(selector, Xs, ys):
        for part in (Xs.data, Xs.indices, Xs.indptr):
            with pytest.raises(ValueError, match="read-only"):
                part[0] = part[0]
        with pytest.raises(ValueError):
            Xs.data *= 2.0
        return selector.fit(Xs.toarray(), ys)

    monkeypatch.setattr(fsbench.selectors, "fit_sparse", writes, raising=False)
    fitted = fit_selector("fisher", {}, X, y, 0, 5, None)
    assert same_sparse(X, X0) and fitted["input_written"] == []
    expected = make_selector("fisher", {"n_features_to_select": 5}).fit(X0.toarray(), y).ranking_
    np.testing.assert_array_equal(fitted["ranking"], expected)

    name = f"fsb_sparse_{uuid.uuid4().hex[:10]}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(WRITERS))
    importlib.invalidate_caches()
    monkeypatch.syspath_prepend(str(tmp_path))
    fitted = fit_selector(f"{name}:ZeroesInput", {}, X, y, 0, 5, None, kind="class")
    assert same_sparse(X, X0)  # the evaluation's matrix is untouched
    assert fitted["input_written"] == ["X"]
    expected_scores = X0.toarray().var(axis=0)
    np.testing.assert_array_equal(fitted["scores"], expected_scores)


# ----------------------------------------------------------------------------- 4. refusal, densified runs
def write_config(folder: Path, data_file: Path, selectors: list[str], *, classifiers: str | None = None,
                 n_trials: int = 2, n_features: str = "[2, 4]", standardize: str = "train") -> Path:
    classifier = classifiers or "classifier: {name: linear_svm, backend: liblinear, C: [0.1, 1]}"
    config = folder / "sparse.yaml"
    config.write_text(textwrap.dedent(f"""\
        name: sparse
        seed: 3
        datasets:
          - {{name: text, path: {data_file.name}}}
        preprocessing: {{standardize: {standardize}}}
        protocol: {{kind: holdout, train_size: 0.6, n_trials: {n_trials}}}
        inner_cv: {{n_splits: 3}}
        selectors: [{", ".join(selectors)}]
        n_features: {n_features}
        """) + classifier + "\n")
    return config


def svm_file(folder: Path, seed: int = 9, **shape) -> Path:
    X, y = sparse_problem(seed=seed, **shape)
    path = folder / "text.svm"
    dump_svmlight_file(X, y, str(path))
    return path


def test_a_dense_only_selector_over_the_limit_is_refused_before_anything_is_written(monkeypatch, tmp_path):
    stub_selectors(monkeypatch)
    config = write_config(tmp_path, svm_file(tmp_path), ["fisher", "relieff"])
    monkeypatch.setenv("FSBENCH_DENSE_LIMIT", "10kB")  # 60 x 40 dense: 19.2 kB
    out = tmp_path / "results"
    result = CliRunner().invoke(main, ["run", str(config), "-q", "--out", str(out)])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines == ["Error: selector 'relieff' needs dense data: dataset 'text' (60 x 40) would take 19.2 kB "
                     "dense, over the limit of 10.0 kB; drop the selector for this dataset or raise "
                     "FSBENCH_DENSE_LIMIT."]
    assert not out.exists()
    monkeypatch.setenv("FSBENCH_DENSE_LIMIT", "lots")
    result = CliRunner().invoke(main, ["run", str(config), "-q", "--out", str(out)])
    assert result.exit_code == 2 and "FSBENCH_DENSE_LIMIT='lots' is not a size" in result.output
    assert not out.exists()


def test_a_sparse_route_that_holds_a_state_per_value_is_refused_over_the_limit(monkeypatch, tmp_path):
    """mRMR reads CSR but holds 16 bytes per value (sparse_fit_bytes); fisher holds one block: with
    60 x 40 data, the limit between their estimates refuses mRMR alone, before anything is written."""
    from fsbench.selectors import sparse_fit_bytes

    path = svm_file(tmp_path)
    nnz = read_data_file(path).X.nnz
    fisher, mrmr = (sparse_fit_bytes(name, 60, 40, nnz) for name in ("fisher", "mrmr"))
    assert mrmr >= fisher + 16 * 60 * 40
    limit = (fisher + mrmr) // 2
    monkeypatch.setenv("FSBENCH_DENSE_LIMIT", str(limit))
    out = tmp_path / "results"
    config = write_config(tmp_path, path, ["fisher", "mrmr"])
    result = CliRunner().invoke(main, ["run", str(config), "-q", "--out", str(out)])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: selector 'mrmr' would take ")
    assert "even without densifying it" in lines[0] and not out.exists()
    config = write_config(tmp_path, path, ["fisher"])
    assert CliRunner().invoke(main, ["run", str(config), "-q", "--out", str(out)]).exit_code == 0


def test_under_the_limit_a_dense_only_selector_fits_the_densified_training_part(monkeypatch, tmp_path):
    stub_selectors(monkeypatch)
    config = write_config(tmp_path, svm_file(tmp_path), ["fisher", "relieff"], n_trials=1)
    monkeypatch.setenv("FSBENCH_DENSE_LIMIT", "1MB")
    result = run_experiment(load_experiment(config), tmp_path / "results", n_jobs=1)
    runs = result.runs
    assert len(runs) == 2 * 2
    codes = runs.groupby("selector")["code"].unique().to_dict()
    assert list(codes["fisher"]) == ["sparse-fisher"]  # its sparse route
    assert list(codes["relieff"]) == [selector_code("relieff")]  # densified: its own dense code
    assert set(runs["protocol_code"]) == {protocol_code(sparse=True)}
    assert protocol_code(sparse=True) != protocol_code() == "ad53e4ef72784e11"


# ----------------------------------------------------------------------------- 5. rows equal to the dense route's
CLASSIFIERS = """classifiers:
  - {name: linear_svm, label: libsvm, params: {backend: libsvm}, grid: {C: [0.01, 1]}}
  - {name: linear_svm, label: liblinear, params: {backend: liblinear}, grid: {C: [0.01, 1]}}
  - {name: knn, params: {n_neighbors: 3}}"""

PROTOCOL_COLUMNS = ["classifier", "k", "accuracy", "n_correct", "n_test", "class_support", "class_predicted",
                    "class_correct", "C", "inner_accuracy", "classifier_params", "diag_classifier_unconverged"]


@pytest.mark.parametrize("standardize", ["train", "global"])
def test_sparse_rows_equal_the_dense_route_on_the_same_scaled_matrix(monkeypatch, tmp_path, standardize):
    stub_selectors(monkeypatch)
    path = svm_file(tmp_path, seed=10, n=72, d=30, density=0.2)
    config = write_config(tmp_path, path, ["fisher", "random"], classifiers=CLASSIFIERS, n_features="[1, 3, 6]",
                          standardize=standardize)
    experiment = load_experiment(config)
    result = run_experiment(experiment, tmp_path / "out", n_jobs=1)
    runs = result.runs
    data = read_data_file(path)
    X, y = data.X, data.y
    ks = [1, 3, 6]
    tasks = plan(experiment, {"text": data})
    assert len(tasks) == 4 and len(runs) == 4 * 3 * 3
    for task in tasks:
        split = task.split
        X_train, X_test = scale_sparse(X, split.train, split.test, standardize)
        dense_train, dense_test = X_train.toarray(), X_test.toarray()  # the same scaled matrix, densified
        seed = derive_seed(experiment.seed, "task", "text", split.repeat, split.fold, task.selector.label)
        params = {"n_features_to_select": 6, **({"random_state": seed} if task.selector.name == "random" else {})}
        ranking = make_selector(task.selector.name, params).fit(dense_train, y[split.train]).ranking_
        eval_seed = derive_seed(experiment.seed, "evaluate", "text", split.repeat, split.fold)
        expected = evaluate_classifiers(dense_train, y[split.train], dense_test, y[split.test], ranking, ks,
                                        experiment.classifiers, 3, eval_seed)
        mine = runs[(runs["repeat"] == split.repeat) & (runs["selector"] == task.selector.label)]
        got = mine[PROTOCOL_COLUMNS].to_dict("records")
        want = pd.DataFrame(expected)[PROTOCOL_COLUMNS].to_dict("records")
        assert len(got) == len(want) == 9
        for g, w in zip(got, want, strict=True):
            for column in PROTOCOL_COLUMNS:
                a, b = g[column], w[column]
                assert (a == b) or (isinstance(a, float) and math.isnan(a) and math.isnan(b)), (column, a, b)
        assert set(mine["protocol_code"]) == {protocol_code(sparse=True)}
        assert set(mine["code"]) == {f"sparse-{task.selector.name}"}
    kept = pd.read_csv(tmp_path / "out" / "rankings.csv.gz", comment="#")
    assert len(kept) == 4 * 6


# ----------------------------------------------------------------------------- 6. resume and code identity
def test_a_sparse_run_resumes_every_task_and_a_code_change_marks_its_rows_stale(monkeypatch, tmp_path):
    stub_selectors(monkeypatch)
    config = write_config(tmp_path, svm_file(tmp_path, seed=11), ["fisher", "mim"], n_trials=2)
    experiment = load_experiment(config)
    out = tmp_path / "out"
    first = run_experiment(experiment, out, n_jobs=1)
    assert first.n_tasks == 4 and first.n_resumed == 0
    # interrupted: one task file lost, as a run killed before writing it
    victim = sorted((out / "tasks").glob("*.json"))[0]
    victim.unlink()
    (out / "runs.csv.gz").unlink()
    second = run_experiment(experiment, out, n_jobs=1)
    assert (second.n_tasks, second.n_resumed) == (4, 3)
    again = run_experiment(experiment, out, n_jobs=1)
    assert (again.n_tasks, again.n_resumed) == (4, 4)
    drop = ["fit_seconds", "task_seconds", "rows_digest"]  # the digest covers the timings
    pd.testing.assert_frame_equal(first.runs.drop(columns=drop, errors="ignore").reset_index(drop=True),
                                  again.runs.drop(columns=drop, errors="ignore").reset_index(drop=True))

    stub_selectors(monkeypatch, sparse_codes={"mim": "sparse-mim-edited"})  # mim's sparse route changed
    with pytest.raises(FsbenchError, match=r"computed by other code of fsbench \(mim: 2 tasks"):
        run_experiment(experiment, out, n_jobs=1)
    redone = run_experiment(experiment, out, n_jobs=1, recompute_stale=True)
    assert redone.n_resumed == 2
    assert set(redone.runs.loc[redone.runs["selector"] == "mim", "code"]) == {"sparse-mim-edited"}


# ----------------------------------------------------------------------------- 7. datasets info
def test_datasets_info_prints_non_zeros_without_densifying(monkeypatch, tmp_path):
    X, y = sparse_problem(n=40, d=500, density=0.01, seed=12)
    path = tmp_path / "big.svm"
    dump_svmlight_file(X, y, str(path))

    def boom(*args, **kwargs):
        raise AssertionError("densified")

    for cls in scipy.sparse.csr_matrix.__mro__ + scipy.sparse.csc_matrix.__mro__ + scipy.sparse.coo_matrix.__mro__:
        for method in ("toarray", "todense"):
            if method in vars(cls):
                monkeypatch.setattr(cls, method, boom)
    result = CliRunner().invoke(main, ["datasets", "info", str(path)])
    assert result.exit_code == 0, result.output
    nnz = load_svmlight_file(str(path))[0].nnz
    assert f"{nnz:,} non-zeros" in result.output
    assert f"density {nnz / (40 * X.shape[1]):.4%}" in result.output
    assert f"instead of {8 * 40 * X.shape[1] / 1e3:.1f} kB dense" in result.output
    assert "40 samples x" in result.output


def test_protocol_code_default_is_unchanged_and_the_sparse_one_covers_the_scaling():
    assert protocol_code() == "ad53e4ef72784e11"
    from fsbench.code_identity import module_digest
    from fsbench.evaluation import PROTOCOL_SCOPE

    sparse = protocol_code(sparse=True)
    import hashlib

    dense = module_digest("fsbench.evaluation.protocol", PROTOCOL_SCOPE)
    scaling = module_digest("fsbench.evaluation.sparse_scaling", PROTOCOL_SCOPE)
    assert sparse == hashlib.sha256(f"sparse {dense} {scaling}".encode()).hexdigest()[:16]
    assert json.dumps(sparse) and sparse != dense
