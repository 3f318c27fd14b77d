"""Tables: a pandas table made into :class:`~fsbench.datasets.user_files.user_data.UserData` (the
label column chosen by name or position, the features checked to be numbers, empty and row-index
columns left out), and the readers of Parquet and ARFF files. Delimited text
(:mod:`fsbench.datasets.user_files.delimited`) ends here too.
The rules they follow are stated, for users, in :mod:`fsbench.datasets.user_files.files`.
"""

from __future__ import annotations

import difflib
import importlib.util
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from fsbench.datasets.user_files.messages import count, fail, option, quote_list, reason, too_few
from fsbench.datasets.user_files.user_data import UserData
from fsbench.datasets.user_files.validation import finish, label_values

__all__ = ["column_index", "column_labels", "from_frame", "is_number", "read_arff", "read_parquet",
           "refuse_non_numeric"]

_NUMBER = {
    ".": re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:inf|infinity|nan)", re.I),
    ",": re.compile(r"[+-]?(?:\d+,?\d*|,\d+)(?:[eE][+-]?\d+)?|[+-]?(?:inf|infinity|nan)", re.I),
}


def column_index(columns: Sequence[Any], label: str | int | None, *, named: bool,
                  where: str) -> int:
    """Position of the label column among ``columns`` (see :mod:`fsbench.datasets.user_files.files`)."""
    m = len(columns)
    if label is None:
        return m - 1
    text = str(label).strip()
    if named:
        names = [str(c).strip() for c in columns]
        if text in names:
            return names.index(text)
        folded = [i for i, c in enumerate(names) if c.lower() == text.lower()]
        if len(folded) == 1:
            return folded[0]
    if re.fullmatch(r"[+-]?\d+", text):
        pos = int(text)
        if -m <= pos < m:
            return pos % m
        raise fail(where, f"has {m} columns (positions 0 to {m - 1}), so {option('label')} {label} is "
                          "beyond them; give the label column's position or name")
    if not named:
        raise fail(where, f"has no header row (its first line holds numbers), so its {m} columns "
                          f"are numbered 0 to {m - 1} and cannot be found by the name "
                          f"{text!r}; give {option('label')} as a position ({option('label')} {m - 1} for "
                          "the last)")
    names = [str(c) for c in columns]
    close = difflib.get_close_matches(text, names, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise fail(where, f"has no column {text!r} to use as the label (its {m} columns: "
                      f"{quote_list(names)}{hint}); set {option('label')} to the class column's "
                      "name or position")


def _describe_columns(cols: Sequence[Any], named: bool) -> str:
    if named:
        return quote_list(list(cols), limit=3)
    shown = ", ".join(str(c) for c in cols[:3])
    return shown + (", ..." if len(cols) > 3 else "")


def from_frame(frame: Any, *, path: Path, fmt: str, name: str, sha256: str,
               label: str | int | None, named: bool, raw_names: Sequence[str] | None = None,
               **fields: Any) -> UserData:
    """A UserData from a pandas table: pick the label column, check the features are numbers.

    ``frame`` is modified (its other columns zeroed). ``raw_names`` are the header's fields as
    written (blank where pandas names a column 'Unnamed: i').
    """
    import pandas as pd

    where = str(path)
    notes = list(fields.pop("notes", ()))
    columns = list(frame.columns)
    blank = [raw_names is not None and i < len(raw_names) and not raw_names[i].strip()
             for i in range(len(columns))]
    if not named:
        blank = [i == len(columns) - 1 for i in range(len(columns))]  # a trailing delimiter's
    empty = [blank[i] and bool(frame.iloc[:, i].isna().all()) for i in range(len(columns))]
    kept = [i for i in range(len(columns)) if not empty[i]]
    for i in range(len(columns)):
        if empty[i]:
            notes.append(f"ignored {_col_name(columns[i], named)}: empty in every row")
    if not kept:
        raise fail(where, "has no values")
    if label is None:
        label_at = kept[-1]
    else:
        label_at = column_index(columns, label, named=named, where=where)
    n = len(frame)
    if named and kept[0] != label_at and blank[kept[0]]:
        first = frame.iloc[:, kept[0]]
        if pd.api.types.is_integer_dtype(first.dtype) and n and (
                np.array_equal(first.to_numpy(), np.arange(n))
                or np.array_equal(first.to_numpy(), np.arange(1, n + 1))):
            notes.append(f"ignored {_col_name(columns[kept[0]], named)}: a row index (no name, "
                         f"values {int(first.iloc[0])}..{int(first.iloc[-1])})")
            kept = kept[1:]
    features = [i for i in kept if i != label_at]
    label_name = columns[label_at]
    label_desc = f"label column {str(label_name)!r}" if named else f"label column {label_name}"
    col = frame.iloc[:, label_at].copy()

    if n < 2:
        raise too_few(where, n)

    # features: numbers only
    refuse_non_numeric(frame, features, named=named, where=where)
    if features:
        # Selecting columns of a frame of thousands of columns costs pandas a block each: put
        # zeros in the other columns (the frame is ours) and select with numpy instead.
        chosen = set(features)
        for i in range(len(columns)):
            if i not in chosen:
                frame.isetitem(i, np.zeros(n))
        X = frame.to_numpy(dtype=np.float64, na_value=np.nan)
        X = X[:, features] if len(features) < X.shape[1] else X
    else:
        X = np.empty((n, 0))

    labels = column_labels(col, label_desc, where)
    if named:
        feature_names: tuple[str, ...] | None = tuple(str(columns[i]) for i in features)
        label_key: str | int = str(label_name)
    else:
        feature_names, label_key = None, int(label_name)
    names_of = [columns[i] for i in features]
    return finish(name=name, path=path, fmt=fmt, sha256=sha256, X=X, labels=labels,
                  label_desc=label_desc, label_fix=option("label"),
                  feature_desc=lambda j: _col_name(names_of[j], named),
                  feature_names=feature_names, label=label_key, notes=tuple(notes), **fields)


def refuse_non_numeric(frame: Any, features: Sequence[int], *, named: bool, where: str) -> None:
    """A DataError naming the feature columns of ``frame`` (positions ``features``) that are not
    numeric, with an example value and the fix."""
    import pandas as pd

    columns = list(frame.columns)
    dtypes = list(frame.dtypes)
    numeric = [pd.api.types.is_numeric_dtype(dtypes[i]) for i in features]
    if not all(numeric):
        bad = [columns[i] for i, ok in zip(features, numeric, strict=True) if not ok]
        first_bad = frame.iloc[:, features[numeric.index(False)]]
        example = next((str(v) for v in first_bad.dropna() if not is_number(str(v))), None)
        if len(bad) == 1:
            held = f" holding {example!r}" if example is not None else ""
            which = f"{_col_name(bad[0], named)}{held}"
        else:
            held = f"; {_col_name(bad[0], named)} holds {example!r}" if example is not None else ""
            which = f"columns {_describe_columns(bad, named)}{held}"
        cols = "columns that are" if len(bad) > 1 else "column that is"
        raise fail(where, f"has {len(bad)} feature {cols} not numeric ({which}); fsbench needs "
                          f"numeric features, so encode or remove {'them' if len(bad) > 1 else 'it'}, "
                          f"or {_label_hint(bad, named)}")


def column_labels(col: Any, label_desc: str, where: str) -> np.ndarray:
    """The labels of a table's label column (a pandas Series): numbers, or stripped strings; a
    DataError when a sample has none."""
    import pandas as pd

    missing = col.isna().to_numpy()
    if missing.all():
        raise fail(where, f"has no label in any sample: its {label_desc} is empty (or NA) in every "
                          f"row; set {option('label')} to the column that holds the classes")
    if missing.any():
        first = int(np.flatnonzero(missing)[0])
        raise fail(where, f"has {count(int(missing.sum()), 'sample')} without a label in its "
                          f"{label_desc} (the first is sample {first}, counting from 0); fill "
                          "them in or remove those rows")
    if pd.api.types.is_bool_dtype(col.dtype) or pd.api.types.is_numeric_dtype(col.dtype):
        values = col.to_numpy()
        if values.dtype.kind not in "biuf":
            values = values.astype(np.float64)
    else:
        values = np.asarray(col.astype(str).tolist(), dtype=str)
    return label_values(values)


def _label_hint(columns: Sequence[Any], named: bool) -> str:
    """How to make the first of ``columns`` the label: ``set label: class if it is the class``."""
    setting = option("label")
    if len(columns) > 1:
        return f"set {setting} if one of them is the class"
    column = str(columns[0]).strip() if named else str(columns[0])
    shown = column if re.fullmatch(r"[\w.-]+", column) else repr(column)
    return f"set {setting} {shown} if it is the class"


def _col_name(column: Any, named: bool) -> str:
    return f"column {str(column)!r}" if named else f"column {column}"


def is_number(text: str, *, decimal: str = ".") -> bool:
    """Whether ``text`` (blanks around it aside) is a number written with the ``decimal`` mark."""
    return bool(_NUMBER[decimal].fullmatch(text.strip()))



def _parquet_engine() -> str | None:
    for module in ("pyarrow", "fastparquet"):
        if importlib.util.find_spec(module) is not None:
            return module
    return None


def read_parquet(path: Path, *, label: str | int | None, name: str, sha256: str) -> UserData:
    """A user's Parquet file (pandas' reader), its label column ``label``."""
    import pandas as pd

    where = str(path)
    need = ('reading Parquet files needs pyarrow or fastparquet; install them with '
            'pip install "fsbench[parquet]"')
    if _parquet_engine() is None:
        raise fail(where, f"is a Parquet file, and {need}")
    try:
        frame = pd.read_parquet(path)
    except ImportError as exc:
        raise fail(where, f"is a Parquet file, and {need}") from exc
    except Exception as exc:
        raise fail(where, f"cannot be read as a Parquet file ({reason(exc)})") from exc
    return from_frame(frame, path=path, fmt="parquet", name=name, sha256=sha256, label=label,
                      named=True)


def read_arff(path: Path, *, label: str | int | None, name: str, sha256: str) -> UserData:
    """A user's ARFF file (scipy's reader), its label attribute ``label``; features must be numeric."""
    import scipy.io.arff

    where = str(path)
    try:
        records, meta = scipy.io.arff.loadarff(str(path))
    except Exception as exc:
        raise fail(where, f"cannot be read as an ARFF file ({reason(exc)}); fsbench reads dense "
                          "ARFF with numeric, nominal and date attributes") from exc
    names, types = list(meta.names()), list(meta.types())
    at = column_index(names, label, named=True, where=where)
    features = [i for i in range(len(names)) if i != at]
    other = [i for i in features if types[i] != "numeric"]
    if other:
        attrs = "attributes" if len(other) > 1 else "attribute"
        shown = ", ".join(f"{names[i]!r} ({types[i]})" for i in other[:3])
        more = f" and {len(other) - 3} more" if len(other) > 3 else ""
        raise fail(where, f"has {len(other)} feature {attrs} that {'are' if len(other) > 1 else 'is'}"
                          f" not numeric ({shown}{more}) and fsbench needs numeric features; "
                          f"encode or remove them, or {_label_hint([names[i] for i in other], True)}")
    if features:
        X = np.column_stack([np.asarray(records[names[i]], dtype=np.float64) for i in features])
    else:
        X = np.empty((len(records), 0))
    values = np.asarray(records[names[at]])
    label_desc = f"label column {names[at]!r}"
    if values.dtype.kind == "S":
        missing = values == b"?"
    elif values.dtype.kind == "f":
        missing = np.isnan(values)
    else:
        missing = np.zeros(len(values), dtype=bool)
    if missing.any():
        raise fail(where, f"has {count(int(missing.sum()), 'sample')} without a label ('?') in "
                          f"its {label_desc} (the first is sample "
                          f"{int(np.flatnonzero(missing)[0])}, counting from 0); fill them in or "
                          "remove those rows")
    feature_names = tuple(names[i] for i in features)
    return finish(name=name, path=path, fmt="arff", sha256=sha256, X=X,
                  labels=label_values(values), label_desc=label_desc, label_fix=option("label"),
                  feature_desc=lambda j: f"column {feature_names[j]!r}",
                  feature_names=feature_names, label=names[at])
