// Dashboard folds (templates/_fold.html): one <details data-fold> open at a
// time (they share a name), the open one named in the URL's hash, so a link
// opens it (#rows: the section navigation, the pagers, the filters, a link a
// teammate sent), and the navigation marks it. Without this script every
// fold still opens and closes by itself.
(function () {
  "use strict";
  const folds = [...document.querySelectorAll("details[data-fold]")];
  if (!folds.length) return;
  const first = folds.find((fold) => fold.open) || folds[0];
  const links = [...document.querySelectorAll(".section-nav a[href^='#']")];

  // The element the hash names, and the fold holding it (the fold itself,
  // or a table, a form or a chart inside it).
  function named(hash) {
    if (!hash || hash.length < 2) return null;
    try { return document.getElementById(decodeURIComponent(hash.slice(1))); } catch (error) { return null; }
  }
  function foldOf(hash) {
    const target = named(hash);
    return target ? target.closest("details[data-fold]") : null;
  }

  function mark() {
    for (const link of links) {
      const fold = foldOf(link.hash);
      if (fold && fold.open) link.setAttribute("aria-current", "true");
      else link.removeAttribute("aria-current");
    }
  }

  function show(fold) {
    fold.open = true;
    // Browsers without exclusive <details name>: close the others here.
    for (const other of folds) if (other !== fold && other.open) other.open = false;
    mark();
  }

  for (const fold of folds) {
    fold.addEventListener("toggle", () => {
      // the page as loaded (its first fold open, no hash) keeps a bare URL
      const current = foldOf(location.hash);
      const bare = location.pathname + location.search;
      const loaded = fold === first && !location.hash;
      if (fold.open && current !== fold && !loaded) history.replaceState(history.state, "", bare + "#" + fold.id);
      if (!fold.open && current === fold) history.replaceState(history.state, "", bare);
      if (fold.open && !loaded) {
        for (const other of folds) if (other !== fold && other.open) other.open = false;
        // the fold above it closed: keep the heading just clicked in view
        if (fold.getBoundingClientRect().top < 0) fold.scrollIntoView({ block: "start" });
      }
      mark();
    });
  }

  // Back, forward, and links within the page: the hash says what is open.
  window.addEventListener("hashchange", () => {
    const fold = foldOf(location.hash);
    show(fold || first);
    if (fold) named(location.hash).scrollIntoView({ block: "start" });
  });

  const wanted = foldOf(location.hash);
  if (wanted) {
    show(wanted);
    named(location.hash).scrollIntoView({ block: "start" });
  } else mark();
})();
