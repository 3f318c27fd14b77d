"""Every config shipped under configs/ parses, and the baselines benchmark runs every selector."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsbench import load_experiment, registry

CONFIGS = Path(__file__).resolve().parents[1] / "configs"


@pytest.mark.parametrize("path", sorted(CONFIGS.rglob("*.yaml")), ids=lambda p: str(p.relative_to(CONFIGS)))
def test_every_shipped_config_parses(path: Path) -> None:
    experiment = load_experiment(path)
    assert experiment.selectors and experiment.datasets


def test_the_baselines_benchmark_runs_every_registered_selector_once_with_its_defaults() -> None:
    experiment = load_experiment(CONFIGS / "baselines.yaml")
    names = [s.name for s in experiment.selectors]
    assert sorted(names) == sorted(registry()), set(names) ^ set(registry())
    assert all(not s.params and not s.grid for s in experiment.selectors)
