"""runlog.jsonl: one line per invocation that wrote a results folder (its wall time, the tasks it
finished, the machine and the versions of the libraries that computed the rows).
"""

from __future__ import annotations

import errno
import json
import os
import platform
import time
from pathlib import Path

from fsbench.storage.atomic import FILE_MODE

RUNLOG = "runlog.jsonl"


def machine() -> str:
    """One line naming the machine a run was measured on."""
    return f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def library_versions() -> dict[str, str]:
    """The versions of the libraries that compute the rows (recorded with every invocation)."""
    import numpy
    import scipy
    import sklearn

    from fsbench import __version__

    return {"fsbench": __version__, "numpy": numpy.__version__, "scipy": scipy.__version__,
            "scikit-learn": sklearn.__version__}


def log_run(results_dir: Path, seconds: float, n_tasks: int, n_run: int, n_jobs: int,
            interrupted: bool = False) -> None:
    """Append one invocation's wall time, the tasks it finished and the library versions to
    results_dir/runlog.jsonl, as one write of one line (a full disk leaves no partial line)."""
    entry = {"finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "seconds": round(seconds, 1),
             "n_tasks": n_tasks, "n_run": n_run, "n_jobs": n_jobs, "machine": machine(),
             "versions": library_versions(), **({"interrupted": True} if interrupted else {})}
    line = (json.dumps(entry) + "\n").encode()
    fd = os.open(results_dir / RUNLOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
    try:
        if os.write(fd, line) != len(line):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(results_dir / RUNLOG))
    finally:
        os.close(fd)


def read_runlog(results_dir: Path) -> list[dict]:
    """The run log's entries; a line that is not a JSON object (cut short by a crash) is skipped."""
    path = results_dir / RUNLOG
    if not path.is_file():
        return []
    entries = []
    for line in path.read_text(errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            entries.append(entry)
    return entries
