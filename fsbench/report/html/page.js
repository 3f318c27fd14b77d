// fsbench results page: renders the tables and figures of DATA (embedded JSON) for the chosen metric.
"use strict";
const DATA = JSON.parse(document.getElementById("fsbench-data").textContent);
const state = { metric: DATA.metric, bands: true };
const PLOT_CONFIG = { displaylogo: false, responsive: true, modeBarButtonsToRemove: ["lasso2d", "select2d"] };

function el(tag, attrs, children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "text") node.textContent = value; else node.setAttribute(key, value);
  }
  for (const child of children || []) node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
  return node;
}
function fmt(v, digits) { return v === null || v === undefined ? "" : v.toFixed(digits === undefined ? 2 : digits); }
function metricInfo(m) { return DATA.metrics[m || state.metric]; }
function colorOf(group, selector) { return group.colors[selector] || "#555"; }

// ---------------------------------------------------------------------------- sortable tables
function sortBy(table, th) {
  const index = Array.from(th.parentNode.children).indexOf(th);
  const first = th.dataset.first || "asc";
  const dir = th.classList.contains("sorted-" + first) ? (first === "asc" ? "desc" : "asc") : first;
  table.querySelectorAll("th").forEach(h => h.classList.remove("sorted-asc", "sorted-desc"));
  th.classList.add("sorted-" + dir);
  const body = table.tBodies[0];
  const rows = Array.from(body.rows);
  const key = r => { const c = r.cells[index]; return c.dataset.v !== undefined ? c.dataset.v : c.textContent; };
  const numeric = th.dataset.type === "num";
  rows.sort((a, b) => {
    let x = key(a), y = key(b);
    if (numeric) {
      x = x === "" ? NaN : Number(x); y = y === "" ? NaN : Number(y);
      if (isNaN(x) || isNaN(y)) return isNaN(x) - isNaN(y);  // empty cells last, either way
      return dir === "asc" ? x - y : y - x;
    }
    return dir === "asc" ? x.localeCompare(y) : y.localeCompare(x);
  });
  rows.forEach(r => body.appendChild(r));
}
function makeSortable(table) {
  table.querySelectorAll("th.sortable").forEach(th => th.addEventListener("click", () => sortBy(table, th)));
}

// ---------------------------------------------------------------------------- the value table
function parseKs(text, ks) {
  const wanted = text.split(/[\s,;]+/).filter(Boolean).map(Number).filter(n => !isNaN(n));
  return wanted.length ? ks.filter(k => wanted.includes(k)) : ks;
}
function defaultKs(ks) {
  if (ks.length <= 12) return ks;
  const step = Math.ceil(ks.length / 10), shown = ks.filter((_, i) => i % step === step - 1 || i === 0);
  if (shown[shown.length - 1] !== ks[ks.length - 1]) shown.push(ks[ks.length - 1]);
  return shown;
}
function renderValueTable(group, panel, box) {
  box.textContent = "";
  const values = panel.metrics[state.metric];
  if (!values) {
    box.appendChild(el("p", { class: "note", text: "No " + metricInfo().name + " for this dataset: " + DATA.missing[state.metric] }));
    return;
  }
  const info = metricInfo();
  const kInput = el("input", { type: "text", class: "k-filter", placeholder: "e.g. 10, 50, 100" });
  const sInput = el("input", { type: "text", class: "selector-filter", placeholder: "name contains" });
  const shownKs = panel.kFilter ? parseKs(panel.kFilter, values.ks) : defaultKs(values.ks);
  kInput.value = panel.kFilter || (shownKs.length < values.ks.length ? shownKs.join(", ") : "");
  sInput.value = panel.selectorFilter || "";
  const filters = el("div", { class: "filters" }, [
    el("label", {}, ["selectors: ", sInput]),
    el("label", {}, ["k shown: ", kInput, " (of " + values.ks.length + ": " + values.ks[0] + " to " + values.ks[values.ks.length - 1] + ")"])]);
  const head = el("tr", {}, [el("th", { class: "sortable", "data-first": "asc", text: "selector" })]);
  shownKs.forEach(k => head.appendChild(el("th", { class: "sortable", "data-type": "num", "data-first": info.higher ? "desc" : "asc", "data-k": String(k), text: "k = " + k })));
  const body = el("tbody");
  values.selectors.forEach((selector, i) => {
    const failedTasks = panel.failed[selector];
    const name = el("td", { class: "selector", text: selector + (failedTasks ? " (failed: " + failedTasks + " task" + (failedTasks > 1 ? "s" : "") + ")" : "") });
    const row = el("tr", { "data-selector": selector }, [name]);
    shownKs.forEach(k => {
      const j = values.ks.indexOf(k), mean = values.mean[i][j], sd = values.sd[i][j], mark = values.mark[i][j];
      const parts = mean === null ? [] : [fmt(mean)];
      if (mean !== null && sd !== null) parts.push(el("span", { class: "sd", text: " ± " + fmt(sd) }));
      if (mark === 1 && parts.length) parts.push(el("span", { class: "mark", text: " ≈" }));
      if (values.unconverged[i][j] && parts.length) parts.push(el("span", { class: "mark", text: " †" }));
      const cell = el("td", { "data-v": mean === null ? "" : String(mean),
        title: values.n[i][j] ? values.n[i][j] + " repetition(s)" : "not run" }, parts);
      if (mark === 2) cell.className = "best"; else if (mark === 1) cell.className = "notworse";
      if (failedTasks) cell.className = "failed";
      row.appendChild(cell);
    });
    body.appendChild(row);
  });
  const table = el("table", { class: "values", "data-panel": panel.id }, [el("thead", {}, [head]), body]);
  makeSortable(table);
  const apply = () => {
    const needle = sInput.value.trim().toLowerCase();
    Array.from(body.rows).forEach(r => { r.style.display = r.dataset.selector.toLowerCase().includes(needle) ? "" : "none"; });
  };
  sInput.addEventListener("input", () => { panel.selectorFilter = sInput.value; apply(); });
  kInput.addEventListener("change", () => { panel.kFilter = kInput.value; renderValueTable(group, panel, box); });
  apply();
  const key = info.higher ? "bold: the best of each k" : "bold: the best (lowest) of each k";
  box.append(filters, el("div", { class: "scroll" }, [table]),
    el("p", { class: "legend-key", text: info.label + ", mean ± sd over repetitions; " + key + "; ≈: not significantly worse than it (corrected resampled t-test over the outer splits, p ≥ 0.05)" + (values.unconverged.flat().some(Boolean) ? "; †: a classifier fit did not converge" : "") + ". Click a header to sort." }));
}

