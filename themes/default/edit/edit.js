// carnet serve --edit: the authoring layer. Served only in that mode (never published:
// `carnet build` copies the theme's static/ folder, not this one), linked into pages by the
// server for the browser that opened the address the terminal printed.
// Every write names the note by its slug and records by their ids, carries the digest of the
// note's files this page was built from, and sends the run's token in a header; the server
// resolves the selection on the note's own text, writes through the write seam, and the page
// reloads once the watcher has rebuilt it (the live-reload event).
(function () {
  "use strict";
  var meta = document.querySelector('meta[name="carnet-edit"]');
  if (!meta) { return; }
  var state = JSON.parse(meta.getAttribute("content"));
  var strings = state.strings || {};
  var STANCES = ["neutral", "agree", "disagree", "nuance", "question"];
  var AUTHOR_KEY = "carnet-edit-author";

  function t(key, values) {
    var text = strings[key] || key;
    Object.keys(values || {}).forEach(function (name) { text = text.split("{" + name + "}").join(values[name]); });
    return text;
  }

  function element(tag, attributes, children) {
    var node = document.createElement(tag);
    Object.keys(attributes || {}).forEach(function (name) { node.setAttribute(name, attributes[name]); });
    (children || []).forEach(function (child) {
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    });
    return node;
  }

  var counter = 0;
  function field(label, control) {
    counter += 1;
    control.id = "carnet-edit-field-" + counter;
    return element("p", {"class": "carnet-edit-field"}, [element("label", {"for": control.id}, [label]), control]);
  }

  function stanceSelect() {
    return element("select", {name: "stance"}, STANCES.map(function (stance) {
      return element("option", {value: stance}, [t("edit_stance_" + stance)]);
    }));
  }

  // --- the toolbar: status, Extract, Undo ---------------------------------------------------
  var status = element("p", {"class": "carnet-edit-status", role: "status", "aria-live": "polite"}, []);
  var extractButton = element("button", {type: "button", "class": "carnet-edit-extract", disabled: ""},
                              [t("edit_extract")]);
  var undoButton = element("button", {type: "button", "class": "carnet-edit-undo"}, [t("edit_undo")]);
  var reloadButton = element("button", {type: "button", "class": "carnet-edit-reload", hidden: ""},
                             [t("edit_reload")]);
  var toolbar = element("section", {"class": "carnet-edit-toolbar", "aria-label": t("edit_toolbar")},
                        [element("p", {"class": "carnet-edit-title"}, [t("edit_toolbar")]), status, extractButton, undoButton, reloadButton]);
  var main = document.querySelector("main") || document.body;
  main.insertBefore(toolbar, main.firstChild);
  reloadButton.addEventListener("click", function () { window.location.reload(); });

  function say(text, problem) {
    status.textContent = text;
    status.classList.toggle("carnet-edit-problem", Boolean(problem));
    status.setAttribute("role", problem ? "alert" : "status");
  }

  function author() {
    return state.author || window.sessionStorage.getItem(AUTHOR_KEY) || "";
  }

  function authorField() {
    if (state.author) { return null; }
    var input = element("input", {type: "text", name: "author", autocomplete: "name", required: ""});
    input.value = author();
    return field(t("edit_author"), input);
  }

  function send(operation, body, button) {
    body.note = state.note;
    body.digest = state.digest;
    if (!state.author) {
      body.author = author();
    }
    if (button) { button.disabled = true; }
    return window.fetch(state.api + operation, {
      method: "POST", credentials: "same-origin",
      headers: {"Content-Type": "application/json", "X-Carnet-Token": state.token},
      body: JSON.stringify(body)
    }).then(function (response) {
      return response.json().then(function (answer) {
        if (answer.ok) {
          say(t("edit_saved", {message: answer.message}), false);
          // the reload keeps the address: the theme's script then opens the debate on what was written
          var landing = {extract: "#ext-", comment: "#com-", withdraw: "#com-"}[operation];
          if (landing && answer.record) {
            window.history.replaceState(null, "", landing + answer.record);
          }
          document.body.setAttribute("data-carnet-edit-written", answer.record || operation);
        } else {
          say(t("edit_refused", {message: answer.error}), true);
          reloadButton.hidden = answer.code !== "stale";
          if (button) { button.disabled = false; }
        }
        return answer;
      });
    }, function (error) {
      say(t("edit_refused", {message: String(error)}), true);
      if (button) { button.disabled = false; }
    });
  }

  function remember(form) {
    var given = form.querySelector('input[name="author"]');
    if (given) { window.sessionStorage.setItem(AUTHOR_KEY, given.value.trim()); }
  }

  undoButton.addEventListener("click", function () { send("undo", {}, undoButton); });

  // --- a selection in the note's text → a new extraction -------------------------------------
  var body = document.querySelector(".note-body");
  var selected = null;

  function blockOf(node) {
    var at = node.nodeType === Node.ELEMENT_NODE ? node : node.parentElement;
    while (at && at !== body) {
      if (at.id && at.id.indexOf("e-") === 0 && at.classList.contains("element")) { return at; }
      at = at.parentElement;
    }
    return null;
  }

  // what the page adds inside a block and is no text of the note: a transcript's play buttons, an
  // article's citation numbers and contest links (the theme marks them data-pagefind-ignore)
  var ADDED = "button, [data-pagefind-ignore]";

  function textBetween(block, container, offset, before) {
    var range = document.createRange();
    range.selectNodeContents(block);
    if (before) { range.setEnd(container, offset); } else { range.setStart(container, offset); }
    var text = "";
    var walker = document.createTreeWalker(block, NodeFilter.SHOW_TEXT);
    for (var node = walker.nextNode(); node; node = walker.nextNode()) {
      var added = node.parentElement && node.parentElement.closest(ADDED);
      if (!range.intersectsNode(node) || (added && block.contains(added))) { continue; }
      var start = node === range.startContainer ? range.startOffset : 0;
      var end = node === range.endContainer ? range.endOffset : node.data.length;
      text += node.data.slice(start, end);
    }
    return text;
  }

  function capture() {
    var selection = window.getSelection();
    if (!body || !selection || selection.rangeCount === 0 || selection.isCollapsed) { return; }
    var range = selection.getRangeAt(0);
    var first = blockOf(range.startContainer), last = blockOf(range.endContainer);
    if (!first || !last || !body.contains(first) || !body.contains(last)) { return; }
    selected = {
      start: {element: first.id, context: textBetween(first, range.startContainer, range.startOffset, true)},
      end: {element: last.id, context: textBetween(last, range.endContainer, range.endOffset, false)},
      text: range.toString()
    };
    extractButton.disabled = false;
    var shown = selected.text.replace(/\s+/g, " ").trim();
    say(t("edit_selected", {text: shown.length > 120 ? shown.slice(0, 117) + "…" : shown}), false);
  }

  if (body && state.note) {
    document.addEventListener("selectionchange", capture);
    say(t("edit_select_first"), false);
  } else {
    extractButton.hidden = true;
    say(t("edit_no_note"), false);
  }

  function existingKinds() {
    var kinds = {};
    document.querySelectorAll(".extraction-entry .badge.kind").forEach(function (badge) {
      kinds[badge.textContent.trim()] = true;
    });
    return Object.keys(kinds).sort();
  }

  // the note's categories in each of its notebooks (they belong to the membership, not to the extraction):
  // a fieldset per notebook and axis, its categories as checkboxes, checked as the note has them now
  function categoryFields() {
    var sets = [];
    (state.notebooks || []).forEach(function (notebook) {
      notebook.axes.forEach(function (axis) {
        var set = element("fieldset", {"class": "carnet-edit-categories", "data-notebook": notebook.slug,
                                       "data-axis": axis.key},
                          [element("legend", {}, [t("edit_categories_axis", {notebook: notebook.title,
                                                                            axis: axis.title})])]);
        axis.categories.forEach(function (name) {
          counter += 1;
          var box = element("input", {type: "checkbox", name: "category", value: name,
                                      id: "carnet-edit-field-" + counter});
          box.checked = axis.checked.indexOf(name) >= 0;
          set.appendChild(element("span", {"class": "carnet-edit-choice"},
                                  [box, " ", element("label", {"for": box.id}, [name]), " "]));
        });
        sets.push(set);
      });
    });
    return sets;
  }

  function checkedCategories(form) {
    var chosen = {};
    form.querySelectorAll("fieldset.carnet-edit-categories").forEach(function (set) {
      var notebook = set.getAttribute("data-notebook");
      chosen[notebook] = chosen[notebook] || {};
      chosen[notebook][set.getAttribute("data-axis")] = Array.prototype.map.call(
        set.querySelectorAll('input[name="category"]:checked'), function (box) { return box.value; });
    });
    return chosen;
  }

  extractButton.addEventListener("click", function () {
    if (!selected) { say(t("edit_select_first"), true); return; }
    var chosen = selected;
    var kinds = element("datalist", {id: "carnet-edit-kinds"}, existingKinds().map(function (kind) {
      return element("option", {value: kind}, []);
    }));
    var kind = element("input", {type: "text", name: "kind", list: "carnet-edit-kinds", value: "passage"});
    var comment = element("textarea", {name: "comment", rows: "3"}, []);
    var stance = stanceSelect();
    var save = element("button", {type: "submit"}, [t("edit_save")]);
    var cancel = element("button", {type: "button"}, [t("edit_cancel")]);
    var heading = element("p", {id: "carnet-edit-extraction-title", "class": "carnet-edit-title"},
                          [t("edit_extraction_form")]);
    var parts = [heading, element("blockquote", {}, [chosen.text]), field(t("edit_kind"), kind), kinds];
    var categories = categoryFields();
    if (categories.length) {
      parts.push(element("p", {"class": "carnet-edit-hint"}, [t("edit_categories_hint")]));
      parts = parts.concat(categories);
    }
    parts.push(field(t("edit_first_comment"), comment), field(t("edit_stance"), stance));
    var who = authorField();
    if (who) { parts.push(who); }
    parts.push(element("p", {}, [save, " ", cancel]));
    var form = element("form", {"class": "carnet-edit-form", "aria-labelledby": "carnet-edit-extraction-title"}, parts);
    var old = document.querySelector(".carnet-edit-form");
    if (old) { old.remove(); }
    toolbar.appendChild(form);
    kind.focus();
    cancel.addEventListener("click", function () { form.remove(); extractButton.focus(); });
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      remember(form);
      var request = {start: chosen.start, end: chosen.end, kind: kind.value};
      if (categories.length) { request.categories = checkedCategories(form); }
      if (comment.value.trim()) { request.comment = {text: comment.value, stance: stance.value}; }
      send("extract", request, save);
    });
  });

  // --- on each extraction of the debate: comment or reply, withdraw, mask ----------------------
  function actions(summary, build) {
    var details = element("details", {"class": "carnet-edit-actions"}, [element("summary", {}, [summary])]);
    details.appendChild(build());
    return details;
  }

  document.querySelectorAll(".extraction-entry[id^='entry-']").forEach(function (entry) {
    var id = entry.id.slice("entry-".length);
    entry.appendChild(actions(t("edit_comment"), function () {
      var text = element("textarea", {name: "text", rows: "3", required: ""}, []);
      var stance = stanceSelect();
      var save = element("button", {type: "submit"}, [t("edit_save")]);
      var parts = [field(t("edit_comment_text"), text), field(t("edit_stance"), stance)];
      var who = authorField();
      if (who) { parts.push(who); }
      parts.push(element("p", {}, [save]));
      var form = element("form", {"class": "carnet-edit-comment"}, parts);
      form.addEventListener("submit", function (event) {
        event.preventDefault();
        remember(form);
        send("comment", {extraction: id, stance: stance.value, text: text.value}, save);
      });
      return form;
    }));
    var mask = element("button", {type: "button", "class": "carnet-edit-mask"}, [t("edit_mask")]);
    mask.addEventListener("click", function () { send("mask", {extraction: id}, mask); });
    entry.appendChild(element("p", {}, [mask]));
    entry.querySelectorAll(".comment[id^='com-']:not(.withdrawn)").forEach(function (said) {
      var comment = said.id.slice("com-".length);
      said.appendChild(actions(t("edit_withdraw"), function () {
        var reason = element("input", {type: "text", name: "reason", required: ""});
        var save = element("button", {type: "submit"}, [t("edit_withdraw")]);
        var parts = [field(t("edit_withdraw_reason"), reason)];
        var who = authorField();
        if (who) { parts.push(who); }
        parts.push(element("p", {}, [save]));
        var form = element("form", {"class": "carnet-edit-withdraw"}, parts);
        form.addEventListener("submit", function (event) {
          event.preventDefault();
          remember(form);
          send("withdraw", {comment: comment, reason: reason.value}, save);
        });
        return form;
      }));
    });
  });

  // --- from a citation's preview: a person's verdict on the (claim, source) pair, or a contestation --
  var VERDICTS = ["supported", "partial", "unsupported"];
  var preview = null;

  function claimAfter(citation) {
    var all = document.querySelectorAll(".note-body a.citation, .note-body .claim-end[id^='claim-']");
    var seen = false;
    for (var i = 0; i < all.length; i += 1) {
      if (all[i] === citation) { seen = true; } else if (seen && all[i].classList.contains("claim-end")) {
        return all[i].id;
      }
    }
    return "";
  }

  function sourceOf(citation) {
    var hash = (citation.getAttribute("href") || "").split("#")[1] || "";
    if (hash.indexOf("ext-") === 0) { return "ext:" + hash.slice(4); }
    if (hash.indexOf("com-") === 0) { return "com:" + hash.slice(4); }
    return "";
  }

  function verifyForm(citation) {
    var claim = claimAfter(citation), source = sourceOf(citation);
    if (!claim || !source) { return; }
    var old = document.querySelector(".carnet-edit-verify");
    if (old) { old.remove(); }
    var verdict = element("select", {name: "verdict"}, VERDICTS.map(function (name) {
      return element("option", {value: name}, [t("edit_verdict_" + name)]);
    }));
    var rationale = element("input", {type: "text", name: "rationale", required: ""});
    var judge = element("button", {type: "submit"}, [t("edit_record_verdict")]);
    var judged = element("form", {"class": "carnet-edit-verdict"},
                         [field(t("edit_verdict"), verdict), field(t("edit_rationale"), rationale),
                          element("p", {}, [judge])]);
    var reason = element("input", {type: "text", name: "reason", required: ""});
    var only = element("input", {type: "checkbox", name: "only"});
    only.id = "carnet-edit-only-source";
    var contest = element("button", {type: "submit"}, [t("edit_contest")]);
    var contested = element("form", {"class": "carnet-edit-contest"},
                            [field(t("edit_contest_reason"), reason),
                             element("p", {}, [only, " ", element("label", {"for": only.id}, [t("edit_contest_source_only")])]),
                             element("p", {}, [contest])]);
    var cancel = element("button", {type: "button"}, [t("edit_cancel")]);
    var title = element("p", {id: "carnet-edit-verify-title", "class": "carnet-edit-title"},
                        [t("edit_verify_form", {n: citation.textContent.trim()})]);
    var parts = [title, element("blockquote", {}, [citation.getAttribute("data-preview-quote") || ""]),
                 judged, contested];
    var who = authorField();
    if (who) { parts.push(who); }
    parts.push(element("p", {}, [cancel]));
    var panel = element("section", {"class": "carnet-edit-verify", "aria-labelledby": "carnet-edit-verify-title"}, parts);
    toolbar.appendChild(panel);
    verdict.focus();
    cancel.addEventListener("click", function () { panel.remove(); citation.focus(); });
    judged.addEventListener("submit", function (event) {
      event.preventDefault();
      remember(panel);
      send("verdict", {claim: claim, source: source, verdict: verdict.value, rationale: rationale.value}, judge);
    });
    contested.addEventListener("submit", function (event) {
      event.preventDefault();
      remember(panel);
      var request = {claim: claim, reason: reason.value};
      if (only.checked) { request.source = source; }
      send("contest", request, contest);
    });
  }

  function addToPreview() {
    if (!preview || preview.hidden) { return; }
    var actionsLine = preview.querySelector(".actions");
    var sup = preview.previousElementSibling;
    var citation = sup && sup.querySelector("a.citation");
    if (!actionsLine || !citation || actionsLine.querySelector(".carnet-edit-verify-link")) { return; }
    var open = element("a", {href: "#carnet-edit-verify", "class": "carnet-edit-verify-link", tabindex: "-1"},
                       [t("edit_verify")]);
    open.addEventListener("click", function (event) { event.preventDefault(); verifyForm(citation); });
    if (actionsLine.childNodes.length) { actionsLine.appendChild(document.createTextNode(" · ")); }
    actionsLine.appendChild(open);
  }

  // --- an article's pending proposals: each operation accepted or rejected, applied by carnet apply --
  function proposalPanel(proposals) {
    var pending = proposals.filter(function (proposal) { return proposal.operations.length; });
    if (!pending.length) { return; }
    var title = element("p", {id: "carnet-edit-proposals-title", "class": "carnet-edit-title"}, [t("edit_proposals")]);
    var panel = element("section", {"class": "carnet-edit-proposals", "aria-labelledby": title.id}, [title]);
    pending.forEach(function (proposal) {
      var form = element("form", {"class": "carnet-edit-proposal", "data-proposal": proposal.id},
                         [element("p", {"class": "carnet-edit-title"}, [t("edit_proposal", {id: proposal.id})])]);
      if (proposal.stale) { form.appendChild(element("p", {"class": "carnet-edit-problem"}, [t("edit_stale_proposal")])); }
      proposal.operations.forEach(function (operation) {
        var legend = element("legend", {}, [t("edit_operation", {n: String(operation.number), op: operation.op,
                                                                   heading: operation.heading})]);
        var set = element("fieldset", {"class": "carnet-edit-operation"}, [legend]);
        var diff = element("pre", {"class": "carnet-edit-diff"}, []);
        (operation.diff.length ? operation.diff : operation.content.split("\n").map(function (line) {
          return "  " + line;
        })).forEach(function (line) {
          var kind = line.charAt(0) === "+" ? "add" : line.charAt(0) === "-" ? "del" : "same";
          diff.appendChild(element("span", {"class": "carnet-edit-" + kind}, [line + "\n"]));
        });
        set.appendChild(diff);
        if (!operation.applicable) {
          set.appendChild(element("p", {}, [t("edit_not_applicable", {reason: operation.reason})]));
        }
        ["accept", "reject"].forEach(function (choice) {
          var radio = element("input", {type: "radio", name: "op-" + operation.number, value: choice});
          if (choice === "reject") { radio.checked = true; }
          if (choice === "accept" && !operation.applicable) { radio.disabled = true; }
          radio.id = "carnet-edit-" + proposal.id + "-" + operation.number + "-" + choice;
          set.appendChild(element("span", {"class": "carnet-edit-choice"},
                                  [radio, " ", element("label", {"for": radio.id}, [t("edit_" + choice)]), " "]));
        });
        form.appendChild(set);
      });
      var apply = element("button", {type: "submit"}, [t("edit_apply")]);
      form.appendChild(element("p", {}, [apply]));
      form.addEventListener("submit", function (event) {
        event.preventDefault();
        var accepted = [];
        proposal.operations.forEach(function (operation) {
          var chosen = form.querySelector('input[name="op-' + operation.number + '"]:checked');
          if (chosen && chosen.value === "accept") { accepted.push(operation.number); }
        });
        send("apply", {proposal: proposal.id, accept: accepted}, apply);
      });
      panel.appendChild(form);
    });
    toolbar.appendChild(panel);
  }

  // --- a note's pending extraction proposals (carnet analyse): highlighted in place as proposed ------
  var SPACE = /[\s\u00a0\u202f\u2007\u200b]/;

  // the block's text as quotes are normalised (runs of white space one space, none at the ends),
  // each character with the text node and offset it comes from: the server's offsets find it again
  function normalisedText(block) {
    var chars = [], pending = null;
    var walker = document.createTreeWalker(block, NodeFilter.SHOW_TEXT);
    for (var node = walker.nextNode(); node; node = walker.nextNode()) {
      var added = node.parentElement && node.parentElement.closest(ADDED);
      if (added && block.contains(added)) { continue; }
      for (var i = 0; i < node.data.length; i += 1) {
        if (SPACE.test(node.data.charAt(i))) {
          if (chars.length && !pending) { pending = {node: node, offset: i}; }
        } else {
          if (pending) { chars.push(pending); pending = null; }
          chars.push({node: node, offset: i});
        }
      }
    }
    return chars;
  }

  function highlight(place, label) {
    var block = document.getElementById(place.element);
    if (!block) { return; }
    var chars = normalisedText(block).slice(place.start, place.end);
    var pieces = [];  // one per text node: [node, start, end)
    chars.forEach(function (at) {
      var last = pieces[pieces.length - 1];
      if (last && last.node === at.node && last.end === at.offset) { last.end += 1; } else {
        pieces.push({node: at.node, start: at.offset, end: at.offset + 1});
      }
    });
    pieces.reverse().forEach(function (piece) {  // from the end: wrapping splits the nodes before it
      var range = document.createRange();
      range.setStart(piece.node, piece.start);
      range.setEnd(piece.node, piece.end);
      range.surroundContents(element("mark", {"class": "carnet-edit-proposed", title: label}, []));
    });
  }

  function passagePanel(proposals) {
    var pending = proposals.filter(function (proposal) { return proposal.passages.length; });
    if (!pending.length) { return; }
    var title = element("p", {id: "carnet-edit-passages-title", "class": "carnet-edit-title"},
                        [t("edit_proposed_passages")]);
    var panel = element("section", {"class": "carnet-edit-passages", "aria-labelledby": title.id}, [title]);
    pending.forEach(function (proposal) {
      var form = element("form", {"class": "carnet-edit-proposal", "data-proposal": proposal.id},
                         [element("p", {"class": "carnet-edit-title"}, [t("edit_proposal", {id: proposal.id})])]);
      proposal.passages.forEach(function (passage) {
        var label = t("edit_proposed_label", {n: String(passage.number)});
        passage.places.forEach(function (place) { highlight(place, label); });
        var set = element("fieldset", {"class": "carnet-edit-operation"},
                          [element("legend", {}, [t("edit_passage", {n: String(passage.number), kind: passage.kind})]),
                           element("blockquote", {}, [passage.quote])]);
        var categories = Object.keys(passage.categories).map(function (axis) {
          return axis + " : " + passage.categories[axis].join(", ");
        });
        if (categories.length) { set.appendChild(element("p", {}, [categories.join(" · ")])); }
        if (!passage.places.length) {
          set.appendChild(element("p", {}, [t("edit_not_applicable", {reason: passage.reason})]));
        }
        ["accept", "reject"].forEach(function (choice) {
          var radio = element("input", {type: "radio", name: "passage-" + passage.number, value: choice});
          if (choice === "reject") { radio.checked = true; }
          if (choice === "accept" && !passage.places.length) { radio.disabled = true; }
          radio.id = "carnet-edit-" + proposal.id + "-p" + passage.number + "-" + choice;
          set.appendChild(element("span", {"class": "carnet-edit-choice"},
                                  [radio, " ", element("label", {"for": radio.id}, [t("edit_" + choice)]), " "]));
        });
        form.appendChild(set);
      });
      var apply = element("button", {type: "submit"}, [t("edit_apply_passages")]);
      form.appendChild(element("p", {}, [apply]));
      form.addEventListener("submit", function (event) {
        event.preventDefault();
        var accepted = [];
        proposal.passages.forEach(function (passage) {
          var chosen = form.querySelector('input[name="passage-' + passage.number + '"]:checked');
          if (chosen && chosen.value === "accept") { accepted.push(passage.number); }
        });
        send("apply", {proposal: proposal.id, accept: accepted}, apply);
      });
      panel.appendChild(form);
    });
    toolbar.appendChild(panel);
  }

  if (state.note) {
    window.fetch(state.api + "proposals?note=" + encodeURIComponent(state.note), {credentials: "same-origin"})
      .then(function (response) { return response.json(); })
      .then(function (answer) {
        if (!answer.ok) { return; }
        proposalPanel(answer.proposals);
        passagePanel(answer.extractions);
        document.body.setAttribute("data-carnet-edit-proposals", "shown");
      });
  }

  // --- a draft synthesis: adopted by the author, as carnet adopt --by does ----------------------
  if (state.note && state.adoptable) {
    var adopt = element("button", {type: "submit"}, [t("edit_adopt")]);
    var adoptParts = [element("p", {}, [t("edit_adopt_hint")])];
    var adoptWho = authorField();
    if (adoptWho) { adoptParts.push(adoptWho); }
    adoptParts.push(element("p", {}, [adopt]));
    var adoptForm = element("form", {"class": "carnet-edit-adopt", "aria-label": t("edit_adopt")}, adoptParts);
    adoptForm.addEventListener("submit", function (event) {
      event.preventDefault();
      remember(adoptForm);
      send("adopt", {}, adopt);
    });
    toolbar.appendChild(adoptForm);
  }

  if (document.querySelector(".note-body a.citation") && state.note) {
    // the theme's script makes the preview on the first hover or focus, and remakes its content each time
    new MutationObserver(function () {
      preview = preview || document.getElementById("citation-preview");
      addToPreview();
    }).observe(document.body, {childList: true, subtree: true, attributes: true, attributeFilter: ["hidden"]});
  }
})();
