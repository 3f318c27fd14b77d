"""``fsbench selectors``: every registered and installed selector with its parameters."""

from __future__ import annotations

import click

from fsbench.cli.group import main

__all__ = ["selectors"]


@main.command()
def selectors() -> None:
    """List every registered selector: a one-line description, whether it reads sparse (CSR) data
    and how, or that it needs dense data, how its fit time grows with the samples (measured by
    benchmarks/bench_scale.py), then each parameter with its allowed values and default (a config's
    params and grid are checked against them)."""
    from fsbench.configuration.parse import RESERVED_PARAMS
    from fsbench.engine.cost_model import measured_fit
    from fsbench.selectors import SPARSE_ROUTES, registry
    from fsbench.selectors.base import format_value

    for info in registry().values():
        click.echo(f"{info.name:<10} {info.summary}")
        route = SPARSE_ROUTES.get(info.name)
        click.echo(f"{'':<10} sparse data: {route or 'no, needs dense data'}")
        if (cost := measured_fit(info.name)) is not None:
            click.echo(f"{'':<10} cost: {cost}")
        shown = [k for k in info.params if k != "n_features_to_select"]
        for k in shown:
            if k in RESERVED_PARAMS:
                click.echo(f"{'':<10} {k}: not settable, {RESERVED_PARAMS[k]}")
            else:
                click.echo(f"{'':<10} {k}: {info.allowed[k]}, default {format_value(info.params[k])}")
        if not shown:
            click.echo(f"{'':<10} (no parameters)")
    from fsbench.plugins import list_plugins

    plugins = list_plugins()
    if plugins:
        click.echo("\nInstalled by packages (entry-point group fsbench.selectors):")
    for plugin in plugins:
        status = "" if plugin.status == "ok" else f" [{plugin.status}]"
        click.echo(f"{plugin.name:<10} {plugin.summary}{status}")
        click.echo(f"{'':<10} {plugin.kind or 'unloadable'} {plugin.path} ({plugin.distribution})")
        for k, default in plugin.params.items():
            click.echo(f"{'':<10} {k}: default {format_value(default)}")
    click.echo("\nAny scikit-learn estimator or score function can be used by import path: "
               "'class: package.module:Name' or 'score_func: package.module:function' in a config.")
