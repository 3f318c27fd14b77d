"""Where the papers' configs and results live in a checkout."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from fsbench.errors import FsbenchError


@dataclass(frozen=True)
class Layout:
    configs: Path = Path("configs") / "papers"
    results: Path = Path("results") / "papers"

    def config(self, paper: str) -> Path:
        path = self.configs / f"{paper}.yaml"
        if not path.is_file():
            raise FsbenchError(f"The config of paper {paper!r} is not at {str(path)!r}; run from the project "
                               "root or pass --configs.")
        return path

    def variants(self, paper: str) -> list[Path]:
        return sorted((self.configs / "variants").glob(f"{paper}-*.yaml"))

    def results_dir(self, paper: str) -> Path:
        return self.results / paper

    def variant_dir(self, config: Path) -> Path:
        return self.results / "variants" / config.stem
