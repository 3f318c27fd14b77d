"""Synthetic datasets whose relevant features are known, and irrelevant probe columns for real data.

A selector run on these is judged by what it finds. Three generators (:data:`GENERATOR_KINDS`),
each returning a :class:`GeneratedData` whose ``relevant`` lists the columns that carry the class:

- ``classification``: the algorithm of scikit-learn's ``make_classification`` (Guyon 2003, the
  generator of the NIPS 2003 feature selection challenge), reimplemented so that no BLAS kernel
  decides a bit: the random numbers come from ``RandomState(seed)`` in exactly the order
  scikit-learn draws them (``shuffle=True``: samples and features shuffled as it shuffles them),
  and its two matrix products, a cluster's covariance ``X_k @ A`` and the redundant features
  ``X_inf @ B``, are sums over the informative features in a fixed order
  (:func:`fsbench.fixed_order.linear_kernel`). Equal to scikit-learn's output up to the rounding
  of those products, so a seed names the same problem in both.
- ``madelon``: Guyon's Madelon (Guyon 2003, the MADELON set of the NIPS 2003 challenge): two
  classes, one Gaussian cluster on each of the 2^n_informative vertices of a hypercube with sides
  of length 2 (the points of {-1, 1}^n_informative), the vertices labelled at random, exactly half
  to each class, so the class is carried jointly by the informative features (XOR-like): the
  mean of an informative feature over the class-1 cluster centres minus that over the class-0
  ones is (m - 2^(n_informative-2)) / 2^(n_informative-3), m the number of class-1 vertices where
  the feature is +1, small unless the random labelling splits that feature's vertices unevenly
  (it would be 2 were the class one coordinate).
  Otherwise it is the ``classification`` generator with n_redundant = n_repeated = 0,
  n_classes = 2, n_clusters_per_class = 2^(n_informative-1), class_sep = 1, hypercube = True,
  shift = 0, scale = 1: each cluster's standard normal points multiplied by its random matrix
  (fixed-order sums), flip_y (default 0.01) of the labels redrawn at random, the remaining
  features standard normal noise, samples and features shuffled; relevant = the n_informative
  informative columns. Draw order, from ``RandomState(seed)``: first ``permutation(2^n_informative)``,
  ``order``; cluster k (the k-th block of samples before the shuffle, class k % 2, the block
  sizes of make_classification) sits on the vertex whose coordinates are 2b - 1 for the binary
  digits b of ``order[k]``, most significant first, so that a vertex's class is the parity of its
  position in ``order``: a uniformly random balanced labelling. Then exactly make_classification's
  draws, in its order (its hypercube of all 2^n_informative vertices draws nothing).
  How it differs: from ``make_classification`` with these settings only in the vertices' order
  (scikit-learn takes them in binary order, so cluster k, class k % 2, makes the class the last
  hypercube coordinate: one informative feature separates the classes by itself); from the
  original Madelon (500 features: 5 informative, 15 linear combinations of them, 480 probes) in
  having no linear combinations: the original counted them among its 20 relevant features, here
  there are none, so the relevant set is exactly the n_informative informative features.
  With n_informative = 2, four of the six balanced labellings of the square are one coordinate.
- ``xor``: y is the parity of the signs of ``n_relevant`` features in a balanced design, so each
  relevant feature alone (any proper subset of them) carries no information about y, and every
  feature has the same marginal distribution: no univariate statistic can tell relevant from noise.

:func:`add_probes` appends probe columns to real data (:data:`PROBE_KINDS`): permuted copies of
real columns (the shadow features of Boruta, Kursa and Rudnicki 2010) or standard normal columns
(the random probes of Stoppiglia et al. 2003), irrelevant by construction.

Every array comes from the seed and elementwise arithmetic only, so it has the same bits on every
machine and every call. Bad parameters are a :class:`fsbench.errors.DataError` in one sentence
naming the parameter and the fix.

Sources: I. Guyon, "Design of experiments of the NIPS 2003 variable selection benchmark" (2003);
I. Guyon, S. Gunn, A. Ben-Hur, G. Dror, "Result analysis of the NIPS 2003 feature selection
challenge", NIPS 2004; scikit-learn's ``sklearn/datasets/_samples_generator.py`` and
``sklearn/utils/_random.pyx`` (``sample_without_replacement``); M. Kursa, W. Rudnicki, "Feature
selection with the Boruta package", J. Stat. Softw. 36 (2010); H. Stoppiglia, G. Dreyfus,
R. Dubois, Y. Oussar, "Ranking a random feature for variable and feature selection", JMLR 3 (2003).
"""

