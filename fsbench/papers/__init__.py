"""The three papers (RFS, DSO-FS, SL21/SL2P): their printed tables as data, and everything that
holds our results to them.

- this module: the printed tables, as data (below);
- :mod:`fsbench.papers.layout`: where the papers' configs and results live in a checkout;
- :mod:`fsbench.papers.tables`, :mod:`fsbench.papers.claims`, :mod:`fsbench.papers.figures`,
  :mod:`fsbench.papers.statistics`, :mod:`fsbench.papers.forensics` and
  :mod:`fsbench.papers.report`: a paper's tables beside the printed values, its headline claims,
  its figures, statistics and test-set forensics, and ``results/papers/REPORT.md``;
- :mod:`fsbench.papers.reproduce` and :mod:`fsbench.papers.check`: the ``fsbench reproduce`` and
  ``fsbench check`` workflows; :mod:`fsbench.papers.changes` and
  :mod:`fsbench.papers.migrate_rfs_stop`: what a recomputation changed, and a one-off migration
  of the committed results.

May import: errors, fixed_order, code_identity, storage, datasets, selectors, plugins, evaluation,
configuration, engine, stats and report.

Each :class:`PrintedTable` holds the values exactly as printed (accuracy in %), the standard
deviation where the paper printed one, the number of selected features, what kind of estimate
each cell is (a mean over random splits, a single split, a cross-validated mean), and which
fsbench dataset and selector label each row and column corresponds to.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Paper:
    key: str
    citation: str
    estimate: str  # "mean_of_splits" | "single_split" | "cv_mean"
    n_trials: int  # trials behind each printed mean (1 for a single split)


@dataclass(frozen=True)
class PrintedCell:
    dataset: str  # fsbench registry name
    method: str  # fsbench selector label in the paper's config
    k: int
    value: float  # accuracy, %
    std: float | None = None


@dataclass(frozen=True)
class PrintedTable:
    paper: Paper
    name: str  # "Table 1"
    caption: str
    row_titles: tuple[tuple[str, str], ...]  # (fsbench dataset, paper's row title)
    column_titles: tuple[tuple[str, str], ...]  # (fsbench selector label, paper's column title)
    cells: tuple[PrintedCell, ...]

    def value(self, dataset: str, method: str, k: int) -> PrintedCell | None:
        for cell in self.cells:
            if (cell.dataset, cell.method, cell.k) == (dataset, method, k):
                return cell
        return None

    @property
    def ks(self) -> tuple[int, ...]:
        return tuple(sorted({c.k for c in self.cells}))


def _cells(rows: dict[str, list[float | tuple[float, float]]], methods: list[str], k: int) -> list[PrintedCell]:
    out = []
    for dataset, values in rows.items():
        if len(values) != len(methods):
            raise ValueError(f"{dataset}: {len(values)} values for {len(methods)} methods")
        for method, value in zip(methods, values, strict=True):
            mean, std = value if isinstance(value, tuple) else (value, None)
            out.append(PrintedCell(dataset, method, k, float(mean), None if std is None else float(std)))
    return out


# ----------------------------------------------------------------------------- DSO-FS
DSO_FS = Paper(
    key="dso-fs",
    citation="Peng, Fan. Direct Sparsity Optimization Based Feature Selection for Multi-Class "
    "Classification. IJCAI 2016.",
    estimate="mean_of_splits",
    n_trials=10,
)
_DSO_METHODS = ["mrmr", "relieff", "l1svm", "rfs", "dso"]
DSO_FS_TABLE1 = PrintedTable(
    paper=DSO_FS,
    name="Table 1",
    caption="Accuracy (%) with the top 100 features, mean ± std over 10 random 6:4 splits.",
    row_titles=(("isolet", "ISOLET"), ("semeion", "SEMEION"), ("lung", "LUNG"),
                ("cll-sub-111", "CLL-SUB-111"), ("umist", "UMIST"), ("ar", "AR")),
    column_titles=(("mrmr", "mRMR"), ("relieff", "ReliefF"), ("l1svm", "L1-SVM"), ("rfs", "RFS"),
                   ("dso", "DSO-FS")),
    cells=tuple(_cells({
        "isolet": [(90.82, 0.72), (89.13, 0.53), (93.90, 0.53), (93.72, 0.55), (95.23, 0.44)],
        "semeion": [(88.18, 1.01), (86.54, 0.89), (90.36, 0.33), (90.45, 1.00), (90.64, 0.93)],
        "lung": [(94.88, 1.20), (94.88, 1.42), (95.12, 1.22), (95.37, 1.42), (95.37, 1.42)],
        "cll-sub-111": [(76.47, 11.0), (72.94, 9.18), (79.41, 4.15), (75.88, 6.80), (81.18, 6.60)],
        "umist": [(96.87, 0.84), (98.17, 0.92), (98.17, 0.80), (98.04, 0.73), (98.39, 1.16)],
        "ar": [(87.31, 5.02), (85.58, 6.15), (87.12, 9.26), (88.85, 6.76), (89.62, 3.74)],
    }, _DSO_METHODS, 100)),
)

# ----------------------------------------------------------------------------- SL2P
SL2P = Paper(
    key="sl2p",
    citation="Xu, Nie, Han. Feature Selection via Scaling Factor Integrated Multi-Class Support "
    "Vector Machines. IJCAI 2017.",
    estimate="single_split",
    n_trials=1,
)
_SL2P_METHODS = ["infogain", "ttest", "fisher", "chi2", "relieff", "mrmr", "cssvm", "l21svm", "sl21", "sl2p"]
_SL2P_COLUMNS = (("infogain", "IG"), ("ttest", "Ttest"), ("fisher", "FS"), ("chi2", "Chi"), ("relieff", "RF"),
                 ("mrmr", "MR"), ("cssvm", "CS"), ("l21svm", "L21"), ("sl21", "SL21"), ("sl2p", "SL2P"))
_SL2P_ROWS = (("lung", "LUNG"), ("carcinomas", "CAR"), ("brain-tumor-2", "BrainT2"), ("srbct", "SRBCT"),
              ("glioma", "GLIOM"), ("mll", "MLLML"))
SL2P_TABLE2 = PrintedTable(
    paper=SL2P,
    name="Table 2",
    caption="Accuracy (%) with the top 20 features, one random 50/50 split.",
    row_titles=_SL2P_ROWS,
    column_titles=_SL2P_COLUMNS,
    cells=tuple(_cells({
        "lung": [75.7895, 76.8421, 71.5789, 68.4211, 78.9474, 83.1579, 76.8421, 83.1579, 92.6316, 91.5789],
        "carcinomas": [74.3243, 48.6486, 41.8919, 70.2703, 74.3243, 66.2162, 55.4054, 78.3784, 77.0270, 87.8378],
        "brain-tumor-2": [64.2857, 42.8571, 64.2857, 53.5714, 53.5714, 64.2857, 71.4286, 64.2857, 60.7143, 82.1429],
        "srbct": [68.2540, 69.8413, 82.5397, 73.0159, 77.7778, 80.9524, 66.6667, 88.8889, 90.4762, 93.6508],
        "glioma": [50.0000, 33.3333, 63.8889, 52.7778, 58.3333, 63.8889, 66.6667, 69.4444, 72.2222, 80.5556],
        "mll": [88.2353, 82.3529, 88.2353, 90.1961, 92.1569, 88.2353, 72.5490, 90.1961, 94.1176, 98.0392],
    }, _SL2P_METHODS, 20)),
)
SL2P_TABLE3 = PrintedTable(
    paper=SL2P,
    name="Table 3",
    caption="Accuracy (%) with the top 40 features, one random 50/50 split.",
    row_titles=_SL2P_ROWS,
    column_titles=_SL2P_COLUMNS,
    cells=tuple(_cells({
        "lung": [80.0000, 83.1579, 77.8947, 74.7368, 81.0526, 86.3158, 78.9474, 89.4737, 91.5789, 93.6842],
        "carcinomas": [77.0270, 54.0541, 48.6486, 77.0270, 82.4324, 67.5676, 70.2703, 89.1892, 91.8919, 93.2432],
        "brain-tumor-2": [57.1429, 57.1429, 53.5714, 50.0000, 64.2857, 64.2857, 67.8571, 67.8571, 67.8571, 85.7143],
        "srbct": [76.1905, 77.7778, 79.3651, 80.9524, 80.9524, 80.9524, 68.2540, 88.8889, 92.0635, 98.4127],
        "glioma": [72.2222, 33.3333, 72.2222, 61.1111, 63.8889, 63.8889, 69.4444, 69.4444, 75.0000, 83.3333],
        "mll": [88.2353, 86.2745, 94.1176, 88.2353, 92.1569, 86.2745, 84.3137, 96.0784, 96.0784, 100.000],
    }, _SL2P_METHODS, 40)),
)

# ----------------------------------------------------------------------------- RFS
RFS = Paper(
    key="rfs",
    citation="Nie, Huang, Cai, Ding. Efficient and Robust Feature Selection via Joint l2,1-Norms "
    "Minimization. NIPS 2010.",
    estimate="cv_mean",
    n_trials=1,
)
_RFS_METHODS = ["relieff", "fstat", "ttest", "infogain", "mrmr", "rfs"]
_RFS_ROWS = (("allaml", "ALLAML"), ("glioma", "GLIOMA"), ("lung", "LUNG"), ("carcinomas", "Carcinomas"),
             ("prostate-ge", "Prostate-GE"), ("prostate-ms", "Prostate-MS"))
RFS_TABLE1 = PrintedTable(
    paper=RFS,
    name="Table 1",
    caption="Accuracy (%) of a linear SVM (C = 1) by 5-fold cross-validation with the top 20 and "
    "top 80 features.",
    row_titles=_RFS_ROWS,
    column_titles=(("relieff", "RF"), ("fstat", "F-s"), ("ttest", "T-test"), ("infogain", "IG"),
                   ("mrmr", "mRMR"), ("rfs", "RFS")),
    cells=tuple(
        _cells({
            "allaml": [90.36, 89.11, 92.86, 93.21, 93.21, 95.89],
            "glioma": [50, 50, 56, 60, 62, 74],
            "lung": [91.68, 87.7, 89.22, 93.1, 92.61, 93.63],
            "carcinomas": [79.88, 65.48, 49.9, 85.09, 78.22, 91.38],
            "prostate-ge": [92.18, 95.09, 92.18, 92.18, 93.18, 95.09],
            "prostate-ms": [76.41, 98.89, 95.56, 98.89, 95.42, 98.89],
        }, _RFS_METHODS, 20)
        + _cells({
            "allaml": [95.89, 96.07, 94.29, 95.71, 94.46, 97.32],
            "glioma": [54, 60, 58, 66, 66, 70],
            "lung": [93.63, 91.63, 90.66, 95.1, 94.12, 96.07],
            "carcinomas": [90.24, 83.33, 68.91, 89.65, 87.92, 93.66],
            "prostate-ge": [91.18, 93.18, 93.18, 89.27, 86.36, 95.09],
            "prostate-ms": [89.93, 98.89, 94.44, 98.89, 93.14, 100],
        }, _RFS_METHODS, 80)
    ),
)

PAPERS = {"rfs": RFS, "dso-fs": DSO_FS, "sl2p": SL2P}
TABLES: dict[str, tuple[PrintedTable, ...]] = {
    "rfs": (RFS_TABLE1,),
    "dso-fs": (DSO_FS_TABLE1,),
    "sl2p": (SL2P_TABLE2, SL2P_TABLE3),
}


#: the method each paper proposes (SL2P's paper proposes SL21 and its generalisation SL2P)
PROPOSED: dict[str, tuple[str, ...]] = {"rfs": ("rfs",), "dso-fs": ("dso",), "sl2p": ("sl2p", "sl21")}
#: methods a proposed method is not held against (both are the SL2P paper's own)
NOT_COMPARED: dict[str, tuple[str, ...]] = {"sl21": ("sl2p",)}
TITLES = {"rfs": "RFS (Nie et al., NIPS 2010)", "dso-fs": "DSO-FS (Peng & Fan, IJCAI 2016)",
          "sl2p": "SL21 / SL2P (Xu, Nie & Han, IJCAI 2017)"}


def paper_datasets(paper: str) -> list[str]:
    """The datasets of the paper's tables, in the order the tables list them."""
    datasets: list[str] = []
    for table in TABLES[paper]:
        datasets += [d for d, _ in table.row_titles if d not in datasets]
    return datasets


