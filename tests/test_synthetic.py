"""Synthetic datasets with known relevant features, and probe columns, checked against independent
computations.

- classification: scikit-learn's ``make_classification`` itself (y equal, X within 1e-12 of each
  column's largest value: only the rounding of its BLAS products differs), and its documented
  unshuffled column order (informative, redundant, repeated, noise), matched to the generated
  columns by an assignment, for the relevant set; scipy's ANOVA F test for the noise.
- madelon: ``make_classification`` with the Madelon settings, drawing after the stated first draw
  (the vertex permutation), gives the same labels, flips, noise and shuffles, and informative
  values that differ by a vertex difference (0 or +-2); its unshuffled output's blocks are the
  clusters, so each generated cluster's vertex and class are read off the data: every vertex of
  {-1, 1}^n once, exactly half per class, a labelling that differs between seeds and is no
  single coordinate; a feature's sign correlates with y far less than under make_classification's
  labelling (class = last coordinate); ANOVA on the noise.
- xor: mutual information written out with ``collections.Counter`` and ``math.log2`` (exactly 0
  when the design is balanced), the parity written out, scipy's two-sample KS test.
- probes: sorted values against the real columns, byte comparisons, sample moments.
- refusals: one sentence naming the parameter and the fix.
"""

from __future__ import annotations

import inspect
import itertools
import math
import re
from collections import Counter

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment
from scipy.stats import f_oneway, ks_2samp
from sklearn.datasets import make_classification
from threadpoolctl import threadpool_limits

from fsbench.datasets.synthetic import (
    GENERATOR_KINDS,
    PROBE_KINDS,
    GeneratedData,
    add_probes,
    check_generator,
    generate,
    generator_parameters,
)
from fsbench.errors import DataError

# n_clusters / 2^n_informative decides how scikit-learn samples the hypercube's vertices: a
# permutation (between 0.01 and 0.99), tracking selection (<= 0.01), reservoir sampling (>= 0.99);
# above 30 informative features it draws the extra bits first. The cases cover each path.
CLASSIFICATION = [
    dict(n_samples=300, n_features=60, n_informative=10, n_redundant=10, n_repeated=3, n_classes=4, seed=1),
    dict(n_samples=200, n_features=30, n_informative=4, n_redundant=2, n_repeated=2, n_classes=3,
         n_clusters_per_class=1, flip_y=0.0, class_sep=0.1, seed=7),
    dict(n_samples=150, n_features=25, n_informative=3, n_redundant=0, n_repeated=4, n_classes=5,
         n_clusters_per_class=1, class_sep=8.0, flip_y=0.2, seed=11),
    dict(n_samples=120, n_features=40, n_informative=31, n_redundant=1, n_classes=2, class_sep=5.0, seed=3,
         shift=None, scale=None, hypercube=False),
    dict(n_samples=100, n_features=20, n_informative=12, n_classes=4, seed=3, shift=-2.5, scale=3.0),
    dict(n_samples=1270, n_features=8, n_informative=7, n_redundant=0, n_classes=127, n_clusters_per_class=1,
         seed=5),
    dict(seed=0),
]


def sklearn_classification(params: dict, *, shuffle: bool = True):
    kw = dict(params)
    seed = kw.pop("seed", 0)
    return make_classification(**kw, shuffle=shuffle, random_state=seed)


def madelon_as_sklearn(n_samples: int, n_features: int, n_informative: int, seed: int, flip_y: float = 0.01) -> dict:
    return dict(n_samples=n_samples, n_features=n_features, n_informative=n_informative, n_redundant=0,
                n_repeated=0, n_classes=2, n_clusters_per_class=2 ** (n_informative - 1), flip_y=flip_y,
                class_sep=1.0, hypercube=True, shift=0.0, scale=1.0, seed=seed)


def assert_close_to(X: np.ndarray, reference: np.ndarray) -> None:
    """X equals reference within 1e-12 of each column's largest magnitude."""
    assert X.shape == reference.shape
    scale = np.abs(reference).max(axis=0)
    assert np.all(np.abs(X - reference) <= 1e-12 * scale), np.max(np.abs(X - reference) / scale)


