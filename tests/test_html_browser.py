"""The page of ``fsbench html`` in a real browser: headless Chromium (Debian's ``chromium``)
driven by Playwright, no browser download (``executable_path`` is the system's chromium).

On the page of a small real run: no console error, no request leaves ``file://``, a header click
sorts the table (the order checked against the means sorted here with pandas), a legend click
hides a curve (plotly's trace state), the metric switch shows the other metric's numbers (checked
against balanced accuracy computed here from the per-class counts), and a 1280 x 800 screenshot
is written. A page without its plotly.min.js shows the banner naming the command that writes it,
and its tables still sort. Without chromium or playwright the tests are skipped, saying which is
missing.
"""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from fsbench.cli import main

pytest.importorskip("plotly", reason="the HTML page needs plotly (pip install 'fsbench[html]')")


def _browser_or_skip() -> str:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("no chromium on this machine (apt-get install -y chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.skip("playwright is not installed (pip install playwright; no browser download is needed)")
    return chromium


def _balanced(rows: pd.DataFrame) -> np.ndarray:
    out = []
    for support, correct in zip(rows["class_support"], rows["class_correct"], strict=True):
        s, c = np.array(support.split(";"), dtype=float), np.array(correct.split(";"), dtype=float)
        out.append(np.mean(c[s > 0] / s[s > 0]))
    return 100 * np.array(out)


def test_page_in_headless_chromium(tmp_path):
    chromium = _browser_or_skip()
    from playwright.sync_api import sync_playwright

    from tests.test_html_report import make_results

    results = make_results(tmp_path)
    made = CliRunner().invoke(main, ["html", str(results)], catch_exceptions=False)
    assert made.exit_code == 0, made.output
    index = results / "html" / "index.html"
    runs = pd.read_csv(results / "runs.csv.gz")
    digits = runs[runs["dataset"] == "digits"]
    selectors = list(dict.fromkeys(digits["selector"]))
    k = 5
    means = digits[digits["k"] == k].groupby("selector", sort=False)["accuracy"].mean().reindex(selectors) * 100

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            errors, requests = [], []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("request", lambda r: requests.append(r.url))
            page.goto(index.as_uri())
            page.wait_for_function("document.body.dataset.ready === '1'", timeout=60_000)
            page.screenshot(path=str(tmp_path / "page.png"))
            assert (tmp_path / "page.png").stat().st_size > 10_000

            # the digits panel: sort by the k = 5 column (best first), then once more (reversed)
            table = page.locator("#table-all-0 table.values")
            assert page.locator("#panel-all-0 h3").inner_text().startswith("digits")
            table.locator(f"th[data-k='{k}']").click()
            order = table.locator("tbody tr").evaluate_all("rows => rows.map(r => r.dataset.selector)")
            assert order == list(means.sort_values(ascending=False, kind="stable").index)
            cells = table.locator(f"tbody td:nth-child({2 + [2, 5, 10].index(k)})").all_inner_texts()
            assert [float(c.split(" ")[0]) for c in cells] == [round(v, 2) for v in
                                                               means.sort_values(ascending=False, kind="stable")]
            table.locator(f"th[data-k='{k}']").click()
            order = table.locator("tbody tr").evaluate_all("rows => rows.map(r => r.dataset.selector)")
            assert order == list(means.sort_values(ascending=True, kind="stable").index)

            # a legend click hides the first selector's curve
            curve = "curve-all-0"
            assert page.evaluate(f"document.getElementById('{curve}').data[0].visible") is True
            page.locator(f"#{curve} .legend .traces").first.click()
            page.wait_for_function(f"document.getElementById('{curve}').data[0].visible === 'legendonly'",
                                   timeout=10_000)

            # the metric switch: balanced accuracy of fisher at k = 5, as computed from the counts
            page.select_option("#metric", "balanced_accuracy")
            rows = digits[(digits["k"] == k) & (digits["selector"] == "fisher")]
            expected = f"{_balanced(rows).mean():.2f}"
            cell = page.locator("#table-all-0 tr[data-selector='fisher'] td").nth(1 + [2, 5, 10].index(k))
            assert cell.inner_text().split(" ")[0] == expected
            assert page.locator("#glance-metric").inner_text() == "balanced accuracy (%)"
            page.screenshot(path=str(tmp_path / "page-balanced.png"), full_page=True)
        finally:
            browser.close()
    assert errors == []
    assert requests and all(url.startswith("file://") for url in requests), requests


def test_page_without_plotly_says_so_and_its_tables_still_work(tmp_path):
    """A page whose plotly.min.js is missing (a committed page leaves it out): the banner names the
    command that writes it, the tables are there and sort, and the missing file is the only error."""
    chromium = _browser_or_skip()
    from playwright.sync_api import sync_playwright

    from tests.test_html_report import make_results

    results = make_results(tmp_path)
    made = CliRunner().invoke(main, ["html", str(results)], catch_exceptions=False)
    assert made.exit_code == 0, made.output
    (results / "html" / "plotly.min.js").unlink()
    runs = pd.read_csv(results / "runs.csv.gz")
    digits = runs[runs["dataset"] == "digits"]
    selectors = list(dict.fromkeys(digits["selector"]))
    means = digits[digits["k"] == 5].groupby("selector", sort=False)["accuracy"].mean().reindex(selectors)

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            errors, failed = [], []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("requestfailed", lambda r: failed.append(r.url))
            page.goto((results / "html" / "index.html").as_uri())
            page.wait_for_function("document.body.dataset.ready === '1'", timeout=60_000)
            banner = page.locator("#no-plotly").inner_text()
            assert "plotly.min.js" in banner and "fsbench report --html" in banner
            table = page.locator("#table-all-0 table.values")
            table.locator("th[data-k='5']").click()
            order = table.locator("tbody tr").evaluate_all("rows => rows.map(r => r.dataset.selector)")
            assert order == list(means.sort_values(ascending=False, kind="stable").index)
        finally:
            browser.close()
    assert errors == []
    assert [url.rsplit("/", 1)[-1] for url in failed] == ["plotly.min.js"]
