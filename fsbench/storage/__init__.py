"""Results on disk: everything fsbench writes to, and reads back from, a results folder.

A results folder holds, each file owned by one module of this package::

    config.yaml        the resolved experiment (what ran), with its fingerprint       folder
    tasks/<id>.json    one finished task (dataset x repeat x fold x selector): its    task_files
                       rows, its ranking's top features and their digest
    failures.csv       the tasks of the last run that failed                          task_files
    cache/rankings/    the ranking cache: fitted selectors' rankings, keyed by a      ranking_cache
                       hash of their inputs
    runs.csv.gz        one row per (dataset, repeat, fold, selector, k), built from   runs
                       tasks/; each task's rows carry their digest
    rankings.csv.gz    each task's top max(n_features) features, best first, built    rankings
                       from tasks/ beside runs.csv.gz
    runlog.jsonl       one line per invocation: wall time, machine, versions          runlog

"Ranking" means one thing throughout: a selector's permutation of the features, best first.
The ranking cache keeps whole fitted rankings; task files and rankings.csv.gz keep each task's
first max(n_features) features only. Every file is written whole under a temporary name and
renamed into place (:mod:`~fsbench.storage.atomic`); one process writes a folder at a time
(:mod:`~fsbench.storage.lock`); digests (:mod:`~fsbench.storage.digests`) let a resume detect
values changed after they were written; labels are read back as strings
(:mod:`~fsbench.storage.csvread`). Import a name from the module that defines it.

It uses only fsbench.errors (and the package's ``__version__``, for the run log) and libraries.

May import: code_identity, errors and fixed_order.
"""
