"""The registry: every dataset of the three papers, what it must look like, where it comes from.

Shapes, class counts, class sizes and sha256 checksums of the files fsbench has seen come from
the copies the project checks against (their MANIFEST); download URLs of those copies are pinned
to a commit. A sha256 is registered only for a file whose bytes were hashed. LUNG, CLL-SUB-111
and Carcinomas, whose bytes the project never had, are pinned to the scikit-feature repository
at the same commit as the hashed copies and identified by the git blob id that commit records
for them (:mod:`fsbench.datasets.integrity`). Prostate-MS has no known copy: it carries the
shape the paper states and is checked on load by shape and class count alone.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from fsbench.errors import ConfigError

__all__ = ["DataFile", "DatasetSpec", "all_datasets", "normalize", "resolve"]

PAPERS = ("rfs", "dso-fs", "sl2p")
FORMATS = ("mat", "semeion", "csv", "sklearn")


@dataclass(frozen=True)
class DataFile:
    """One file of a dataset: its name inside a data folder, identity and download URL.

    The file's bytes are identified by ``sha256`` (a copy the project hashed) or, failing that,
    by ``git_blob`` (the git blob id a pinned commit of its source repository records for it);
    with neither, only its content (shape, classes) is checked.
    """

    name: str  # relative path inside a data folder, e.g. "GLIOMA.mat" or "isolet_full/Isolet1.mat"
    sha256: str | None = None  # None: no copy of this file was hashed
    url: str | None = None  # None: no original-source download is known
    git_blob: str | None = None  # git blob id of the file at the pinned commit ``url`` points to

    @property
    def check(self) -> str:
        """How the file's bytes are verified: ``sha256=...``, ``git-blob=...`` or ``unchecked``."""
        if self.sha256:
            return f"sha256={self.sha256}"
        if self.git_blob:
            return f"git-blob={self.git_blob}"
        return "unchecked"


@dataclass(frozen=True)
class DatasetSpec:
    """What fsbench knows about a dataset.

    ``format`` is one of ``"mat"`` (scikit-feature style MATLAB file, v5 or v7.3, with data and
    labels under ``X``/``Y``, ``fea``/``gnd`` or ``data``/``label``; several files are stacked
    row-wise in the order listed), ``"semeion"`` (UCI text: 256 pixels then 10 one-hot label
    columns), ``"csv"`` (header row, label column ``class``) or ``"sklearn"`` (built in, no file).
    ``class_sizes`` (per class, in sorted label order) is registered only where a copy was counted.
    """

    name: str
    title: str
    aliases: tuple[str, ...]
    n_samples: int
    n_features: int
    n_classes: int
    papers: tuple[str, ...]
    files: tuple[DataFile, ...]
    format: str
    source: str
    notes: str = ""
    class_sizes: tuple[int, ...] | None = None

    @property
    def downloadable(self) -> bool:
        """True when every file has a registered download URL."""
        return bool(self.files) and all(f.url for f in self.files)


def normalize(name: str) -> str:
    """Lookup key of a dataset name: lower case without '-', '_' and spaces."""
    return "".join(ch for ch in name.lower() if ch not in "-_ ")


# Pinned commits of the repositories holding the copies listed in the data MANIFEST.
_SKF_REPO = ("jundongl/scikit-feature", "48cffad4e88ff4b9d2f1c7baffb314d1b3303792")
_L21FS = ("ma-xu/L21FS", "b9d4e8eb7f6d7b5ccc62f9e638bdaef798b62e5e")
_SEMEION = ("ilkp/ANN-Digits", "eda82302fd99b0a96d0765c8589599aeea78d6ec")
_ICML = ("anony259106/icml2024", "b3e3f2e6382b2640dff64f08f1332f3900c494d0")
_BT2 = ("Zhang-ZeSheng/Feature-Selection-Datasets", "c03e9e89403ba940d5d80860c910b9777c63fdc5")
_SRBCT = ("BIMK/VGS-MOEA", "29feea199ac96610ff639230953728b97b588848")
_MLL = ("qq972984605/HOC", "deb8ece9e36daa65a04d4b50f62a21949cb1fbf3")

