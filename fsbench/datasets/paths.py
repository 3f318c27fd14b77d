"""Where dataset files are looked for: an explicit folder or FSBENCH_DATA, then the user cache."""

from __future__ import annotations

import os
from pathlib import Path

from fsbench.datasets.registry import DatasetSpec, normalize, resolve

__all__ = ["cache_dir", "data_dirs", "find_file", "locate"]


def cache_dir() -> Path:
    """The per-user download cache: $FSBENCH_CACHE, else pooch's OS cache folder for fsbench."""
    env = os.environ.get("FSBENCH_CACHE")
    if env:
        return Path(env).expanduser()
    import pooch

    return Path(pooch.os_cache("fsbench"))


def data_dirs(data_dir: str | Path | None = None) -> list[Path]:
    """Folders searched for dataset files, in order.

    ``data_dir`` if given, else the folders in $FSBENCH_DATA (several may be joined with the
    OS path separator); then :func:`cache_dir`.
    """
    if data_dir is not None:
        dirs = [Path(data_dir).expanduser()]
    else:
        env = os.environ.get("FSBENCH_DATA", "")
        dirs = [Path(p).expanduser() for p in env.split(os.pathsep) if p.strip()]
    cache = cache_dir()
    if cache not in dirs:
        dirs.append(cache)
    return dirs


def _file_key(name: str) -> str:
    stem, dot, suffix = name.rpartition(".")
    return normalize(stem) + dot + suffix.lower() if dot else normalize(name)


def find_file(folder: Path, name: str) -> Path | None:
    """``folder/name`` if it exists, else a file there whose name differs only in case, '-' or '_'.

    ``name`` may hold a sub-folder ("isolet_full/Isolet1.mat"); sub-folders must match exactly.
    """
    path = folder / name
    if path.is_file():
        return path
    parent = path.parent
    if not parent.is_dir():
        return None
    key = _file_key(path.name)
    try:
        matches = sorted(p for p in parent.iterdir() if _file_key(p.name) == key and p.is_file())
    except OSError:
        return None
    return matches[0] if matches else None


def locate(name: str | DatasetSpec, data_dir: str | Path | None = None) -> list[Path] | None:
    """The files of a dataset from the first searched folder holding all of them, else None.

    A dataset without files (built in) gives an empty list.
    """
    spec = name if isinstance(name, DatasetSpec) else resolve(name)
    if not spec.files:
        return []
    for folder in data_dirs(data_dir):
        found = [find_file(folder, f.name) for f in spec.files]
        if all(p is not None for p in found):
            return [p for p in found if p is not None]
    return None