def method_titles(paper: str) -> dict[str, str]:
    """fsbench selector label -> the paper's column title."""
    titles: dict[str, str] = {}
    for table in TABLES[paper]:
        titles.update(dict(table.column_titles))
    return titles


def dataset_titles(paper: str) -> dict[str, str]:
    """fsbench dataset name -> the paper's row title."""
    titles: dict[str, str] = {}
    for table in TABLES[paper]:
        titles.update(dict(table.row_titles))
    return titles


def table_ks(paper: str) -> list[int]:
    """The numbers of features of the paper's tables."""
    return sorted({k for table in TABLES[paper] for k in table.ks})


def other_papers_experiment(paper: str, name: str | None, datasets: Iterable[str], selectors: Iterable[str]) -> bool:
    """Whether results are not ``paper``'s: their experiment ``name`` (their config's, None when
    unknown) is another paper's or one of its variants (``sl2p``, ``sl2p-test-size-mll``), or
    none of their (dataset, selector) pairs fills a printed cell of ``paper``'s tables. A table
    of such results would be a page of "not run" cells, which reads as a failed reproduction."""
    if name is not None:
        for other in PAPERS:
            if other != paper and (name == other or name.startswith(f"{other}-")):
                return True
    pairs = {(d, s) for d in datasets for s in selectors}
    return not any((cell.dataset, cell.method) in pairs for table in TABLES[paper] for cell in table.cells)
