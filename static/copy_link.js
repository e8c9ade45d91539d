// Copy-link button (templates/_copy_link.html): the server puts the page's
// address in data-url (absolute on PUBLIC_URL, else a path resolved here
// against the address bar); without the Clipboard API (plain HTTP on another
// host, older browsers) the address is shown selected instead.
(function () {
  "use strict";
  for (const box of document.querySelectorAll("[data-copy-link]")) {
    const button = box.querySelector("button");
    const field = box.querySelector("input");
    const status = box.querySelector("[role=status]");
    let timer = 0;
    const address = new URL(box.dataset.url, window.location.href).href;
    field.value = address;

    function say(message) {
      status.textContent = message;
      clearTimeout(timer);
      timer = setTimeout(() => { status.textContent = ""; }, 5000);
    }

    function manual() {
      field.hidden = false;
      field.focus();
      field.select();
      say(box.dataset.manual);
    }

    button.addEventListener("click", async () => {
      if (!navigator.clipboard || !window.isSecureContext) return manual();
      try {
        await navigator.clipboard.writeText(address);
        field.hidden = true;
        say(box.dataset.copied);
      } catch (error) {
        manual();  // permission refused: the reader copies it themselves
      }
    });
  }
})();
