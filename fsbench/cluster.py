"""Running an experiment's tasks on a Dask cluster: the workers compute, the client writes.

``--scheduler tcp://HOST:8786`` connects to a running scheduler; ``--scheduler local`` (or
``local:N``) starts a ``LocalCluster`` of N single-threaded worker processes on this machine.
Each dataset's arrays are sent to the cluster once (``Client.scatter``) and every task is one
Dask future that returns its outcome (rows and ranking, or the failure) to the client, which
alone writes the results folder, as the local path does: a worker never needs the results or
the data folder. A worker that dies mid-task loses nothing: the scheduler reruns its tasks on
another worker (Dask's ``allowed_failures``), and a task's outcome depends only on the task
(seeds from its identity, one BLAS thread), so the rows are those of an uninterrupted run.

Dask is an optional dependency (``pip install 'fsbench[dask]'``).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from fsbench.errors import FsbenchError

INSTALL_HINT = "pip install 'fsbench[dask]'"
_LOCAL = re.compile(r"local(?::(\d+))?")


def parse_scheduler(spec: str) -> tuple[str, int | None]:
    """("local", N or None) for ``local`` / ``local:N``, else ("address", None) for a scheduler
    address such as ``tcp://host:8786``."""
    spec = spec.strip()
    match = _LOCAL.fullmatch(spec)
    if match:
        n = int(match.group(1)) if match.group(1) else None
        if n is not None and n < 1:
            raise FsbenchError(f"--scheduler {spec}: a local cluster needs at least one worker, e.g. local:2.")
        return "local", n
    if not spec:
        raise FsbenchError("--scheduler is empty; give 'local', 'local:N' or a scheduler address such as "
                           "tcp://host:8786.")
    return "address", None


def _import_distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise FsbenchError(f"--scheduler needs Dask's distributed scheduler, which is not installed; install it "
                           f"with: {INSTALL_HINT}") from None
    return distributed


@contextlib.contextmanager
def connect(spec: str, *, timeout: float = 10.0) -> Iterator[Any]:
    """A ``distributed.Client`` for ``spec`` (see :func:`parse_scheduler`), closed on exit; a
    local cluster is started and stopped with it. An unreachable scheduler is a FsbenchError."""
    kind, n_workers = parse_scheduler(spec)
    distributed = _import_distributed()
    if kind == "local":
        import os

        cluster = distributed.LocalCluster(n_workers=n_workers or os.cpu_count() or 1, threads_per_worker=1,
                                           processes=True, dashboard_address=None)
        client = distributed.Client(cluster)
        try:
            yield client
        finally:
            client.close()
            cluster.close()
        return
    try:
        client = distributed.Client(spec, timeout=timeout)
    except (OSError, TimeoutError, ValueError) as exc:
        raise FsbenchError(f"Cannot reach the Dask scheduler at {spec} ({type(exc).__name__}); start one with "
                           "'dask scheduler' (and workers with 'dask worker ADDRESS') or check the address.") from None
    try:
        yield client
    finally:
        client.close()


def n_workers(client: Any) -> int:
    """Workers the scheduler knows now (at least 1, for the runlog)."""
    return max(1, len(client.scheduler_info().get("workers", {})))


def run_tasks(client: Any, compute: Callable[..., Any], tasks: Iterable[Any], arrays: dict[str, tuple[Any, Any]],
              dataset_of: Callable[[Any], str], key_of: Callable[[Any], str], *args: Any) -> Iterator[Any]:
    """Submit ``compute(task, (X, y), *args)`` for every task, each dataset's (X, y) scattered
    once, and yield the results as they finish (any order). On an interruption (Ctrl-C, SIGTERM
    as KeyboardInterrupt) the pending futures are cancelled before the exception propagates. A
    task the cluster cannot finish (its workers keep dying: Dask's KilledWorker after
    ``allowed_failures``; the scheduler lost) is a FsbenchError naming it; the outcomes already
    yielded are the caller's to keep."""
    distributed = _import_distributed()
    tasks = list(tasks)
    needed = sorted({dataset_of(t) for t in tasks})
    scattered = {name: client.scatter(arrays[name], broadcast=False, hash=False) for name in needed}
    futures = [client.submit(compute, task, scattered[dataset_of(task)], *args, key=f"fsbench-{key_of(task)}",
                             pure=False)
               for task in tasks]
    try:
        for future in distributed.as_completed(futures):
            try:
                result = future.result()
            except Exception as exc:  # compute() itself returns a task's failure: this is the cluster's
                reason = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
                raise FsbenchError(f"The Dask cluster could not run task {future.key} ({type(exc).__name__}"
                                   f"{': ' + reason if reason else ''}); every finished task is kept: check the "
                                   "workers (memory, a crashing library) and run the same command again to "
                                   "resume.") from None
            yield result
    except BaseException:
        with contextlib.suppress(Exception):  # a lost scheduler cannot cancel: the error above says why
            client.cancel(futures, force=True)
        raise
