"""Replacing a set of output files as a whole (``fsbench stats``: its tables and figures).

Files that are read together (a Friedman table and the CD diagram drawn from it) must come from
one run of the command: a failure halfway (a figure that cannot be drawn, a full disk, Ctrl-C)
must leave the previous set as it was, not half of it overwritten. Every file is therefore first
written into a temporary folder inside the output folder, and only once all of them are written
are they renamed into place (each rename atomic, on the same file system) and the previous set's
files that this set no longer has removed. The temporary folder is removed in every case but a
killed process (SIGKILL), which leaves a hidden ``.new-*.tmp`` folder and the previous set whole.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Collection
from pathlib import Path


def replace_outputs(out: Path, names: Collection[str], write: Callable[[Path], list[Path]]) -> list[Path]:
    """Call ``write(folder)``, which writes its files into ``folder`` and returns their paths, then
    move them into ``out`` and remove the files of ``names`` (the set's possible files) it did not
    write; returns the paths in ``out``. Raises what ``write`` raises, ``out`` unchanged (a folder
    this call created is removed)."""
    created = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=out, prefix=".new-", suffix=".tmp"))
    try:
        produced = [Path(p).name for p in write(staging)]
        for name in produced:
            os.replace(staging / name, out / name)
        for name in set(names) - set(produced):
            (out / name).unlink(missing_ok=True)
        return [out / name for name in produced]
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if created and out.is_dir() and not any(out.iterdir()):
            out.rmdir()
