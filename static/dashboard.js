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
  const colorOf = (trace) => (trace.line && trace.line.color) || (trace.marker && trace.marker.color) || trace.fillcolor || "";

  function legendBelow(target, data) {
    const list = document.createElement("ul");
    list.className = "chart-legend";
    list.dataset.testid = "chart-legend";
    const seen = new Set();
    data.forEach((trace) => {
      const key = trace.legendgroup || trace.name;
      if (trace.showlegend === false || !trace.name || seen.has(key)) return;
      seen.add(key);
      const item = document.createElement("li");
      const swatch = document.createElement("span");
      swatch.className = "swatch";
      const color = colorOf(trace);
      if (typeof color === "string") swatch.style.background = color;
      item.append(swatch, document.createTextNode(plain(trace.name)));
      list.appendChild(item);
    });
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
    // legend shown (a narrow page moved it into a list), drawn at 2x.
    const margin = Object.assign({}, figures[name].layout.margin || {});
    const layout = Object.assign({}, drawn.layout, {
      title: Object.assign({ x: 0.02, xanchor: "left", pad: { t: 8, l: 8 } }, figures[name].layout.title),
      legend: { orientation: "v", x: 1.02, xanchor: "left", y: 1, yanchor: "top" },
      showlegend: figures[name].layout.showlegend !== false,
      margin: Object.assign(margin, { t: Math.max(margin.t || 0, 72), l: Math.max(margin.l || 0, 64),
                                      r: Math.max(margin.r || 0, 24), b: Math.max(margin.b || 0, 56) }),
      dragmode: "zoom",
    });
    window.Plotly.downloadImage({ data: drawn.data, layout, config }, {
      format: button.dataset.format, filename: button.dataset.filename, width: 960, height: 560, scale: 2,
    });
  }
  for (const button of document.querySelectorAll("button[data-download]")) {
    button.addEventListener("click", () => download(button));
  }
})();
