// Dashboard: render the server-built Plotly figures (JSON data block, never HTML).
(function () {
  "use strict";
  const data = document.getElementById("figures");
  if (!data || !window.Plotly) return;
  const figures = JSON.parse(data.textContent);
  for (const [name, figure] of Object.entries(figures)) {
    const target = document.getElementById("chart-" + name);
    if (target) window.Plotly.newPlot(target, figure.data, figure.layout, { responsive: true, displaylogo: false });
  }
  const baseline = document.getElementById("baseline");
  if (baseline) baseline.addEventListener("change", () => baseline.form.submit());
})();
