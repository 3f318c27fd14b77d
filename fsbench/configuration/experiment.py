"""The experiment as fsbench runs it: a validated, frozen description (built by fsbench.configuration.parse)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, replace
from typing import Any

STANDARDIZE = ("train", "global", "none")
PROTOCOLS = ("holdout", "kfold")
SELECT_ON = ("train", "all")
CLASSIFIERS = ("linear_svm", "crammer_singer")
BACKENDS = ("libsvm", "liblinear")
RESERVED_PARAMS = {
    "n_features_to_select": "fsbench sets it from n_features",
    "random_state": "fsbench derives it from the config seed and the task",
}
#: the strings pandas reads as a missing value by default (``pandas._libs.parsers.STR_NA_VALUES``),
#: lower-cased: a selector, classifier or dataset named so is written to runs.csv.gz as that
#: string and read back as NaN, which no table, plot or rerun can use
MISSING_NAMES = frozenset({"", "#n/a", "#n/a n/a", "#na", "-1.#ind", "-1.#qnan", "-nan", "1.#ind", "1.#qnan",
                           "<na>", "n/a", "na", "nan", "null", "none"})


def reads_as_missing(name: str) -> bool:
    """Whether pandas would read ``name`` back from a CSV as a missing value (in any case, and
    with surrounding spaces: the strings of :data:`MISSING_NAMES`)."""
    return name.strip().lower() in MISSING_NAMES


# ----------------------------------------------------------------------------- the schema
@dataclass(frozen=True)
class SelectorConfig:
    """One selector of the experiment; ``params`` and ``grid`` are sorted (key, value) pairs.

    ``kind`` is ``builtin`` (``name`` is a registry name), or, for a user's selector, ``class``
    or ``score_func`` (``name`` is its import path, ``package.module:Name``); ``timeout`` limits
    each fit, in seconds.
    """

    name: str
    label: str
    params: tuple[tuple[str, Any], ...] = ()
    grid: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    kind: str = "builtin"
    timeout: float | None = None

    @property
    def is_plugin(self) -> bool:
        return self.kind != "builtin"

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "label": self.label, "params": dict(self.params),
                             "grid": {k: list(v) for k, v in self.grid}}
        if self.is_plugin:  # built-ins keep the fingerprints of older results
            d["kind"] = self.kind
        if self.timeout is not None:
            d["timeout"] = self.timeout
        return d

    @property
    def params_dict(self) -> dict[str, Any]:
        return dict(self.params)

    def grid_points(self) -> list[dict[str, Any]]:
        """Every combination of the grid, in a fixed order (the first key varies slowest)."""
        points: list[dict[str, Any]] = [{}]
        for key, values in self.grid:
            points = [{**p, key: v} for p in points for v in values]
        return points


@dataclass(frozen=True)
class DataFileConfig:
    """A dataset from a user's file: ``path`` (absolute; a config's paths are relative to its
    folder), the label column or the variables to read, and the file's sha256 when validated."""

    name: str
    path: str
    sha256: str
    label: str | int | None = None
    x: str | None = None
    y: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d = {"name": self.name, "path": self.path, "sha256": self.sha256}
        d.update({k: v for k, v in (("label", self.label), ("x", self.x), ("y", self.y)) if v is not None})
        return d


@dataclass(frozen=True)
class KnownDataConfig:
    """A dataset whose relevant features (or irrelevant probes) are known: generated from a seed
    (``generate``: the generator's parameters, completed with its defaults, ``kind`` among them),
    or real data (``base``, a registered name, or ``base_file``, a user's file) with ``probes``
    (``n``, ``kind``, ``seed``) appended and/or the ``relevant`` features the user declares (indices
    of the real features). ``generator_code`` is the code identity of the generators
    (fsbench.datasets.synthetic) when the data depends on them: generated data are identified by
    their parameters and the code that draws them, as a file by its bytes."""

    name: str
    generate: tuple[tuple[str, Any], ...] = ()
    base: str | None = None
    base_file: DataFileConfig | None = None
    probes: tuple[tuple[str, Any], ...] = ()
    relevant: tuple[int, ...] | None = None
    generator_code: str = ""

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name}
        if self.generate:
            d["generate"] = dict(self.generate)
        if self.base is not None:
            d["base"] = self.base
        if self.base_file is not None:
            d["base_file"] = self.base_file.to_dict()
        if self.probes:
            d["probes"] = dict(self.probes)
        if self.relevant is not None:
            d["relevant"] = list(self.relevant)
        if self.generator_code:
            d["generator_code"] = self.generator_code
        return d


