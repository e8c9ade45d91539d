// Tables, in the browser: `table.sortable` sorts by a click on a header
// (numbers by `data-sort-value` when a cell has one), `table[data-filterable]`
// gets a filter box, `table.cards` labels its cells for a phone's cards,
// and a table without rows says so. Strings come from the
// #ui-strings JSON block in base.html.
(function () {
  "use strict";
  const source = document.getElementById("ui-strings");
  const strings = source ? JSON.parse(source.textContent) : {};
  const lang = document.documentElement.lang || undefined;
  const collator = new Intl.Collator(lang, { numeric: true, sensitivity: "base" });
  // Numbers as the server formats them ("1,234.50", "−0.25", "12%", "< 0.0001").
  const NUMBER = /^[<>≤≥]?\s*[+\-\u2212]?[\d,]*\.?\d+(?:e[+-]?\d+)?%?$/i;

  function bodyRows(table) {
    return Array.from(table.tBodies).flatMap((body) => Array.from(body.rows))
      .filter((row) => !row.classList.contains("empty-row"));
  }

  function columnCount(table) {
    const head = table.tHead && table.tHead.rows[table.tHead.rows.length - 1];
    return head ? head.cells.length : 1;
  }

  // One message row spanning the table ("no rows", "nothing matches"). A
  // row the server wrote says why the table is empty: it stays as it is.
  function notice(table, message) {
    if (table.querySelector("tr.empty-row:not([data-notice])")) return;
    let row = table.querySelector("tr.empty-row[data-notice]");
    if (!message) {
      if (row) row.remove();
      return;
    }
    if (!row) {
      row = document.createElement("tr");
      row.className = "empty-row";
      row.dataset.notice = "";
      const cell = document.createElement("td");
      cell.colSpan = columnCount(table);
      row.appendChild(cell);
      (table.tBodies[0] || table.appendChild(document.createElement("tbody"))).appendChild(row);
    }
    row.cells[0].textContent = message;
  }

  function sortKey(cell) {
    if (!cell) return { number: NaN, text: "" };
    const text = cell.textContent.trim();
    const given = cell.dataset.sortValue;
    const raw = given !== undefined && given !== "" ? given : text;
    const clean = raw.replace(/^[<>≤≥]\s*/, "").replace(/\u2212/g, "-").replace(/,/g, "");
    const number = NUMBER.test(raw.trim()) ? parseFloat(clean) : NaN;
    return { number, text: given !== undefined ? given : text };
  }

  function sortBy(table, index, header) {
    const ascending = header.getAttribute("aria-sort") !== "ascending";
    for (const other of header.parentElement.cells) other.removeAttribute("aria-sort");
    header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    const rows = bodyRows(table).map((row, order) => ({ row, order, key: sortKey(row.cells[index]) }));
    const numeric = rows.some((r) => !Number.isNaN(r.key.number)) &&
      rows.every((r) => !Number.isNaN(r.key.number) || !/\d/.test(r.key.text));
    const sign = ascending ? 1 : -1;
    rows.sort((a, b) => {
      if (numeric) {
        const missingA = Number.isNaN(a.key.number), missingB = Number.isNaN(b.key.number);
        if (missingA !== missingB) return missingA ? 1 : -1;  // "—" last either way
        if (!missingA && a.key.number !== b.key.number) return sign * (a.key.number - b.key.number);
      } else {
        const order = collator.compare(a.key.text, b.key.text);
        if (order) return sign * order;
      }
      return a.order - b.order;
    });
    const body = table.tBodies[0];
    for (const { row } of rows) body.appendChild(row);
  }

  function makeSortable(table) {
    const head = table.tHead && table.tHead.rows[table.tHead.rows.length - 1];
    if (!head) return;
    Array.from(head.cells).forEach((header, index) => {
      if (header.colSpan > 1 || header.querySelector("button")) return;
      const button = document.createElement("button");
      button.type = "button";
      button.className = "sort-button";
      while (header.firstChild) button.appendChild(header.firstChild);
      header.appendChild(button);
      button.addEventListener("click", () => sortBy(table, index, header));
    });
  }

  function makeFilterable(table) {
    const anchor = table.closest(".table-wrap") || table;
    const box = document.createElement("div");
    box.className = "table-filter";
    const label = document.createElement("label");
    const input = document.createElement("input");
    input.type = "search";
    input.placeholder = strings.filter || "";
    input.setAttribute("aria-label", strings.filter || "");
    label.appendChild(input);
    const count = document.createElement("span");
    count.className = "filter-count muted small";
    count.setAttribute("aria-live", "polite");
    box.append(label, count);
    anchor.parentElement.insertBefore(box, anchor);
    input.addEventListener("input", () => {
      const needle = input.value.trim().toLocaleLowerCase(lang);
      const rows = bodyRows(table);
      let shown = 0;
      for (const row of rows) {
        row.hidden = Boolean(needle) && !row.textContent.toLocaleLowerCase(lang).includes(needle);
        if (!row.hidden) shown += 1;
      }
      count.textContent = needle && strings.shown
        ? strings.shown.replace("{shown}", shown).replace("{total}", rows.length) : "";
      notice(table, rows.length && !shown ? strings.no_match : "");
    });
  }

  // `table.cards` is a card per row on a phone (static/app.css): each cell
  // names its column with its heading (as translated on the page), unless
  // the server labelled it already.
  function labelCells(table) {
    const head = table.tHead && table.tHead.rows[table.tHead.rows.length - 1];
    if (!head) return;
    const titles = Array.from(head.cells).map((cell) => cell.textContent.replace(/\s+/g, " ").trim());
    for (const row of bodyRows(table)) {
      if (row.cells.length !== titles.length) continue;
      Array.from(row.cells).forEach((cell, index) => {
        if (!cell.hasAttribute("data-label") && titles[index]) cell.dataset.label = titles[index];
        // nothing in it (no note): no card line of a heading alone
        if (!cell.textContent.trim() && !cell.children.length) cell.dataset.blank = "";
      });
    }
  }

  for (const table of document.querySelectorAll("table.cards")) labelCells(table);
  for (const table of document.querySelectorAll("table.sortable")) makeSortable(table);
  for (const table of document.querySelectorAll("table[data-filterable]")) makeFilterable(table);
  for (const table of document.querySelectorAll(".table-wrap table")) {
    if (!bodyRows(table).length) notice(table, strings.empty);
  }
})();
