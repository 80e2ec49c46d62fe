// Carnet default theme: small progressive enhancements. Every page works without it.
// No inline handlers: everything is wired here, so a strict Content-Security-Policy holds.
(function () {
  "use strict";
  var root = document.documentElement;

  // a count's label: its 0, 1 and many forms worded by the build, each language's agreement kept
  function counted(n, key) {
    var d = document.body.dataset;
    return (n === 0 ? d[key + "Zero"] : n === 1 ? d[key + "One"] : d[key]) || d[key];
  }

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
        // counted in the tab on show only: the others' notes are not what the reader sees
        var panel = item.closest("[role=tabpanel]");
        if (ok && !(panel && panel.hidden)) shown += 1;
      });
      if (status) {
        var label = counted(shown, "shownLabel");
        status.textContent = axes.length ? label.replace(/\d+/, String(shown)) : "";
      }
      // each tab's count is what its list shows under the filters ("1/3"), its total without them
      document.querySelectorAll(".tabs a[role=tab]").forEach(function (tab) {
        var count = tab.querySelector(".count");
        var panel = document.getElementById(tab.getAttribute("aria-controls"));
        if (!count || !panel) return;
        if (count.dataset.total === undefined) count.dataset.total = count.textContent;
        var visible = panel.querySelectorAll(".note-item:not([hidden])").length;
        count.textContent = axes.length ? visible + "/" + count.dataset.total : count.dataset.total;
      });
    }
    buttons.forEach(function (b) {
      b.addEventListener("click", function () {
        b.setAttribute("aria-pressed", b.getAttribute("aria-pressed") === "true" ? "false" : "true");
        refresh();
      });
    });
    document.addEventListener("carnet-tab", refresh);  // another tab: its own count
  }

  // Evidence is one click away: a click on a highlight opens its entry in the list;
  // landing on #ext-… emphasises every portion of that passage.
  function setUpEvidence() {
    var evidence = document.getElementById("evidence");
    function focusPassage() {
      var hash = decodeURIComponent(window.location.hash.slice(1));
      document.querySelectorAll("mark.current, .comment.current").forEach(function (m) { m.classList.remove("current"); });
      function emphasise(id) {
        document.querySelectorAll("mark.extraction").forEach(function (m) {
          if (m.dataset.ext.split(" ").indexOf(id) >= 0) m.classList.add("current");
        });
      }
      if (hash.indexOf("ext-") === 0) {
        emphasise(hash.slice(4));
      } else if (evidence && (hash.indexOf("entry-") === 0 || hash.indexOf("com-") === 0)) {
        evidence.open = true;
        var target = document.getElementById(hash);
        if (!target) return;
        var entry = target.closest(".extraction-entry");
        if (hash.indexOf("com-") === 0) {  // a comment: emphasised, as its passage in the body
          target.classList.add("current");
          if (entry) emphasise(entry.id.slice(6));
        }
        target.scrollIntoView();
        // the passage's quote above the comment in view too, when both fit the window
        if (entry && entry !== target && target.getBoundingClientRect().bottom - entry.getBoundingClientRect().top
            <= window.innerHeight - (parseFloat(getComputedStyle(entry).scrollMarginTop) || 0)) entry.scrollIntoView();
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
    // the browser's own scroll to a fragment, after the load, would hide the comment's passage
    if (document.readyState !== "complete" && window.location.hash.indexOf("#com-") === 0) {
      window.addEventListener("load", function () { focusPassage(); }, { once: true });
    }
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
      // the name is the visible time with its words, so that speech control finds it (label in name)
      var icon = document.createElement("span");
      icon.setAttribute("aria-hidden", "true");
      icon.textContent = "▶";
      var name = document.createElement("span");
      name.className = "visually-hidden";
      name.textContent = template.replace("{time}", clock(time));
      button.appendChild(icon);
      button.appendChild(name);
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
      if (!button) return;
      media.currentTime = parseFloat(button.dataset.start);
      // the player stays in view above the passage it was cued for, which lands below it
      var figure = media.closest("figure");
      figure.classList.add("cued");
      document.documentElement.style.setProperty("--landing-offset", (figure.offsetHeight + 24) + "px");
      var anchor = document.getElementById(hash);
      if (anchor) anchor.scrollIntoView();
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

  // Citations: a preview (quote, note, date, comments, debate, verification) on hover, on
  // keyboard focus, and on a first tap on touch screens; a second tap, a click or Enter follows
  // the link. A citation is one Tab stop: the down arrow goes into its preview's links (put right
  // after the citation in the document), the up arrow or Escape back to the citation. Near the
  // bottom of the window the preview opens above its citation.
  // a contest label past the screen's right edge (a citation ending a line) widens the page:
  // it is turned to end above its citation instead (style.css)
  function placeContestLabels() {
    function place() {
      var width = document.documentElement.clientWidth;
      document.querySelectorAll(".note-body .claim-end a.contest").forEach(function (link) {
        link.classList.remove("from-end");
        if (link.getBoundingClientRect().right > width) link.classList.add("from-end");
      });
    }
    place();
    window.addEventListener("resize", place);
  }

  function setUpCitationPreviews() {
    var links = document.querySelectorAll("a.citation[data-preview-quote]");
    if (!links.length) return;
    var labels = document.body.dataset;
    var box = document.createElement("div");
    box.className = "citation-preview";
    box.id = "citation-preview";
    box.setAttribute("role", "group");
    if (labels.previewLabel) box.setAttribute("aria-label", labels.previewLabel);
    box.hidden = true;
    var current = null, quiet = false;
    function place(link) {
      var anchor = link.closest("sup") || link;
      if (anchor.nextSibling !== box) anchor.parentNode.insertBefore(box, anchor.nextSibling);
      var rect = link.getBoundingClientRect();
      var width = document.documentElement.clientWidth, height = document.documentElement.clientHeight;
      var left = Math.max(8, Math.min(rect.left, width - box.offsetWidth - 8));  // in the viewport
      var top = rect.bottom + 6;
      // near the bottom, the preview opens above its citation rather than off-screen
      var above = top + box.offsetHeight > height - 8 && rect.top - 6 - box.offsetHeight >= 8;
      if (above) top = rect.top - 6 - box.offsetHeight;
      box.classList.toggle("above", above);  // its bridge to the citation below it
      // absolute positioning counts from the nearest positioned ancestor (the page when none)
      var host = box.offsetParent;
      if (host && host !== document.body && getComputedStyle(host).position !== "static") {
        var origin = host.getBoundingClientRect();
        left = left - origin.left - host.clientLeft + host.scrollLeft;
        top = top - origin.top - host.clientTop + host.scrollTop;
      } else {
        left += window.scrollX;
        top += window.scrollY;
      }
      box.style.left = left + "px";
      box.style.top = top + "px";
    }
    function item(tag, className, text) {
      var element = document.createElement(tag);
      if (className) element.className = className;
      element.textContent = text;
      box.appendChild(element);
      return element;
    }
    function show(link) {
      if (current === link && !box.hidden) return;
      if (current && current !== link) current.removeAttribute("aria-describedby");
      current = link;
      box.textContent = "";
      item("blockquote", "", link.dataset.previewQuote);
      item("p", "meta", [link.dataset.previewNote, link.dataset.previewDate, link.dataset.previewComments,
                         link.dataset.previewDebate, link.dataset.previewKind].filter(Boolean).join(" · "));
      if (link.dataset.previewState) {  // what was checked, by what, and what it does not establish
        var reason = link.dataset.previewStateReason || "";
        item("p", "state", link.dataset.previewState + " — " + reason + (/[.!?…]$/.test(reason) ? " " : ". ") +
             link.dataset.previewProvenance);
        // a model's verdict that changed nothing: its judge did not qualify (its accuracy said)
        if (link.dataset.previewSuggestion) item("p", "suggestion", link.dataset.previewSuggestion);
        item("p", "limit", link.dataset.previewLimit);
      }
      // where to go from here: the passage in its note, and the extraction with its debate
      var href = link.getAttribute("href") || "";
      var actions = item("p", "actions", "");
      function action(target, text) {
        if (!text) return;
        var a = document.createElement("a");
        a.href = target;
        a.textContent = text;
        a.tabIndex = -1;  // one Tab stop per citation: its preview's links are reached with the down arrow
        if (actions.childNodes.length) actions.appendChild(document.createTextNode(" · "));
        actions.appendChild(a);
      }
      if (href.indexOf("#ext-") >= 0) {
        action(href, labels.previewPassage);
        action(href.replace("#ext-", "#entry-"), labels.previewEntry);
      } else if (link.classList.contains("quote")) {  // an answer's quote: the note's words, no extraction
        action(href, labels.previewPassage);
      } else {
        action(href, labels.previewEntry);
      }
      box.hidden = false;
      place(link);
      link.setAttribute("aria-describedby", "citation-preview");
    }
    function hide() {
      if (current) current.removeAttribute("aria-describedby");
      current = null;
      box.hidden = true;
    }
    function inside(node) { return !!node && (node === current || box.contains(node)); }
    links.forEach(function (link) {
      link.addEventListener("mouseenter", function () { show(link); });
      link.addEventListener("mouseleave", function (event) {
        if (!inside(event.relatedTarget) && !box.contains(document.activeElement) && document.activeElement !== link) hide();
      });
      link.addEventListener("focus", function () { if (!quiet) show(link); });
      link.addEventListener("blur", function (event) { if (!box.contains(event.relatedTarget)) hide(); });
      link.addEventListener("keydown", function (event) {
        if (event.key !== "ArrowDown") return;
        show(link);
        var first = box.querySelector(".actions a");
        if (first) { event.preventDefault(); first.focus(); }
      });
      link.addEventListener("touchend", function (event) {
        if (current !== link) { event.preventDefault(); show(link); }  // first tap: preview only
      });
    });
    box.addEventListener("mouseleave", function (event) {
      if (!inside(event.relatedTarget) && !box.contains(document.activeElement) && document.activeElement !== current) hide();
    });
    box.addEventListener("focusout", function (event) { if (!inside(event.relatedTarget)) hide(); });
    box.addEventListener("keydown", function (event) {  // the arrows move among the preview's links
      if (event.key !== "ArrowDown" && event.key !== "ArrowUp") return;
      var all = Array.prototype.slice.call(box.querySelectorAll(".actions a"));
      var at = all.indexOf(document.activeElement);
      if (at < 0) return;
      event.preventDefault();
      if (event.key === "ArrowUp" && at === 0) { quiet = true; current.focus(); quiet = false; return; }
      all[Math.max(0, Math.min(all.length - 1, at + (event.key === "ArrowDown" ? 1 : -1)))].focus();
    });
    document.addEventListener("keydown", function (event) {
      if (event.key !== "Escape" || box.hidden) return;
      var link = current;
      if (link && box.contains(document.activeElement)) {  // focus goes back where it came from
        quiet = true;
        link.focus();
        quiet = false;
      }
      hide();
    });
  }

  // Header menus and the notebook switcher are drop-downs over the page: Escape closes the open
  // one and gives focus back to its summary; leaving it (focus or a click elsewhere) closes it.
  function setUpDropDowns() {
    var menus = document.querySelectorAll("details.nav-group, details.context-switch");
    if (!menus.length) return;
    menus.forEach(function (menu) {
      menu.addEventListener("focusout", function (event) {
        if (menu.open && event.relatedTarget && !menu.contains(event.relatedTarget)) menu.open = false;
      });
    });
    document.addEventListener("keydown", function (event) {
      if (event.key !== "Escape") return;
      menus.forEach(function (menu) {
        if (!menu.open) return;
        var focused = menu.contains(document.activeElement);
        menu.open = false;
        if (focused) menu.querySelector("summary").focus();
      });
    });
    document.addEventListener("click", function (event) {
      menus.forEach(function (menu) { if (menu.open && !menu.contains(event.target)) menu.open = false; });
    });
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
      document.dispatchEvent(new CustomEvent("carnet-tab"));
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

  // Search: every hit counted and reachable (PAGE at a time, "show more" for the next ones);
  // the facets named in the site's language, in the page's order (notebook, type, state, then
  // each notebook's axes); result links under the site's own path, whatever its base URL.
  function setUpSearch() {
    var input = document.getElementById("search-input");
    if (!input) return;
    var PAGE = 20;
    var results = document.querySelector(".search-results");
    var status = document.querySelector(".search-status");
    var filtersBox = document.querySelector(".search-filters");
    var more = document.querySelector(".search-more");
    var root = document.body.dataset.root || "./";  // a bare "pagefind/…" would be a module name
    var facets = [];
    try { facets = JSON.parse(filtersBox.dataset.facets || "[]"); } catch (error) { facets = []; }
    var pagefind = null, selects = {}, pending = 0, hits = [], shown = 0;
    function chosen() {
      var filters = {};
      Object.keys(selects).forEach(function (key) { if (selects[key].value) filters[key] = selects[key].value; });
      return filters;
    }
    // Pagefind's excerpt: escaped text, <mark> around the words found. Marks become <mark>
    // nodes, the rest text nodes (entities decoded here): the notes' words are never parsed as HTML
    var ENTITIES = { amp: "&", lt: "<", gt: ">", quot: "\"", apos: "'", nbsp: "\u00a0" };
    function decoded(text) {
      return text.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, function (whole, name) {
        var hex = /^#x/i.test(name), code = name[0] === "#" ? parseInt(name.slice(hex ? 2 : 1), hex ? 16 : 10) : 0;
        if (name[0] === "#") return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
        return ENTITIES.hasOwnProperty(name.toLowerCase()) ? ENTITIES[name.toLowerCase()] : whole;
      });
    }
    function marked(box, excerpt) {
      var mark = null;
      excerpt.split(/(<\/?mark>)/).forEach(function (part) {
        if (part === "<mark>" || part === "</mark>") { mark = part === "<mark>" ? document.createElement("mark") : null; return; }
        if (!part) return;
        var text = document.createTextNode(decoded(part));
        if (mark) { mark.appendChild(text); box.appendChild(mark); } else { box.appendChild(text); }
      });
    }
    function say(total) {
      var label = counted(total, "resultsLabel");
      status.textContent = label.replace(/\d+/, String(total));
    }
    function showMore(ticket) {
      var next = hits.slice(shown, shown + PAGE);
      shown += next.length;
      return Promise.all(next.map(function (r) { return r.data(); })).then(function (items) {
        if (ticket !== pending) return;
        items.forEach(function (item) {
          var li = document.createElement("li");
          var a = document.createElement("a");
          var target = item.sub_results && item.sub_results.length ? item.sub_results[0].url : item.url;
          a.href = target;
          a.textContent = (item.meta && item.meta.title) || item.url;
          var excerpt = document.createElement("p");
          excerpt.className = "search-excerpt";
          marked(excerpt, (item.sub_results && item.sub_results.length ? item.sub_results[0].excerpt : item.excerpt) || "");
          li.appendChild(a);
          li.appendChild(excerpt);
          results.appendChild(li);
        });
        var left = hits.length - shown;
        more.hidden = left <= 0;
        more.textContent = more.dataset.label.replace("{n}", String(Math.min(left, PAGE)));
      });
    }
    function run() {
      var term = input.value.trim(), ticket = ++pending;
      if (!pagefind) return;
      if (!term && !Object.keys(chosen()).length) {
        results.textContent = ""; status.textContent = ""; more.hidden = true; hits = []; return;
      }
      pagefind.search(term || null, { filters: chosen() }).then(function (search) {
        if (ticket !== pending) return;
        hits = search.results;
        shown = 0;
        results.textContent = "";
        say(hits.length);  // the real count, not the page's
        return showMore(ticket);
      });
    }
    more.addEventListener("click", function () {
      var first = shown;
      showMore(pending).then(function () {  // the first new hit takes the focus: the list goes on from there
        var link = results.querySelectorAll("li a")[first];
        if (link) link.focus();
      });
    });
    // resolved against the page: a module specifier alone would resolve against this script
    var siteRoot = new URL(root, document.baseURI);
    import(new URL("pagefind/pagefind.js", siteRoot).href).then(function (module) {
      pagefind = module;
      // Pagefind writes root-absolute URLs ("/notes/…"): under a sub-path they need the site's own
      return Promise.resolve(pagefind.options({ baseUrl: siteRoot.pathname })).then(function () {
        return pagefind.filters();
      });
    }).then(function (filters) {
      var known = facets.map(function (facet) { return facet[0]; });
      var order = known.filter(function (key) { return key in filters; }).concat(
        Object.keys(filters).filter(function (key) { return known.indexOf(key) < 0; }).sort());
      order.forEach(function (key) {
        var facet = facets[known.indexOf(key)];
        var label = document.createElement("label");
        label.textContent = (facet ? facet[1] : key) + " ";
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

  // A saved answer's citation lands on the element it names with the note's own words in
  // ?quote=: they are highlighted where they stand, from that element on (a quote may span
  // several). Text is compared character for character, white space aside; nothing of the
  // address is ever read as HTML.
  function landQuote() {
    var wanted = new URLSearchParams(window.location.search).get("quote");
    var start = document.getElementById(decodeURIComponent(window.location.hash.slice(1)));
    var body = document.querySelector(".note-body");
    if (!wanted || !start || !body || !body.contains(start)) return;
    var needle = wanted.replace(/\s+/g, "");
    if (!needle) return;
    var walker = document.createTreeWalker(body, NodeFilter.SHOW_TEXT);
    var text = "", places = [], node, started = false, limit = 0;
    while ((node = walker.nextNode())) {
      if (!started) {
        if (!start.contains(node)) continue;
        started = true;
        limit = (start.textContent || "").length + needle.length;  // the match starts in the element
      }
      for (var i = 0; i < node.nodeValue.length; i++) {
        if (!/\s/.test(node.nodeValue[i])) { text += node.nodeValue[i]; places.push([node, i]); }
      }
      if (text.length > limit) break;
    }
    var at = text.indexOf(needle);
    if (at < 0) return;
    var spans = [];  // per text node: [node, first offset, last offset + 1]
    for (var k = at; k < at + needle.length; k++) {
      var place = places[k], last = spans[spans.length - 1];
      if (last && last[0] === place[0]) last[2] = place[1] + 1;
      else spans.push([place[0], place[1], place[1] + 1]);
    }
    var first = null;
    spans.forEach(function (span) {
      var range = document.createRange();
      range.setStart(span[0], span[1]);
      range.setEnd(span[0], span[2]);
      var mark = document.createElement("mark");
      mark.className = "quoted current";
      range.surroundContents(mark);
      first = first || mark;
    });
    if (first) first.scrollIntoView({ block: "center" });
  }

  // A graph: zoom (buttons, wheel, the + and - keys), pan (drag), filters by kind and
  // notebook, a find box, a node's neighbours lit (and named) on hover and focus. Without script the SVG is whole
  // and each node a link; Tab reaches every node and Enter follows it, script or not.
  function setUpGraphs() {
    document.querySelectorAll("[data-graph]").forEach(function (figure) {
      var svg = figure.querySelector("svg.graph-svg");
      if (!svg) return;
      var base = svg.viewBox.baseVal, whole = [base.x, base.y, base.width, base.height], box = whole.slice();
      function apply() { svg.setAttribute("viewBox", box.map(function (v) { return Math.round(v * 10) / 10; }).join(" ")); }
      function zoom(factor, cx, cy) {
        if (cx === undefined) { cx = box[0] + box[2] / 2; cy = box[1] + box[3] / 2; }
        var width = Math.min(whole[2] * 2, Math.max(whole[2] / 20, box[2] * factor)), scale = width / box[2];
        box = [cx - (cx - box[0]) * scale, cy - (cy - box[1]) * scale, width, box[3] * scale];
        apply();
      }
      var nodes = svg.querySelectorAll("a.node"), edges = svg.querySelectorAll("line.edge");
      function light(node) {
        var near = (node.dataset.n || "").split(" ").concat([node.dataset.i]);
        var named = near.length <= 25;  // the neighbours' labels shown too, unless they are a crowd (a notebook's)
        svg.classList.add("highlighting");
        nodes.forEach(function (n) {
          var on = near.indexOf(n.dataset.i) >= 0;
          n.classList.toggle("on", on);
          n.classList.toggle("named", on && named);
        });
        edges.forEach(function (l) { l.classList.toggle("on", l.dataset.s === node.dataset.i || l.dataset.t === node.dataset.i); });
      }
      function unlight() {
        svg.classList.remove("highlighting");
        nodes.forEach(function (n) { n.classList.remove("named"); });
      }
      nodes.forEach(function (n) {
        n.addEventListener("mouseenter", function () { light(n); });
        n.addEventListener("focus", function () { light(n); });
        n.addEventListener("mouseleave", unlight);
        n.addEventListener("blur", unlight);
      });
      var controls = figure.querySelector(".graph-controls");
      if (!controls) return;  // a local graph: small, drawn whole, the page scrolls over it
      controls.hidden = false;
      controls.addEventListener("click", function (event) {
        var button = event.target.closest("button[data-zoom]");
        if (!button) return;
        if (button.dataset.zoom === "reset") { box = whole.slice(); apply(); } else zoom(button.dataset.zoom === "in" ? 0.8 : 1.25);
      });
      controls.addEventListener("change", function () {
        var hidden = {};
        nodes.forEach(function (n) {
          var kind = figure.querySelector('[data-filter-kind="' + n.dataset.kind + '"]');
          var book = figure.querySelector('[data-filter-notebook="' + n.dataset.nb + '"]');
          var off = (kind && !kind.checked) || (book && !book.checked);
          n.classList.toggle("off", !!off);
          if (off) hidden[n.dataset.i] = true;
        });
        edges.forEach(function (l) { l.classList.toggle("off", !!(hidden[l.dataset.s] || hidden[l.dataset.t])); });
        runFind();
      });
      // the find box: each node whose title or label holds the words typed (case and accents
      // aside) lit, the others dimmed, their count said; Enter moves the focus from one to
      // the next, the view centred on it; Escape clears
      var find = controls.querySelector("[data-find]"), found = controls.querySelector(".graph-found");
      var matches = [], at = -1, texts = [];
      function fold(text) { return text.normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase(); }
      nodes.forEach(function (n) {
        var title = n.querySelector("title"), label = n.querySelector("text");
        texts.push(fold((title ? title.textContent : "") + " " + (label ? label.textContent : "")));
      });
      function runFind() {
        if (!find) return;
        var query = fold(find.value.trim());
        matches = [];
        at = -1;
        nodes.forEach(function (n, i) {
          var hit = query !== "" && !n.classList.contains("off") && texts[i].indexOf(query) >= 0;
          n.classList.toggle("found", hit);
          if (hit) matches.push(n);
        });
        svg.classList.toggle("finding", query !== "");
        found.textContent = query ? found.dataset.text.replace("#", String(matches.length)) : "";
      }
      if (find) {
        find.addEventListener("input", runFind);
        find.addEventListener("keydown", function (event) {
          if (event.key === "Escape") { find.value = ""; runFind(); return; }
          if (event.key !== "Enter") return;
          event.preventDefault();
          if (!matches.length) return;
          at = (at + 1) % matches.length;
          var node = matches[at], b = node.getBBox(), width = Math.min(box[2], whole[2] / 3);
          var height = box[3] * width / box[2];
          box = [b.x + b.width / 2 - width / 2, b.y + b.height / 2 - height / 2, width, height];
          apply();
          node.focus();
        });
      }
      svg.addEventListener("wheel", function (event) {
        event.preventDefault();
        var r = svg.getBoundingClientRect();
        zoom(event.deltaY < 0 ? 0.85 : 1.18, box[0] + (event.clientX - r.left) / r.width * box[2],
             box[1] + (event.clientY - r.top) / r.height * box[3]);
      }, { passive: false });
      var drag = null;
      svg.addEventListener("pointerdown", function (event) {
        if (event.target.closest("a")) return;
        drag = [event.clientX, event.clientY, box[0], box[1]];
        svg.setPointerCapture(event.pointerId);
      });
      svg.addEventListener("pointermove", function (event) {
        if (!drag) return;
        var r = svg.getBoundingClientRect();
        box[0] = drag[2] - (event.clientX - drag[0]) / r.width * box[2];
        box[1] = drag[3] - (event.clientY - drag[1]) / r.height * box[3];
        apply();
      });
      svg.addEventListener("pointerup", function () { drag = null; });
      figure.addEventListener("keydown", function (event) {
        if (event.target.matches("input")) return;  // typed into the find box
        if (event.key === "+" || event.key === "=") zoom(0.8);
        else if (event.key === "-") zoom(1.25);
      });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    setUpSearchShortcut();
    setUpSearch();
    setUpCitationPreviews();
    placeContestLabels();
    setUpDropDowns();
    setUpTabs();
    setUpThemeToggle();
    applyNotebookContext();
    setUpFacets();
    setUpEvidence();
    setUpTurns();
    landQuote();
    setUpGraphs();
  });
})();