# sha256 of the copies listed in the data MANIFEST (each file was hashed).
_SHA256 = {
    "GLIOMA.mat": "c31cd32edd770c7a102729839e670e588bc959a591e0eae5a0676c9ca11d4c4f",
    "ALLAML.mat": "068afe0fe1021932e1e7d801294c267de8aeaa9d41899acfac024e72b0d44c1e",
    "Prostate_GE.mat": "050b598534dbc662f23e30f39b41354b61d02ab8567837bcf9b1091c1c636ab4",
    "Isolet.mat": "ea73c69b1342a7def8199458e53a70307a83d557eceb2579863dda57c3ccd2b1",
    "semeion.data": "0a0db68edc935e157425afd5f0dd927256b473a2e82262fd442cfde4c6e42c76",
    "umist.mat": "b89f79abb84d5825cd3008f8ee7537582a5c0ab268781c26d7227b11286d4d11",
    "warpAR10P.mat": "92b5f7e72b5715ada8f2df16e6d8e5effd8e0034a53a656ed9ef76e3f727d413",
    "Brain_Tumor_2.mat": "741cdfaf83ed6693682dc816434310bd8e5865f936e8a63c70e304569567a2e6",
    "SRBCT.mat": "5de37c5ab0d809bc0239cea558907fabadf0cecd32753921af99d430fcc5a4ae",
    "MLL.csv": "3cf331c999659663058377a218f5b80b58022f4c748a255ac77bad6436fceacd",
    "isolet_full/Isolet1.mat": "f643c3cbd2669e1e9a6110943fcf538cfc209db384f3387d33acbbe550376765",
    "isolet_full/Isolet2.mat": "f69ca6b76d196a5778d1883ec7f18a2b97c620507675cd229c4e65fbb28c9037",
    "isolet_full/Isolet3.mat": "1d1f991f0a1b9e9decd73779ff595d7f66e4da47cac655f71fd350d2028106b7",
    "isolet_full/Isolet4.mat": "c676e6d11ef3b6ca17cd38c3cd9a44299fb5681a5ed8460adf821074d0af4fcd",
    "isolet_full/Isolet5.mat": "a3849f6c0a9d0e0ed55dde15eb8ae8f4ba94df79b9fc260d00c28b8695d48600",
}


def _pinned(name: str, repo: tuple[str, str], path: str | None = None) -> DataFile:
    """A file whose copy was hashed, downloadable from a repository pinned to a commit."""
    owner_name, commit = repo
    url = f"https://raw.githubusercontent.com/{owner_name}/{commit}/{path or name}"
    return DataFile(name, _SHA256[name], url)


# Git blob ids that the pinned scikit-feature commit records for files no copy of which was
# hashed here: what arrives is checked against them (a blob id is the SHA-1 of
# b"blob <size>\0" + content).
_SKF_BLOBS = {
    "skfeature/data/lung.mat": "becb82c675f788b040d5ced741955e19b94ce9b8",
    "skfeature/data/CLL-SUB-111.mat": "6f14fa8d02fbe7fca3e73f4c97da3f1e7003a648",
    "skfeature/data/Carcinom.mat": "ed23efd165241be723f0796d8660c67ca8448bcc",
}


def _pinned_blob(name: str, repo: tuple[str, str], path: str) -> DataFile:
    """A file identified by the git blob id of ``path`` at the pinned commit of ``repo``."""
    owner_name, commit = repo
    url = f"https://raw.githubusercontent.com/{owner_name}/{commit}/{path}"
    return DataFile(name, None, url, _SKF_BLOBS[path])


_SKF = "the scikit-feature repository (Li et al., ASU; jundongl.github.io/scikit-feature)"
_BLOB_ONLY = ("No copy was hashed here, so no sha256 is registered: the file is verified by the git "
              f"blob id that scikit-feature commit {_SKF_REPO[1][:7]} records for it.")