// ---------------------------------------------------------------------------- curves
function hexToRgba(hex, alpha) {
  const n = parseInt(hex.slice(1), 16);
  return "rgba(" + (n >> 16) + "," + ((n >> 8) & 255) + "," + (n & 255) + "," + alpha + ")";
}
function hiddenSelectors(div) {
  const hidden = new Set();
  (div.data || []).forEach(t => { if (t.meta === "line" && t.visible === "legendonly") hidden.add(t.legendgroup); });
  return hidden;
}
function renderCurves(group, panel, div) {
  const values = panel.metrics[state.metric];
  if (!values) { Plotly.purge(div); div.style.display = "none"; return; }
  div.style.display = "";
  const hidden = hiddenSelectors(div), lines = [], bands = [];
  values.selectors.forEach((selector, i) => {
    const color = colorOf(group, selector);
    const visible = hidden.has(selector) ? "legendonly" : true;
    lines.push({ x: values.ks, y: values.mean[i], name: selector, legendgroup: selector, meta: "line", visible: visible,
      type: "scatter", mode: "lines+markers", line: { color: color, width: 2 }, marker: { size: 6 },
      customdata: values.sd[i], hovertemplate: selector + ", k = %{x}: %{y:.2f} ± %{customdata:.2f}<extra></extra>" });
    const upper = values.mean[i].map((m, j) => m === null || values.sd[i][j] === null ? m : m + values.sd[i][j]);
    const lower = values.mean[i].map((m, j) => m === null || values.sd[i][j] === null ? m : m - values.sd[i][j]);
    bands.push({ x: values.ks.concat(values.ks.slice().reverse()), y: upper.concat(lower.reverse()), legendgroup: selector,
      meta: "band", showlegend: false, hoverinfo: "skip", type: "scatter", mode: "lines", fill: "toself",
      line: { width: 0, color: color }, fillcolor: hexToRgba(color, 0.07),
      visible: state.bands && visible === true ? true : (state.bands ? "legendonly" : false) });
  });
  const layout = { margin: { l: 60, r: 10, t: 30, b: 45 }, hovermode: "closest",
    title: { text: panel.dataset + ": " + metricInfo().name + " against k", font: { size: 14 } },
    xaxis: { title: { text: "number of selected features k" }, zeroline: false },
    yaxis: { title: { text: metricInfo().label }, zeroline: false },
    legend: { title: { text: "click: hide / show" }, font: { size: 12 } } };
  Plotly.react(div, lines.concat(bands), layout, PLOT_CONFIG);
}
function syncBands(div) {
  // a band follows its curve: shown when the bands are on and the curve is
  if (!div.data) return;
  const shown = {};
  div.data.forEach(t => { if (t.meta === "line") shown[t.legendgroup] = t.visible !== "legendonly" && t.visible !== false; });
  const indices = [], visible = [];
  div.data.forEach((t, i) => { if (t.meta === "band") { indices.push(i); visible.push(state.bands && shown[t.legendgroup] ? true : (state.bands ? "legendonly" : false)); } });
  if (indices.length) Plotly.restyle(div, { visible: visible }, indices);
}

