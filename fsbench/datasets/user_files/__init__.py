"""Reading a user's own data file: its format, its label column or variables, and the checks it
must pass, each problem one sentence naming the file, the problem and its fix.

:mod:`fsbench.datasets.user_files.files` is the entry (``read_data_file``, ``describe_data_file``:
what config parsing and ``fsbench datasets info PATH`` call) and states the rules for users. The
readers beside it are :mod:`~fsbench.datasets.user_files.delimited` (CSV, TSV, text),
:mod:`~fsbench.datasets.user_files.tables` (a pandas table's label column; Parquet, ARFF) and
:mod:`~fsbench.datasets.user_files.arrays` (.mat, .npz, svmlight), which reads .mat files
through :mod:`~fsbench.datasets.user_files.matlab`. They share
:mod:`~fsbench.datasets.user_files.user_data` (the :class:`UserData` they return),
:mod:`~fsbench.datasets.user_files.validation` (the checks every format gets, labels to codes)
and :mod:`~fsbench.datasets.user_files.messages` (the wording of errors).

It imports nothing else of fsbench.datasets (which re-exports its entry points, so an import back
would be a cycle) and, of the layers below, only :mod:`fsbench.errors`. The papers' registry
builds on it, not the other way round: :mod:`fsbench.datasets.loaders` reads the registry's .mat
files with :mod:`~fsbench.datasets.user_files.matlab` and checks their arrays with
:mod:`~fsbench.datasets.user_files.validation`.

May import: code_identity, errors, fixed_order and storage.
"""
