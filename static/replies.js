// The replies grid: a judge's score opens what it was sent and answered in
// a dialog (the link's page without script). The fragment is rendered and
// escaped on the server; it holds no script.
(function () {
  "use strict";
  const dialog = document.getElementById("exchange-dialog");
  if (!dialog || typeof dialog.showModal !== "function") return;
  const body = dialog.querySelector(".exchange-body");
  document.addEventListener("click", async (event) => {
    const link = event.target.closest("a.exchange-link");
    if (!link || event.ctrlKey || event.metaKey || event.shiftKey) return;
    event.preventDefault();
    const url = new URL(link.href);
    url.searchParams.set("part", "1");
    try {
      const response = await fetch(url, { credentials: "same-origin" });
      if (!response.ok) throw new Error(String(response.status));
      body.innerHTML = await response.text();
    } catch (error) {
      window.location.href = link.href;
      return;
    }
    dialog.showModal();
    dialog.querySelector(".exchange").focus?.();
  });
  dialog.addEventListener("click", (event) => {
    if (event.target === dialog) dialog.close(); // a click on the backdrop
  });
})();
