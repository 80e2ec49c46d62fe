// Carnet default theme: small progressive enhancements. Every page works without it.
// No inline handlers: everything is wired here, so a strict Content-Security-Policy holds.
(function () {
  "use strict";
  var root = document.documentElement;

  // Theme toggle: light ↔ dark, remembered; until used, the system's choice applies.
  function setUpThemeToggle() {
    var button = document.querySelector(".theme-toggle");
    if (!button) return;
    var dark = window.matchMedia("(prefers-color-scheme: dark)");
    function current() { return root.dataset.theme || (dark.matches ? "dark" : "light"); }
    function show() { button.setAttribute("aria-pressed", current() === "dark" ? "true" : "false"); }
    button.addEventListener("click", function () {
      var next = current() === "dark" ? "light" : "dark";
      root.dataset.theme = next;
      try { window.localStorage.setItem("carnet-theme", next); } catch (e) { /* not saved */ }
      show();
    });
    show();
  }

  // A note opened from a notebook (?nb=slug) shows that notebook's breadcrumb.
  function applyNotebookContext() {
    var crumbs = document.querySelectorAll("nav.breadcrumb[data-context]");
    if (crumbs.length < 2) return;
    var wanted = new URLSearchParams(window.location.search).get("nb");
    var known = Array.prototype.some.call(crumbs, function (nav) { return nav.dataset.context === wanted; });
    if (!known) return;
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
      if (status) {
        var label = shown < 2 ? document.body.dataset.shownLabelOne : document.body.dataset.shownLabel;
        status.textContent = axes.length ? label.replace(/\d+/, String(shown)) : "";
      }
    }
    buttons.forEach(function (b) {
      b.addEventListener("click", function () {
        b.setAttribute("aria-pressed", b.getAttribute("aria-pressed") === "true" ? "false" : "true");
        refresh();
      });
    });
  }

  // Evidence is one click away: a click on a highlight opens its entry in the list;
  // landing on #ext-… emphasises every portion of that passage.
  function setUpEvidence() {
    var evidence = document.getElementById("evidence");
    function focusPassage() {
      var hash = decodeURIComponent(window.location.hash.slice(1));
      document.querySelectorAll("mark.current").forEach(function (m) { m.classList.remove("current"); });
      if (hash.indexOf("ext-") === 0) {
        var id = hash.slice(4);
        document.querySelectorAll("mark.extraction").forEach(function (m) {
          if (m.dataset.ext.split(" ").indexOf(id) >= 0) m.classList.add("current");
        });
      } else if (evidence && (hash.indexOf("entry-") === 0 || hash.indexOf("com-") === 0)) {
        evidence.open = true;
        var target = document.getElementById(hash);
        if (target) target.scrollIntoView();
      }
    }
    document.querySelectorAll("mark.extraction").forEach(function (mark) {
      mark.addEventListener("click", function () {
        if (!evidence) return;
        evidence.open = true;
        var entry = document.getElementById("entry-" + mark.dataset.ext.split(" ")[0]);
        if (entry) { entry.scrollIntoView({ block: "center" }); entry.classList.add("flash"); }
      });
    });
    window.addEventListener("hashchange", focusPassage);
    window.addEventListener("beforeprint", function () { if (evidence) evidence.open = true; });
    focusPassage();
  }

  // Transcripts: each speaker turn gets a button that plays the recording from its time.
  function setUpTurns() {
    var media = document.querySelector("figure.media audio, figure.media video");
    var turns = document.querySelectorAll(".turn[data-time]");
    if (!media || !turns.length) return;
    var template = document.body.dataset.playLabel || "{time}";
    function clock(seconds) {
      var h = Math.floor(seconds / 3600), m = Math.floor(seconds % 3600 / 60), s = seconds % 60;
      var mm = (m < 10 ? "0" : "") + m + ":" + (s < 10 ? "0" : "") + s;
      return h ? (h < 10 ? "0" : "") + h + ":" + mm : mm;
    }
    turns.forEach(function (turn) {
      var time = parseInt(turn.dataset.time, 10);
      var button = document.createElement("button");
      button.type = "button";
      button.className = "play-turn";
      button.textContent = "▶";
      button.setAttribute("aria-label", template.replace("{time}", clock(time)));
      button.addEventListener("click", function () {
        media.currentTime = time;
        var playing = media.play();
        if (playing && playing.catch) playing.catch(function () { /* blocked: the reader presses play */ });
      });
      turn.insertBefore(button, turn.firstChild);
    });
    // an extraction's passage: play from its first turn, stop at the end of its last one
    var stopAt = null;
    document.querySelectorAll(".play-extraction").forEach(function (button) {
      button.addEventListener("click", function () {
        media.currentTime = parseFloat(button.dataset.start);
        stopAt = button.dataset.end ? parseFloat(button.dataset.end) : null;
        var playing = media.play();
        if (playing && playing.catch) playing.catch(function () { /* blocked: the reader presses play */ });
      });
    });
    // landing on a passage of the transcript (#ext-…) puts the player at its time
    function cue() {
      var hash = decodeURIComponent(window.location.hash.slice(1));
      if (hash.indexOf("ext-") !== 0) return;
      var entry = document.getElementById("entry-" + hash.slice(4));
      var button = entry && entry.querySelector(".play-extraction");
      if (button) media.currentTime = parseFloat(button.dataset.start);
    }
    window.addEventListener("hashchange", cue);
    cue();
    media.addEventListener("timeupdate", function () {
      if (stopAt !== null && media.currentTime >= stopAt) { media.pause(); stopAt = null; }
      var now = media.currentTime, active = null;
      turns.forEach(function (turn) { if (parseInt(turn.dataset.time, 10) <= now) active = turn; });
      turns.forEach(function (turn) { turn.classList.toggle("speaking", turn === active && !media.paused); });
    });
  }

  // Citations: a preview (quote, note, date, comments, debate) on hover, on keyboard focus,
  // and on a first tap on touch screens; a second tap, a click or Enter follows the link.
  function setUpCitationPreviews() {
    var links = document.querySelectorAll("a.citation[data-preview-quote]");
    if (!links.length) return;
    var box = document.createElement("div");
    box.className = "citation-preview";
    box.id = "citation-preview";
    box.setAttribute("role", "tooltip");
    box.hidden = true;
    document.body.appendChild(box);
    var current = null;
    function show(link) {
      current = link;
      box.textContent = "";
      var quote = document.createElement("blockquote");
      quote.textContent = link.dataset.previewQuote;
      var meta = document.createElement("p");
      meta.className = "meta";
      var parts = [link.dataset.previewNote, link.dataset.previewDate, link.dataset.previewComments,
                   link.dataset.previewDebate, link.dataset.previewKind].filter(Boolean);
      meta.textContent = parts.join(" · ");
      box.appendChild(quote);
      box.appendChild(meta);
      if (link.dataset.previewState) {  // what was checked, by what, and what it does not establish
        var state = document.createElement("p");
        state.className = "state";
        state.textContent = link.dataset.previewState + " — " + link.dataset.previewStateReason + ". " +
          link.dataset.previewProvenance;
        var limit = document.createElement("p");
        limit.className = "limit";
        limit.textContent = link.dataset.previewLimit;
        box.appendChild(state);
        box.appendChild(limit);
      }
      box.hidden = false;
      var rect = link.getBoundingClientRect();
      var left = Math.max(8, Math.min(rect.left + window.scrollX, window.scrollX + document.documentElement.clientWidth - box.offsetWidth - 8));
      box.style.left = left + "px";
      box.style.top = (rect.bottom + window.scrollY + 6) + "px";
      link.setAttribute("aria-describedby", "citation-preview");
    }
    function hide() {
      if (current) current.removeAttribute("aria-describedby");
      current = null;
      box.hidden = true;
    }
    links.forEach(function (link) {
      link.addEventListener("mouseenter", function () { show(link); });
      link.addEventListener("mouseleave", hide);
      link.addEventListener("focus", function () { show(link); });
      link.addEventListener("blur", hide);
      link.addEventListener("touchend", function (event) {
        if (current !== link) { event.preventDefault(); show(link); }  // first tap: preview only
      });
    });
    document.addEventListener("keydown", function (event) { if (event.key === "Escape") hide(); });
  }

  // Notebook page: the Notes / Wikis / Syntheses tabs (all sections show without script).
  function setUpTabs() {
    var tabs = document.querySelectorAll(".tabs a[role=tab]");
    if (!tabs.length) return;
    function select(tab) {
      tabs.forEach(function (t) {
        var on = t === tab;
        t.setAttribute("aria-selected", on ? "true" : "false");
        t.tabIndex = on ? 0 : -1;
        var panel = document.getElementById(t.getAttribute("aria-controls"));
        if (panel) panel.hidden = !on;
      });
    }
    tabs.forEach(function (tab, index) {
      tab.addEventListener("click", function (event) { event.preventDefault(); select(tab); });
      tab.addEventListener("keydown", function (event) {
        var step = event.key === "ArrowRight" ? 1 : event.key === "ArrowLeft" ? -1 : 0;
        if (!step) return;
        var next = tabs[(index + step + tabs.length) % tabs.length];
        select(next);
        next.focus();
      });
    });
    var wanted = document.querySelector('.tabs a[href="' + window.location.hash + '"]');
    select(wanted || tabs[0]);
  }

  // Search: "/" or Ctrl/Cmd+K from any page opens the search page; there, Pagefind
  // (pagefind/pagefind.js, loaded on demand) answers, with its filters as selects.
  function setUpSearchShortcut() {
    var link = document.querySelector("a.search-open");
    if (!link) return;
    document.addEventListener("keydown", function (event) {
      var typing = /INPUT|TEXTAREA|SELECT/.test((event.target && event.target.tagName) || "");
      if ((event.key === "/" && !typing) || ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "k")) {
        event.preventDefault();
        var input = document.getElementById("search-input");
        if (input) input.focus(); else window.location.href = link.href;
      }
    });
  }

  function setUpSearch() {
    var input = document.getElementById("search-input");
    if (!input) return;
    var results = document.querySelector(".search-results");
    var status = document.querySelector(".search-status");
    var filtersBox = document.querySelector(".search-filters");
    var root = document.body.dataset.root || "./";  // a bare "pagefind/…" would be a module name
    var pagefind = null, selects = {}, pending = 0;
    function chosen() {
      var filters = {};
      Object.keys(selects).forEach(function (key) { if (selects[key].value) filters[key] = selects[key].value; });
      return filters;
    }
    function run() {
      var term = input.value.trim(), ticket = ++pending;
      if (!pagefind) return;
      if (!term && !Object.keys(chosen()).length) { results.textContent = ""; status.textContent = ""; return; }
      pagefind.search(term || null, { filters: chosen() }).then(function (search) {
        return Promise.all(search.results.slice(0, 20).map(function (r) { return r.data(); }));
      }).then(function (items) {
        if (ticket !== pending) return;
        results.textContent = "";
        items.forEach(function (item) {
          var li = document.createElement("li");
          var a = document.createElement("a");
          var target = item.sub_results && item.sub_results.length ? item.sub_results[0].url : item.url;
          a.href = target;
          a.textContent = (item.meta && item.meta.title) || item.url;
          var excerpt = document.createElement("p");
          excerpt.textContent = (item.excerpt || "").replace(/<[^>]+>/g, "");
          li.appendChild(a);
          li.appendChild(excerpt);
          results.appendChild(li);
        });
        var label = items.length < 2 ? document.body.dataset.resultsLabelOne : document.body.dataset.resultsLabel;
        status.textContent = label.replace(/\d+/, String(items.length));
      });
    }
    // resolved against the page: a module specifier alone would resolve against this script
    import(new URL(root + "pagefind/pagefind.js", document.baseURI).href).then(function (module) {
      pagefind = module;
      return pagefind.filters();
    }).then(function (filters) {
      Object.keys(filters).sort().forEach(function (key) {
        var label = document.createElement("label");
        label.textContent = key + " ";
        var select = document.createElement("select");
        select.name = key;
        var all = document.createElement("option");
        all.value = "";
        all.textContent = document.body.dataset.allLabel;
        select.appendChild(all);
        Object.keys(filters[key]).sort().forEach(function (value) {
          var option = document.createElement("option");
          option.value = value;
          option.textContent = value + " (" + filters[key][value] + ")";
          select.appendChild(option);
        });
        select.addEventListener("change", run);
        selects[key] = select;
        label.appendChild(select);
        filtersBox.appendChild(label);
      });
      var query = new URLSearchParams(window.location.search).get("q");
      if (query) input.value = query;
      run();
    }).catch(function () { status.textContent = "—"; });
    input.addEventListener("input", run);
    input.form.addEventListener("submit", function (event) { event.preventDefault(); run(); });
  }

  document.addEventListener("DOMContentLoaded", function () {
    setUpSearchShortcut();
    setUpSearch();
    setUpCitationPreviews();
    setUpTabs();
    setUpThemeToggle();
    applyNotebookContext();
    setUpFacets();
    setUpEvidence();
    setUpTurns();
  });
})();
