"""The configuration: a YAML file or text becomes a validated, frozen experiment.

- :mod:`fsbench.configuration.parse`: :func:`~fsbench.configuration.parse.load_experiment` and
  :func:`~fsbench.configuration.parse.parse_experiment`, every key checked, every problem one
  sentence naming the file, line and key path;
- :mod:`fsbench.configuration.experiment`: the frozen :class:`~fsbench.configuration.experiment.Experiment`
  and its parts (protocol, inner CV, selectors, classifiers, users' data files), and its fingerprint;
- :mod:`fsbench.configuration.entries`: the entries of the lists (datasets, selectors with their
  parameters and grids, classifiers), users' selectors and files included;
- :mod:`fsbench.configuration.known_data`: the dataset entries with known relevant features or
  probes (``generate``, ``base`` with ``probes``, ``relevant``);
- :mod:`fsbench.configuration.yamlio`: YAML with line numbers and YAML 1.2 numbers.

It describes an experiment and runs nothing: the engine runs it.

May import: errors, fixed_order, code_identity, storage, datasets, selectors, plugins and
evaluation.
"""
