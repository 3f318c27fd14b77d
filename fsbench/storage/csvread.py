"""Reading fsbench's CSV tables (runs.csv.gz, rankings.csv.gz, failures.csv) with their label
columns as strings.

pandas reads ``''``, ``None``, ``NA``, ``N/A``, ``null``, ``nan`` and a dozen other spellings as
missing by default: a dataset, selector or classifier so named would come back as NaN, and
every grouping, filter and comparison by name (resume's checks, tables, plots) would lose or
confuse its rows. Label columns are therefore read verbatim (no value is missing there); every
other column keeps pandas' default missing values, which is how fsbench writes a missing number
(an empty cell) and what the rows written before read as. Text columns that could look like
numbers (a hex digest starting ``1e10``, a version ``1.0``) are read as strings too, and so are
the per-class counts (``14;7;14;15``), which are lists, not numbers.
"""

from __future__ import annotations

from pathlib import Path
from typing import IO, Any

import pandas as pd

#: columns naming things (never missing, never numbers)
LABEL_COLUMNS = ("experiment", "dataset", "selector", "method", "classifier")
#: text columns where an empty cell is missing but a value is never a number
TEXT_COLUMNS = ("fingerprint", "code", "protocol_code", "params", "classifier_params", "fsbench_version",
                "rows_digest", "error", "class_support", "class_predicted", "class_correct")
#: pandas' default missing-value spellings (pandas.read_csv's documentation), kept for non-label columns
DEFAULT_NA = ("", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
              "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null")


def read_table(path: str | Path | IO[str], labels: tuple[str, ...] = LABEL_COLUMNS, **options: Any) -> pd.DataFrame:
    """``pd.read_csv(path)`` with ``labels`` read as strings (never NaN) and :data:`TEXT_COLUMNS` as
    strings or NaN; pandas' parsing errors pass through to the caller."""
    if hasattr(path, "read"):
        text = path.read()
        from io import StringIO

        header = pd.read_csv(StringIO(text), nrows=0).columns
        source: Any = StringIO(text)
    else:
        header = pd.read_csv(path, nrows=0).columns
        source = path
    na_values = {c: list(DEFAULT_NA) for c in header if c not in labels}
    dtype = {c: str for c in header if c in labels or c in TEXT_COLUMNS}
    # a column's type from all its values at once: read in chunks, a diagnostics column empty in
    # the rows of some selectors and True/False in others' warns of mixed types and is typed per chunk
    options.setdefault("low_memory", False)
    return pd.read_csv(source, dtype=dtype, keep_default_na=False, na_values=na_values, **options)
