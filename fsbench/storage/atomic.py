"""Atomic writes: a file is written whole under a temporary name in its folder, then renamed into
place, so a reader (or a run killed mid-write) never sees half of it.

Owns the mode of the files fsbench writes (:data:`FILE_MODE`, what ``open()`` would give under
the umask) and the names of the temporary files (:data:`TEMPORARY_FILES`), which a killed writer
may leave behind and the next writer of the folder removes
(:func:`fsbench.storage.folder.remove_temporary_files`).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

#: the glob of the temporary files :func:`atomic_write_bytes` writes (``.<name>.<random>.tmp``)
TEMPORARY_FILES = ".*.tmp"


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


#: the mode of every file fsbench writes: what open() would give (mkstemp's 0600 is for secrets,
#: not results)
FILE_MODE = 0o666 & ~_umask()


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` (creating its folder): to a temporary file beside it, flushed to
    disk, then renamed over ``path``; on any failure the temporary file is removed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, FILE_MODE)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """:func:`atomic_write_bytes` of ``text`` in UTF-8."""
    atomic_write_bytes(path, text.encode("utf-8"))