def assert_well_formed(data: GeneratedData, n_samples: int, n_features: int) -> None:
    assert data.X.dtype == np.float64 and data.X.flags.c_contiguous and data.X.shape == (n_samples, n_features)
    assert data.y.dtype == np.int64 and data.y.shape == (n_samples,)
    assert data.relevant.dtype == np.int64
    assert np.all(np.diff(data.relevant) > 0) and np.all((0 <= data.relevant) & (data.relevant < n_features))
    assert isinstance(data.description, str) and "\n" not in data.description and data.description


def align(X: np.ndarray, reference: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """rows, cols with X[rows][:, cols] == reference (to rounding): the sample order matched by each
    row's sorted values (invariant under a column permutation), then the columns by an assignment."""
    keys, ref_keys = np.sort(X, axis=1), np.sort(reference, axis=1)
    cost = np.abs(ref_keys[:, None, :] - keys[None, :, :]).max(axis=2)
    ref_rows, rows = linear_sum_assignment(cost)
    assert np.all(ref_rows == np.arange(len(ref_rows)))
    assert cost[ref_rows, rows].max() < 1e-9 * np.abs(reference).max()
    Xr = X[rows]
    cost = np.abs(reference[:, :, None] - Xr[:, None, :]).max(axis=0)
    ref_cols, cols = linear_sum_assignment(cost)
    assert cost[ref_cols, cols].max() < 1e-9 * np.abs(reference).max()
    return rows, cols


# ----------------------------------------------------------------------------- classification
@pytest.mark.parametrize("params", CLASSIFICATION, ids=[str(i) for i in range(len(CLASSIFICATION))])
def test_classification_equals_make_classification(params):
    data = generate("classification", params)
    X, y = sklearn_classification(params)
    np.testing.assert_array_equal(data.y, y)
    assert_close_to(data.X, X)
    full = check_generator("classification", params)
    assert_well_formed(data, full["n_samples"], full["n_features"])
    assert len(data.relevant) == full["n_informative"] + full["n_redundant"] + full["n_repeated"]
    assert set(np.unique(data.y)) <= set(range(full["n_classes"]))


@pytest.mark.parametrize("index", [0, 1, 2, 4])
def test_relevant_is_the_image_of_the_informative_redundant_and_repeated_columns(index):
    params = CLASSIFICATION[index]
    full = check_generator("classification", params)
    data = generate("classification", params)
    X0, y0 = sklearn_classification(params, shuffle=False)
    rows, cols = align(data.X, X0)
    np.testing.assert_array_equal(data.y[rows], y0)
    useful = full["n_informative"] + full["n_redundant"] + full["n_repeated"]
    np.testing.assert_array_equal(data.relevant, np.sort(cols[:useful]))
    # the shuffle moved them: the relevant columns are not simply the first ones
    assert not np.array_equal(data.relevant, np.arange(useful))


def test_noise_columns_are_independent_of_y_and_the_relevant_ones_are_not():
    data = generate("classification", dict(n_samples=300, n_features=1000, n_informative=10, n_redundant=10,
                                           n_classes=4, class_sep=1.0, seed=1))
    p = f_oneway(*[data.X[data.y == c] for c in range(4)]).pvalue
    noise = np.setdiff1d(np.arange(1000), data.relevant)
    assert len(noise) == 980
    # under independence the p-values are uniform: mean 1/2 (sd of the mean 0.009), 5% below 0.05
    assert 0.45 < p[noise].mean() < 0.55
    assert (p[noise] < 0.05).mean() < 0.08
    assert np.median(p[data.relevant]) < 1e-3


def test_check_generator_defaults_are_make_classifications():
    defaults = generator_parameters("classification")
    signature = inspect.signature(make_classification).parameters
    for key, value in defaults.items():
        if key != "seed":
            assert signature[key].default == value and type(signature[key].default) is type(value), key
    assert defaults["seed"] == 0
    assert set(signature) - set(defaults) == {"weights", "shuffle", "random_state", "return_X_y"}


# ----------------------------------------------------------------------------- madelon
def madelon_reference(n_samples: int, n_features: int, n_informative: int, seed: int, flip_y: float, *,
                      shuffle: bool):
    """make_classification with the Madelon settings, drawing from a RandomState(seed) that has
    first made the draw the generator's docstring states (a permutation of the 2^n_informative
    vertices): every draw after that one lines up with the generator's."""
    generator = np.random.RandomState(seed)
    generator.permutation(2**n_informative)
    kw = madelon_as_sklearn(n_samples, n_features, n_informative, seed, flip_y)
    del kw["seed"]
    return make_classification(**kw, shuffle=shuffle, random_state=generator)


def exact_alignment(X: np.ndarray, reference: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """rows, cols with X[rows][:, cols] == reference bit for bit, X being reference with its rows
    and columns permuted: a row is known by its sorted values, then a column by its values."""
    where = {np.sort(row).tobytes(): i for i, row in enumerate(X)}
    rows = np.array([where[np.sort(row).tobytes()] for row in reference])
    Xr = X[rows]
    where = {np.ascontiguousarray(column).tobytes(): j for j, column in enumerate(Xr.T)}
    cols = np.array([where[np.ascontiguousarray(column).tobytes()] for column in reference.T])
    np.testing.assert_array_equal(Xr[:, cols], reference)
    return rows, cols


def madelon_vertices(n_samples: int, n_informative: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The vertex (a point of {-1, 1}^n_informative) and the class of each of the generated data's
    clusters, flip_y = 0, recovered from the data with scikit-learn's unshuffled output: the
    blocks of consecutive samples there are the clusters (make_classification's layout, its
    vertex read off each block's mean), the generated informative values differ from its by one
    constant per block, the move from its vertex to the generated one."""
    n_features = n_informative + 7
    data = generate("madelon", dict(n_samples=n_samples, n_features=n_features, n_informative=n_informative,
                                    seed=seed, flip_y=0.0))
    X_sk, y_sk = madelon_reference(n_samples, n_features, n_informative, seed, 0.0, shuffle=True)
    X0, y0 = madelon_reference(n_samples, n_features, n_informative, seed, 0.0, shuffle=False)
    np.testing.assert_array_equal(data.y, y_sk)
    rows, cols = exact_alignment(X_sk, X0)  # same shuffle in both: the generated data's too
    np.testing.assert_array_equal(data.relevant, np.sort(cols[:n_informative]))
    ours, theirs = data.X[rows][:, cols[:n_informative]], X0[:, :n_informative]
    labels = data.y[rows]
    n_clusters = 2**n_informative
    vertices, classes = [], []
    for block in np.split(np.arange(n_samples), n_clusters):
        mean = theirs[block].mean(axis=0)
        their_vertex = np.sign(mean)
        assert np.all(np.abs(mean - their_vertex) < 0.75), mean
        move = ours[block] - theirs[block]
        assert np.all(np.abs(move - move[0]) < 1e-9)  # one constant per cluster
        vertex = their_vertex + np.round(move[0])
        assert np.all(np.abs(move[0] - (vertex - their_vertex)) < 1e-9)
        assert set(vertex.tolist()) <= {-1.0, 1.0}, vertex
        # the generated cluster is centred on its vertex (side 2, within-cluster sd about 1.3)
        assert np.all(np.abs(ours[block].mean(axis=0) - vertex) < 0.75)
        assert np.all(labels[block] == labels[block[0]])  # a cluster is one class (no flips)
        vertices.append(vertex)
        classes.append(labels[block[0]])
    return np.array(vertices), np.array(classes)


@pytest.mark.parametrize(("n_informative", "seed"), [(2, 0), (5, 1), (10, 2)])
def test_madelon_is_make_classification_but_for_its_vertices(n_informative, seed):
    n_samples, n_features = 600, 60
    data = generate("madelon", dict(n_samples=n_samples, n_features=n_features, n_informative=n_informative,
                                    seed=seed))
    assert_well_formed(data, n_samples, n_features)
    X_sk, y_sk = madelon_reference(n_samples, n_features, n_informative, seed, 0.01, shuffle=True)
    X0, _ = madelon_reference(n_samples, n_features, n_informative, seed, 0.01, shuffle=False)
    # labels, flips, noise and shuffles are scikit-learn's (its cluster k is class k % 2 too)
    np.testing.assert_array_equal(data.y, y_sk)
    rows, cols = exact_alignment(X_sk, X0)
    np.testing.assert_array_equal(data.relevant, np.sort(cols[:n_informative]))
    noise = np.setdiff1d(np.arange(n_features), data.relevant)
    assert_close_to(data.X[:, noise], X_sk[:, noise])
    # an informative value moves by the difference of two vertices of {-1, 1}^n: 0 or +-2
    move = data.X[:, data.relevant] - X_sk[:, data.relevant]
    assert np.all(np.min(np.abs(move[:, :, None] - np.array([-2.0, 0.0, 2.0])), axis=2) < 1e-9)
    assert np.any(np.abs(move) > 1)  # and some do move: the vertices are not in scikit-learn's order


@pytest.mark.parametrize(("n_informative", "n_samples"), [(3, 2400), (5, 3200)])
def test_madelon_labels_every_vertex_at_random_half_to_each_class(n_informative, n_samples):
    labellings = set()
    largest = []
    for seed in range(5):
        vertices, classes = madelon_vertices(n_samples, n_informative, seed)
        # every vertex of the hypercube carries one cluster
        assert {tuple(v) for v in vertices.tolist()} == set(itertools.product([-1.0, 1.0], repeat=n_informative))
        # exactly half of them to each class
        assert np.count_nonzero(classes == 1) == np.count_nonzero(classes == 0) == 2 ** (n_informative - 1)
        labellings.add(frozenset(tuple(v) for v in vertices[classes == 1].tolist()))
        # correlation 1 between the class and a vertex coordinate: the class is that coordinate, as
        # in make_classification. A random balanced labelling is one coordinate with probability
        # 2n / C(2^n, 2^(n-1)): 6/70 for n = 3, 2e-8 for n = 5, so only n = 5 must avoid it every time
        correlation = [abs(np.corrcoef(classes, vertices[:, j])[0, 1]) for j in range(n_informative)]
        if n_informative >= 5:
            assert max(correlation) < 1.0 - 1e-9
        largest.append(max(correlation))
    assert len(labellings) == 5  # each seed labels the vertices its own way
    assert np.mean(largest) < 0.8


@pytest.mark.parametrize("seed", range(5))
def test_madelon_class_is_carried_jointly_not_by_one_feature(seed):
    # The sign of an informative feature agrees with its cluster's vertex about 78% of the time
    # (within-cluster sd about 1.3), so when the class is one vertex coordinate, as in
    # make_classification with these settings, that feature's sign correlates with y at about
    # 0.56; with random vertex labels every one stays far below.
    n_samples, n_features, n_informative = 2000, 50, 5
    data = generate("madelon", dict(n_samples=n_samples, n_features=n_features, n_informative=n_informative,
                                    seed=seed))
    ours = max(abs(np.corrcoef(data.y, data.X[:, j] > 0)[0, 1]) for j in data.relevant)
    X0, y0 = sklearn_classification(madelon_as_sklearn(n_samples, n_features, n_informative, seed), shuffle=False)
    theirs = max(abs(np.corrcoef(y0, X0[:, j] > 0)[0, 1]) for j in range(n_informative))
    assert theirs > 0.5
    assert ours < 0.35


def test_madelon_noise_columns_are_independent_of_y():
    data = generate("madelon", dict(n_samples=600, n_features=500, n_informative=5, seed=1))
    p = f_oneway(data.X[data.y == 0], data.X[data.y == 1]).pvalue
    noise = np.setdiff1d(np.arange(500), data.relevant)
    assert len(noise) == 495 and len(data.relevant) == 5
    # uniform p-values: mean 1/2 (sd of the mean 0.013), 5% below 0.05
    assert 0.45 < p[noise].mean() < 0.55
    assert (p[noise] < 0.05).mean() < 0.08
    assert not np.array_equal(data.relevant, np.arange(5))


# ----------------------------------------------------------------------------- xor
def mutual_information(a, b) -> float:
    """I(a; b) in bits from counts: sum p(a, b) log2(p(a, b) / (p(a) p(b))), ratios of integers."""
    n = len(a)
    joint, ca, cb = Counter(zip(a, b, strict=True)), Counter(a), Counter(b)
    return sum(c / n * math.log2(c * n / (ca[u] * cb[v])) for (u, v), c in joint.items())


def entropy(a) -> float:
    n = len(a)
    return -sum(c / n * math.log2(c / n) for c in Counter(a).values())


@pytest.mark.parametrize(("n_samples", "n_relevant", "seed"), [(400, 2, 0), (320, 3, 1), (160, 5, 2), (64, 4, 3)])
def test_xor_relevant_features_are_individually_uninformative_and_jointly_determine_y(n_samples, n_relevant, seed):
    data = generate("xor", dict(n_samples=n_samples, n_features=50, n_relevant=n_relevant, seed=seed))
    assert_well_formed(data, n_samples, 50)
    assert len(data.relevant) == n_relevant
    negative = data.X < 0
    y = data.y.tolist()
    signs = [tuple(row) for row in negative[:, data.relevant].tolist()]
    # the parity of the negative relevant features is y
    assert y == [sum(s) % 2 for s in signs]
    # any proper subset of the relevant signs: exactly zero information (n is a multiple of 2^r)
    for size in range(1, n_relevant):
        for subset in itertools.combinations(range(n_relevant), size):
            assert mutual_information([tuple(s[i] for i in subset) for s in signs], y) == 0.0, subset
    assert mutual_information(signs, y) == pytest.approx(entropy(y), abs=1e-12)
    assert entropy(y) == 1.0
    # each sign pattern equally often
    assert set(Counter(signs).values()) == {n_samples // 2**n_relevant}
    assert len(Counter(signs)) == 2**n_relevant


@pytest.mark.parametrize(("n_samples", "r", "seed"), [(403, 3, 5)] + [(93, 4, s) for s in range(5)])
def test_xor_unbalanced_counts_differ_by_at_most_one(n_samples, r, seed):
    data = generate("xor", dict(n_samples=n_samples, n_features=20, n_relevant=r, seed=seed))
    counts = Counter(tuple(row) for row in (data.X[:, data.relevant] < 0).tolist())
    q, extra = divmod(n_samples, 2**r)
    assert len(counts) == 2**r
    assert sorted(counts.values()) == [q] * (2**r - extra) + [q + 1] * extra


def test_xor_every_feature_has_the_same_marginal_distribution():
    data = generate("xor", dict(n_samples=800, n_features=100, n_relevant=3, seed=7))
    noise = np.setdiff1d(np.arange(100), data.relevant)
    magnitude = np.abs(data.X)
    assert magnitude.min() >= 0.5 and magnitude.max() < 1.5
    pooled_noise = data.X[:, noise].ravel()
    for j in data.relevant:
        assert ks_2samp(data.X[:, j], pooled_noise).pvalue > 0.01
    # noise signs are fair coins: the share of negatives over all noise values is 1/2 within 4 sd
    assert abs((pooled_noise < 0).mean() - 0.5) < 4 * 0.5 / math.sqrt(pooled_noise.size)
    # samples in random order: the labels are not sorted or in blocks
    assert np.count_nonzero(np.diff(data.y)) > 200


def test_xor_relevant_positions_come_from_the_seed():
    positions = {tuple(generate("xor", dict(n_features=200, seed=s)).relevant) for s in range(6)}
    assert len(positions) == 6
    assert (0, 1) not in positions


# ----------------------------------------------------------------------------- probes
def real_data(n: int = 40, d: int = 6, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(n, d)) * np.arange(1, d + 1)


@pytest.mark.parametrize(("kind", "n"), [("permuted", 4), ("permuted", 6), ("permuted", 15), ("gaussian", 3)])
def test_probes_leave_the_real_columns_and_x_untouched(kind, n):
    X = real_data()
    X.flags.writeable = False
    before = X.tobytes()
    out = add_probes(X, n=n, kind=kind, seed=3)
    assert X.tobytes() == before
    assert out.dtype == np.float64 and out.flags.c_contiguous and out.shape == (40, 6 + n)
    assert not np.shares_memory(out, X)
    assert out[:, :6].tobytes() == X.tobytes()


@pytest.mark.parametrize(("n", "uses"), [(4, [0, 0, 1, 1, 1, 1]), (6, [1] * 6), (15, [2, 2, 2, 3, 3, 3])])
def test_each_permuted_probe_is_a_permuted_real_column(n, uses):
    X = real_data()
    out = add_probes(X, n=n, kind="permuted", seed=1)
    sorted_columns = np.sort(X, axis=0)
    sources = []
    for j in range(6, 6 + n):
        (match,) = [k for k in range(6) if np.array_equal(np.sort(out[:, j]), sorted_columns[:, k])]
        sources.append(match)
        assert not np.array_equal(out[:, j], X[:, match])  # its values moved
    # without replacement while n <= d, else each column once per round: how often each column is used
    assert sorted(Counter(sources).get(k, 0) for k in range(6)) == uses
    for start in range(0, n - n % 6, 6):
        assert sorted(sources[start:start + 6]) == list(range(6))


def test_gaussian_probes_are_standard_normal():
    out = add_probes(real_data(200, 3), n=500, kind="gaussian", seed=0)
    probes = out[:, 3:]
    assert abs(probes.mean()) < 0.01  # sd of the mean 1/sqrt(100000) = 0.003
    assert abs(probes.std() - 1.0) < 0.01


@pytest.mark.parametrize("kind", PROBE_KINDS)
def test_probes_are_deterministic_for_a_seed_and_differ_for_another(kind):
    X = real_data()
    a = add_probes(X, n=8, kind=kind, seed=5)
    assert a.tobytes() == add_probes(X, n=8, kind=kind, seed=5).tobytes()
    assert not np.array_equal(a[:, 6:], add_probes(X, n=8, kind=kind, seed=6)[:, 6:])


@pytest.mark.parametrize(("kind", "n"), [("permuted", 4), ("permuted", 15), ("gaussian", 3)])
def test_probes_of_sparse_data_are_the_dense_probes_and_stay_sparse(kind, n):
    import scipy.sparse

    from fsbench.datasets.sparse_probes import add_probes_sparse

    X = real_data()
    X[np.abs(X) < 1.0] = 0.0  # mostly zeros
    sparse = scipy.sparse.csr_matrix(X)
    before = (sparse.data.tobytes(), sparse.indices.tobytes(), sparse.indptr.tobytes())
    out = add_probes_sparse(sparse, n=n, kind=kind, seed=3)
    assert scipy.sparse.issparse(out) and out.format == "csr" and out.dtype == np.float64
    assert out.has_canonical_format
    np.testing.assert_array_equal(out.toarray(), add_probes(X, n=n, kind=kind, seed=3))
    assert (sparse.data.tobytes(), sparse.indices.tobytes(), sparse.indptr.tobytes()) == before


def test_probes_accept_an_integer_matrix():
    X = np.arange(12).reshape(4, 3)
    out = add_probes(X, n=2, kind="permuted", seed=0)
    np.testing.assert_array_equal(out[:, :3], X.astype(float))


# ----------------------------------------------------------------------------- determinism
SMALL = {"classification": dict(n_samples=120, n_features=30, n_informative=5, n_redundant=3, n_repeated=2,
                                n_classes=3, seed=2),
         "madelon": dict(n_samples=200, n_features=30, n_informative=4, seed=2),
         "xor": dict(n_samples=100, n_features=30, n_relevant=3, seed=2)}


def as_bytes(data: GeneratedData) -> tuple[bytes, bytes, bytes, str]:
    return data.X.tobytes(), data.y.tobytes(), data.relevant.tobytes(), data.description


@pytest.mark.parametrize("kind", GENERATOR_KINDS)
def test_generation_is_deterministic_with_any_thread_count(kind):
    first = as_bytes(generate(kind, SMALL[kind]))
    assert as_bytes(generate(kind, SMALL[kind])) == first
    with threadpool_limits(1):
        assert as_bytes(generate(kind, SMALL[kind])) == first
    other = generate(kind, SMALL[kind] | {"seed": 3})
    assert other.X.tobytes() != first[0]


@pytest.mark.parametrize("kind", GENERATOR_KINDS)
def test_generated_arrays_are_read_only(kind):
    data = generate(kind, SMALL[kind])
    for arr in (data.X, data.y, data.relevant):
        with pytest.raises(ValueError):
            arr[0] = 0


# ----------------------------------------------------------------------------- parameters
def test_check_generator_completes_and_converts():
    checked = check_generator("classification", {"n_samples": 1e3, "class_sep": 2, "shift": None})
    assert checked == generator_parameters("classification") | {"n_samples": 1000, "class_sep": 2.0, "shift": None}
    assert type(checked["n_samples"]) is int and type(checked["class_sep"]) is float
    assert check_generator("madelon", {}) == {"n_samples": 2000, "n_features": 500, "n_informative": 5,
                                              "flip_y": 0.01, "seed": 0}
    assert check_generator("xor", {"seed": np.int64(4)}) == {"n_samples": 400, "n_features": 200, "n_relevant": 2,
                                                             "seed": 4}
    # it only checks: a problem far too large to build is accepted at once
    assert check_generator("xor", {"n_samples": 10**9, "n_features": 10**8})["n_samples"] == 10**9


@pytest.mark.parametrize("kind", GENERATOR_KINDS)
def test_every_kind_builds_with_its_defaults(kind):
    defaults = generator_parameters(kind)
    data = generate(kind, {})
    assert_well_formed(data, defaults["n_samples"], defaults["n_features"])


def one_sentence(message: str) -> None:
    assert "\n" not in message and message.endswith("."), message
    assert not re.search(r"[.?!] [A-Z]", message), message


REFUSED = [
    ("clasification", {}, ["'clasification'", "did you mean 'classification'", "classification, madelon, xor"]),
    ("classification", {"n_informativ": 3}, ["'n_informativ'", "did you mean 'n_informative'"]),
    ("classification", {"weights": [0.5, 0.5]}, ["'weights'", "its parameters are n_samples"]),
    ("classification", {"n_samples": "100"}, ["n_samples", "whole number", "n_samples: 100"]),
    ("classification", {"n_samples": 100.5}, ["n_samples", "whole number"]),
    ("classification", {"n_features": True}, ["n_features", "whole number"]),
    ("classification", {"n_samples": 0}, ["n_samples", "at least 1"]),
    ("classification", {"n_classes": 1}, ["n_classes", "at least 2"]),
    ("classification", {"class_sep": "wide"}, ["class_sep", "finite number", "class_sep: 1.0"]),
    ("classification", {"flip_y": None}, ["flip_y", "finite number"]),
    ("classification", {"hypercube": 1}, ["hypercube", "true or false"]),
    ("classification", {"flip_y": 1.5}, ["flip_y", "[0, 1]", "such as 0.01"]),
    ("classification", {"class_sep": 0.0}, ["class_sep", "positive"]),
    ("classification", {"scale": -1.0}, ["scale", "positive", "set scale to 1.0"]),
    ("classification", {"seed": -1}, ["seed", "at least 0"]),
    ("classification", {"seed": 2**32}, ["seed", "at most 2**32 - 1"]),
    ("classification", {"n_informative": 15, "n_redundant": 10}, ["n_informative + n_redundant + n_repeated = 25",
                                                                 "n_features = 20", "at least 25"]),
    ("classification", {"n_informative": 2, "n_classes": 4, "n_samples": 100},
     ["n_informative = 2", "n_classes * n_clusters_per_class = 8", "raise n_informative to at least 3"]),
    ("classification", {"n_samples": 29, "n_classes": 3, "n_informative": 3},
     ["n_samples = 29", "10 samples", "3 classes", "raise n_samples to at least 30"]),
    ("classification", {"n_samples": 39, "n_classes": 4, "n_informative": 3}, ["n_samples", "at least 40"]),
    ("madelon", {"n_informative": 11}, ["n_informative", "2..10", "set n_informative to 5"]),
    ("madelon", {"n_informative": 1}, ["n_informative", "at least 2"]),
    ("madelon", {"n_informative": 5, "n_features": 3}, ["n_informative = 5", "n_features = 3",
                                                        "raise n_features to at least 5"]),
    ("madelon", {"n_redundant": 2}, ["'n_redundant'", "its parameters are n_samples"]),
    ("madelon", {"n_samples": 19}, ["n_samples", "at least 20"]),
    ("xor", {"n_relevant": 5, "n_features": 3}, ["n_relevant = 5", "n_features = 3", "at least 5"]),
    ("xor", {"n_relevant": 3, "n_samples": 31}, ["n_samples = 31", "2^3 = 8 sign patterns",
                                                 "raise n_samples to at least 32"]),
    ("xor", {"n_relevant": 2, "n_samples": 16}, ["n_samples = 16", "raise n_samples to at least 20"]),
    ("xor", {"n_relevant": 1}, ["n_relevant", "at least 2"]),
    ("xor", [("n_samples", 10)], ["mapping", "key: value"]),
]


@pytest.mark.parametrize(("kind", "params", "fragments"), REFUSED, ids=[str(i) for i in range(len(REFUSED))])
def test_bad_parameters_are_refused_in_one_sentence(kind, params, fragments):
    with pytest.raises(DataError) as info:
        check_generator(kind, params)
    message = str(info.value)
    one_sentence(message)
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    with pytest.raises(DataError):
        generate(kind, params)


def test_the_consistent_neighbours_of_the_refused_sets_are_accepted():
    # each refusal above sits on a boundary: one step inside it is accepted
    check_generator("classification", {"n_informative": 15, "n_redundant": 5})
    check_generator("classification", {"n_informative": 3, "n_classes": 4, "n_samples": 100})
    check_generator("classification", {"n_samples": 40, "n_classes": 4, "n_informative": 3})
    check_generator("classification", {"flip_y": 1.0, "seed": 2**32 - 1, "hypercube": False, "scale": None})
    check_generator("madelon", {"n_informative": 10, "n_samples": 20})
    check_generator("madelon", {"n_informative": 2, "n_features": 2})
    check_generator("xor", {"n_relevant": 3, "n_features": 3, "n_samples": 32})
    check_generator("xor", {"n_relevant": 2, "n_samples": 20})


def test_generator_parameters_of_an_unknown_kind_is_refused():
    with pytest.raises(DataError, match="did you mean 'madelon'"):
        generator_parameters("madelom")


PROBES_REFUSED = [
    (dict(n=0, kind="permuted", seed=0), ["n", "at least 1"]),
    (dict(n=2.5, kind="gaussian", seed=0), ["n", "whole number"]),
    (dict(n=3, kind="shuffled", seed=0), ["'shuffled'", "permuted, gaussian"]),
    (dict(n=3, kind="gausian", seed=0), ["did you mean 'gaussian'"]),
    (dict(n=3, kind="permuted", seed=-2), ["seed", "at least 0"]),
]


@pytest.mark.parametrize(("args", "fragments"), PROBES_REFUSED, ids=[str(i) for i in range(len(PROBES_REFUSED))])
def test_bad_probes_are_refused_in_one_sentence(args, fragments):
    with pytest.raises(DataError) as info:
        add_probes(real_data(), **args)
    one_sentence(str(info.value))
    for fragment in fragments:
        assert fragment in str(info.value), (fragment, str(info.value))


@pytest.mark.parametrize("shape", [(0, 5), (5, 0), (5,)])
def test_probes_for_an_empty_or_flat_x_are_refused(shape):
    with pytest.raises(DataError) as info:
        add_probes(np.zeros(shape), n=3, kind="gaussian", seed=0)
    one_sentence(str(info.value))
    assert "non-empty" in str(info.value) and str(shape) in str(info.value)
