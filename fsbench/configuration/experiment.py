"""The experiment as fsbench runs it: a validated, frozen description (built by fsbench.configuration.parse).

The linear SVM's solver (``backend`` of ``linear_svm``) is ``libsvm`` (``SVC(kernel="linear")``,
one-vs-one, hinge loss), ``liblinear`` (``LinearSVC``, one-vs-rest, squared hinge) or ``auto``, a
config's default: LIBSVM when the task's training part has at most :data:`LIBSVM_MAX_TRAIN`
samples, LIBLINEAR above (:func:`resolve_backend`). The evaluation takes concrete backends only:
:meth:`Experiment.classifier_specs_for` and :meth:`Experiment.classifier_for` resolve ``auto`` for
a task's training part, and :meth:`Experiment.record_backend` names the resolved backend in the
rows of a single ``classifier:`` (those of a ``classifiers:`` list name it in their
``classifier_params``). The threshold is measured in ``benchmarks/solver_rule.md``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

STANDARDIZE = ("train", "global", "none")
PROTOCOLS = ("holdout", "kfold")
SELECT_ON = ("train", "all")
CLASSIFIERS = ("linear_svm", "crammer_singer")
#: the solvers of ``linear_svm``: ``auto`` (chosen by the training part's size), LIBSVM or LIBLINEAR
BACKENDS = ("auto", "libsvm", "liblinear")
#: ``backend: auto`` runs LIBSVM when a task's training part has at most this many samples and
#: LIBLINEAR above: a task on LIBSVM's side costs about what LIBLINEAR's does, while LIBSVM's cost
#: grows steeply above it (benchmarks/solver_rule.md)
LIBSVM_MAX_TRAIN = 300
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


def resolve_backend(backend: str, n_train: int) -> str:
    """The concrete backend of ``linear_svm`` for a training part of ``n_train`` samples: ``auto``
    is ``libsvm`` up to :data:`LIBSVM_MAX_TRAIN` samples and ``liblinear`` above; a pinned
    backend is itself."""
    if backend != "auto":
        return backend
    return "libsvm" if n_train <= LIBSVM_MAX_TRAIN else "liblinear"


@dataclass(frozen=True)
class ClassifierConfig:
    """A config's single ``classifier:``. ``backend`` may be ``auto`` here (a config's default);
    the evaluation takes the concrete one :meth:`resolved` gives. The dataclass's own default stays
    ``libsvm``: a ClassifierConfig built in code is the concrete spec it always was."""

    name: str = "linear_svm"
    backend: str = "libsvm"
    C: tuple[float, ...] = (1.0,)

    @property
    def tuned(self) -> bool:
        return len(self.C) > 1

    def resolved(self, n_train: int) -> ClassifierConfig:
        """This classifier with ``auto`` resolved for a training part of ``n_train`` samples."""
        if self.name != "linear_svm" or self.backend != "auto":
            return self
        return replace(self, backend=resolve_backend(self.backend, n_train))


def _resolved_spec(spec: Any, n_train: int) -> Any:
    """A ClassifierSpec of a ``classifiers:`` list with ``backend: auto`` resolved (others as they are)."""
    params = dict(spec.params)
    if spec.kind != "linear_svm" or params.get("backend") != "auto":
        return spec
    params["backend"] = resolve_backend("auto", n_train)
    return replace(spec, params=tuple(sorted(params.items())))


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
        """Every classifier as a ClassifierSpec (the single ``classifier:`` too), as configured: a
        ``linear_svm`` may have ``backend: auto``, which the evaluation does not take; a task's
        concrete specs are :meth:`classifier_specs_for`'s. The first one scores a selector's grid."""
        if self.classifiers:
            return self.classifiers
        from fsbench.evaluation.classifiers import spec_from_config

        return (spec_from_config(self.classifier),)

    @property
    def auto_backend(self) -> bool:
        """Whether a ``linear_svm`` of the config has ``backend: auto`` (its solver depends on the task)."""
        return any(spec.kind == "linear_svm" and dict(spec.params).get("backend") == "auto"
                   for spec in self.classifier_specs)

    def classifier_for(self, n_train: int) -> ClassifierConfig:
        """The single ``classifier:`` for a task whose training part has ``n_train`` samples
        (``auto`` resolved by :func:`resolve_backend`)."""
        return self.classifier.resolved(n_train)

    def classifier_specs_for(self, n_train: int) -> tuple[Any, ...]:
        """Every classifier as a concrete ClassifierSpec for a task whose training part has
        ``n_train`` samples: :attr:`classifier_specs` with ``auto`` resolved (:func:`resolve_backend`),
        so that a ``classifiers:`` list's rows name the backend in ``classifier_params``."""
        if self.classifiers:
            return tuple(_resolved_spec(spec, n_train) for spec in self.classifiers)
        from fsbench.evaluation.classifiers import spec_from_config

        return (spec_from_config(self.classifier_for(n_train)),)

    def record_backend(self, rows: Sequence[dict[str, Any]], n_train: int) -> list[dict[str, Any]]:
        """The rows of the single ``classifier:`` (fsbench.evaluation.protocol.evaluate_ranking's)
        with, when its backend is ``auto``, the column ``classifier_params``: JSON of the backend
        it resolved to and the row's C, as a ``classifiers:`` list records them
        (fsbench.evaluation.classifiers.chosen_params). Rows of a pinned backend are returned as they
        are, so results of configs that pin it (the papers') keep their columns."""
        if self.classifiers or self.classifier.name != "linear_svm" or self.classifier.backend != "auto":
            return [dict(row) for row in rows]
        from fsbench.evaluation.classifiers import chosen_params, spec_from_config

        spec = spec_from_config(self.classifier_for(n_train))
        return [{**row, "classifier_params": chosen_params(spec, {"C": row["C"]} if spec.tuned else {})}
                for row in rows]

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

    @classmethod
    def from_dict(cls, doc: dict[str, Any], *, source: str = "<config>") -> Experiment:
        """The experiment whose :meth:`to_dict` is ``doc`` (a results folder's ``config.yaml``, whose
        extra keys ``fingerprint`` and ``skipped_datasets`` are ignored). Nothing is validated here:
        the caller compares the rebuilt :meth:`fingerprint` with the one the file records. Raises
        KeyError or TypeError for data of another shape."""
        from fsbench.evaluation.classifiers import classifier_spec

        def selector(s: dict[str, Any]) -> SelectorConfig:
            return SelectorConfig(name=s["name"], label=s["label"],
                                  params=tuple(sorted((s.get("params") or {}).items())),
                                  grid=tuple(sorted((k, tuple(v)) for k, v in (s.get("grid") or {}).items())),
                                  kind=s.get("kind", "builtin"), timeout=s.get("timeout"))

        def data_file(f: dict[str, Any]) -> DataFileConfig:
            return DataFileConfig(name=f["name"], path=f.get("path", ""), sha256=f["sha256"], label=f.get("label"),
                                  x=f.get("x"), y=f.get("y"))

        def known(k: dict[str, Any]) -> KnownDataConfig:
            return KnownDataConfig(
                name=k["name"], generate=tuple(sorted((k.get("generate") or {}).items())), base=k.get("base"),
                base_file=data_file(k["base_file"]) if k.get("base_file") else None,
                probes=tuple(sorted((k.get("probes") or {}).items())),
                relevant=tuple(k["relevant"]) if k.get("relevant") is not None else None,
                generator_code=k.get("generator_code", ""))

        single = doc.get("classifier") or {}
        return cls(
            name=doc["name"], seed=int(doc["seed"]), datasets=tuple(doc["datasets"]),
            selectors=tuple(selector(s) for s in doc["selectors"]), n_features=tuple(doc["n_features"]),
            standardize=doc["standardize"], protocol=ProtocolConfig(**doc["protocol"]),
            inner_cv=InnerCVConfig(**doc["inner_cv"]),
            classifier=ClassifierConfig(name=single["name"], backend=single["backend"], C=tuple(single["C"]))
            if single else ClassifierConfig(),
            classifiers=tuple(classifier_spec(c["kind"], label=c["label"], params=c.get("params") or {},
                                              grid=c.get("grid") or {}) for c in doc.get("classifiers") or ()),
            data_files=tuple(data_file(f) for f in doc.get("data_files") or ()),
            known_data=tuple(known(k) for k in doc.get("known_data") or ()),
            n_jobs=int(doc.get("n_jobs", 1)), description=doc.get("description", ""), source=source)

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
