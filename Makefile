PYTHON ?= python
# Dataset files come from $FSBENCH_DATA (or --data-dir, or the per-user cache): set it yourself;
# tests that need the papers' datasets are skipped without it.

.PHONY: install demo test lint bench reproduce report check

install:  ## install fsbench with the test extras
	$(PYTHON) -m pip install -e ".[test]"

demo:  ## the quickstart experiment (bundled digits, no download)
	fsbench run configs/quickstart.yaml

test:  ## the test suite (the command CI runs)
	$(PYTHON) -m pytest -q

lint:
	ruff check fsbench tests benchmarks

bench:  ## speed benchmarks against the established implementations (minutes; needs FSBENCH_DATA)
	$(PYTHON) benchmarks/bench_filters.py
	$(PYTHON) benchmarks/bench_rfs_dso.py
	$(PYTHON) benchmarks/bench_svm_selectors.py
	$(PYTHON) benchmarks/bench_baselines.py --out benchmarks/bench_baselines.md

reproduce:  ## all three papers on every available dataset, variants included (hours; resumable)
	fsbench reproduce
	fsbench report

report:  ## results/papers/REPORT.md from the committed paper results
	fsbench report

check:  ## the CI reproduction check: a faithful subset rerun against the committed results
	fsbench check
