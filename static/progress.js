// Run page while queued/running: poll the API and reload into the dashboard
// when the run is final.
(function () {
  "use strict";
  const card = document.getElementById("progress");
  if (!card) return;
  // Statuses and their labels come from the server (core/status.py).
  const statuses = JSON.parse(document.getElementById("run-statuses").textContent);
  const labels = statuses.labels;
  const final = statuses.final;
  const format = new Intl.NumberFormat(document.documentElement.lang);

  async function poll() {
    try {
      const response = await fetch(card.dataset.statusUrl, { headers: { Accept: "application/json" } });
      const body = await response.json();
      if (final.includes(body.status)) { window.location.replace(card.dataset.pageUrl); return; }
      const status = document.getElementById("run-status");
      status.textContent = labels[body.status] || body.status;
      status.dataset.status = body.status;
      const bar = document.getElementById("run-progress");
      bar.max = Math.max(body.progress.total, 1);
      bar.value = body.progress.done;
      document.getElementById("run-done").textContent = format.format(body.progress.done);
      document.getElementById("run-total").textContent = format.format(body.progress.total);
      document.getElementById("count-unscored").textContent = format.format(body.counts.unscored || 0);
      document.getElementById("count-error").textContent = format.format(body.counts.error || 0);
    } catch (error) { /* transient: try again */ }
    window.setTimeout(poll, 1000);
  }
  window.setTimeout(poll, 500);
})();