// ---------------------------------------------------------------------------- across datasets
function renderAcross(group, box) {
  box.textContent = "";
  const across = group.across[state.metric], info = metricInfo();
  if (!across || across.k === null) {
    box.appendChild(el("p", { class: "muted", text: "No comparison across datasets" + (across && across.note ? ": " + across.note : "") + "." }));
    return;
  }
  if (across.ranks.length) {
    const f = across.friedman;
    box.appendChild(el("h4", { text: "Average ranks at k = " + across.k + " (1 = best " + info.name + ")" }));
    const text = "Friedman over " + f.n_blocks + " datasets: chi² = " + fmt(f.statistic) + ", p = " + f.p_value.toPrecision(3) +
      "; Nemenyi critical difference CD = " + fmt(f.cd) + " ranks (alpha = " + f.alpha + ").";
    box.appendChild(el("p", { class: "caption", text: text }));
    if (across.svg) box.appendChild(el("div", { class: "cd" }, [el("img", { src: across.svg, alt: "critical difference diagram, " + info.name + " at k = " + across.k })]));
  }
  if (across.note) box.appendChild(el("p", { class: "note", text: "Note: " + across.note + "." }));
  const div = el("div", { class: "plot small", id: "pareto-" + group.id });
  box.append(el("h4", { text: "Cost and " + info.name + " at k = " + across.k }), div);
  const bySelector = {};
  across.pareto.forEach(p => { (bySelector[p.selector] = bySelector[p.selector] || []).push(p); });
  const datasets = [...new Set(across.pareto.map(p => p.dataset))];
  const symbols = ["circle-open", "square-open", "diamond-open", "triangle-up-open", "cross-thin-open", "x-thin-open", "star-open", "hexagon-open"];
  const symbolOf = d => symbols[datasets.indexOf(d) % symbols.length];
  const traces = Object.keys(bySelector).map(selector => ({ type: "scatter", mode: "markers", name: selector,
    x: bySelector[selector].map(p => Math.max(p.seconds, 1e-4)), y: bySelector[selector].map(p => p.value),
    text: bySelector[selector].map(p => p.dataset), marker: { size: 10, color: colorOf(group, selector), symbol: bySelector[selector].map(p => symbolOf(p.dataset)), line: { width: 2, color: colorOf(group, selector) } },
    hovertemplate: selector + " on %{text}: %{y:.2f} in %{x:.3g} s<extra></extra>" }));
  Plotly.react(div, traces, { margin: { l: 60, r: 10, t: 20, b: 45 },
    xaxis: { type: "log", title: { text: "median selector fit time (s, log scale)" } },
    yaxis: { title: { text: info.label + " at k = " + across.k } }, legend: { font: { size: 12 } } }, PLOT_CONFIG);
  box.appendChild(el("p", { class: "caption", text: "One point per dataset (" + datasets.map(d => symbolOf(d).replace("-open", "").replace("-thin", "").replace("-up", "") + ": " + d).join(", ") + ") and selector: the mean " + info.name + " over the splits every selector has, against the median time of the selector's final fit (a tuned selector's grid search is not in it)." }));
}
function renderStability(group, box) {
  if (!group.stability.length) { box.appendChild(el("p", { class: "muted", text: "No stability: " + group.stability_note })); return; }
  const datasets = [...new Set(group.stability.map(s => s.dataset))];
  const choose = el("select", { class: "stability-dataset" }, datasets.map(d => el("option", { value: d, text: d })));
  const div = el("div", { class: "plot small", id: "stability-" + group.id });
  box.append(el("div", { class: "filters" }, [el("label", {}, ["dataset: ", choose])]), div,
    el("p", { class: "caption", text: "Stability of the top-k features over the outer splits (Nogueira et al. 2018: 1 = the same features in every split, about 0 = chance); bands: 95% confidence intervals." }));
  const draw = () => {
    const order = Object.keys(group.colors);
    const rows = group.stability.filter(s => s.dataset === choose.value).sort((a, b) => order.indexOf(a.selector) - order.indexOf(b.selector)), traces = [];
    rows.forEach(s => traces.push({ type: "scatter", mode: "lines+markers", name: s.selector, legendgroup: s.selector, x: s.k, y: s.value, line: { color: colorOf(group, s.selector) } }));
    rows.forEach(s => traces.push({ type: "scatter", mode: "lines", fill: "toself", showlegend: false, hoverinfo: "skip", legendgroup: s.selector,
      x: s.k.concat(s.k.slice().reverse()), y: s.high.concat(s.low.slice().reverse()), line: { width: 0, color: colorOf(group, s.selector) }, fillcolor: hexToRgba(colorOf(group, s.selector), 0.1) }));
    Plotly.react(div, traces, { margin: { l: 60, r: 10, t: 20, b: 45 }, xaxis: { title: { text: "k" } },
      yaxis: { title: { text: "Nogueira stability" } }, legend: { font: { size: 12 } } }, PLOT_CONFIG);
  };
  choose.addEventListener("change", draw);
  draw();
}

