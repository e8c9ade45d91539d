// Upload page: drag-and-drop, client-side size/extension check, and a
// server-side dry run (/api/v1/validate) that shows problems and which suites
// the file can run before anything is queued.
(function () {
  "use strict";
  const form = document.getElementById("upload-form");
  if (!form) return;
  const strings = JSON.parse(document.getElementById("i18n").textContent);
  const input = document.getElementById("file");
  const zone = document.getElementById("dropzone");
  const chosen = document.getElementById("chosen-file");
  const clientError = document.getElementById("client-error");
  const result = document.getElementById("check-result");
  const submit = document.getElementById("submit");
  const maxBytes = Number(form.dataset.maxBytes);
  const uploadRef = document.getElementById("upload-ref");
  let keptFile = null;  // the file the server checked and kept (upload_ref)

  function showError(message) {
    clientError.textContent = message;
    clientError.hidden = !message;
    submit.disabled = Boolean(message);
  }

  function element(tag, text, className) {
    const node = document.createElement(tag);
    if (text !== undefined) node.textContent = text;  // text only: never HTML
    if (className) node.className = className;
    return node;
  }

  function renderReport(report) {
    result.replaceChildren();
    if (report.valid) {
      const summary = strings.valid
        .replace("{sessions}", report.sessions)
        .replace("{methods}", report.methods.join(", "));
      result.appendChild(element("p", summary, "ok"));
    } else {
      const box = element("section", undefined, "problems");
      box.appendChild(element("h2", strings.invalid));
      // another tool's layout: converting is the way on, so it comes first
      // (its errors, every field of ours missing, follow)
      if (report.looks_like) box.appendChild(convertOffer(report.looks_like));
      const list = element("ul");
      for (const problem of report.errors || []) {
        const item = element("li");
        // The same "line %(line)s" message as the server's list (_problems.html).
        if (problem.line) item.appendChild(element("span", strings.line.replace("{line}", problem.line), "where"));
        // shown once: most messages start with their path
        if (problem.path && !problem.message.includes(problem.path)) item.appendChild(element("code", problem.path));
        item.appendChild(element("span", " " + problem.message, "message"));
        list.appendChild(item);
      }
      box.appendChild(list);
      // a rejected file's warnings belong with its errors: never under
      // "Warnings (the file is accepted)"
      if ((report.warnings || []).length) {
        const also = element("div", undefined, "rejected-warnings");
        also.dataset.testid = "rejected-warnings";
        also.appendChild(element("h3", strings.rejected_warnings));
        also.appendChild(warningItems(report.warnings));
        box.appendChild(also);
      }
      result.appendChild(box);
    }
    if (report.valid && (report.warnings || []).length) result.appendChild(warningList(report.warnings));
    for (const box of form.querySelectorAll("input[data-suite]")) {
      const usable = !report.valid || report.suites.includes(box.dataset.suite);
      box.disabled = !usable;
      box.checked = usable && box.checked;
      box.parentElement.classList.toggle("unavailable", !usable);
      box.parentElement.title = usable ? "" : strings.suite_unavailable;
    }
    submit.disabled = !report.valid;
    lastReport = report;
    showEstimate();
  }

  // Warnings are grouped by the server: one per code and path, with how
  // many lines had it and the first of them.
  function warningList(warnings) {
    const box = element("section", undefined, "warnings");
    box.dataset.testid = "validation-warnings";
    box.appendChild(element("h3", strings.warnings));
    box.appendChild(warningItems(warnings));
    return box;
  }

  function warningItems(warnings) {
    const list = element("ul");
    for (const warning of warnings) {
      const item = element("li");
      if (warning.line && (warning.count || 1) < 2) item.appendChild(element("span", strings.line.replace("{line}", warning.line), "where"));
      item.appendChild(element("span", " " + warning.message, "message"));
      if ((warning.count || 1) > 1) {
        const lines = (warning.lines || []).filter(Boolean).join(", ");
        item.appendChild(element("span", " " + strings.warning_times.replace("{count}", warning.count).replace("{lines}", lines), "muted small"));
      }
      list.appendChild(item);
    }
    return list;
  }

  // Another tool's layout: convert it on the server and check the result
  // as if the user had chosen it (docs/importers.md), with the options the
  // CLI takes (a profile for records without one, a personality, a method).
  function convertOffer(layout) {
    const offer = element("div", undefined, "convert-offer");
    offer.dataset.testid = "convert-offer";
    const label = (strings.layouts || {})[layout] || layout;
    offer.appendChild(element("p", strings.looks_like.replace("{layout}", label)));
    const fields = {};
    // the options this layout's importer reads (dataset/importers/)
    const names = (strings.layout_options || {})[layout] || ["profile", "personality", "method"];
    for (const name of names) {
      const row = element("label", strings["convert_" + name], "convert-option");
      const field = element(name === "method" ? "input" : name === "language" ? "select" : "textarea");
      field.name = "convert_" + name;
      field.dataset.testid = "convert-" + name;
      if (name === "method") field.placeholder = "model";
      if (name === "language") {
        for (const code of ["zh", "en"]) {
          const choice = element("option", strings["language_" + code]);
          choice.value = code;
          field.appendChild(choice);
        }
      }
      row.appendChild(field);
      offer.appendChild(row);
      fields[name] = field;
    }
    const button = element("button", strings.convert, "button");
    button.type = "button";
    button.dataset.testid = "convert-file";
    button.addEventListener("click", () => convertFile(layout, button, fields, offer));
    offer.appendChild(button);
    return offer;
  }

  async function convertFile(layout, button, fields, offer) {
    const original = input.files[0];
    const body = new FormData();
    body.append("file", original);
    body.append("from", layout);
    for (const [name, field] of Object.entries(fields)) body.append(name, field.value);
    button.disabled = true;
    const response = await fetch(form.dataset.convertUrl, { method: "POST", body });
    button.disabled = false;
    if (!response.ok) {  // the file stays as it was: say why it did not convert
      const failed = (await response.json()).errors || [];
      offer.querySelector(".convert-failed")?.remove();
      const box = element("ul", undefined, "convert-failed problems");
      box.dataset.testid = "convert-failed";
      for (const problem of failed) box.appendChild(element("li", problem.message));
      offer.appendChild(box);
      return;
    }
    const name = original.name.replace(/\.[^.]*$/, "") + ".jsonl";
    const converted = new File([await response.blob()], name, { type: "application/jsonl" });
    const files = new DataTransfer();
    files.items.add(converted);
    input.files = files.files;
    await check(converted);
    const note = element("div", undefined, "muted converted-note");
    note.dataset.testid = "converted-note";
    note.appendChild(element("p", strings.converted
      .replace("{sessions}", response.headers.get("X-Sessions-Converted"))
      .replace("{skipped}", response.headers.get("X-Records-Skipped"))));
    // session ids the converter made: for records without one, or whose
    // id an earlier record took (docs/importers.md)
    for (const [header, key] of [["X-Ids-Made", "ids_made"], ["X-Ids-Renamed", "ids_renamed"]]) {
      const count = Number(response.headers.get(header) || 0);
      if (count) note.appendChild(element("p", strings[key].replace("{count}", count)));
    }
    const skipped = JSON.parse(response.headers.get("X-Skipped") || "[]");
    if (skipped.length) {
      const list = element("ul");
      for (const { record, reason } of skipped) {
        list.appendChild(element("li", strings.skipped_record.replace("{record}", record).replace("{reason}", reason)));
      }
      note.appendChild(list);
    }
    result.prepend(note);
  }

  // The judge's cost before the run starts: the server's per-suite estimate
  // (one sample each) for the suites still checked, times the samples.
  let lastReport = null;
  const estimate = document.getElementById("estimate");
  const samples = document.getElementById("samples");
  const format = new Intl.NumberFormat(document.documentElement.lang);

  function size(chars) {
    const units = [[1e6, "M"], [1e3, "k"]];
    for (const [scale, unit] of units) if (chars >= scale) return format.format(Math.round(chars / scale * 10) / 10) + " " + unit + "B";
    return format.format(chars) + " B";
  }

  // Prices (USD per million tokens) and max_tokens: a cost ceiling per judge.
  const judging = JSON.parse(document.getElementById("judge-pricing").textContent);
  const money = new Intl.NumberFormat(document.documentElement.lang, { maximumFractionDigits: 4 });

  // A judge's prices, online or through the Batch API (null: none given).
  function pricesOf(model, batch) {
    const price = judging.prices[model];
    if (!price || !batch) return price ? { input: price.input, output: price.output, cached: price.cached_input ?? price.input } : null;
    if (price.batch_input === undefined || price.batch_output === undefined) return null;
    return { input: price.batch_input, output: price.batch_output, cached: price.batch_cached_input ?? price.batch_input };
  }

  // The cost sentence: the ceiling (every reply max_tokens long), and the
  // expected cost where the server found this judge's earlier runs of the
  // protocol in the workspace (their completion tokens per call, the same
  // figures pipeline/service/budget.expected uses), at batch prices for a batch run.
  // The prompt cache's share comes from earlier runs sent the same way (an
  // online run's cache says nothing of a batch's); without one, none is
  // assumed, and the sentence says so.
  function costText(models, calls, tokens) {
    const batch = Boolean(form.querySelector("#batch:checked"));
    const history = (lastReport && lastReport.judge_calls && lastReport.judge_calls.judges) || {};
    const prices = [];
    for (const model of models) {
      const price = pricesOf(model, batch);
      if (!price) return batch && judging.prices[model] ? strings.no_batch_price : strings.no_price;
      prices.push(price);
    }
    if (!models.length) return strings.no_price;
    const earlier = models.map((model) => history[model]);
    const known = earlier.every((found) => found && typeof found.completion_per_call === "number");
    const least = (field) => (known ? Math.min(...earlier.map((found) => found[field])) : 0);
    const runs = least("earlier_runs"), cachedRuns = least(batch ? "batch_runs" : "cached_runs");
    let ceiling = 0, expected = 0;
    prices.forEach((price, index) => {
      ceiling += (tokens * price.input + calls * judging.max_tokens * price.output) / 1e6;
      if (!runs) return;
      const found = earlier[index];
      const cached = cachedRuns ? tokens * (batch ? found.batch_cached_share : found.cached_share) : 0;
      expected += ((tokens - cached) * price.input + cached * price.cached + calls * found.completion_per_call * price.output) / 1e6;
    });
    const key = !runs ? "no_earlier_run" : cachedRuns ? "expected_cost" : "expected_cost_uncached";
    return strings[(batch ? "batch_" : "") + key].replace("{cost}", money.format(expected))
      .replace("{runs}", format.format(runs)).replace("{cached_runs}", format.format(cachedRuns))
      .replace("{ceiling}", money.format(ceiling));
  }

  function showEstimate() {
    if (!estimate) return;
    const costs = (lastReport && lastReport.valid && lastReport.estimate) || {};
    // every judge of a panel asks every item: calls per judge x items x samples
    const picker = document.getElementById("judge-model");
    const models = picker ? Array.from(picker.selectedOptions, (o) => o.value) : [];
    const judges = Math.max(1, models.length);
    const perJudge = Math.max(1, Number(samples && samples.value) || 1);
    let calls = 0, chars = 0;
    for (const box of form.querySelectorAll("input[data-suite]:checked")) {
      const cost = costs[box.dataset.suite];
      if (cost) { calls += cost.judge_calls * perJudge; chars += cost.prompt_chars * perJudge; }
    }
    // over MAX_JUDGE_CALLS_PER_RUN the server refuses the run: say so first
    const limit = Number(form.dataset.judgeLimit) || Infinity;
    const over = calls * judges > limit;
    if (over) {
      estimate.textContent = strings.over_budget.replace("{calls}", format.format(calls * judges)).replace("{limit}", format.format(limit));
    } else if (calls) {
      // prompt tokens: characters / 4 (an estimate); completion: max_tokens per call (a ceiling)
      const tokens = Math.round(chars / 4), completion = calls * judging.max_tokens;
      const text = strings.estimate.replace("{calls}", format.format(calls * judges))
        .replace("{tokens}", format.format(tokens * judges)).replace("{size}", size(chars * judges))
        .replace("{completion}", format.format(completion * judges));
      estimate.textContent = text + " " + costText(models, calls, tokens);
    } else {
      estimate.textContent = "";
    }
    estimate.classList.toggle("over-budget", over);
  }
  form.addEventListener("change", showEstimate);
  if (samples) samples.addEventListener("input", showEstimate);

  async function check(file) {
    chosen.textContent = file ? file.name : chosen.dataset.none;
    chosen.classList.toggle("chosen", Boolean(file));
    result.replaceChildren();
    uploadRef.value = "";
    keptFile = null;
    if (!file) return showError("");
    const lower = file.name.toLowerCase();
    // .json and .csv go to the server too: it may recognise another layout
    if (![".jsonl", ".json", ".csv"].some((end) => lower.endsWith(end))) return showError(strings.wrong_extension);
    if (file.size > maxBytes) return showError(strings.too_large);
    showError("");
    result.appendChild(element("p", strings.checking, "muted"));
    const body = new FormData();
    body.append("file", file);
    body.append("keep", "1");  // kept for the run: the file is sent once
    // the workspace and judges chosen: the expected cost reads their earlier runs
    const workspace = document.getElementById("workspace-select");
    if (workspace && workspace.value) body.append("workspace", workspace.value);
    const picker = document.getElementById("judge-model");
    for (const option of picker ? picker.selectedOptions : []) body.append("judge_model", option.value);
    // and the protocol: its modes are the calls a run makes
    const protocol = document.getElementById("protocol");
    if (protocol) body.append("protocol", protocol.value);
    const protocolFile = document.getElementById("protocol-file");
    if (protocolFile && protocolFile.files.length) body.append("protocol_file", protocolFile.files[0]);
    try {
      const response = await fetch(form.dataset.validateUrl || "/api/v1/validate", { method: "POST", body });
      const report = await response.json();
      if (report.upload_ref && input.files[0] === file) {
        uploadRef.value = report.upload_ref;
        keptFile = file;
      }
      renderReport(report);
      // valid, but the server kept no copy (its space for checked files is
      // full): nothing is disabled on submit, so the file goes with the run
      if (!response.ok && report.valid) {
        const note = element("p", (report.errors || []).map((e) => e.message).join(" "), "muted small");
        note.dataset.testid = "keep-refused";
        result.appendChild(note);
      }
    } catch (error) {
      result.replaceChildren();  // the server checks again on submit
    }
  }

  input.addEventListener("change", () => check(input.files[0]));
  // another protocol asks other modes (ALOE no binary verdict): the server
  // estimates the file again for it
  for (const id of ["protocol", "protocol-file"]) {
    const field = document.getElementById(id);
    if (field) field.addEventListener("change", () => { if (input.files[0]) check(input.files[0]); });
  }
  // The checked file is on the server already: the run takes it by its
  // reference, and the file part is left out (a disabled field is not sent).
  form.addEventListener("submit", () => {
    if (uploadRef.value && keptFile && input.files[0] === keptFile) input.disabled = true;
  });
  window.addEventListener("pageshow", () => { input.disabled = false; });
  for (const name of ["dragenter", "dragover"]) {
    zone.addEventListener(name, (event) => { event.preventDefault(); zone.classList.add("dragover"); });
  }
  for (const name of ["dragleave", "drop"]) {
    zone.addEventListener(name, () => zone.classList.remove("dragover"));
  }
  zone.addEventListener("drop", (event) => {
    event.preventDefault();
    if (!event.dataTransfer.files.length) return;
    input.files = event.dataTransfer.files;
    check(input.files[0]);
  });
})();
