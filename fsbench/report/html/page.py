"""The HTML page itself: the template filled, the files beside it written.

A page is ``index.html`` (its CSS and script inlined from the package data files ``page.css``
and ``page.js``, its numbers embedded as JSON), ``plotly.min.js`` (plotly's bundled JavaScript,
written once, from the ``plotly`` package: ``pip install 'fsbench[html]'``), ``figures/`` (the
critical-difference diagrams as SVG) and ``downloads/`` (copied results, tables as CSV). No
file names another host: the page works offline from the file system.

Deterministic: the JSON's keys are sorted and its floats rounded by the data layer, the SVGs
carry fixed ids and no date, and nothing records when the page was made.
"""

from __future__ import annotations

import html
import json
import re
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from fsbench.errors import FsbenchError
from fsbench.storage.atomic import atomic_write_bytes, atomic_write_text

INDEX = "index.html"
PLOTLY_JS = "plotly.min.js"
FIGURES, DOWNLOADS = "figures", "downloads"


@dataclass
class Page:
    """What one page holds. ``data``: the JSON the script renders (``groups``, ``metrics``, ``metric``,
    ``missing``); ``sections``: HTML placed before the groups' explorers, each (anchor, title, html);
    ``copies``: download name -> file copied; ``texts``: download name -> text written."""

    title: str
    data: dict[str, Any]
    sections: list[tuple[str, str, str]] = field(default_factory=list)
    copies: dict[str, Path] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)
    links: list[tuple[str, str]] = field(default_factory=list)  # (label, relative href) of files not copied