from __future__ import annotations

import difflib
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from fsbench.errors import DataError
from fsbench.fixed_order import linear_kernel

__all__ = ["GENERATOR_KINDS", "PROBE_KINDS", "GeneratedData", "add_probes", "check_generator", "generate",
           "generator_parameters"]

GENERATOR_KINDS: tuple[str, ...] = ("classification", "madelon", "xor")
PROBE_KINDS: tuple[str, ...] = ("permuted", "gaussian")

#: the fewest samples per class a generator may make (for xor also 4 per sign pattern)
MIN_PER_CLASS = 10
#: the largest seed RandomState accepts
MAX_SEED = 2**32 - 1

_DEFAULTS: dict[str, dict[str, object]] = {
    "classification": {"n_samples": 100, "n_features": 20, "n_informative": 2, "n_redundant": 2, "n_repeated": 0,
                       "n_classes": 2, "n_clusters_per_class": 2, "flip_y": 0.01, "class_sep": 1.0,
                       "hypercube": True, "shift": 0.0, "scale": 1.0, "seed": 0},
    "madelon": {"n_samples": 2000, "n_features": 500, "n_informative": 5, "flip_y": 0.01, "seed": 0},
    "xor": {"n_samples": 400, "n_features": 200, "n_relevant": 2, "seed": 0},
}
#: parameters that may also be None: scikit-learn then draws a shift (scale) per feature
_NULLABLE = frozenset({"shift", "scale"})
#: the least value of each integer parameter
_INT_MINIMA = {"n_samples": 1, "n_features": 1, "n_informative": 1, "n_redundant": 0, "n_repeated": 0,
               "n_classes": 2, "n_clusters_per_class": 1, "n_relevant": 2, "seed": 0}


@dataclass(frozen=True, eq=False)
class GeneratedData:
    """A generated dataset: X float64 (n_samples, n_features) C-contiguous, y int64 labels
    0..n_classes-1, ``relevant`` the sorted int64 indices of the columns that carry the class,
    ``description`` one line saying how it was made. The arrays are read-only."""

    X: np.ndarray
    y: np.ndarray
    relevant: np.ndarray
    description: str


