// Workspaces this browser opened, kept in local storage only: the server
// knows nobody. A page that opens a workspace (the workspace page, or the
// owner's run page) carries #workspace-memo; it is remembered, newest first.
// The home page lists them and sends the most recent managed one with the
// next upload (the first upload makes a workspace on the server).
(function () {
  "use strict";
  var KEY = "personasteer.workspaces";
  var LIMIT = 50;

  function load() {
    try {
      var list = JSON.parse(window.localStorage.getItem(KEY) || "[]");
      return Array.isArray(list) ? list.filter(function (w) { return w && w.token; }) : [];
    } catch (error) {
      return [];  // storage disabled or corrupt: behave as a new browser
    }
  }

  function save(list) {
    try {
      window.localStorage.setItem(KEY, JSON.stringify(list.slice(0, LIMIT)));
    } catch (error) { /* private mode: nothing is remembered */ }
  }

  function remember(memo) {
    var list = load();
    var known = list.filter(function (w) { return w.token === memo.token; })[0];
    // A later visit with the view link must not lose a manage link learnt before.
    if (known && known.manage_token && !memo.manage_token) {
      memo.manage_token = known.manage_token;
    }
    save([memo].concat(list.filter(function (w) { return w.token !== memo.token; })));
  }

  function forget(token) {
    save(load().filter(function (w) { return w.token !== token; }));
  }

  function label(workspace, list) {
    return workspace.name || list.dataset.unnamed.replace("{date}", workspace.created_at || "");
  }

  function renderList() {
    var list = document.getElementById("workspace-list");
    if (!list) return;
    var remembered = load();
    list.textContent = "";
    remembered.forEach(function (workspace) {
      var item = document.createElement("li");
      var link = document.createElement("a");
      link.href = list.dataset.href.replace("__token__", encodeURIComponent(workspace.manage_token || workspace.token));
      link.textContent = label(workspace, list);
      link.dataset.testid = "remembered-workspace";
      var kind = document.createElement("span");
      kind.className = "muted small";
      kind.textContent = " · " + (workspace.manage_token ? list.dataset.managed : list.dataset.viewed);
      var button = document.createElement("button");
      button.type = "button";
      button.className = "button small";
      button.textContent = list.dataset.forget;
      button.addEventListener("click", function () {
        forget(workspace.token);
        renderList();
        fillSelect();
      });
      item.append(link, kind, " ", button);
      list.append(item);
    });
    document.getElementById("remembered").hidden = remembered.length === 0;
  }

  function fillSelect() {
    var select = document.getElementById("workspace-select");
    if (!select) return;
    var list = document.getElementById("workspace-list");
    while (select.options.length > 1) select.remove(1);
    var managed = load().filter(function (w) { return w.manage_token; });
    managed.forEach(function (workspace) {
      select.add(new Option(label(workspace, list), workspace.manage_token));
    });
    select.selectedIndex = managed.length ? 1 : 0;
    document.getElementById("workspace-pick").hidden = managed.length === 0;
  }

  var memo = document.getElementById("workspace-memo");
  if (memo) {
    try { remember(JSON.parse(memo.textContent)); } catch (error) { /* ignore */ }
  }
  document.querySelectorAll("form[data-forget]").forEach(function (form) {
    form.addEventListener("submit", function () { forget(form.dataset.forget); });
  });
  renderList();
  fillSelect();
})();
