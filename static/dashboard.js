// Dashboard: render the server-built Plotly figures (JSON data block, never
// HTML) as they come into view, our own SVG/PNG download buttons, and the
// scroll position kept across the reloads the page's own controls cause.
(function () {
  "use strict";
  const KEY = "scroll:" + location.pathname;

  // The baseline select, the rows filter and the pagers reload this page;
  // the reader stays where they were instead of jumping to the top.
  function keepScroll() {
    try { sessionStorage.setItem(KEY, String(window.scrollY)); } catch (error) { /* private mode */ }
  }
  function restoreScroll() {
    let saved = null;
    try { saved = sessionStorage.getItem(KEY); sessionStorage.removeItem(KEY); } catch (error) { return; }
    if (saved === null) return;
    const y = Number(saved);
    window.scrollTo(0, y);
    window.addEventListener("load", () => window.scrollTo(0, y), { once: true });
  }
  for (const form of document.querySelectorAll("main form[method=get]")) form.addEventListener("submit", keepScroll);
  for (const link of document.querySelectorAll(".pager a, nav.languages a, a.sort-link")) link.addEventListener("click", keepScroll);
  const baseline = document.getElementById("baseline");
  if (baseline) {
    baseline.addEventListener("change", () => {
      if (baseline.form.requestSubmit) baseline.form.requestSubmit();
      else { keepScroll(); baseline.form.submit(); }
    });
  }

  const data = document.getElementById("figures");
  if (!data || !window.Plotly) return restoreScroll();
  const figures = JSON.parse(data.textContent);
  // No modebar: its cloud/"edit in Chart Studio" controls would send the data
  // to a third-party site, and its tooltips are English only.
  const config = {
    responsive: true, displayModeBar: false, displaylogo: false,
    showLink: false, showSendToCloud: false, showEditInChartStudio: false,
  };
  // Plotly's own words (box hover labels, zoom hints) from our catalogs.
  const localeBlock = document.getElementById("plotly-locale");
  const locale = localeBlock ? JSON.parse(localeBlock.textContent) : null;
  if (locale) {
    window.Plotly.register({ moduleType: "locale", name: locale.name, dictionary: locale.dictionary });
    config.locale = locale.name;
  }
  // On touch screens a drag on a chart should scroll the page, not zoom.
  const touch = window.matchMedia && window.matchMedia("(pointer: coarse)").matches;

  // On a narrow screen a legend of many entries would fill the chart, and a
  // radar's side labels would be cut: the legend becomes a list below the
  // chart (HTML wraps at any width) and the radar gets wider side margins.
  const NARROW_PX = 560;
  const plain = (text) => new DOMParser().parseFromString(String(text), "text/html").documentElement.textContent;
  const colorOf = (trace) => {
    const color = (trace.line && trace.line.color) || (trace.marker && trace.marker.color) || trace.fillcolor || "";
    return typeof color === "string" ? color : "#555";
  };
  const keyOf = (trace) => trace.legendgroup || trace.name;
  // The legend's entries: one per named series (a CI band shares its line's group).
  const entries = (data) => {
    const seen = new Set();
    return data.filter((trace) => {
      const key = keyOf(trace);
      if (trace.showlegend === false || !trace.name || seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  };

  // A swatch drawn as the chart draws the series (web/presentation/chart_style.py):
  // its colour, dash and marker, or a bar's colour and fill pattern.
  const SVG = "http://www.w3.org/2000/svg";
  const DASHES = { dash: "5 3", dot: "1.5 2.5", dashdot: "5 2 1.5 2", longdash: "9 3" };
  const SHAPES = {
    square: "M3.5 3.5h7v7h-7z", diamond: "M7 2.5l4.5 4.5l-4.5 4.5l-4.5-4.5z",
    "triangle-up": "M7 2.5l4.5 8h-9z", "triangle-down": "M7 11.5l4.5-8h-9z",
    x: "M3.5 3.5l7 7M10.5 3.5l-7 7", cross: "M7 2.5v9M2.5 7h9",
    star: "M7 2l1.3 3.3l3.5.2l-2.7 2.2l.9 3.4l-3-1.9l-3 1.9l.9-3.4l-2.7-2.2l3.5-.2z",
  };
  const PATTERNS = { "/": "M0 14L14 0M-3 3L3-3M11 17L17 11", ".": "M3 3h1M10 3h1M3 10h1M10 10h1M6.5 6.5h1",
                     x: "M0 0L14 14M14 0L0 14", "-": "M0 4h14M0 10h14" };
  const svg = (name, attributes) => {
    const node = document.createElementNS(SVG, name);
    for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
    return node;
  };
  const first = (value) => (Array.isArray(value) ? value[0] : value);
  function swatch(trace) {
    const color = colorOf(trace);
    const box = svg("svg", { class: "swatch", width: 28, height: 14, viewBox: "0 0 28 14", "aria-hidden": "true" });
    const marker = trace.marker || {};
    if (trace.type === "bar" || trace.type === "box") {
      box.append(svg("rect", { x: 7, y: 0, width: 14, height: 14, fill: color }));
      const pattern = PATTERNS[first((marker.pattern || {}).shape) || ""];
      if (pattern) box.append(svg("path", { d: pattern, transform: "translate(7 0)", stroke: "#fff", "stroke-width": 1.5 }));
      return box;
    }
    const dash = DASHES[(trace.line || {}).dash];
    if (String(trace.mode || "").includes("lines")) {
      box.append(svg("line", Object.assign({ x1: 1, y1: 7, x2: 27, y2: 7, stroke: color, "stroke-width": 2 },
                                           dash ? { "stroke-dasharray": dash } : {})));
    }
    if (String(trace.mode || "markers").includes("markers")) {
      let symbol = String(first(marker.symbol) || "circle");
      const open = symbol.endsWith("-open");
      symbol = symbol.replace(/-open$/, "");
      const lined = open || symbol === "x" || symbol === "cross";
      const paint = lined ? { fill: "#fff", stroke: color, "stroke-width": 1.6 } : { fill: color };
      const shape = SHAPES[symbol] ? svg("path", Object.assign({ d: SHAPES[symbol] }, paint))
                                   : svg("circle", Object.assign({ cx: 7, cy: 7, r: 3.8 }, paint));
      shape.setAttribute("transform", "translate(7 0)");
      box.append(shape);
    }
    return box;
  }

  // A click on an entry hides or shows its series, as a click on Plotly's
  // own legend does.
  function toggle(target, key, button) {
    const hide = button.getAttribute("aria-pressed") === "true";
    const indices = target.data.map((trace, index) => (keyOf(trace) === key ? index : -1)).filter((i) => i >= 0);
    window.Plotly.restyle(target, { visible: hide ? "legendonly" : true }, indices);
    button.setAttribute("aria-pressed", hide ? "false" : "true");
  }

  function legendBelow(target, data) {
    const list = document.createElement("ul");
    list.className = "chart-legend";
    list.dataset.testid = "chart-legend";
    for (const trace of entries(data)) {
      const item = document.createElement("li");
      const button = document.createElement("button");
      button.type = "button";
      button.setAttribute("aria-pressed", trace.visible === "legendonly" ? "false" : "true");
      button.append(swatch(trace), document.createTextNode(plain(trace.name)));
      button.addEventListener("click", () => toggle(target, keyOf(trace), button));
      item.append(button);
      list.appendChild(item);
    }
    target.after(list);
  }

  function draw(target) {
    const figure = figures[target.dataset.figure];
    // The page shows the title as an HTML heading; the figure's copy is for images.
    const layout = Object.assign({}, figure.layout, { title: { text: "" } });
    if (touch) layout.dragmode = false;
    if (target.clientWidth < NARROW_PX) {
      layout.showlegend = false;
      legendBelow(target, figure.data);
      const margin = layout.margin || {};
      layout.margin = Object.assign({}, margin, { t: 12 });
      if (layout.polar) layout.margin = Object.assign({}, layout.margin, { l: 96, r: 96 });
    }
    window.Plotly.newPlot(target, figure.data, layout, config);
  }

  // A chart is drawn when it comes within a screen of the view (a closed
  // fold's charts when it opens: drawn hidden, they would have no size),
  // one per frame, so the first is on screen before the next is drawn.
  const queue = [];
  let drawing = false;
  function next() {
    const target = queue.shift();
    if (!target) { drawing = false; return; }
    draw(target);
    requestAnimationFrame(() => setTimeout(next, 0));
  }
  function enqueue(target) {
    queue.push(target);
    if (!drawing) { drawing = true; next(); }
  }
  const targets = Object.keys(figures).map((name) => document.getElementById("chart-" + name)).filter(Boolean);
  if ("IntersectionObserver" in window) {
    const observer = new IntersectionObserver((entries) => {
      for (const entry of entries) {
        if (!entry.isIntersecting) continue;
        observer.unobserve(entry.target);
        enqueue(entry.target);
      }
    }, { rootMargin: "0px 0px 100% 0px" });
    // A closed fold's charts are watched once it opens: watching them
    // before would lay out the hidden folds for nothing.
    const watched = new Set();
    const watch = () => {
      for (const target of targets) {
        if (watched.has(target) || target.closest("details:not([open])")) continue;
        watched.add(target);
        observer.observe(target);
      }
    };
    document.addEventListener("toggle", watch, true);
    watch();
  } else {
    targets.forEach(enqueue);
  }
  restoreScroll();

  // Images keep the title, with the legend on the right where it never
  // meets the title or the tick labels.
  function download(button) {
    const name = button.dataset.chart;
    if (!figures[name]) return;
    // a chart not drawn yet (out of view) is made from its figure
    const target = document.getElementById("chart-" + name);
    const drawn = target && target.data ? target : figures[name];
    // A paper figure: the title off the edge, room around the plot, the
    // legend shown (a narrow page moved it into a list), drawn at 2x, as
    // tall as its legend's entries need (one line each, 32 methods and more).
    const height = Math.max(560, 160 + 24 * entries(drawn.data).length);
    const margin = Object.assign({}, figures[name].layout.margin || {});
    const layout = Object.assign({}, drawn.layout, {
      title: Object.assign({ x: 0.02, xanchor: "left", pad: { t: 8, l: 8 } }, figures[name].layout.title),
      legend: { orientation: "v", x: 1.02, xanchor: "left", y: 1, yanchor: "top", tracegroupgap: 0 },
      showlegend: figures[name].layout.showlegend !== false,
      margin: Object.assign(margin, { t: Math.max(margin.t || 0, 72), l: Math.max(margin.l || 0, 64),
                                      r: Math.max(margin.r || 0, 24), b: Math.max(margin.b || 0, 56) }),
      dragmode: "zoom",
    });
    window.Plotly.downloadImage({ data: drawn.data, layout, config }, {
      format: button.dataset.format, filename: button.dataset.filename, width: 960, height, scale: 2,
    });
  }
  for (const button of document.querySelectorAll("button[data-download]")) {
    button.addEventListener("click", () => download(button));
  }
})();
