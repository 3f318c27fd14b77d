"""Datasets: the papers' registry, lookup, loading with checks and download, and users' own files.

    from fsbench.datasets import load
    data = load("glioma")          # Dataset(name, X (n, d) float64, y 0..c-1, classes, spec)

Files are looked for in ``data_dir`` or $FSBENCH_DATA, then in the per-user cache
(:func:`cache_dir`, $FSBENCH_CACHE); :func:`fetch` downloads into that cache, checking each file
against its registered sha256 or git blob id (:mod:`fsbench.datasets.integrity`). Every problem with
a file is a :class:`fsbench.errors.DataError` naming the problem and its fix; an unknown name is
a :class:`fsbench.errors.ConfigError` with a did-you-mean.

Its modules: :mod:`~fsbench.datasets.registry` (names, aliases, shapes, sources, checksums),
:mod:`~fsbench.datasets.paths` (where files are looked for), :mod:`~fsbench.datasets.integrity`
(sha256 and git blob ids), :mod:`~fsbench.datasets.loaders` (loading with checks) and
:mod:`~fsbench.datasets.fetch` (download).

A user's own data file (CSV/TSV/text, Parquet, ARFF, .mat, .npz, svmlight) is read and checked by
:func:`read_data_file` (the subpackage :mod:`fsbench.datasets.user_files`;
:mod:`fsbench.datasets.user_files.files` states the rules), which returns a :class:`UserData`.
A matrix a file stores sparse (svmlight, a sparse .mat variable, an .npz in
``scipy.sparse.save_npz``'s layout, a wide mostly-zero text file) stays sparse: ``UserData.X`` is
then a read-only ``scipy.sparse.csr_matrix`` (float64, sorted indices), checked on its stored
values without densifying. The registry's datasets are dense files and load dense.

Data whose relevant features are known: :mod:`~fsbench.datasets.synthetic` generates them
(``classification``, ``madelon``, ``xor``) and appends probes to real data
(:mod:`~fsbench.datasets.sparse_probes` the same probes to sparse data, as CSR);
:mod:`~fsbench.datasets.known` builds a config's such dataset (:class:`KnownData`) and counts what a
ranking's top k holds of its relevant features and probes.

May import: errors, fixed_order, code_identity and storage.
"""

from fsbench.datasets.fetch import fetch
from fsbench.datasets.integrity import git_blob_id
from fsbench.datasets.loaders import Dataset, load
from fsbench.datasets.paths import cache_dir, data_dirs, locate
from fsbench.datasets.registry import DataFile, DatasetSpec, all_datasets, resolve
from fsbench.datasets.user_files.files import UserData, describe_data_file, read_data_file

__all__ = ["DataFile", "Dataset", "DatasetSpec", "UserData", "all_datasets", "cache_dir", "data_dirs",
           "describe_data_file", "fetch", "git_blob_id", "load", "locate", "read_data_file", "resolve"]