# ----------------------------------------------------------------------------- HTML pieces
def esc(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def table_html(header: Sequence[str], rows: Sequence[Sequence[Any]], *, numeric: Sequence[bool] | None = None,
               sortable: bool = True, cls: str = "", raw: bool = False) -> str:
    """An HTML table; ``numeric`` columns sort as numbers (a cell may be (text, sort value));
    ``raw``: the cells are HTML already."""
    numeric = list(numeric) if numeric is not None else [False] * len(header)
    heads = []
    for name, is_num in zip(header, numeric, strict=True):
        attrs = ' class="sortable" data-type="num" data-first="desc"' if (sortable and is_num) else \
            (' class="sortable text" data-first="asc"' if sortable else ' class="text"')
        heads.append(f"<th{attrs}>{esc(name)}</th>")
    body = []
    for row in rows:
        cells = []
        for value, is_num in zip(row, numeric, strict=True):
            text, key = value if isinstance(value, tuple) else (value, None)
            shown = text if raw else esc(text)
            v = f' data-v="{esc(key)}"' if key is not None else ""
            cells.append(f"<td{v}>{shown}</td>" if is_num else f'<td class="text"{v}>{shown}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    classes = " ".join(c for c in ("sortable-table" if sortable else "", cls) if c)
    return (f'<div class="scroll"><table class="{classes}"><thead><tr>{"".join(heads)}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table></div>')


def number(value: Any, digits: int = 2) -> tuple[str, str] | str:
    """(text, sort key) of a number for :func:`table_html`; "" for a missing one."""
    if value is None or (isinstance(value, float) and value != value):
        return ("", "")
    return (f"{float(value):.{digits}f}", repr(float(value)))


def hex_colors(selectors: Sequence[str]) -> dict[str, str]:
    """Each selector's colour, as the matplotlib figures give it (:func:`fsbench.report.plots.palette`)."""
    from fsbench.report.plots import palette

    return {s: "#" + "".join(f"{round(255 * c):02x}" for c in color[:3])
            for s, color in zip(selectors, palette(len(selectors)), strict=True)}


# ----------------------------------------------------------------------------- the page
def _resource(name: str) -> str:
    return resources.files("fsbench.report.html").joinpath(name).read_text(encoding="utf-8")


def plotly_js() -> str:
    """plotly.js as the ``plotly`` package bundles it; FsbenchError naming the extra without it."""
    try:
        from plotly.offline import get_plotlyjs
    except ImportError:
        raise FsbenchError("The HTML page needs the plotly package; install it with pip install 'fsbench[html]' "
                           "(or pip install plotly).") from None
    return get_plotlyjs()


def _script_json(data: Mapping[str, Any]) -> str:
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return text.replace("</", "<\\/")  # never closes its script element


def render(page: Page) -> str:
    """``index.html`` of ``page`` (its figures already moved out to files by :func:`write_page`)."""
    metrics = page.data["metrics"]
    options = "".join(f'<option value="{esc(m)}">{esc(info["label"])}</option>' for m, info in metrics.items())
    nav = [("glance", "At a glance"), *[(anchor, title) for anchor, title, _ in page.sections]]
    nav += [(f"group-{g['id']}", g.get("nav") or "Results") for g in page.data["groups"] if g.get("nav") is not False]
    nav_html = "".join(f'<a href="#{esc(a)}">{esc(t)}</a>' for a, t in nav)
    sections = "".join(f'<section id="{esc(a)}"><h2>{esc(t)}</h2>{body}</section>' for a, t, body in page.sections)
    groups = "".join(f'<section class="explorer-section"><h2 id="group-{esc(g["id"])}-title">'
                     f'{esc(g.get("heading") or "Results per dataset")}</h2>'
                     f'<div class="explorer" id="group-{esc(g["id"])}"></div></section>'
                     for g in page.data["groups"] if not g.get("placed"))
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{esc(page.title)}</title>\n<style>\n{_resource('page.css')}</style>\n"
        f"<script src=\"{PLOTLY_JS}\"></script>\n</head>\n<body>\n"
        f"<header><h1>{esc(page.title)}</h1>"
        f"<label>metric <select id=\"metric\">{options}</select></label>"
        "<label><input type=\"checkbox\" id=\"bands\" checked> ± 1 sd bands</label>"
        f"<nav>{nav_html}</nav></header>\n<main>\n"
        "<section class=\"glance\" id=\"glance\"><h2>At a glance: <span id=\"glance-metric\"></span></h2>"
        "<ul id=\"glance-list\"></ul></section>\n"
        f"{sections}\n{groups}\n</main>\n"
        f"<script type=\"application/json\" id=\"fsbench-data\">{_script_json(page.data)}</script>\n"
        f"<script>\n{_resource('page.js')}</script>\n</body>\n</html>\n")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "x"


def write_page(out: Path, page: Page) -> Path:
    """Write ``page`` into ``out`` (created): index.html, plotly.min.js, figures/, downloads/; files of
    an earlier page there that this one no longer has are removed. Returns the index's path."""
    from fsbench.storage.lock import check_writable_folder

    js = plotly_js()
    check_writable_folder(out)
    figures: dict[str, str] = {}
    for group in page.data["groups"]:
        for metric, across in group["across"].items():
            if across.get("svg"):
                name = f"{FIGURES}/cd-{_slug(group['id'])}-{_slug(metric)}.svg"
                figures[name] = across["svg"]
                across["svg"] = name
    wanted = {*figures, *(f"{DOWNLOADS}/{n}" for n in (*page.copies, *page.texts))}
    for sub in (FIGURES, DOWNLOADS):
        folder = out / sub
        if folder.is_dir():
            for old in folder.iterdir():
                if old.is_file() and f"{sub}/{old.name}" not in wanted:
                    old.unlink()
    (out / FIGURES).mkdir(parents=True, exist_ok=True)
    (out / DOWNLOADS).mkdir(parents=True, exist_ok=True)
    _write_if_changed(out / PLOTLY_JS, js.encode("utf-8"), atomic_write_bytes)
    for name, text in figures.items():
        _write_if_changed(out / name, text, atomic_write_text)
    for name, source in page.copies.items():
        target = out / DOWNLOADS / name
        if not target.is_file() or target.read_bytes() != source.read_bytes():
            shutil.copyfile(source, target)
    for name, text in page.texts.items():
        _write_if_changed(out / DOWNLOADS / name, text, atomic_write_text)
    index = out / INDEX
    atomic_write_text(index, render(page))
    return index


def _write_if_changed(path: Path, content: str | bytes, write: Callable[[Path, Any], None]) -> None:
    """Write unless the file holds ``content`` already (plotly.min.js is 4.5 MB)."""
    if path.is_file():
        old = path.read_bytes()
        if old == (content.encode("utf-8") if isinstance(content, str) else content):
            return
    write(path, content)


def downloads_html(page: Page) -> str:
    """The download links of the page's files (relative hrefs)."""
    links = [(name, f"{DOWNLOADS}/{name}") for name in (*page.copies, *page.texts)] + list(page.links)
    items = "".join(f'<li><a href="{esc(href)}" download>{esc(label)}</a></li>' for label, href in links)
    return f'<ul class="downloads">{items}</ul>'
