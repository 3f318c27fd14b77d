"""``fsbench datasets list|info|fetch``: the registry's datasets and users' data files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from fsbench.cli.group import EXIT_USER_ERROR, data_dir_option, main
from fsbench.errors import FsbenchError

__all__ = ["datasets"]


@main.group()
def datasets() -> None:
    """Datasets of the three papers: list them, describe one, fetch the files."""


@datasets.command("list")
@data_dir_option
def datasets_list(data_dir: Path | None) -> None:
    """Every known dataset with its shape, classes, papers and whether its files are found."""
    from fsbench.datasets import all_datasets, locate

    rows = [("name", "shape", "classes", "papers", "found")]
    for spec in all_datasets():
        found = "built-in" if not spec.files else ("yes" if locate(spec.name, data_dir) else "no")
        rows.append((spec.name, f"{spec.n_samples} x {spec.n_features}", str(spec.n_classes),
                     ",".join(spec.papers) or "-", found))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        click.echo("  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip())


@datasets.command("info")
@click.argument("name")
@data_dir_option
@click.option("--label", default=None, metavar="COLUMN",
              help="A data file's label column: name or position from 0 (default: the last).")
@click.option("--x", "x", default=None, metavar="VAR", help="A .mat/.npz file's data variable.")
@click.option("--y", "y", default=None, metavar="VAR", help="A .mat/.npz file's label variable.")
@click.option("--config", "config", default=None, type=click.Path(dir_okay=False, path_type=Path),
              help="Describe the dataset NAME of this config: generated data or probes with their known features.")
def datasets_info(name: str, data_dir: Path | None, label: str | None, x: str | None,
                  y: str | None, config: Path | None) -> None:
    """Everything the registry knows about dataset NAME (aliases accepted), or how fsbench
    reads the data file NAME (a path: an existing file, or one with a folder or a data file
    extension): its format, shape, label column, classes with their sizes, constant features
    and sha256; for data the file stores sparse, its non-zeros, density and the dense size it
    avoids, read without densifying. --label, --x and --y are a config's label:, x: and y:. With --config, NAME is a
    dataset of that config: one with known relevant features (generate:, probes:, relevant:) is
    built and described with its relevant set and probes.
    """
    if config is not None:
        if label is not None or x is not None or y is not None:
            raise FsbenchError("--label, --x and --y describe a data file given by its path; with --config the "
                               "config says how its datasets are read, so leave them out.")
        if _describe_config_dataset(name, config, data_dir):
            return
    from fsbench.datasets import data_dirs, locate, resolve
    from fsbench.datasets.integrity import read_record
    from fsbench.datasets.user_files.files import (
        COMMAND_LINE_OPTIONS,
        describe_data_file,
        looks_like_data_file,
        not_a_file,
    )
    from fsbench.errors import ConfigError

    if looks_like_data_file(name):
        click.echo(describe_data_file(Path(name), label=label, x=x, y=y, option_names=COMMAND_LINE_OPTIONS))
        return
    try:
        spec = resolve(name)
    except ConfigError:
        if Path(name).is_dir():  # a folder: say so, not "unknown dataset"
            raise not_a_file(Path(name)) from None
        raise
    if label is not None or x is not None or y is not None:
        raise FsbenchError(f"--label, --x and --y describe how to read a data file, and {name!r} is "
                           "not a path; give the file's path, or leave them out for a registered "
                           "dataset.")
    found = locate(spec.name, data_dir)
    click.echo(f"{spec.title} ({spec.name})")
    click.echo(f"  aliases:  {', '.join(spec.aliases) or '-'}")
    click.echo(f"  shape:    {spec.n_samples} samples x {spec.n_features} features, {spec.n_classes} classes")
    click.echo(f"  papers:   {', '.join(spec.papers) or '-'}")
    click.echo(f"  source:   {spec.source}")
    for f in spec.files:  # check: sha256=..., git-blob=... or unchecked (shape and classes only)
        click.echo(f"  file:     {f.name}  {f.check}  url={f.url or 'none known'}")
    if spec.notes:
        click.echo(f"  notes:    {spec.notes}")
    if not spec.files:
        click.echo("  found:    built in (no file needed)")
    elif found:
        click.echo(f"  found:    {', '.join(str(p) for p in found)}")
        for path in found:
            if (recorded := read_record(path)) is not None:
                click.echo(f"  recorded: sha256={recorded} for {path.name} when it was downloaded")
    else:
        click.echo(f"  found:    no (searched {', '.join(str(d) for d in data_dirs(data_dir))}); "
                   f"run 'fsbench datasets fetch {spec.name}'")


def _describe_config_dataset(name: str, config: Path, data_dir: Path | None) -> bool:
    """Describe dataset ``name`` of ``config`` if it has known features (and return True); False
    for a registered dataset, which the registry then describes."""
    from fsbench.configuration.parse import load_experiment
    from fsbench.engine.data import build_known, read_config_data_file

    experiment = load_experiment(config)
    if name not in experiment.datasets:
        raise FsbenchError(f"{str(config)!r} has no dataset {name!r}; its datasets are "
                           f"{', '.join(experiment.datasets)}.")
    known = experiment.known(name)
    if known is None:
        data_file = experiment.data_file(name)
        if data_file is None:
            return False
        from fsbench.datasets import describe_data_file

        read_config_data_file(data_file)  # the bytes the config validated
        click.echo(describe_data_file(Path(data_file.path), label=data_file.label, x=data_file.x, y=data_file.y))
        return True
    import numpy as np

    data = build_known(known, data_dir)
    sizes = np.bincount(data.y, minlength=len(data.classes))
    click.echo(f"{name} (from {config})")
    click.echo(f"  source:   {data.source}")
    if known.generate:
        params = ", ".join(f"{k}={v}" for k, v in known.generate)
        click.echo(f"  generate: {params}")
    click.echo(f"  shape:    {data.n_samples} samples x {data.n_features} features ({data.n_real} real, "
               f"{data.n_probes} probes), {len(data.classes)} classes")
    per_class = zip(data.classes.tolist(), sizes.tolist(), strict=True)
    click.echo(f"  classes:  {', '.join(f'{c}: {n}' for c, n in per_class)}")
    if data.relevant is not None:
        click.echo(f"  relevant: {data.relevant.size} features: {_index_list(data.relevant)}")
    else:
        click.echo("  relevant: not known")
    if data.n_probes:
        click.echo(f"  probes:   features {data.n_real} to {data.n_features - 1} (known irrelevant)")
    return True


def _index_list(indices: Any, shown: int = 40) -> str:
    text = ", ".join(str(int(i)) for i in indices[:shown])
    return text + (f", ... ({indices.size - shown} more)" if indices.size > shown else "")


@datasets.command("fetch")
@click.argument("names", nargs=-1)
@click.option("--all", "fetch_all", is_flag=True, help="Fetch every dataset that has a known source URL.")
def datasets_fetch(names: tuple[str, ...], fetch_all: bool) -> None:
    """Download dataset NAMES (or --all) from their registered source into the per-user cache.

    Every file is verified before it is kept, then the dataset is read and checked for shape
    and classes; a download that fails a check is discarded and nothing is kept.

    \b
      by sha256:       glioma, allaml, prostate-ge, isolet, isolet-subset, semeion,
                       umist, ar, brain-tumor-2, srbct, mll
      by git blob id:  lung, cll-sub-111, carcinomas (the ids of a pinned
                       scikit-feature commit; the sha256 of what arrived is then
                       recorded beside the file as FILE.sha256 and checked on load)
      no download:     prostate-ms (get it by hand); digits is built in

    With several names or --all, a dataset that fails does not stop the others: the
    failures are listed at the end, one line each with the reason, and the exit status is 2.
    """
    from fsbench.datasets.fetch import fetch_many

    if fetch_all == bool(names):
        raise FsbenchError("Give one or more dataset names or --all (not both); see 'fsbench datasets list'.")
    results = []
    for result in fetch_many(None if fetch_all else names):
        results.append(result)
        if result.ok:
            for line in result.lines():
                click.echo(line)
    failed = [r for r in results if not r.ok]
    if failed and len(results) == 1:
        raise FsbenchError(str(failed[0].error))
    if failed:
        click.echo(f"Error: {len(failed)} of {len(results)} datasets could not be fetched:", err=True)
        for r in failed:
            click.echo(f"  {r.lines()[0]}", err=True)
        click.get_current_context().exit(EXIT_USER_ERROR)
