"""The sparse (CSR) route of the built-in selectors (fsbench.selectors.sparse_input).

Every route is checked against the dense class's fit on the densified matrix: bit for bit for the
filters and the information-theoretic criteria, on a problem whose duplicated and mirrored columns
fall into different blocks (so that a pass over single blocks would differ, which is checked too);
for l1svm and cssvm, objectives computed here from the problems' definitions agree with the dense
solvers' certified optima. Memory: no densification of more than a block of columns (scipy's
``toarray`` watched, and tracemalloc's peak), and l1svm at 100,000 features under a 2 GB address
space limit, where the dense fit runs out of memory.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import subprocess
import sys
import textwrap
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse._compressed import _cs_matrix

import fsbench.selectors.sparse_input as si
from fsbench.code_identity import module_digest
from fsbench.evaluation import protocol_code
from fsbench.selectors import (
    SELECTOR_SCOPE,
    SPARSE_ROUTES,
    accepts_sparse,
    dense_fit_bytes,
    fit_sparse,
    make_selector,
    registry,
    selector_code,
    sparse_code,
)

N = 60
WIDTH = 7  # columns per block in the tests: many blocks

EXACT = ["fisher", "fstat", "ttest", "variance", "gini", "kruskal", "auc", "chi2", "infogain", "su", "random",
         "trace_ratio", "mim", "mrmr", "mifs", "cife", "jmi", "jmim", "cmim", "icap", "disr"]
DISCRETIZING = {"chi2", "infogain", "su", "mim", "mrmr", "mifs", "cife", "jmi", "jmim", "cmim", "icap", "disr"}
GREEDY_NONE = {"mim", "mifs", "cife", "jmi", "jmim", "cmim", "icap", "disr"}  # take discretize='none'


def sparse_problem(seed: int = 0, integer: bool = False) -> tuple[sp.csr_matrix, np.ndarray]:
    """60 x 380 at about 5 % density, 3 classes; the last 80 columns copy and negate earlier ones,
    so exact ties span blocks."""
    rng = np.random.default_rng(seed)

    def values(k: int) -> np.ndarray:
        return rng.integers(1, 4, k).astype(float) if integer else rng.standard_normal(k)

    X = sp.random(N, 300, density=0.05, format="csr", random_state=seed, data_rvs=values)
    X = sp.hstack([X, X[:, :40], -X[:, 40:80]]).tocsr()
    return X, np.arange(N) % 3


@pytest.fixture
def small_blocks(monkeypatch):
    monkeypatch.setattr(si, "BLOCK_VALUES", N * WIDTH)


def fitted_attributes(sel) -> dict:
    return {k: v for k, v in vars(sel).items() if k.endswith("_")}


def cases():
    for integer in (False, True):
        for name in EXACT:
            yield name, {}, integer
            if name in DISCRETIZING:
                yield name, {"discretize": "quantile", "n_bins": 4}, integer
            if name in GREEDY_NONE and integer:  # discretize='none' takes discrete features
                yield name, {"discretize": "none"}, integer
        yield "ttest", {"equal_var": True}, integer
        yield "mrmr", {"criterion": "miq", "pool_size": 50}, integer
        yield "mifs", {"beta": 0.5}, integer


@pytest.mark.parametrize(("name", "params", "integer"), list(cases()))
def test_sparse_fit_equals_the_dense_fit_bit_for_bit(small_blocks, name, params, integer):
    X, y = sparse_problem(1, integer)
    params = {"n_features_to_select": 15, **params}
    if name == "random":
        params["random_state"] = 7
    dense = make_selector(name, params).fit(X.toarray(), y)
    sparse = fit_sparse(make_selector(name, params), X, y)
    a, b = fitted_attributes(dense), fitted_attributes(sparse)
    assert a.keys() == b.keys()
    for key, value in a.items():
        if isinstance(value, dict):
            assert value == b[key], key
        else:
            assert np.array_equal(np.asarray(value), np.asarray(b[key]), equal_nan=True), key
    assert np.array_equal(dense.ranking_, sparse.ranking_)


@pytest.mark.parametrize("name", ["kruskal", "auc", "chi2", "infogain"])
def test_the_problem_has_near_ties_across_blocks(name):
    """The dense fit on each block alone differs from the fit on all columns: these methods' exact
    near-tie pass depends on all features, so the equality above is not reached block by block."""
    X, y = sparse_problem(1)
    Xd = X.toarray()
    whole = make_selector(name).fit(Xd, y).scores_
    by_block = np.concatenate([make_selector(name).fit(Xd[:, a:a + WIDTH], y).scores_
                               for a in range(0, Xd.shape[1], WIDTH)])
    assert not np.array_equal(whole, by_block)
    assert np.allclose(whole, by_block, rtol=1e-12)


def test_discretize_none_refuses_as_the_dense_fit_does(small_blocks):
    rng = np.random.default_rng(3)
    X = sp.random(N, 30, density=0.9, format="csr", random_state=3, data_rvs=rng.standard_normal)
    y = np.arange(N) % 3
    with pytest.raises(ValueError) as dense:
        make_selector("mim", {"discretize": "none"}).fit(X.toarray(), y)
    for name in ("mim", "jmi"):
        with pytest.raises(ValueError) as sparse:
            fit_sparse(make_selector(name, {"discretize": "none"}), X, y)
        assert str(sparse.value) == str(dense.value)


class Watched:
    """Records the shape of every dense array made from a CSR or CSC matrix."""

    def __init__(self, monkeypatch, max_columns: int):
        self.shapes: list[tuple[int, int]] = []
        original = _cs_matrix.toarray

        def toarray(matrix, *args, **kwargs):
            self.shapes.append(matrix.shape)
            if matrix.shape[1] > max_columns:
                raise AssertionError(f"densified {matrix.shape}, more than a block of columns")
            return original(matrix, *args, **kwargs)

        monkeypatch.setattr(_cs_matrix, "toarray", toarray)


@pytest.mark.parametrize("name", [*EXACT, "l1svm", "cssvm"])
def test_only_blocks_of_columns_are_densified(small_blocks, monkeypatch, name):
    X, y = sparse_problem(2)
    watched = Watched(monkeypatch, WIDTH)
    params = {"random_state": 1} if name == "random" else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit_sparse(make_selector(name, params), X, y)
    if name in ("random", "l1svm", "cssvm"):
        assert watched.shapes == []
    else:
        assert len(watched.shapes) == math.ceil(X.shape[1] / WIDTH)


@pytest.mark.parametrize("name", ["fisher", "kruskal", "mim", "chi2"])
def test_peak_memory_is_a_few_blocks_not_the_matrix(monkeypatch, name):
    """1,000 x 20,000 at 0.1 %: the dense matrix alone is 160 MB; the sparse fit with 2 MB blocks
    stays below an eighth of it (tracemalloc counts numpy's allocations)."""
    monkeypatch.setattr(si, "BLOCK_VALUES", 2**18)
    n, d = 1000, 20000
    X = sp.random(n, d, density=0.001, format="csr", random_state=5)
    y = np.arange(n) % 4
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        fit_sparse(make_selector(name), X, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * n * d / 8


# ----------------------------------------------------------------------------- SVMs
def svm_problem(c: int, seed: int = 0, n: int = 60, d: int = 80) -> tuple[sp.csr_matrix, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.1, format="lil", random_state=seed, data_rvs=rng.standard_normal)
    y = rng.integers(0, c, n)
    for j in range(3):  # three features shifted in class 0
        X[y == 0, j] = X[y == 0, j].toarray() + 0.5
    return X.tocsr(), y


def l1svm_objective(X: np.ndarray, y: np.ndarray, W: np.ndarray, b: np.ndarray, C: float) -> float:
    """sum_k ||w_k||_1 + |b_k| + C sum_i max(0, 1 - y_ik (x_i^T w_k + b_k))^2, one-vs-rest
    (two classes: one problem, class 1 positive), written out with a loop over problems."""
    classes = np.unique(y)
    positives = classes[1:] if classes.size == 2 else classes
    total = 0.0
    for k, positive in enumerate(positives):
        yk = np.where(y == positive, 1.0, -1.0)
        slack = np.maximum(0.0, 1.0 - yk * (X @ W[:, k] + b[k]))
        total += np.abs(W[:, k]).sum() + abs(b[k]) + C * np.sum(slack**2)
    return total


def crammer_singer_objective(X: np.ndarray, y: np.ndarray, W: np.ndarray, b: np.ndarray, C: float) -> float:
    """1/2 ||W||^2 + 1/2 ||b||^2 + C sum_i max(0, 1 - f_{i,y_i} + max_{k != y_i} f_ik), sample by sample."""
    F = X @ W + b
    loss = 0.0
    for i in range(y.size):
        others = np.delete(F[i], y[i])
        loss += max(0.0, 1.0 - F[i, y[i]] + others.max())
    return 0.5 * np.sum(W**2) + 0.5 * np.sum(b**2) + C * loss


def untied_prefixes(norms: np.ndarray, top: int = 10, gap: float = 1e-3) -> list[int]:
    """The k <= top whose k-th and (k + 1)-th largest norms differ by more than gap x the largest."""
    srt = np.sort(norms)[::-1]
    return [k for k in range(1, min(top, np.count_nonzero(srt)) + 1) if srt[k - 1] - srt[k] > gap * srt[0]]


@pytest.mark.parametrize("c", [2, 3])
@pytest.mark.parametrize("C", [0.1, 1.0, 10.0])
def test_l1svm_reaches_the_dense_certified_optimum(c, C):
    X, y = svm_problem(c, seed=c)
    dense = make_selector("l1svm", {"C": C}).fit(X.toarray(), y)
    sparse = fit_sparse(make_selector("l1svm", {"C": C}), X, y)
    Xd = X.toarray()
    p_dense = l1svm_objective(Xd, y, dense.coef_, dense.intercept_, C)
    p_sparse = l1svm_objective(Xd, y, sparse.coef_, sparse.intercept_, C)
    assert dense.diagnostics_["converged"] and sparse.diagnostics_["converged"]
    assert sparse.diagnostics_["duality_gap"] <= 1e-6
    # both within tol = 1e-6 (relative) of the optimum
    assert abs(p_sparse - p_dense) <= 2e-6 * p_dense
    assert sparse.objective_[0] == pytest.approx(p_sparse, rel=1e-12)
    norms = np.linalg.norm(dense.coef_, axis=1)
    prefixes = untied_prefixes(norms)
    assert prefixes
    for k in prefixes:
        assert set(sparse.ranking_[:k]) == set(dense.ranking_[:k])
    assert sorted(sparse.ranking_) == list(range(X.shape[1]))


@pytest.mark.parametrize("c", [2, 3, 4])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_cssvm_reaches_the_dense_certified_optimum(c, fit_intercept):
    X, y = svm_problem(c, seed=10 + c)
    params = {"C": 1.0, "fit_intercept": fit_intercept}
    dense = make_selector("cssvm", params).fit(X.toarray(), y)
    sparse = fit_sparse(make_selector("cssvm", params), X, y)
    assert dense.diagnostics_["solver"] == "ip" and dense.diagnostics_["converged"]
    Xd = X.toarray()
    p_dense = crammer_singer_objective(Xd, y, dense.coef_, dense.intercept_, 1.0)
    p_sparse = crammer_singer_objective(Xd, y, sparse.coef_, sparse.intercept_, 1.0)
    assert sparse.coef_.shape == (X.shape[1], c)
    assert p_sparse >= p_dense * (1 - 1e-8)
    assert p_sparse <= p_dense * (1 + 1e-6)
    assert sparse.objective_[0] == pytest.approx(p_sparse, rel=1e-12)
    if not fit_intercept:
        assert not sparse.intercept_.any()
    for k in untied_prefixes(np.linalg.norm(dense.coef_, axis=1)):
        assert set(sparse.ranking_[:k]) == set(dense.ranking_[:k])


def test_l1svm_stops_at_its_iteration_budget_with_a_warning_and_its_true_gap(monkeypatch):
    """Rare, z-scaled count features make LIBLINEAR crawl: the refits stop once their iterations reach
    1,000 per Newton step of max_iter, the kept fit's gap is the certificate recomputed here, and the
    fit says it is not converged."""
    fits: list[tuple[int, int]] = []

    class Recording(si.LinearSVC):
        def fit(self, X, y):
            out = super().fit(X, y)
            fits.append((self.max_iter, int(np.max(self.n_iter_))))
            return out

    monkeypatch.setattr(si, "LinearSVC", Recording)
    rng = np.random.default_rng(0)
    n, d = 600, 20_000
    y = np.arange(n) % 2
    X = sp.csr_matrix((rng.integers(1, 6, n * 40).astype(float), rng.integers(0, d, n * 40),
                       np.arange(0, n * 40 + 1, 40)), shape=(n, d))
    X.sum_duplicates()
    sd = np.sqrt(np.asarray(X.multiply(X).mean(axis=0)).ravel() - np.asarray(X.mean(axis=0)).ravel() ** 2)
    X = (X @ sp.diags(1.0 / np.where(sd > 0, sd, 1.0))).tocsr()
    sel = make_selector("l1svm", {"max_iter": 1, "path_steps": 0, "n_features_to_select": 5})
    with pytest.warns(si.ConvergenceWarning, match="1,000 iterations of LIBLINEAR per problem at most"):
        fit_sparse(sel, X, y)
    assert sum(it for _, it in fits) <= 1000 and fits[0][0] == 100
    assert all(cap <= 1000 for cap, _ in fits)
    assert not sel.diagnostics_["converged"]
    w, b, C = sel.coef_[:, 0], sel.intercept_[0], 1.0
    yk = np.where(y == 1, 1.0, -1.0)
    r = np.maximum(0.0, 1.0 - yk * (X @ w + b))
    primal = np.abs(w).sum() + abs(b) + C * (r @ r)
    # the dual value of the scaled guess alpha = 2 C r, written out from the dual problem
    alpha = 2 * C * r
    g = np.abs(np.append(X.T @ (alpha * yk), (alpha * yk).sum())).max()
    s_best = min(alpha.sum() * 2 * C / (alpha @ alpha), 1.0 / g)
    dual = s_best * alpha.sum() - s_best**2 * (alpha @ alpha) / (4 * C)
    assert sel.diagnostics_["duality_gap"] == pytest.approx((primal - dual) / primal, rel=1e-9)
    assert sel.diagnostics_["duality_gap"] > sel.tol


def test_l1svm_at_100000_features_fits_in_2_gb_sparse_and_dense(tmp_path):
    """n = 200, d = 100,000 at 0.5 %: the sparse route under a 2 GB address-space limit, and the
    dense fit under the same limit (its LARS buffer grows with the samples; scikit-learn's
    ``lars_path`` with the previous cap allocated (d + 1)^2 values, a MemoryError here)."""
    script = textwrap.dedent("""
        import resource, warnings
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
        import numpy as np, scipy.sparse as sp
        from fsbench.selectors import fit_sparse, make_selector
        rng = np.random.default_rng(0)
        X = sp.random(200, 100_000, density=0.005, format="csr", random_state=0, data_rvs=rng.standard_normal)
        y = np.arange(200) % 3
        X = X.tolil()
        X[y == 0, 0] = 2.0
        X = X.tocsr()
        sel = fit_sparse(make_selector("l1svm", {"n_features_to_select": 10, "path_steps": 1}), X, y)
        assert sorted(sel.ranking_) == list(range(100_000))
        print("sparse", sel.ranking_[0], sel.diagnostics_["converged"], flush=True)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                dense = make_selector("l1svm", {"n_features_to_select": 10, "path_steps": 1}).fit(X.toarray(), y)
            print("dense", dense.ranking_[0], dense.diagnostics_["converged"], dense.diagnostics_["solver"])
        except MemoryError:
            print("dense MemoryError")
    """)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=500)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split("\n")[:2] == ["sparse 0 True", "dense 0 True lars"]


# ----------------------------------------------------------------------------- refusals, identity, memory
NOT_ACCEPTED = sorted(set(registry()) - set(EXACT) - {"l1svm", "cssvm"})


def test_accepts_exactly_the_implemented_routes():
    assert set(SPARSE_ROUTES) == set(EXACT) | {"l1svm", "cssvm"}
    assert all(accepts_sparse(name) for name in SPARSE_ROUTES)
    assert NOT_ACCEPTED and not any(accepts_sparse(name) for name in NOT_ACCEPTED)
    assert not accepts_sparse("no_such_selector")


def one_sentence(message: str) -> bool:
    return message.endswith(".") and not re.search(r"[.;!?]\s", message[:-1])


@pytest.mark.parametrize("name", NOT_ACCEPTED)
def test_a_selector_without_a_sparse_route_is_refused_in_one_sentence(name):
    X, y = sparse_problem(0)
    with pytest.raises(ValueError) as err:
        fit_sparse(make_selector(name), X, y)
    assert name in str(err.value) and one_sentence(str(err.value))
    with pytest.raises(ValueError) as err:
        sparse_code(name)
    assert one_sentence(str(err.value))


def test_a_subclass_of_a_built_in_selector_is_refused():
    X, y = sparse_problem(0)
    cls = type(make_selector("fisher"))
    with pytest.raises(ValueError, match="does not read sparse data"):
        fit_sparse(type("MyFisher", (cls,), {})(), X, y)


def test_bad_input_is_refused_as_the_dense_fit_refuses_it():
    X, y = sparse_problem(0)
    with pytest.raises(ValueError) as err:
        fit_sparse(make_selector("fisher"), X.toarray(), y)
    assert one_sentence(str(err.value))
    for bad_X, bad_y in ((X, y[:-1]), (X, np.zeros(N)), (X[:, :0], y)):
        with pytest.raises(ValueError) as dense:
            make_selector("fisher").fit(bad_X.toarray(), bad_y)
        with pytest.raises(ValueError) as sparse:
            fit_sparse(make_selector("fisher"), bad_X, bad_y)
        assert str(sparse.value).replace("csr_matrix", "array") == str(dense.value)


def test_the_parameters_are_checked_as_fit_checks_them():
    X, y = sparse_problem(0)
    with pytest.raises(ValueError, match="n_bins"):
        fit_sparse(make_selector("chi2", {"n_bins": 5}), X, y)  # n_bins without discretize='quantile'


def test_sparse_code_combines_the_route_and_the_selector(monkeypatch):
    route = module_digest("fsbench.selectors.sparse_input", SELECTOR_SCOPE)
    for name in ("fisher", "l1svm", "mim"):
        expected = hashlib.sha256(f"{route} {selector_code(name)}".encode()).hexdigest()[:16]
        assert sparse_code(name) == expected
        assert re.fullmatch(r"[0-9a-f]{16}", sparse_code(name))
    # selectors of one module share their code, as they share selector_code
    assert len({sparse_code(name) for name in SPARSE_ROUTES}) == len({selector_code(name) for name in SPARSE_ROUTES})
    before = sparse_code("fisher")
    monkeypatch.setattr(si, "selector_code", lambda name: "0123456789abcdef")  # the selector's module edited
    assert sparse_code("fisher") != before
    monkeypatch.undo()
    assert sparse_code("fisher") == before
    monkeypatch.setattr(si, "module_digest", lambda module, scope: "fedcba9876543210")  # this module edited
    assert sparse_code("fisher") != before


def test_existing_identities_are_unchanged():
    assert protocol_code() == "ad53e4ef72784e11"
    selectors = Path(si.__file__).parent
    for path in selectors.glob("*.py"):
        if path.name not in ("__init__.py", "sparse_input.py"):
            assert "sparse_input" not in path.read_text(), path.name  # no selector's digest depends on it


def test_dense_fit_bytes_is_at_least_the_matrix_and_what_the_method_builds():
    n, d = 20_000, 100_000
    for name in registry():
        assert dense_fit_bytes(name, n, d) >= 8 * n * d
    assert dense_fit_bytes("l1svm", 200, 100_000) >= 8 * 100_001**2  # LARS's (d + 1)^2 buffer
    assert dense_fit_bytes("mim", n, d) >= 8 * n * d + 8 * n * d  # the matrix and its int64 codes
    with pytest.raises(Exception, match="Unknown selector"):
        dense_fit_bytes("no_such_selector", 10, 10)
    with pytest.raises(ValueError):
        dense_fit_bytes("fisher", 0, 10)


@pytest.mark.parametrize("name", ["fisher", "ttest", "variance", "gini", "kruskal", "chi2", "su", "mim", "jmi",
                                  "mrmr", "trace_ratio", "ls_l21", "rfe"])
def test_dense_fit_bytes_bounds_the_measured_peak(name):
    """tracemalloc's peak of the dense fit (plus the matrix, allocated before) on 300 x 4,000."""
    rng = np.random.default_rng(0)
    n, d = 300, 4000
    X = rng.standard_normal((n, d))
    y = np.arange(n) % 3
    X[:, :5] += y[:, None]
    sel = make_selector(name)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sel.fit(X, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak + X.nbytes <= dense_fit_bytes(name, n, d)


@pytest.mark.parametrize("name", ["fisher", "chi2", "mim", "kruskal", "mrmr", "jmi", "l1svm", "cssvm", "random"])
def test_sparse_fit_bytes_bounds_the_measured_peak(name):
    """tracemalloc's peak of the sparse fit on 400 x 6,000 CSR at 1 % (the matrix allocated before)."""
    from fsbench.selectors import sparse_fit_bytes

    rng = np.random.default_rng(1)
    n, d = 400, 6000
    X = sp.random(n, d, density=0.01, format="csr", random_state=rng)
    y = np.arange(n) % 3
    sel = make_selector(name)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit_sparse(sel, X, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= sparse_fit_bytes(name, n, d, X.nnz)


def test_sparse_fit_bytes_of_the_states_grows_with_n_times_d_whatever_the_density():
    from fsbench.selectors import sparse_fit_bytes

    for name in ("mrmr", "jmi"):
        assert sparse_fit_bytes(name, 20_000, 100_000, 2_000_000) >= 16 * 20_000 * 100_000
    assert sparse_fit_bytes("fisher", 20_000, 100_000, 2_000_000) < 2_000_000_000
    with pytest.raises(ValueError, match="does not read sparse data"):
        sparse_fit_bytes("relieff", 10, 10, 5)