# ----------------------------------------------------------------------------- parameters
def _check_kind(kind: object, kinds: tuple[str, ...], what: str) -> str:
    if isinstance(kind, str) and kind in kinds:
        return kind
    close = difflib.get_close_matches(str(kind), kinds, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise DataError(f"unknown {what} kind {kind!r}{hint}; use one of {', '.join(kinds)}.")


def generator_parameters(kind: str) -> dict[str, object]:
    """The parameters ``kind`` accepts and their defaults (``seed`` included, default 0)."""
    return dict(_DEFAULTS[_check_kind(kind, GENERATOR_KINDS, "generator")])


def _as_int(kind: str, key: str, value: object) -> int:
    """An integer (an integral float such as YAML's 1e3 too) at least its minimum."""
    low = 2 if (kind, key) == ("madelon", "n_informative") else _INT_MINIMA[key]
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        number = int(value)
    elif (isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
          and float(value).is_integer()):
        number = int(value)
    else:
        raise DataError(f"the {kind} generator's {key} must be a whole number, got {value!r}; "
                        f"write for example {key}: {_DEFAULTS[kind][key]}.")
    if number < low:
        raise DataError(f"the {kind} generator's {key} must be at least {low}, got {number}; "
                        f"set {key} to {low} or more.")
    if key == "seed" and number > MAX_SEED:
        raise DataError(f"the {kind} generator's seed must be at most 2**32 - 1 = {MAX_SEED}, got {number}; "
                        "choose a smaller seed.")
    return number


def _as_float(kind: str, key: str, value: object) -> float | None:
    if value is None and key in _NULLABLE:
        return None
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or not math.isfinite(value):
        none = " or null (a random value per feature)" if key in _NULLABLE else ""
        raise DataError(f"the {kind} generator's {key} must be a finite number{none}, got {value!r}; "
                        f"write for example {key}: {_DEFAULTS[kind][key]}.")
    return float(value)


def _as_bool(kind: str, key: str, value: object) -> bool:
    if not isinstance(value, bool | np.bool_):
        raise DataError(f"the {kind} generator's {key} must be true or false, got {value!r}; "
                        f"write {key}: true or {key}: false.")
    return bool(value)


def _refuse(kind: str, problem: str, fix: str) -> DataError:
    return DataError(f"the {kind} generator's {problem}; {fix}.")


def check_generator(kind: str, params: Mapping[str, object]) -> dict[str, object]:
    """Validate and complete the parameters of generator ``kind``: defaults filled in, integers as
    int (an integral float such as 1e3 accepted), floats as float, booleans as bool.

    Raises :class:`fsbench.errors.DataError` in one sentence naming the problem and the fix for an
    unknown kind or key, a wrong type or range, or inconsistent parameters: more informative,
    redundant and repeated features than features, too few informative features for the clusters'
    vertices, fewer than 10 samples per class, more relevant features than features, fewer than 4
    samples per sign pattern (xor). Generates nothing.
    """
    kind = _check_kind(kind, GENERATOR_KINDS, "generator")
    defaults = _DEFAULTS[kind]
    if not isinstance(params, Mapping):
        raise DataError(f"the {kind} generator's parameters must be a mapping such as "
                        f"{{n_samples: {defaults['n_samples']}}}, got {type(params).__name__}; "
                        "write them as key: value.")
    for key in params:
        if key not in defaults:
            close = difflib.get_close_matches(str(key), list(defaults), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise DataError(f"the {kind} generator has no parameter {key!r}{hint}; "
                            f"its parameters are {', '.join(defaults)}.")
    checked: dict[str, object] = {}
    for key, default in defaults.items():
        value = params.get(key, default)
        if isinstance(default, bool):
            checked[key] = _as_bool(kind, key, value)
        elif isinstance(default, int):
            checked[key] = _as_int(kind, key, value)
        else:
            checked[key] = _as_float(kind, key, value)
    _check_consistency(kind, checked)
    return checked


def _check_consistency(kind: str, p: dict) -> None:
    if "flip_y" in p and not 0.0 <= p["flip_y"] <= 1.0:
        raise _refuse(kind, f"flip_y must lie in [0, 1], got {p['flip_y']}",
                      "set flip_y to the fraction of labels to redraw at random, such as 0.01")
    if kind == "classification":
        if p["class_sep"] <= 0:
            raise _refuse(kind, f"class_sep must be positive, got {p['class_sep']}",
                          "set class_sep to half the hypercube's side, such as 1.0")
        if p["scale"] is not None and p["scale"] <= 0:
            raise _refuse(kind, f"scale must be positive or null, got {p['scale']}", "set scale to 1.0")
        used = p["n_informative"] + p["n_redundant"] + p["n_repeated"]
        if used > p["n_features"]:
            raise _refuse(kind, f"n_informative + n_redundant + n_repeated = {used} exceeds n_features = "
                          f"{p['n_features']}", f"raise n_features to at least {used} or lower those counts")
        clusters = p["n_classes"] * p["n_clusters_per_class"]
        if 2 ** p["n_informative"] < clusters:
            need = (clusters - 1).bit_length()
            raise _refuse(kind, f"n_informative = {p['n_informative']} gives a hypercube of "
                          f"{2 ** p['n_informative']} vertices, too few for n_classes * n_clusters_per_class = "
                          f"{clusters} clusters", f"raise n_informative to at least {need} or lower "
                          "n_clusters_per_class")
    if kind == "madelon":
        if not 2 <= p["n_informative"] <= 10:
            raise _refuse(kind, f"n_informative must lie in 2..10 (2^n_informative clusters), got "
                          f"{p['n_informative']}", "set n_informative to 5 as in Madelon")
        if p["n_informative"] > p["n_features"]:
            raise _refuse(kind, f"n_informative = {p['n_informative']} exceeds n_features = {p['n_features']}",
                          f"raise n_features to at least {p['n_informative']}")
    if kind == "xor":
        r = p["n_relevant"]
        if r > p["n_features"]:
            raise _refuse(kind, f"n_relevant = {r} exceeds n_features = {p['n_features']}",
                          f"raise n_features to at least {r} or lower n_relevant")
        if p["n_samples"] < 4 * 2**r:
            raise _refuse(kind, f"n_samples = {p['n_samples']} gives fewer than 4 samples to each of the 2^{r} = "
                          f"{2**r} sign patterns of n_relevant = {r} features",
                          f"raise n_samples to at least {4 * 2**r} or lower n_relevant")
    n_classes = p.get("n_classes", 2)
    if p["n_samples"] < MIN_PER_CLASS * n_classes:
        raise _refuse(kind, f"n_samples = {p['n_samples']} gives fewer than {MIN_PER_CLASS} samples to each of "
                      f"{n_classes} classes", f"raise n_samples to at least {MIN_PER_CLASS * n_classes}")


# ----------------------------------------------------------------------------- generators
def generate(kind: str, params: Mapping[str, object]) -> GeneratedData:
    """:func:`check_generator`, then build the data from ``params['seed']``."""
    p = check_generator(kind, params)
    if kind == "xor":
        return _xor(**p)
    if kind == "madelon":
        n = p["n_informative"]
        data = _classification(n_samples=p["n_samples"], n_features=p["n_features"], n_informative=n,
                               n_redundant=0, n_repeated=0, n_classes=2, n_clusters_per_class=2 ** (n - 1),
                               flip_y=p["flip_y"], class_sep=1.0, hypercube=True, shift=0.0, scale=1.0,
                               seed=p["seed"], random_vertex_order=True)
        description = (f"Madelon (Guyon 2003): {n} informative features, clusters on the {2**n} vertices of a "
                       f"{n}-cube labelled at random ({2 ** (n - 1)} per class), {p['n_features'] - n} noise "
                       f"features; 2 classes, flip_y {p['flip_y']}, {p['n_samples']} samples")
        return GeneratedData(data.X, data.y, data.relevant, description)
    return _classification(**p)


def _sample_without_replacement(n_population: int, n_samples: int, rng: np.random.RandomState) -> np.ndarray:
    """scikit-learn's ``sample_without_replacement(..., method="auto")``, draw for draw: a
    permutation when 0.01 < ratio < 0.99, else tracking selection (ratio <= 0.01) or reservoir
    sampling (ratio >= 0.99)."""
    ratio = n_samples / n_population if n_population != 0 else 1.0
    if 0.01 < ratio < 0.99:
        return rng.permutation(n_population)[:n_samples].astype(np.int64)
    out = np.empty(n_samples, dtype=np.int64)
    if ratio < 0.2:
        selected: set[int] = set()
        for i in range(n_samples):
            j = int(rng.randint(n_population, dtype=np.int64))
            while j in selected:
                j = int(rng.randint(n_population, dtype=np.int64))
            selected.add(j)
            out[i] = j
        return out
    out[:] = np.arange(n_samples)
    for i in range(n_samples, n_population):
        j = int(rng.randint(0, i + 1, dtype=np.int64))
        if j < n_samples:
            out[j] = i
    return out


def _hypercube(n_vertices: int, dimensions: int, rng: np.random.RandomState) -> np.ndarray:
    """scikit-learn's ``_generate_hypercube``: distinct vertices of the unit ``dimensions``-cube as
    0/1 rows, the bits of sampled integers most significant first (30 bits at most per integer)."""
    if dimensions > 30:
        high = rng.randint(2, size=(n_vertices, dimensions - 30), dtype=np.int64)
        return np.hstack([high, _hypercube(n_vertices, 30, rng)])
    values = _sample_without_replacement(2**dimensions, n_vertices, rng)
    shifts = np.arange(dimensions - 1, -1, -1, dtype=np.int64)
    return (values[:, None] >> shifts[None, :]) & 1


def _classification(*, n_samples: int, n_features: int, n_informative: int, n_redundant: int, n_repeated: int,
                    n_classes: int, n_clusters_per_class: int, flip_y: float, class_sep: float, hypercube: bool,
                    shift: float | None, scale: float | None, seed: int,
                    random_vertex_order: bool = False) -> GeneratedData:
    """make_classification, draw for draw; with ``random_vertex_order`` (Madelon: every vertex a
    cluster) the vertices are first put in the order of a random permutation."""
    # The statements follow make_classification's, in its order, so the draws line up.
    generator = np.random.RandomState(seed)
    n_random = n_features - n_informative - n_redundant - n_repeated
    n_clusters = n_classes * n_clusters_per_class
    weight = 1.0 / n_classes
    per_cluster = [int(n_samples * weight / n_clusters_per_class) for _ in range(n_clusters)]
    for i in range(n_samples - sum(per_cluster)):
        per_cluster[i % n_clusters] += 1

    X = np.zeros((n_samples, n_features))
    y = np.zeros(n_samples, dtype=np.int64)
    if random_vertex_order:
        if n_clusters != 2**n_informative:
            raise ValueError("a random vertex order needs a cluster on every vertex")
        order = generator.permutation(n_clusters).astype(np.int64)
        shifts = np.arange(n_informative - 1, -1, -1, dtype=np.int64)
        centroids = ((order[:, None] >> shifts[None, :]) & 1).astype(float)
    else:
        centroids = _hypercube(n_clusters, n_informative, generator).astype(float)
    centroids *= 2 * class_sep
    centroids -= class_sep
    if not hypercube:
        centroids *= generator.uniform(size=(n_clusters, 1))
        centroids *= generator.uniform(size=(1, n_informative))

    X[:, :n_informative] = generator.standard_normal(size=(n_samples, n_informative))
    stop = 0
    for k, centroid in enumerate(centroids):
        start, stop = stop, stop + per_cluster[k]
        y[start:stop] = k % n_classes
        A = 2 * generator.uniform(size=(n_informative, n_informative)) - 1
        # X_k @ A as sums over the informative features in order
        cluster = linear_kernel(X[start:stop, :n_informative], A.T)
        cluster += centroid
        X[start:stop, :n_informative] = cluster

    if n_redundant > 0:
        B = 2 * generator.uniform(size=(n_informative, n_redundant)) - 1
        X[:, n_informative:n_informative + n_redundant] = linear_kernel(X[:, :n_informative], B.T)
    n = n_informative + n_redundant
    if n_repeated > 0:
        indices = ((n - 1) * generator.uniform(size=n_repeated) + 0.5).astype(np.intp)
        X[:, n:n + n_repeated] = X[:, indices]
    if n_random > 0:
        X[:, -n_random:] = generator.standard_normal(size=(n_samples, n_random))

    flip_mask = generator.uniform(size=n_samples) < flip_y
    y[flip_mask] = generator.randint(n_classes, size=int(flip_mask.sum()), dtype=np.int64)

    if shift is None:
        shift = (2 * generator.uniform(size=n_features) - 1) * class_sep
    X += shift
    if scale is None:
        scale = 1 + 100 * generator.uniform(size=n_features)
    X *= scale

    # scikit-learn's shuffle(X, y): a permutation of the samples, then one of the features
    samples = np.arange(n_samples)
    generator.shuffle(samples)
    features = np.arange(n_features)
    generator.shuffle(features)
    X = np.ascontiguousarray(X[samples][:, features])
    y = y[samples]
    # column j holds original feature features[j]; the first n + n_repeated originals are relevant
    relevant = np.flatnonzero(features < n + n_repeated).astype(np.int64)
    description = (f"make_classification (Guyon 2003): {n_informative} informative, {n_redundant} redundant, "
                   f"{n_repeated} repeated, {n_random} noise features; {n_classes} classes, "
                   f"{n_clusters_per_class} clusters per class, class_sep {class_sep}, flip_y {flip_y}, "
                   f"{n_samples} samples")
    return _frozen(X, y, relevant, description)


def _xor(*, n_samples: int, n_features: int, n_relevant: int, seed: int) -> GeneratedData:
    rng = np.random.Generator(np.random.PCG64(seed))
    n_patterns = 2**n_relevant
    positions = rng.choice(n_features, size=n_relevant, replace=False)
    # every sign pattern floor(n / 2^r) times, the remainder patterns once more, chosen at random
    extra = np.sort(rng.choice(n_patterns, size=n_samples % n_patterns, replace=False))
    patterns = np.concatenate([np.repeat(np.arange(n_patterns), n_samples // n_patterns), extra])
    patterns = patterns[rng.permutation(n_samples)]
    negative = rng.integers(0, 2, size=(n_samples, n_features), dtype=np.int8).astype(bool)
    bits = (patterns[:, None] >> np.arange(n_relevant)[None, :]) & 1
    negative[:, positions] = bits.astype(bool)
    magnitude = rng.uniform(0.5, 1.5, size=(n_samples, n_features))
    X = np.where(negative, -magnitude, magnitude)
    y = (bits.sum(axis=1) % 2).astype(np.int64)
    description = (f"XOR parity (balanced design): y = parity of the signs of {n_relevant} relevant features, "
                   f"{n_features - n_relevant} noise features, every value sign * Uniform(0.5, 1.5); 2 classes, "
                   f"{n_samples} samples")
    return _frozen(X, y, np.sort(positions).astype(np.int64), description)


def _frozen(X: np.ndarray, y: np.ndarray, relevant: np.ndarray, description: str) -> GeneratedData:
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.int64)
    relevant = np.ascontiguousarray(relevant, dtype=np.int64)
    for arr in (X, y, relevant):
        arr.flags.writeable = False
    return GeneratedData(X, y, relevant, description)


# ----------------------------------------------------------------------------- probes
def add_probes(X: np.ndarray, *, n: int, kind: str, seed: int) -> np.ndarray:
    """``X`` with ``n`` probe columns appended after its own: a new float64 C-contiguous array
    (``X`` itself is never modified, and may be read-only).

    ``permuted``: each probe is a real column, its values permuted across the samples by the
    probe's own random permutation, so it is irrelevant by construction and has the real data's
    marginal distribution. The columns copied are chosen at random without replacement while
    n <= d; beyond that every column is copied once per round, each round in a new random order.
    ``gaussian``: standard normal columns. Everything from ``numpy.random.Generator(PCG64(seed))``.

    Raises :class:`fsbench.errors.DataError` (one sentence) for n < 1, an unknown kind, a bad seed
    or an empty X.
    """
    kind = _check_kind(kind, PROBE_KINDS, "probe")
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise DataError(f"the number of probes n must be a whole number of at least 1, got {n!r}; "
                        "set probes n to 1 or more, such as 1000.")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise DataError(f"the probes' seed must be a whole number of at least 0, got {seed!r}; "
                        "set probes seed to 0 or more.")
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.size == 0:
        raise DataError(f"probes need a samples x features matrix with at least one sample and one feature, "
                        f"got shape {X.shape}; add probes to a non-empty dataset.")
    n = int(n)
    n_samples, d = X.shape
    rng = np.random.Generator(np.random.PCG64(int(seed)))
    out = np.empty((n_samples, d + n), dtype=np.float64)
    out[:, :d] = X
    if kind == "gaussian":
        out[:, d:] = rng.standard_normal(size=(n_samples, n))
        return out
    rounds = -(-n // d)
    sources = np.concatenate([rng.permutation(d) for _ in range(rounds)])[:n]
    for j, source in enumerate(sources):
        out[:, d + j] = X[rng.permutation(n_samples), source]
    return out
