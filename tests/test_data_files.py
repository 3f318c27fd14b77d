"""A user's own data files (fsbench.datasets.user_files.files): every format written here, read back and
compared with the arrays the test wrote; every bad input rejected with one sentence; and
``fsbench datasets info PATH``.

Expected codes and classes are computed here by hand or with plain numpy, not with fsbench.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import time
from pathlib import Path

import h5py
import numpy as np
import pandas as pd
import pytest
import scipy.io
import scipy.sparse
from click.testing import CliRunner
from sklearn.datasets import dump_svmlight_file

from fsbench.cli import main
from fsbench.datasets.user_files import tables as tables_module
from fsbench.datasets.user_files.files import UserData, describe_data_file, read_data_file
from fsbench.errors import DataError

# Labels unsorted and not 0..c-1. By hand: sorted classes ('setosa', 'versicolor', 'virginica')
# get codes 0, 1, 2.
WORDS = ["versicolor", "setosa", "virginica", "setosa", "versicolor", "virginica",
         "virginica", "setosa", "versicolor", "setosa", "virginica", "versicolor"]
WORD_CODES = [1, 0, 2, 0, 1, 2, 2, 0, 1, 0, 2, 1]
# Numbers that sort differently as text: numerically 2 < 9 < 10, as strings '10' < '2' < '9'.
NUMBERS = np.array([10, 2, 9, 2, 10, 9, 9, 2, 10, 2, 9, 10])
NUMBER_CODES = [2, 0, 1, 0, 2, 1, 1, 0, 2, 0, 1, 2]


def toy_X(seed: int = 0, d: int = 5) -> np.ndarray:
    X = np.random.default_rng(seed).normal(size=(12, d)).round(6)  # not square: catches .T
    X[X == 0] = 0.5
    return X


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def table_text(X: np.ndarray, labels, sep: str = ",", header: list[str] | None = None,
               label_first: bool = False) -> str:
    lines = [sep.join(header)] if header is not None else []
    for row, lab in zip(X, labels, strict=True):
        fields = [repr(float(v)) for v in row]
        fields = [str(lab), *fields] if label_first else [*fields, str(lab)]
        lines.append(sep.join(fields))
    return "\n".join(lines) + "\n"


def assert_read(data: UserData, X: np.ndarray, codes, classes, *, sparse: bool = False) -> None:
    """``data`` holds X (dense and C-ordered, or, for a file that stores it sparse, read-only CSR
    with sorted indices), the label codes and the classes, read-only."""
    assert isinstance(data, UserData)
    assert data.X.dtype == np.float64 and data.X.shape == X.shape
    if sparse:
        assert scipy.sparse.isspmatrix_csr(data.X) and data.X.has_sorted_indices
        np.testing.assert_array_equal(data.X.toarray(), X)
        assert data.X.nnz == np.count_nonzero(X)
        arrays = (data.X.data, data.X.indices, data.X.indptr)
    else:
        assert data.X.flags.c_contiguous
        np.testing.assert_array_equal(data.X, X)
        arrays = (data.X,)
    assert data.y.dtype == np.int64
    np.testing.assert_array_equal(data.y, codes)
    assert list(data.classes) == list(classes)
    assert list(data.classes) == sorted(data.classes)  # the mapping is in sorted order
    for arr in (*arrays, data.y, data.classes):
        assert not arr.flags.writeable
    assert data.sha256 == sha256(data.path)


def one_sentence(info: pytest.ExceptionInfo, *fragments: str) -> str:
    message = str(info.value)
    assert "\n" not in message and "Traceback" not in message, message
    assert message.endswith("."), message
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    return message


# ----------------------------------------------------------------------------- delimited text
def test_csv_with_header_and_string_labels(tmp_path):
    X = toy_X()
    path = tmp_path / "iris.csv"
    path.write_text(table_text(X, WORDS, header=["a", "b", "c", "d", "e", "species"]))
    data = read_data_file(path)
    assert_read(data, X, WORD_CODES, ["setosa", "versicolor", "virginica"])
    assert (data.format, data.delimiter, data.header, data.label) == ("csv", ",", True, "species")
    assert data.feature_names == ("a", "b", "c", "d", "e") and data.name == "iris"
    assert data.class_sizes == (4, 4, 4) and data.n_constant == 0
    # the label by name, ignoring case, or by position; the name given overrides the stem
    assert read_data_file(path, label="SPECIES", name="flowers").name == "flowers"
    for position in (5, -1, "5"):
        np.testing.assert_array_equal(read_data_file(path, label=position).y, WORD_CODES)


def test_tsv_without_header(tmp_path):
    X = toy_X(1)
    path = tmp_path / "plain.tsv"
    path.write_text(table_text(X, NUMBERS, sep="\t", label_first=True))
    data = read_data_file(path, label=0)
    assert_read(data, X, NUMBER_CODES, [2, 9, 10])  # numerically, not as text
    assert (data.delimiter, data.header, data.label, data.feature_names) == ("\t", False, 0, None)
    assert data.classes.dtype.kind == "i"
    # without label: the last column, a feature here, which has 12 distinct values
    assert read_data_file(path).n_classes == 12


def test_headerless_file_with_word_labels_has_no_header(tmp_path):
    X = toy_X(2)
    path = tmp_path / "iris.data.txt"
    path.write_text(table_text(X, WORDS))  # like UCI's iris.data: no header, words last
    data = read_data_file(path)
    assert not data.header and data.label == 5
    assert_read(data, X, WORD_CODES, ["setosa", "versicolor", "virginica"])


def test_semicolon_csv_and_decimal_commas(tmp_path):
    X = toy_X(3)
    path = tmp_path / "semi.csv"
    path.write_text(table_text(X, WORDS, sep=";", header=["f1", "f2", "f3", "f4", "f5", "y"]))
    data = read_data_file(path)
    assert data.delimiter == ";" and data.header
    assert_read(data, X, WORD_CODES, ["setosa", "versicolor", "virginica"])

    european = tmp_path / "european.csv"
    european.write_text(table_text(X, NUMBERS, sep=";").replace(".", ","))
    data = read_data_file(european)
    assert data.delimiter == ";" and not data.header and "decimal commas" in data.notes
    assert_read(data, X, NUMBER_CODES, [2, 9, 10])


def test_whitespace_text_gzip_and_r_row_names(tmp_path):
    X = toy_X(4)
    text = tmp_path / "spaces.txt"
    text.write_text(table_text(X, NUMBERS, sep="   ").replace("\n", "  \n"))
    data = read_data_file(text)
    assert data.delimiter == " " and data.format == "text"
    assert_read(data, X, NUMBER_CODES, [2, 9, 10])

    packed = tmp_path / "packed.CSV.GZ"
    packed.write_bytes(gzip.compress(table_text(X, WORDS, header=list("abcde") + ["k"]).encode()))
    data = read_data_file(packed)
    assert data.format == "csv" and data.name == "packed"
    assert_read(data, X, WORD_CODES, ["setosa", "versicolor", "virginica"])

    # R's write.table: a header one field short, each row starting with its row name
    r_style = tmp_path / "r.txt"
    rows = ['"a" "b" "c" "d" "e" "k"'] + [
        " ".join([f'"s{i}"', *(repr(float(v)) for v in row), f'"{w}"'])
        for i, (row, w) in enumerate(zip(X, WORDS, strict=True))]
    r_style.write_text("\n".join(rows) + "\n")
    data = read_data_file(r_style)
    assert data.feature_names == tuple("abcde") and any("row names" in n for n in data.notes)
    assert_read(data, X, WORD_CODES, ["setosa", "versicolor", "virginica"])


def test_pandas_index_and_trailing_delimiters_are_ignored(tmp_path):
    X = toy_X(5)
    frame = pd.DataFrame(X, columns=list("abcde"))
    frame["label"] = WORDS
    path = tmp_path / "with_index.csv"
    frame.to_csv(path)  # a first column without a name holding 0..11
    data = read_data_file(path)
    assert data.feature_names == tuple("abcde") and any("row index" in n for n in data.notes)
    assert_read(data, X, WORD_CODES, ["setosa", "versicolor", "virginica"])

    trailing = tmp_path / "trailing.csv"
    trailing.write_text(table_text(X, WORDS).replace("\n", ",\n"))
    data = read_data_file(trailing)
    assert_read(data, X, WORD_CODES, ["setosa", "versicolor", "virginica"])


def test_a_wide_csv_reads_in_seconds(tmp_path):
    rng = np.random.default_rng(0)
    M = rng.integers(-999, 1000, size=(150, 20001))
    M[:, -1] %= 3
    path = tmp_path / "wide.csv"
    with open(path, "w") as fh:
        fh.write(",".join(f"g{i}" for i in range(20000)) + ",class\n")
        np.savetxt(fh, M, fmt="%d", delimiter=",")
    start = time.perf_counter()
    data = read_data_file(path)
    elapsed = time.perf_counter() - start
    assert_read(data, M[:, :-1].astype(float), M[:, -1] - M[:, -1].min(), np.unique(M[:, -1]))
    assert elapsed < 15, elapsed  # about 1 s on one idle core (600 x 20000: 2-3 s)


# ----------------------------------------------------------------------------- MATLAB, NumPy
def save_v73(path: Path, **variables) -> Path:
    """Write a MATLAB v7.3 file as MATLAB does: HDF5 after a 512-byte header, every array stored
    column-major (its dimensions reversed in HDF5), a cell array of strings as references to
    char arrays (UTF-16 code units) in '#refs#'."""
    with h5py.File(path, "w", userblock_size=512) as fh:
        refs = fh.create_group("#refs#")
        for key, value in variables.items():
            if isinstance(value, list):  # a cell array of strings, n x 1
                handles = []
                for i, text in enumerate(value):
                    codes = np.array([[ord(ch) for ch in text]], dtype=np.uint16)  # 1 x L
                    ds = refs.create_dataset(f"{key}{i}", data=codes.T)
                    ds.attrs["MATLAB_class"] = np.bytes_("char")
                    handles.append(ds.ref)
                cell = np.array([handles], dtype=h5py.ref_dtype)  # HDF5 (1, n) = MATLAB n x 1
                fh.create_dataset(key, data=cell)
                fh[key].attrs["MATLAB_class"] = np.bytes_("cell")
                continue
            matlab = np.atleast_2d(np.asarray(value, dtype=np.float64))
            fh.create_dataset(key, data=np.ascontiguousarray(matlab.T))
            fh[key].attrs["MATLAB_class"] = np.bytes_("double")
    header = b"MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: test HDF5 schema 1.00 ."
    with open(path, "r+b") as fh:
        fh.write(header.ljust(116, b" ") + b"\0" * 8 + b"\x00\x02" + b"IM")
    return path


def test_mat_v5_variable_names(tmp_path):
    X = toy_X(6)
    plain = tmp_path / "plain.mat"
    scipy.io.savemat(plain, {"X": X, "Y": NUMBERS.reshape(-1, 1), "other": np.ones(3)})
    data = read_data_file(plain)
    assert (data.format, data.variables, data.feature_names) == ("mat", ("X", "Y"), None)
    assert_read(data, X, NUMBER_CODES, [2, 9, 10])

    sparse = tmp_path / "sparse.MAT"
    Xs = X.copy()
    Xs[np.abs(Xs) < 0.8] = 0.0
    scipy.io.savemat(sparse, {"fea": scipy.sparse.csr_matrix(Xs), "gnd": NUMBERS})
    data = read_data_file(sparse)
    assert data.variables == ("fea", "gnd")
    assert_read(data, Xs, NUMBER_CODES, [2, 9, 10], sparse=True)  # stored sparse: stays sparse

    custom = tmp_path / "custom.mat"
    scipy.io.savemat(custom, {"features": X, "targets": np.array(WORDS, dtype=object).reshape(-1, 1),
                              "Y": np.zeros(12)})
    data = read_data_file(custom, x="features", y="targets")  # a cell array of strings
    assert data.variables == ("features", "targets")
    assert_read(data, X, WORD_CODES, ["setosa", "versicolor", "virginica"])
    # x alone: the labels from the usual names (Y, here one class: rejected below)
    with pytest.raises(DataError) as info:
        read_data_file(custom, x="features")
    one_sentence(info, "one class", "'Y'", "y:")


def test_mat_v73_is_read_in_matlab_layout(tmp_path):
    X = toy_X(7)
    path = save_v73(tmp_path / "v73.mat", X=X, Y=NUMBERS.reshape(-1, 1))
    assert h5py.is_hdf5(path)
    with h5py.File(path) as fh:
        assert fh["X"].shape == (5, 12)  # stored transposed, as MATLAB does
    data = read_data_file(path)
    assert_read(data, X, NUMBER_CODES, [2, 9, 10])

    cells = save_v73(tmp_path / "cells.mat", data=X, names=WORDS)
    data = read_data_file(cells, y="names")
    assert data.variables == ("data", "names")
    assert_read(data, X, WORD_CODES, ["setosa", "versicolor", "virginica"])


def test_npz(tmp_path):
    X = toy_X(8)
    path = tmp_path / "arrays.npz"
    np.savez(path, X=X, y=np.array(WORDS))
    data = read_data_file(path)
    assert (data.format, data.variables) == ("npz", ("X", "y"))
    assert_read(data, X, WORD_CODES, ["setosa", "versicolor", "virginica"])

    custom = tmp_path / "custom.npz"
    np.savez_compressed(custom, feats=X.astype(np.float32), target=NUMBERS.astype(np.int16))
    data = read_data_file(custom, x="feats", y="target")
    assert_read(data, X.astype(np.float32).astype(np.float64), NUMBER_CODES, [2, 9, 10])


# ----------------------------------------------------------------------------- ARFF, svmlight, Parquet
ARFF_HEADER = """% a comment
@RELATION flowers
@ATTRIBUTE a NUMERIC
@ATTRIBUTE class {virginica,setosa,versicolor}
@ATTRIBUTE b REAL
@ATTRIBUTE c NUMERIC
@ATTRIBUTE d NUMERIC
@ATTRIBUTE e INTEGER
@DATA
"""


def test_arff_with_a_nominal_class(tmp_path):
    X = toy_X(9)
    X[:, 4] = np.arange(12) % 4  # an INTEGER attribute
    lines = [",".join([repr(float(r[0])), w, *(repr(float(v)) for v in r[1:])])
             for r, w in zip(X, WORDS, strict=True)]
    path = tmp_path / "flowers.arff"
    path.write_text(ARFF_HEADER + "\n".join(lines) + "\n")
    data = read_data_file(path, label="class")
    assert (data.format, data.label, data.feature_names) == ("arff", "class", tuple("abcde"))
    # sorted order, not the order the ARFF header declares
    assert_read(data, X, WORD_CODES, ["setosa", "versicolor", "virginica"])
    # by default the last attribute is the class: 'e', which leaves the nominal 'class' a feature
    with pytest.raises(DataError) as info:
        read_data_file(path)
    one_sentence(info, "'class' (nominal)", "label:")


def test_svmlight(tmp_path):
    X = toy_X(10)
    X[np.abs(X) < 0.5] = 0.0  # sparse lines
    path = tmp_path / "data.libsvm"
    dump_svmlight_file(X, NUMBERS, str(path), zero_based=False)  # LIBSVM's one-based indices
    data = read_data_file(path)
    assert data.format == "svmlight" and data.feature_names is None
    assert_read(data, X, NUMBER_CODES, [2, 9, 10], sparse=True)  # every feature's index appears in some line
    with pytest.raises(DataError) as info:
        read_data_file(path, label="0")
    one_sentence(info, "svmlight file, which has no columns", "remove label:")


def test_parquet(tmp_path):
    if importlib.util.find_spec("pyarrow") is None and importlib.util.find_spec("fastparquet") is None:
        pytest.skip("neither pyarrow nor fastparquet is installed (pip install 'fsbench[parquet]')")
    X = toy_X(11)
    frame = pd.DataFrame(X, columns=list("abcde"))
    frame.insert(2, "kind", pd.Categorical(WORDS))
    path = tmp_path / "table.parquet"
    frame.to_parquet(path)
    data = read_data_file(path, label="kind")
    assert data.format == "parquet" and data.feature_names == tuple("abcde")
    assert_read(data, X, WORD_CODES, ["setosa", "versicolor", "virginica"])


def test_parquet_without_an_engine_says_how_to_install_one(tmp_path, monkeypatch):
    path = tmp_path / "table.pq"
    path.write_bytes(b"PAR1 not really")
    monkeypatch.setattr(tables_module, "_parquet_engine", lambda: None)  # the Parquet reader's check
    with pytest.raises(DataError) as info:
        read_data_file(path)
    one_sentence(info, str(path), 'pip install "fsbench[parquet]"')


# ----------------------------------------------------------------------------- bad inputs
def _csv(tmp_path: Path, text: str, name: str = "bad.csv") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


GOOD_ROWS = "1,2,A\n3,4,B\n5,6,A\n7,8,B\n"


def _mat(tmp_path: Path, **variables) -> Path:
    path = tmp_path / "bad.mat"
    scipy.io.savemat(path, variables)
    return path


BAD = {
    "does not exist": (lambda t: t / "nothing" / "tox.csv", {}, ["tox.csv", "does not exist"]),
    "a directory": (lambda t: t, {}, ["is a folder", ".csv"]),
    "unknown extension": (lambda t: _csv(t, GOOD_ROWS, "tox.xlsx"), {},
                          ["'.xlsx'", ".csv", ".mat", ".npz", ".arff", ".svmlight", ".parquet"]),
    "no extension": (lambda t: _csv(t, GOOD_ROWS, "tox"), {}, ["no extension"]),
    "missing label column": (lambda t: _csv(t, "a,b,klass\n" + GOOD_ROWS), {"label": "class"},
                             ["no column 'class'", "'a', 'b', 'klass'", "did you mean 'klass'",
                              "label:"]),
    "label position beyond": (lambda t: _csv(t, GOOD_ROWS), {"label": 7}, ["3 columns", "label: 7"]),
    "label name without header": (lambda t: _csv(t, GOOD_ROWS), {"label": "class"},
                                  ["no header row", "label: 2"]),
    "non-numeric feature": (lambda t: _csv(t, "dose,site,class\n1,liver,A\n2,lung,B\n3,liver,A\n"),
                            {}, ["1 feature column", "'site' holding 'liver'", "numeric"]),
    "non-numeric features": (lambda t: _csv(t, "sex,site,dose,class\nm,liver,1,A\nf,lung,2,B\n"),
                             {}, ["2 feature columns", "'sex', 'site'"]),
    "one class": (lambda t: _csv(t, "a,b,class\n1,2,A\n3,4,A\n5,6,A\n"), {},
                  ["a label column with one class", "'A'", "column 'class'"]),
    "NaN values": (lambda t: _csv(t, "a,b,class\n1,2,A\n3,NA,B\n5,,A\n7,8,B\n"), {},
                   ["2 NaN and 0 infinite", "sample 1, column 'b'", "does not impute"]),
    "infinite values": (lambda t: _csv(t, "a,b,class\n1,2,A\n3,4,B\n-inf,6,A\n"), {},
                        ["0 NaN and 1 infinite", "sample 2, column 'a'"]),
    "missing labels": (lambda t: _csv(t, "a,b,class\n1,2,A\n3,4,?\n5,6,B\n"), {},
                       ["1 sample without a label", "sample 1"]),
    "one sample": (lambda t: _csv(t, "a,b,class\n1,2,A\n"), {}, ["1 sample", "at least 2"]),
    "no features": (lambda t: _csv(t, "class\nA\nB\n"), {}, ["no features", "'class'"]),
    "empty file": (lambda t: _csv(t, "\n\n"), {}, ["is empty"]),
    "ragged rows": (lambda t: _csv(t, "a,b,class\n1,2,A\n3,4,5,B\n5,6,A\n1,1,B\n"), {},
                    ["cannot be read as comma-delimited text", "same number of fields"]),
    "mat without known variables": (lambda t: _mat(t, A=np.ones((4, 2)), B=np.arange(4)), {},
                                    ["X/Y or fea/gnd or data/label", "'A', 'B'", "x: and y:"]),
    "x: names a missing variable": (lambda t: _mat(t, A=np.ones((4, 2)), B=np.arange(4)),
                                    {"x": "feats", "y": "B"}, ["no variable 'feats'", "'A', 'B'"]),
    "X and y of different lengths": (lambda t: _mat(t, X=np.ones((4, 3)), Y=np.arange(5)), {},
                                     ["4 samples", "5 labels", "'Y'"]),
    "transposed": (lambda t: _mat(t, X=np.ones((3, 4)), Y=np.arange(4)), {},
                   ["3 samples", "4 labels", "transposed"]),
    "corrupt mat": (lambda t: _csv(t, "not a MATLAB file\n" * 20, "broken.mat"), {},
                    ["cannot be read as a MATLAB .mat file"]),
    "label: for a .mat": (lambda t: _mat(t, X=np.ones((4, 3)), Y=np.arange(4)), {"label": "Y"},
                          ["label: Y does not apply", "x: and y:"]),
    "x: for a csv": (lambda t: _csv(t, GOOD_ROWS), {"x": "X"}, ["x: does not apply",
                                                               "set label:"]),
    "npz of objects": (lambda t: _npz_objects(t), {}, ["Python objects", "dtype=str"]),
    "arff nominal feature": (lambda t: _csv(t, "@RELATION r\n@ATTRIBUTE colour {red,blue}\n"
                                               "@ATTRIBUTE size NUMERIC\n@ATTRIBUTE class {a,b}\n"
                                               "@DATA\nred,1,a\nblue,2,b\n", "bad.arff"), {},
                             ["1 feature attribute", "'colour' (nominal)", "numeric"]),
}


def _npz_objects(tmp_path: Path) -> Path:
    path = tmp_path / "objects.npz"
    np.savez(path, X=np.ones((4, 2)), y=np.array(["a", 1, "b", 2], dtype=object))
    return path


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_is_one_sentence(tmp_path, case):
    make, options, fragments = BAD[case]
    path = make(tmp_path)
    with pytest.raises(DataError) as info:
        read_data_file(path, **options)
    one_sentence(info, str(path), *fragments)


def test_describe_data_file(tmp_path):
    X = np.column_stack([toy_X(12, d=3), np.full(12, 7.0), np.zeros(12)])  # 2 constant features
    path = tmp_path / "desc.csv"
    path.write_text(table_text(X, WORDS, header=["a", "b", "c", "seven", "zero", "species"]))
    text = describe_data_file(path, name="flowers")
    for fragment in ("flowers", "12 samples x 5 features, 3 classes", "column 'species'",
                     "0: 'setosa' (4)", "1: 'versicolor' (4)", "2: 'virginica' (4)",
                     "constant:  2 features", sha256(path), "csv (comma-delimited, header row)"):
        assert fragment in text, (fragment, text)


# ----------------------------------------------------------------------------- the CLI
def test_cli_datasets_info_of_a_file(tmp_path):
    X = np.column_stack([toy_X(13, d=3), np.ones(12)])  # one constant feature
    labels = ["b"] * 5 + ["a"] * 7
    path = tmp_path / "mine.tsv"
    path.write_text(table_text(X, labels, sep="\t", header=["g1", "g2", "g3", "flat", "group"]))
    runner = CliRunner()
    result = runner.invoke(main, ["datasets", "info", str(path)])
    assert result.exit_code == 0, result.output
    for fragment in ("12 samples x 4 features, 2 classes", "0: 'a' (7)", "1: 'b' (5)",
                     "constant:  1 feature ", "tab-delimited", sha256(path)):
        assert fragment in result.output, (fragment, result.output)

    for label in ("group", "4", "-1"):
        result = runner.invoke(main, ["datasets", "info", str(path), "--label", label])
        assert result.exit_code == 0 and "label:     column 'group'" in result.output

    mat = tmp_path / "m.mat"
    scipy.io.savemat(mat, {"feats": X, "target": np.array(labels)})
    result = runner.invoke(main, ["datasets", "info", str(mat), "--x", "feats", "--y", "target"])
    assert result.exit_code == 0 and "variable 'target'" in result.output

    for args, fragment in ((["datasets", "info", str(tmp_path / "none.csv")], "does not exist"),
                           (["datasets", "info", str(path), "--label", "nope"], "no column 'nope'"),
                           (["datasets", "info", "glioma", "--label", "x"], "not a path")):
        result = runner.invoke(main, args)
        message = result.output.strip()
        assert result.exit_code == 2 and fragment in message, result.output
        assert message.startswith("Error: ") and "\n" not in message and "Traceback" not in message

    # a registered name still describes the registry entry
    result = runner.invoke(main, ["datasets", "info", "BrainT2"])
    assert result.exit_code == 0 and "10367" in result.output


# ----------------------------------------------------------------------------- line ends, encodings, bytes
@pytest.mark.parametrize("sep", [",", ";", "\t", " "])
@pytest.mark.parametrize("compressed", [False, True])
def test_old_mac_line_ends_read_as_lines(tmp_path, sep, compressed):
    # CR-only files (classic Mac OS): csv.reader raised "new-line character seen in unquoted field"
    X = toy_X(7)
    text = table_text(X, WORDS, sep=sep, header=["a", "b", "c", "d", "e", "species"]).replace("\n", "\r")
    path = tmp_path / ("old.csv.gz" if compressed else "old.csv")
    data = text.encode()
    path.write_bytes(gzip.compress(data) if compressed else data)
    got = read_data_file(path)
    assert_read(got, X, WORD_CODES, ["setosa", "versicolor", "virginica"])
    assert got.header and got.feature_names == ("a", "b", "c", "d", "e") and got.delimiter == sep


def test_crlf_and_a_byte_order_mark_read_as_plain_utf8(tmp_path):
    X = toy_X(8)
    text = table_text(X, WORDS, header=["a", "b", "c", "d", "e", "species"])
    for name, data in (("crlf.csv", text.replace("\n", "\r\n").encode()), ("bom.csv", text.encode("utf-8-sig")),
                       ("both.csv", text.replace("\n", "\r\n").encode("utf-8-sig"))):
        (tmp_path / name).write_bytes(data)
        got = read_data_file(tmp_path / name)
        assert_read(got, X, WORD_CODES, ["setosa", "versicolor", "virginica"])
        assert got.feature_names == ("a", "b", "c", "d", "e") and got.label == "species"


def test_a_long_header_line_across_read_chunks(tmp_path):
    # the sample is read in growing chunks: a header of 20,000 columns spans several of them
    rng = np.random.default_rng(0)
    X = rng.integers(0, 9, size=(6, 20_000)).astype(float)
    header = [f"g{j}" for j in range(20_000)] + ["class"]
    path = tmp_path / "wide.csv"
    path.write_text(table_text(X, ["a", "b"] * 3, header=header).replace("\n", "\r"))
    got = read_data_file(path)
    np.testing.assert_array_equal(got.X, X)
    assert got.y.tolist() == [0, 1] * 3 and got.feature_names[-1] == "g19999"


BINARY = {
    "random bytes": (bytes(np.random.default_rng(0).integers(0, 256, 3000, dtype=np.uint8)), "not a text file"),
    "NUL in a CSV": (b"a,b,class\n1,2,A\n3,\x00,B\n", "0x00"),
    "UTF-16 text": ("a,b,class\n1,2,A\n3,4,B\n".encode("utf-16"), "UTF-16"),
    "gzip without .gz": (gzip.compress(b"a,b,class\n1,2,A\n3,4,B\n"), "add .gz to its name"),
    "xlsx": (b"PK\x03\x04\x14\x00\x06\x00" + bytes(100), "ZIP archive"),
    "parquet": (b"PAR1\x15\x04" + bytes(100), "name it .parquet"),
    "CR-only binary": (b"\x01\x02\r\x03\r" * 50, "not a text file"),
}


@pytest.mark.parametrize("case", sorted(BINARY))
@pytest.mark.parametrize("name", ["data.csv", "data.txt", "data.tsv"])
def test_bytes_that_are_no_text_are_one_sentence(tmp_path, case, name):
    content, says = BINARY[case]
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(DataError) as info:
        read_data_file(path)
    one_sentence(info, str(path), says)


def test_a_large_binary_file_is_refused_from_its_first_bytes(tmp_path):
    # 64 MiB of NUL bytes hold no line break: the sample must stop at the first control byte, not
    # hold the whole file in memory looking for lines
    import tracemalloc

    path = tmp_path / "zeros.csv"
    with path.open("wb") as fh:
        fh.truncate(64 << 20)
    tracemalloc.start()
    try:
        with pytest.raises(DataError) as info:
            read_data_file(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    one_sentence(info, "not a text file", "0x00")
    assert peak < 8 << 20, peak


def test_latin1_text_is_still_read(tmp_path):
    path = tmp_path / "latin.csv"
    path.write_bytes("a,b,classe\n1,2,café\n3,4,thé\n5,6,café\n7,8,thé\n".encode("latin-1"))
    assert read_data_file(path).classes.tolist() == ["café", "thé"]


@pytest.mark.parametrize("name", ["e.csv", "e.csv.gz", "e.arff", "e.npz", "e.mat", "e.svm", "e.parquet"])
def test_empty_file_of_every_format_is_one_sentence(tmp_path, name):
    (tmp_path / name).write_bytes(b"")
    with pytest.raises(DataError) as info:
        read_data_file(tmp_path / name)
    one_sentence(info, name, "is empty (0 bytes)")


def test_a_label_column_empty_in_every_row(tmp_path):
    path = _csv(tmp_path, "a,b,class\n" + "1,2,\n3,4,NA\n" * 4)
    with pytest.raises(DataError) as info:
        read_data_file(path)
    one_sentence(info, "no label in any sample", "label column 'class'", "set label:")


# ----------------------------------------------------------------------------- options named as the user sets them
LABEL_FIRST = "class,a,b\n" + "".join(f"{'xy'[i % 2]},{i},{i % 3}\n" for i in range(12))


@pytest.mark.parametrize(("options", "says"), [
    ({}, "set --label class if it is the class"),
    ({"label": "7"}, "so --label 7 is beyond them"),
    ({"label": "klass"}, "set --label to the class column's name"),
    ({"x": "X"}, "--x does not apply"),
])
def test_the_command_line_names_its_options_and_a_config_its_keys(tmp_path, options, says):
    from fsbench.datasets.user_files.files import COMMAND_LINE_OPTIONS

    path = _csv(tmp_path, LABEL_FIRST, "toy.csv")
    with pytest.raises(DataError) as info:
        read_data_file(path, option_names=COMMAND_LINE_OPTIONS, **options)
    assert "label:" not in one_sentence(info, says)
    with pytest.raises(DataError) as info:  # a config's read names its keys
        read_data_file(path, **options)
    config_says = says.replace("--label", "label:").replace("--x", "x:")
    one_sentence(info, config_says)
    assert read_data_file(path, label="class", option_names=COMMAND_LINE_OPTIONS).classes.tolist() == ["x", "y"]


def test_datasets_info_of_the_readme_example(tmp_path):
    toy = Path(__file__).resolve().parents[1] / "examples" / "own_selector" / "toy.csv"
    result = CliRunner().invoke(main, ["datasets", "info", str(toy)])
    assert result.exit_code == 2 and "--label class" in result.output and "label:" not in result.output
    result = CliRunner().invoke(main, ["datasets", "info", str(toy), "--label", "class"])
    assert result.exit_code == 0 and "120 samples x 60 features, 3 classes" in result.output
