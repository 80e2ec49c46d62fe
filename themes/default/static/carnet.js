// Carnet default theme: small progressive enhancements. The site works without it.
// No inline handlers: everything is wired here, so a strict CSP holds.
(function () {
  "use strict";

  // A note opened from a notebook (?nb=slug) shows that notebook's breadcrumb.
  function applyNotebookContext() {
    var crumbs = document.querySelectorAll("nav.breadcrumb[data-context]");
    if (crumbs.length < 2) return;
    var wanted = new URLSearchParams(window.location.search).get("nb");
    if (!wanted) return;
    var found = false;
    crumbs.forEach(function (nav) { if (nav.dataset.context === wanted) found = true; });
    if (!found) return;
    crumbs.forEach(function (nav) { nav.hidden = nav.dataset.context !== wanted; });
    document.querySelectorAll(".memberships li[data-context]").forEach(function (li) {
      li.classList.toggle("current", li.dataset.context === wanted);
    });
  }

  // Notebook page: filter notes by categories (OR within an axis, AND across axes).
  function setUpFacets() {
    var buttons = document.querySelectorAll(".facet-toggle");
    if (!buttons.length) return;
    var status = document.querySelector(".facet-status");
    function refresh() {
      var chosen = {};
      buttons.forEach(function (b) {
        if (b.getAttribute("aria-pressed") === "true") {
          (chosen[b.dataset.axis] = chosen[b.dataset.axis] || []).push(b.dataset.category);
        }
      });
      var axes = Object.keys(chosen);
      var shown = 0;
      document.querySelectorAll(".note-item").forEach(function (item) {
        var pairs = (item.dataset.categories || "").split("|");
        var ok = axes.every(function (axis) {
          return chosen[axis].some(function (c) { return pairs.indexOf(axis + "=" + c) >= 0; });
        });
        item.hidden = !ok;
        if (ok) shown += 1;
      });
      if (status) status.textContent = axes.length ? shown + " note(s) affichée(s)" : "";
    }
    buttons.forEach(function (b) {
      b.addEventListener("click", function () {
        b.setAttribute("aria-pressed", b.getAttribute("aria-pressed") === "true" ? "false" : "true");
        refresh();
      });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    applyNotebookContext();
    setUpFacets();
  });
})();
