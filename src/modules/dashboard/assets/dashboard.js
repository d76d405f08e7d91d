// Dashboard behaviour (served from /dashboard/assets, CSP script-src 'self').
// Everything works without it; it adds copy buttons and confirmations.
// biome-ignore lint/suspicious/noRedundantUseStrict: a classic script (no type=module), so not strict by default
"use strict";
(() => {
  function announce(id, text) {
    var out = document.querySelector(`[data-copied-for="${id}"]`);
    if (out) out.textContent = text;
  }
  function fallbackCopy(input) {
    input.focus();
    input.select();
    try {
      return document.execCommand("copy");
    } catch {
      return false;
    }
  }
  document.addEventListener("click", (ev) => {
    var btn = ev.target instanceof Element ? ev.target.closest("button[data-copy]") : null;
    if (!btn) return;
    var id = btn.getAttribute("data-copy");
    var input = document.getElementById(id);
    if (!input) return;
    var value = input.value;
    var done = () => {
      announce(id, "Copied to the clipboard.");
      btn.textContent = "Copied";
    };
    var failed = () => {
      announce(id, fallbackCopy(input) ? "Copied to the clipboard." : "Select the text and copy it by hand.");
    };
    if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(value).then(done, failed);
    else failed();
  });
  // Narrow screens show each table row as a block whose values carry their column name (data-label); tables
  // rendered without the labels get them from their header row.
  document.querySelectorAll(".scroll > table").forEach((table) => {
    var heads = table.querySelectorAll("thead th");
    table.querySelectorAll("tbody tr").forEach((tr) => {
      Array.prototype.forEach.call(tr.children, (cell, i) => {
        var head = heads[i];
        if (cell.tagName === "TD" && !cell.hasAttribute("data-label") && head)
          cell.setAttribute("data-label", head.textContent.trim());
      });
    });
  });
  document.addEventListener("submit", (ev) => {
    var form = ev.target;
    if (!(form instanceof HTMLFormElement)) return;
    var msg = form.getAttribute("data-confirm");
    if (msg && !window.confirm(msg)) {
      ev.preventDefault();
      return;
    }
    var btn = form.querySelector('button[type="submit"]');
    if (btn)
      setTimeout(() => {
        btn.disabled = true;
      }, 0);
  });
})();
