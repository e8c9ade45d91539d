// "Test judge" on the upload page: one real request per mode of the chosen
// protocol (POST /judge-check with the page's CSRF token), shown as a table:
// the verdict the grammar read, latency, tokens, structured output, and the
// raw reply. Text only, never HTML: a judge reply is untrusted.
(function () {
  "use strict";
  const button = document.getElementById("test-judge");
  const out = document.getElementById("judge-check");
  const form = document.getElementById("upload-form");
  if (!button || !out || !form) return;
  const strings = JSON.parse(document.getElementById("i18n").textContent);
  const format = new Intl.NumberFormat(document.documentElement.lang);

  function element(tag, text, className) {
    const node = document.createElement(tag);
    if (text !== undefined) node.textContent = text;
    if (className) node.className = className;
    return node;
  }

  function row(list, label, value) {
    list.appendChild(element("dt", label));
    list.appendChild(element("dd", value));
  }

  function render(result) {
    const box = element("section", undefined, "check-mode");
    box.dataset.mode = result.mode;
    box.appendChild(element("h3", result.mode + " · " + result.model));
    const list = element("dl", undefined, "facts");
    if (result.error) {
      row(list, strings.check_verdict, result.error);
    } else {
      const verdict = result.verdict === null ? strings.check_none + (result.refused ? " — " + result.refused : "") : String(result.verdict);
      row(list, strings.check_verdict, verdict);
      row(list, strings.check_structured, strings["structured_" + (result.structured || "none")]);
      row(list, "", strings.check_latency.replace("{seconds}", result.latency_s) + " · " +
        strings.check_tokens.replace("{prompt}", format.format(result.prompt_tokens)).replace("{completion}", format.format(result.completion_tokens)) +
        " · finish_reason " + result.finish_reason);
    }
    box.appendChild(list);
    if (result.raw !== undefined) {
      const details = element("details");
      details.appendChild(element("summary", strings.check_reply));
      details.appendChild(element("pre", result.raw, "raw"));
      box.appendChild(details);
    }
    return box;
  }

  const protocolFile = document.getElementById("protocol-file");
  const protocolName = document.getElementById("protocol-file-name");
  if (protocolFile && protocolName) {
    protocolFile.addEventListener("change", () => {
      const file = protocolFile.files[0];
      protocolName.textContent = file ? file.name : protocolName.dataset.none;
    });
  }

  button.addEventListener("click", async () => {
    const body = new FormData();
    for (const name of ["csrf_token", "protocol"]) {
      const field = form.elements.namedItem(name);
      if (field) body.append(name, field.value);
    }
    const picker = document.getElementById("judge-model");
    if (picker) for (const option of picker.selectedOptions) body.append("judge_model", option.value);
    const file = document.getElementById("protocol-file");
    if (file && file.files.length) body.append("protocol_file", file.files[0]);
    out.replaceChildren(element("p", strings.checking_judge, "muted"));
    button.disabled = true;
    try {
      const response = await fetch(button.dataset.url, { method: "POST", body });
      const answer = await response.json();
      out.replaceChildren();
      if (answer.errors) {
        const list = element("ul", undefined, "problems");
        for (const problem of answer.errors) {
          const item = element("li");
          if (problem.line) item.appendChild(element("span", strings.line.replace("{line}", problem.line), "where"));
          item.appendChild(element("span", " " + problem.message));
          list.appendChild(item);
        }
        out.appendChild(list);
      }
      for (const result of answer.results || []) out.appendChild(render(result));
    } catch (error) {
      out.replaceChildren(element("p", strings.check_failed, "alert"));
    } finally {
      button.disabled = false;
    }
  });
})();