@dataclass(frozen=True)
class ProtocolConfig:
    kind: str = "holdout"
    train_size: float | int = 0.6
    n_trials: int = 10
    n_splits: int = 5
    n_repeats: int = 1
    select_on: str = "train"

    @property
    def n_outer(self) -> int:
        """Number of (repeat, fold) splits."""
        return self.n_trials if self.kind == "holdout" else self.n_splits * self.n_repeats


@dataclass(frozen=True)
class InnerCVConfig:
    """Inner cross-validation folds: a fixed number, or ``small`` below ``below`` samples else ``large``."""

    n_splits: int | None = 3
    below: int | None = None
    small: int | None = None
    large: int | None = None

    def folds_for(self, n_train: int) -> int:
        if self.n_splits is not None:
            return self.n_splits
        return self.small if n_train < self.below else self.large


@dataclass(frozen=True)
class ClassifierConfig:
    name: str = "linear_svm"
    backend: str = "libsvm"
    C: tuple[float, ...] = (1.0,)

    @property
    def tuned(self) -> bool:
        return len(self.C) > 1


@dataclass(frozen=True)
class Experiment:
    name: str
    seed: int
    datasets: tuple[str, ...]
    selectors: tuple[SelectorConfig, ...]
    n_features: tuple[int, ...]
    standardize: str = "train"
    protocol: ProtocolConfig = field(default_factory=ProtocolConfig)
    inner_cv: InnerCVConfig = field(default_factory=InnerCVConfig)
    classifier: ClassifierConfig = field(default_factory=ClassifierConfig)
    n_jobs: int = 1
    description: str = ""
    source: str = "<config>"
    #: the entries of a ``classifiers:`` list (fsbench.evaluation.classifiers.ClassifierSpec); empty when the
    #: config names its one classifier with ``classifier:`` (rows then have no classifier column)
    classifiers: tuple[Any, ...] = ()
    #: datasets read from users' files (their names are in ``datasets`` too)
    data_files: tuple[DataFileConfig, ...] = ()
    #: datasets with known relevant features or probes (their names are in ``datasets`` too)
    known_data: tuple[KnownDataConfig, ...] = ()
    #: the config file's folder: first on the import path of every process that fits a selector
    #: (plugins by import path may live beside the config); not part of the configuration
    base_dir: str | None = None

    @property
    def classifier_specs(self) -> tuple[Any, ...]:
        """Every classifier as a ClassifierSpec (the single ``classifier:`` too); the first one scores
        a selector's grid."""
        if self.classifiers:
            return self.classifiers
        from fsbench.evaluation.classifiers import spec_from_config

        return (spec_from_config(self.classifier),)

    def to_dict(self) -> dict[str, Any]:
        """The resolved configuration as plain data (what ``config.yaml`` in a results dir holds)."""
        d = asdict(self)
        d.pop("source")
        d.pop("base_dir")
        if self.classifiers:
            d["classifiers"] = [c.to_dict() for c in self.classifiers]
            d.pop("classifier")
        else:  # a single classifier: the fingerprints of older results stay valid
            d.pop("classifiers")
        d["selectors"] = [s.to_dict() for s in self.selectors]
        d["datasets"] = list(self.datasets)
        d["n_features"] = list(self.n_features)
        if "classifier" in d:
            d["classifier"]["C"] = list(self.classifier.C)
        if self.data_files:
            d["data_files"] = [f.to_dict() for f in self.data_files]
        else:  # registry datasets only: the fingerprints of older results stay valid
            d.pop("data_files")
        if self.known_data:
            d["known_data"] = [k.to_dict() for k in self.known_data]
        else:  # as data_files: older fingerprints stay valid
            d.pop("known_data")
        return d

    def data_file(self, name: str) -> DataFileConfig | None:
        return next((f for f in self.data_files if f.name == name), None)

    def known(self, name: str) -> KnownDataConfig | None:
        """The dataset ``name``'s entry if its relevant features or probes are known, else None."""
        return next((k for k in self.known_data if k.name == name), None)

    def fingerprint(self) -> str:
        """Hash of everything that determines the results (not n_jobs, name or description)."""
        d = self.to_dict()
        for key in ("n_jobs", "name", "description"):
            d.pop(key)
        if d["protocol"]["select_on"] == "train":  # the default; keeps older fingerprints valid
            d["protocol"].pop("select_on")
        for selector in d["selectors"]:
            selector.pop("timeout", None)  # decides which fits fail, never a row's value
        for data_file in d.get("data_files", []):
            data_file.pop("path")  # where the file is does not change the rows; its bytes (sha256) do
        for known in d.get("known_data", []):
            if "base_file" in known:
                known["base_file"].pop("path")
        return hashlib.sha256(json.dumps(d, sort_keys=True, default=repr).encode()).hexdigest()[:16]

    def with_overrides(self, **changes: Any) -> Experiment:
        return replace(self, **changes)
