"""The engine: an experiment becomes tasks, tasks become rows in a results folder.

- :mod:`fsbench.engine.runner`: :func:`~fsbench.engine.runner.run_experiment`, plan, run (or
  resume) and write; :mod:`fsbench.engine.tasks`: a task (one selector on one outer split of one
  dataset), its identity and data; :mod:`fsbench.engine.data`: a config's datasets loaded, and
  what each row's top k holds of data with known relevant features or probes;
  :mod:`fsbench.engine.fitting`: fitting a selector, its
  rankings cache and time limit; :mod:`fsbench.engine.resume`: every row checked before reuse;
  :mod:`fsbench.engine.preflight`: the checks of a run before it writes, shared with its dry run;
  :mod:`fsbench.engine.cost_model`: a task's predicted time and ``fsbench run --dry-run``;
- :mod:`fsbench.engine.workers`: worker processes whose death fails one task only;
  :mod:`fsbench.engine.cluster`: the same tasks on a Dask cluster; :mod:`fsbench.engine.console`:
  progress, notes and signals of a run;
- :mod:`fsbench.engine.traces`: objective per iteration of the iterative selectors;
  :mod:`fsbench.engine.regenerate_rankings` and :mod:`fsbench.engine.check_rankings`: the
  rankings of older results refitted, and stored rankings replayed against their rows.

May import: errors, fixed_order, code_identity, storage, datasets, selectors, plugins, evaluation
and configuration.
"""