_SPECS: tuple[DatasetSpec, ...] = (
    DatasetSpec(
        name="lung", title="LUNG", aliases=("LUNG",),
        n_samples=203, n_features=3312, n_classes=5, papers=("rfs", "dso-fs", "sl2p"),
        files=(_pinned_blob("lung.mat", _SKF_REPO, "skfeature/data/lung.mat"),),
        format="mat",
        source=f"{_SKF}; originally Bhattacharjee et al. (PNAS 2001), genes with std > 50",
        notes=f"{_BLOB_ONLY} The papers: 139/17/21/20/6 samples per class.",
    ),
    DatasetSpec(
        name="glioma", title="GLIOMA", aliases=("GLIOMA", "GLIOM"),
        n_samples=50, n_features=4434, n_classes=4, papers=("rfs", "sl2p"),
        files=(_pinned("GLIOMA.mat", _SKF_REPO, "skfeature/data/GLIOMA.mat"),),
        format="mat",
        source=f"{_SKF}; originally Nutt et al. (Cancer Research 2003)",
        notes="4434 features; the RFS text says 4433 genes.",
        class_sizes=(14, 7, 14, 15),
    ),
    DatasetSpec(
        name="allaml", title="ALLAML", aliases=("ALLAML", "ALL-AML"),
        n_samples=72, n_features=7129, n_classes=2, papers=("rfs",),
        files=(_pinned("ALLAML.mat", _SKF_REPO, "skfeature/data/ALLAML.mat"),),
        format="mat",
        source=f"{_SKF}; originally Golub et al. (Science 1999)",
        class_sizes=(47, 25),
    ),
    DatasetSpec(
        name="carcinomas", title="Carcinomas (CAR)",
        aliases=("CAR", "Carcinomas", "Carcinom", "CARCINOM"),
        n_samples=174, n_features=9182, n_classes=11, papers=("rfs", "sl2p"),
        files=(_pinned_blob("Carcinom.mat", _SKF_REPO, "skfeature/data/Carcinom.mat"),),
        format="mat",
        source=f"{_SKF}, listed as 'Carcinom'; originally Su et al. (Cancer Research 2001) and "
               "Yang et al. (2006)",
        notes=_BLOB_ONLY,
    ),
    DatasetSpec(
        name="prostate-ge", title="Prostate-GE", aliases=("Prostate-GE", "Prostate_GE"),
        n_samples=102, n_features=5966, n_classes=2, papers=("rfs",),
        files=(_pinned("Prostate_GE.mat", _SKF_REPO, "skfeature/data/Prostate-GE.mat"),),
        format="mat",
        source=f"{_SKF}; originally Singh et al. (Cancer Cell 2002)",
        class_sizes=(50, 52),
    ),
    DatasetSpec(
        name="prostate-ms", title="Prostate-MS", aliases=("Prostate-MS", "Prostate_MS"),
        n_samples=322, n_features=15154, n_classes=2, papers=("rfs",),
        files=(DataFile("Prostate_MS.mat", None, None),),
        format="mat",
        source="the FDA-NCI Clinical Proteomics Program Databank (prostate cancer SELDI-TOF mass "
               "spectra, Petricoin et al., JNCI 2002) as a .mat file Prostate_MS.mat with X "
               "(322 x 15154) and Y",
        notes="No copy was available: no URL and no checksum. The RFS paper pools 190 benign and "
              "63 no-evidence samples into 253 controls against 69 cancers.",
    ),
    DatasetSpec(
        name="cll-sub-111", title="CLL-SUB-111", aliases=("CLL-SUB-111", "CLL_SUB_111", "CLL-SUB"),
        n_samples=111, n_features=11340, n_classes=3, papers=("dso-fs",),
        # Kept as CLL_SUB_111.mat locally (the name earlier versions used); the repository's
        # CLL-SUB-111.mat is found too, since file names match ignoring '-' and '_'.
        files=(_pinned_blob("CLL_SUB_111.mat", _SKF_REPO, "skfeature/data/CLL-SUB-111.mat"),),
        format="mat",
        source=f"{_SKF}; originally Haslinger et al. (J Clin Oncol 2004), GEO GSE2466",
        notes=f"{_BLOB_ONLY} Saved as CLL_SUB_111.mat (the repository's CLL-SUB-111.mat is "
              "found under either name).",
    ),
    DatasetSpec(
        name="isolet", title="ISOLET", aliases=("ISOLET", "isolet-full"),
        n_samples=7797, n_features=617, n_classes=26, papers=("dso-fs",),
        files=tuple(
            _pinned(f"isolet_full/Isolet{i}.mat", _L21FS, f"data/{remote}")
            for i, remote in enumerate(
                ("Isolet1.mat", "Isolet2.mat", "Isolet3.mat", "Isolet4.mat", "isolet5.mat"), 1)
        ),
        format="mat",
        source="UCI ISOLET (Fanty & Cole 1991) in Deng Cai's five-part MATLAB split (keys "
               "fea/gnd), mirrored in github.com/ma-xu/L21FS",
        notes="The five parts are stacked in order 1..5 (= UCI isolet1+2+3+4, then isolet5).",
        class_sizes=tuple(298 if c == 6 else 299 if c == 13 else 300 for c in range(1, 27)),
    ),
    DatasetSpec(
        name="isolet-subset", title="ISOLET subset (scikit-feature Isolet)",
        aliases=("isolet-subset", "isolet-skfeature", "isolet1560"),
        n_samples=1560, n_features=617, n_classes=26, papers=(),
        files=(_pinned("Isolet.mat", _SKF_REPO, "skfeature/data/Isolet.mat"),),
        format="mat",
        source=f"{_SKF}, 'Isolet'; the same values as the first of the five ISOLET parts",
        notes="1560 of the 7797 samples DSO-FS used; use 'isolet' to reproduce the paper.",
        class_sizes=(60,) * 26,
    ),
    DatasetSpec(
        name="semeion", title="SEMEION", aliases=("SEMEION",),
        n_samples=1593, n_features=256, n_classes=10, papers=("dso-fs",),
        files=(_pinned("semeion.data", _SEMEION),),
        format="semeion",
        source="UCI Semeion Handwritten Digit (Semeion Research Center, Rome) in the UCI text "
               "format, mirrored in github.com/ilkp/ANN-Digits",
        notes="Labels are the digits 0-9 (the one-hot label columns); a semeion.mat copy "
              "(fea/gnd) holds the same pixels but is not read.",
        class_sizes=(161, 162, 159, 159, 161, 159, 161, 158, 155, 158),
    ),
    DatasetSpec(
        name="umist", title="UMIST", aliases=("UMIST",),
        n_samples=575, n_features=644, n_classes=20, papers=("dso-fs",),
        files=(_pinned("umist.mat", _ICML, "data/umist.mat"),),
        format="mat",
        source="UMIST face database (Graham & Allinson 1998) at 28 x 23 pixels (keys fea/gnd), "
               "mirrored in github.com/anony259106/icml2024",
        notes="644 features (28 x 23 images); DSO-FS used 56 x 46 (2576 features), which was not "
              "found: results on UMIST are a documented deviation.",
        class_sizes=(38, 35, 26, 24, 26, 23, 19, 22, 20, 32,
                     34, 34, 26, 30, 19, 26, 26, 33, 48, 34),
    ),
    DatasetSpec(
        name="ar", title="AR (warpAR10P)", aliases=("AR", "warpAR10P", "AR10P"),
        n_samples=130, n_features=2400, n_classes=10, papers=("dso-fs",),
        files=(_pinned("warpAR10P.mat", _SKF_REPO, "skfeature/data/warpAR10P.mat"),),
        format="mat",
        source=f"{_SKF}, 'warpAR10P'; originally the AR face database (Martinez & Benavente 1998)",
        class_sizes=(13,) * 10,
    ),
    DatasetSpec(
        name="brain-tumor-2", title="Brain_Tumor_2 (BrainT2)",
        aliases=("BrainT2", "Brain_Tumor_2", "Brain-Tumor-2"),
        n_samples=50, n_features=10367, n_classes=4, papers=("sl2p",),
        files=(_pinned("Brain_Tumor_2.mat", _BT2),),
        format="mat",
        source="GEMS Brain_Tumor2 (Statnikov et al. 2005), as collected in "
               "github.com/Zhang-ZeSheng/Feature-Selection-Datasets",
        class_sizes=(7, 14, 15, 14),
    ),
    DatasetSpec(
        name="srbct", title="SRBCT", aliases=("SRBCT",),
        n_samples=83, n_features=2308, n_classes=4, papers=("sl2p",),
        files=(_pinned("SRBCT.mat", _SRBCT),),
        format="mat",
        source="Khan et al. (Nature Medicine 2001) small round blue cell tumours (keys "
               "data/label), mirrored in github.com/BIMK/VGS-MOEA",
        notes="2308 genes; the SL2P table says 2229 features.",
        class_sizes=(29, 11, 18, 25),
    ),
    DatasetSpec(
        name="mll", title="MLL (MLLML)", aliases=("MLL", "MLLML"),
        n_samples=72, n_features=12582, n_classes=3, papers=("sl2p",),
        files=(_pinned("MLL.csv", _MLL),),
        format="csv",
        source="Armstrong et al. (Nature Genetics 2002) ALL/MLL/AML leukemia as CSV (Affymetrix "
               "probe ids, 'class' column 1 = ALL, 2 = MLL, 3 = AML), mirrored in "
               "github.com/qq972984605/HOC",
        class_sizes=(24, 20, 28),
    ),
    DatasetSpec(
        name="digits", title="digits (scikit-learn)", aliases=("sklearn-digits",),
        n_samples=1797, n_features=64, n_classes=10, papers=(),
        files=(),
        format="sklearn",
        source="scikit-learn's bundled copy of the UCI optical handwritten digits test set "
               "(sklearn.datasets.load_digits), 8 x 8 images",
        notes="Built in, needs no file; used by the quickstart.",
    ),
)

# Canonical name -> spec. Tests may add a spec with monkeypatch.setitem(_REGISTRY, ...).
_REGISTRY: dict[str, DatasetSpec] = {spec.name: spec for spec in _SPECS}


def all_datasets() -> list[DatasetSpec]:
    """Every registered dataset, in registry order."""
    return list(_REGISTRY.values())


def _lookup() -> dict[str, str]:
    table: dict[str, str] = {}
    for spec in _REGISTRY.values():
        for key in (spec.name, *spec.aliases):
            table.setdefault(normalize(key), spec.name)
    return table


def resolve(name: str) -> DatasetSpec:
    """The spec of dataset ``name`` (canonical name or alias, case, '-', '_' and spaces ignored).

    Raises ConfigError with a did-you-mean suggestion when the name is unknown.
    """
    table = _lookup()
    key = normalize(name)
    if key in table:
        return _REGISTRY[table[key]]
    close = difflib.get_close_matches(key, list(table), n=1, cutoff=0.6)
    hint = f" Did you mean {table[close[0]]!r}?" if close else ""
    raise ConfigError(f"Unknown dataset {name!r}.{hint} Run 'fsbench datasets list' to see the "
                      "known datasets.")