// ---------------------------------------------------------------------------- at a glance
function renderGlance() {
  const box = document.getElementById("glance-list");
  if (!box) return;
  box.textContent = "";
  const info = metricInfo();
  DATA.groups.forEach(group => {
    group.panels.forEach(panel => {
      const v = panel.metrics[state.metric];
      if (!v) return;
      const j = v.ks.length - 1, k = v.ks[j];
      const best = v.selectors.filter((_, i) => v.mark[i][j] === 2), close = v.selectors.filter((_, i) => v.mark[i][j] === 1);
      const i = v.selectors.indexOf(best[0]);
      let text = (group.title ? group.title + ", " : "") + panel.dataset + " at k = " + k + ": best " + best.join(", ") + " (" + fmt(v.mean[i][j]) + (v.sd[i][j] === null ? "" : " ± " + fmt(v.sd[i][j])) + ")";
      text += close.length ? "; not significantly worse: " + close.join(", ") : "; every other selector significantly worse";
      box.appendChild(el("li", { text: text }));
    });
    const across = group.across[state.metric];
    if (across && across.ranks.length) {
      const top = across.ranks.slice(0, 3).map(r => r[0] + " (" + fmt(r[1]) + ")").join(", ");
      box.appendChild(el("li", { text: (group.title ? group.title + ": " : "") + "best average ranks over " + across.friedman.n_blocks + " datasets at k = " + across.k + ": " + top + "; CD = " + fmt(across.friedman.cd) + ", Friedman p = " + across.friedman.p_value.toPrecision(3) }));
    }
  });
  document.getElementById("glance-metric").textContent = info.label;
}

// ---------------------------------------------------------------------------- the page
function renderAll() {
  DATA.groups.forEach(group => {
    group.panels.forEach(panel => {
      renderValueTable(group, panel, document.getElementById("table-" + panel.id));
      renderCurves(group, panel, document.getElementById("curve-" + panel.id));
    });
    renderAcross(group, document.getElementById("across-" + group.id));
  });
  renderGlance();
}
function build() {
  DATA.groups.forEach(group => {
    const root = document.getElementById("group-" + group.id);
    group.panels.forEach((panel, index) => {
      panel.id = group.id + "-" + index;
      root.appendChild(el("div", { class: "card panel", id: "panel-" + panel.id }, [
        el("h3", { text: panel.dataset + (group.title ? " (" + group.title + ")" : "") }),
        el("p", { class: "caption", text: panel.caption }),
        el("div", { id: "table-" + panel.id }), el("div", { class: "plot", id: "curve-" + panel.id })]));
    });
    const stability = el("div", { id: "stability-box-" + group.id });
    root.append(el("h3", { text: "Across datasets" + (group.title ? " (" + group.title + ")" : "") }),
      el("div", { class: "card", id: "across-" + group.id }),
      el("h3", { text: "Selection stability" + (group.title ? " (" + group.title + ")" : "") }), el("div", { class: "card" }, [stability]));
    renderStability(group, stability);
  });
  const choose = document.getElementById("metric");
  choose.value = state.metric;
  choose.addEventListener("change", () => { state.metric = choose.value; renderAll(); });
  const bands = document.getElementById("bands");
  bands.addEventListener("change", () => { state.bands = bands.checked; document.querySelectorAll(".plot").forEach(syncBands); });
  document.querySelectorAll("table.sortable-table").forEach(makeSortable);
  renderAll();
  document.body.dataset.ready = "1";
}
if (typeof Plotly === "undefined") {  // plotly.min.js is not beside the page (a committed page leaves it out)
  window.Plotly = { react() {}, purge() {}, restyle() {} };
  document.body.prepend(el("p", { class: "card", id: "no-plotly",
    text: "The figures need plotly.min.js beside this page: write it with fsbench report --html (or fsbench html)." }));
}
build();
