// Run page while queued/running: poll the API, show done/total, the time
// left and the judge's rate, and reload into the dashboard when the run is
// final: the same address, so an owner on the manage link keeps it (and
// with it Retry and Delete).
(function () {
  "use strict";
  const card = document.getElementById("progress");
  if (!card) return;
  // Statuses, their labels and the page's sentences come from the server
  // (core/status.py, translated templates with {placeholders}).
  const statuses = JSON.parse(document.getElementById("run-statuses").textContent);
  const strings = JSON.parse(document.getElementById("progress-strings").textContent);
  const labels = statuses.labels;
  const final = statuses.final;
  const lang = document.documentElement.lang;
  const format = new Intl.NumberFormat(lang);

  // "45 seconds", "3 minutes", "1.5 hours" in the page's language.
  function duration(seconds) {
    let value = seconds, unit = "second", digits = 0;
    if (seconds >= 90 * 60) { value = seconds / 3600; unit = "hour"; digits = 1; }
    else if (seconds >= 90) { value = seconds / 60; unit = "minute"; }
    else { value = Math.max(5 * Math.round(seconds / 5), 5); }
    return new Intl.NumberFormat(lang, {
      style: "unit", unit: unit, unitDisplay: "long", maximumFractionDigits: digits,
    }).format(value);
  }

  // The time left as a range ("about 2 minutes - 3 minutes left"), once
  // the server finds the rate stable; the summarizing stage says so.
  function showEstimates(progress) {
    const eta = document.getElementById("run-eta");
    const range = progress.eta_range;
    const steps = progress.stage_progress;
    if (progress.stage === "summarizing" && steps) {
      eta.textContent = strings.finishing_steps
        .replace("{done}", steps.done).replace("{total}", steps.total);
    } else if (progress.stage === "summarizing") {
      eta.textContent = strings.finishing;
    } else if (!range) {
      eta.textContent = strings.eta_unknown;
    } else {
      const low = duration(range[0]), high = duration(range[1]);
      eta.textContent = low === high
        ? strings.eta.replace("{duration}", low)
        : strings.eta_range.replace("{low}", low).replace("{high}", high);
    }
    const rate = document.getElementById("judge-rate");
    const perMinute = progress.judge_calls_per_minute;
    rate.hidden = perMinute === null || perMinute === undefined;
    if (!rate.hidden) {
      const digits = perMinute < 10 ? 1 : 0;
      const value = new Intl.NumberFormat(lang, { maximumFractionDigits: digits }).format(perMinute);
      rate.textContent = strings.judge_rate.replace("{rate}", value);
    }
  }

  // What the run waits on: its batch at the provider (batch mode), or the
  // judge's rate limits (its requests wait their turn before they are sent).
  function showWaiting(waiting) {
    const line = document.getElementById("run-waiting");
    line.hidden = !waiting;
    if (!waiting) return;
    // batch lines are sent at once, not at a rate: a calls/min would mislead
    if (waiting.on === "batch") document.getElementById("judge-rate").hidden = true;
    if (waiting.on === "rate_limit") {
      const seconds = new Intl.NumberFormat(lang, { maximumFractionDigits: 1 });
      line.textContent = strings.rate_limit.replace("{seconds}", seconds.format(waiting.mean_wait_s));
    } else if (waiting.stage === "waiting") {
      line.textContent = strings.batch_waiting.replace("{done}", format.format(waiting.done))
        .replace("{total}", format.format(waiting.total));
    } else {
      line.textContent = strings.batch_collect;
    }
  }

  // A run that stopped moving: why, in the reader's language (the server
  // words it), until it moves again.
  function showStalled(stalled) {
    const line = document.getElementById("run-stalled");
    line.hidden = !stalled;
    line.textContent = stalled ? stalled.message : "";
  }

  async function poll() {
    try {
      const response = await fetch(card.dataset.statusUrl, { headers: { Accept: "application/json" } });
      const body = await response.json();
      if (final.includes(body.status)) { window.location.reload(); return; }
      // newer provisional results (more sessions): show them
      const shown = card.dataset.interimSessions;
      const now = body.provisional ? String(body.provisional.sessions) : "";
      if (now && now !== shown) { window.location.reload(); return; }
      const status = document.getElementById("run-status");
      status.textContent = labels[body.status] || body.status;
      status.dataset.status = body.status;
      const bar = document.getElementById("run-progress");
      bar.max = Math.max(body.progress.total, 1);
      bar.value = body.progress.done;
      document.getElementById("run-done").textContent = format.format(body.progress.done);
      document.getElementById("run-total").textContent = format.format(body.progress.total);
      showEstimates(body.progress);
      showWaiting(body.progress.waiting);
      showStalled(body.progress.stalled);
      document.getElementById("count-unscored").textContent = format.format(body.counts.unscored || 0);
      document.getElementById("count-error").textContent = format.format(body.counts.error || 0);
    } catch (error) { /* transient: try again */ }
    window.setTimeout(poll, 1000);
  }
  window.setTimeout(poll, 500);
})();
