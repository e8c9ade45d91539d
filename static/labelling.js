// The blind labelling page (templates/labelling.html): one item at a time
// from /a/<token>/item, each label saved at once to /a/<token>/label. The
// token is the annotator's own link, which fixes their name (the server
// labels as it, whatever is sent); the items they labelled here form the
// history "Back" walks through.
(function () {
  "use strict";
  const root = document.getElementById("labelling");
  if (!root) return;
  const strings = JSON.parse(document.getElementById("labelling-strings").textContent);
  const itemBox = document.getElementById("item");
  const form = document.getElementById("label-form");
  const al = document.getElementById("al");
  const alValue = document.getElementById("al-value");
  const error = document.getElementById("label-error");
  const annotator = root.dataset.annotator || "";
  let current = null;
  const seen = [];  // item indexes labelled or skipped here, for "Back"

  function text(id, value) { document.getElementById(id).textContent = value; }

  function showProgress(progress) {
    text("progress", strings.progress.replace("{done}", progress.done).replace("{total}", progress.total));
  }

  function render(item) {
    current = item;
    text("profile", item.profile);
    text("personality", item.personality || "—");
    text("user-message", item.user_message);
    text("response", item.response);
    const history = document.getElementById("history");
    history.replaceChildren();
    if (!item.history.length) history.appendChild(Object.assign(document.createElement("li"), { textContent: strings.first_turn, className: "muted" }));
    for (const turn of item.history) {
      const entry = document.createElement("li");
      const user = document.createElement("p");
      user.textContent = turn.user;
      const reply = document.createElement("p");
      reply.className = "muted";
      reply.textContent = turn.reply === null ? strings.no_reply : turn.reply;
      entry.append(user, reply);
      history.appendChild(entry);
    }
    const label = item.label || {};
    al.value = label.al ?? 50;
    alValue.textContent = al.value;
    for (const radio of form.querySelectorAll("input[name=binary]")) radio.checked = label.binary !== undefined && label.binary !== null && String(label.binary) === radio.value;
    for (const field of form.querySelectorAll("[data-dimension]")) field.value = (label.dimensions || {})[field.dataset.dimension] ?? 10;
    document.getElementById("comment").value = label.comment || "";
    document.getElementById("back").disabled = !seen.length;
    error.hidden = true;
    showProgress(item.progress);
    itemBox.hidden = false;
    if (document.activeElement) document.activeElement.blur();  // keys act on the page
  }

  async function load(index) {
    const params = new URLSearchParams({ annotator });
    if (index !== undefined) params.set("item", index);
    const response = await fetch(root.dataset.itemUrl + "?" + params);
    const body = await response.json();
    if (!response.ok) return fail(body);
    if (body.finished) {
      itemBox.hidden = true;
      const done = document.getElementById("finished");
      done.textContent = strings.finished.replace("{done}", body.progress.done).replace("{total}", body.progress.total);
      done.hidden = false;
      return;
    }
    render(body);
  }

  function fail(body) {
    const message = ((body.errors || [])[0] || {}).message || "";
    error.textContent = strings.failed.replace("{message}", message);
    error.hidden = false;
  }

  async function send(label) {
    const response = await fetch(root.dataset.labelUrl, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ annotator, item: current.item, ...label }),
    });
    if (!response.ok) return fail(await response.json());
    seen.push(current.item);
    await load();
  }

  function save() {
    const binary = form.querySelector("input[name=binary]:checked");
    if (!binary) {
      error.textContent = strings.answer_binary;
      error.hidden = false;
      return;
    }
    const dimensions = {};
    for (const field of form.querySelectorAll("[data-dimension]")) dimensions[field.dataset.dimension] = Number(field.value);
    send({ al: Number(al.value), binary: Number(binary.value), dimensions,
           comment: document.getElementById("comment").value });
  }

  function start() {
    text("annotator-shown", annotator);
    load();
  }

  form.addEventListener("submit", (event) => { event.preventDefault(); save(); });
  al.addEventListener("input", () => { alValue.textContent = al.value; });
  document.getElementById("skip").addEventListener("click", () => send({ skipped: true }));
  document.getElementById("back").addEventListener("click", () => { if (seen.length) load(seen.pop()); });
  document.addEventListener("keydown", (event) => {
    if (itemBox.hidden || event.target.tagName === "TEXTAREA") return;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (/^[0-9]$/.test(event.key) || event.key === "m" || event.key === "M") {
      // a digit is its tens (0 is 0, 9 is 90), M is the maximum, 100
      al.value = /^[0-9]$/.test(event.key) ? Number(event.key) * 10 : 100;
      alValue.textContent = al.value;
    } else if (event.key === "y" || event.key === "Y") {
      document.getElementById("binary-yes").checked = true;
    } else if (event.key === "n" || event.key === "N") {
      document.getElementById("binary-no").checked = true;
    } else if (event.key === "s" || event.key === "S") {
      send({ skipped: true });
    } else if (event.key === "ArrowLeft" && event.target.type !== "range" && seen.length) {
      load(seen.pop());
    } else if (event.key === "Enter" && event.target.type !== "submit") {
      event.preventDefault();
      save();
    } else {
      return;
    }
    event.preventDefault();
  });
  if (annotator) start();
})();
