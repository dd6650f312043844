// sessions-admin: small behaviours that need no inline script (CSP forbids them).
(function () {
  "use strict";

  // Copy buttons: <button class="copy" ...> with what to copy in one attribute:
  //   data-copy="text"      the text itself (ids);
  //   data-copy-message     the text of the message it is in (its content);
  //   data-copy-value       the value of the args/result block it is in;
  //   data-copy-link        the full address of the message's permalink;
  //   data-copy-url="/raw"  a value the page holds only the start of, fetched whole.
  document.addEventListener("click", function (event) {
    var button = event.target.closest("button.copy");
    if (!button) return;
    var done = function () {
      button.classList.add("copied");
      var label = button.getAttribute("data-label") || button.textContent;
      button.setAttribute("data-label", label);
      button.textContent = "copied";
      setTimeout(function () { button.textContent = label; button.classList.remove("copied"); }, 1200);
    };
    var write = function (text) {
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(done, function () { fallbackCopy(text); done(); });
      } else {
        fallbackCopy(text);
        done();
      }
    };
    if (button.hasAttribute("data-copy")) {
      write(button.getAttribute("data-copy"));
    } else if (button.hasAttribute("data-copy-message")) {
      var message = button.closest("li.msg");
      var content = message && message.querySelector(".msg-body pre.content");
      if (content) write(shownText(content));
    } else if (button.hasAttribute("data-copy-value")) {
      var block = button.closest("details");
      var value = block && block.querySelector("pre");
      if (value) write(shownText(value));
    } else if (button.hasAttribute("data-copy-link")) {
      var head = button.closest(".msg-head");
      var link = head && head.querySelector("a.permalink");
      if (link) write(link.href);
    } else if (button.hasAttribute("data-copy-url")) {
      fetch(button.getAttribute("data-copy-url"), { credentials: "same-origin" })
        .then(function (response) { return response.ok ? response.text() : Promise.reject(); })
        .then(write, function () { button.textContent = "copy failed"; });
    }
  });

  // What a reader sees: a masked value copies as its tag ("[email · 3f9a]"), without
  // the sentence a screen reader hears.
  function shownText(element) {
    if (!element.querySelector(".masked")) return element.textContent;
    var copy = element.cloneNode(true);
    copy.querySelectorAll(".masked .visually-hidden").forEach(function (n) { n.remove(); });
    return copy.textContent;
  }

  function fallbackCopy(text) {
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    try { document.execCommand("copy"); } catch (e) { /* nothing more to try */ }
    document.body.removeChild(area);
  }

  // The keyboard ("/", j/k, Escape, ...) lives in keys.js.

  // Dialogs swapped in by htmx open as modals: <dialog data-open-modal>.
  function openDialogs(root) {
    (root || document).querySelectorAll("dialog[data-open-modal]:not([open])").forEach(function (d) {
      d.showModal();
      var cancel = d.querySelector("[data-autofocus]");
      if (cancel) cancel.focus();
    });
  }
  // The parent too: a dialog swapped in "afterend" is the target's sibling, not its child.
  document.addEventListener("htmx:afterSettle", function (event) {
    openDialogs(event.target.parentNode || event.target);
  });
  // A swapped-in dialog is done once closed (Escape, Cancel): remove it so it never reopens.
  document.addEventListener("close", function (event) {
    var d = event.target;
    if (d.matches && d.matches("dialog[data-open-modal]")) { d.remove(); }
  }, true);
  document.addEventListener("DOMContentLoaded", function () { openDialogs(document); });
  document.addEventListener("click", function (event) {
    var closer = event.target.closest("[data-close-dialog]");
    if (closer) {
      var d = closer.closest("dialog");
      if (d) { event.preventDefault(); d.close(); d.remove(); }
    }
  });
})();

// --- Transcript: a bare "#message-<id>" link to a message that is not on
// this page (deep in a long session) reloads the page around that message.
(function () {
  "use strict";
  function followMessageAnchor() {
    var match = /^#message-(\d+)$/.exec(window.location.hash);
    if (!match || !document.getElementById("transcript")) return;
    if (document.getElementById("message-" + match[1])) return;
    var params = new URLSearchParams(window.location.search);
    if (params.get("at") === match[1]) return;  // already asked: the message is gone
    ["at", "after", "before", "end"].forEach(function (name) { params.delete(name); });
    params.set("at", match[1]);
    window.location.replace(window.location.pathname + "?" + params.toString() + window.location.hash);
  }
  document.addEventListener("DOMContentLoaded", followMessageAnchor);
  window.addEventListener("hashchange", followMessageAnchor);
})();

// --- Filter forms: leave empty fields out of the request, so the URL that
// htmx pushes (and staff paste into tickets) holds only the filters in use.
document.addEventListener("htmx:configRequest", function (event) {
  "use strict";
  var form = event.detail.elt && event.detail.elt.closest && event.detail.elt.closest("form[data-drop-empty]");
  if (!form || !event.detail.formData) return;
  var empty = [];
  event.detail.formData.forEach(function (value, name) {
    if (typeof value === "string" && value.trim() === "") empty.push(name);
  });
  empty.forEach(function (name) { event.detail.formData.delete(name); });
});

// Notes: "note" beside a message (or n on the focused message, on any session page)
// opens the page's one note form right under that message, focused, instead of
// reloading the page at a form above the transcript. Without JavaScript the link
// still reloads the page with the form set to that message.
(function () {
  "use strict";

  function typing(target) {
    var tag = (target.tagName || "").toLowerCase();
    return tag === "input" || tag === "textarea" || tag === "select" || target.isContentEditable;
  }

  function openNoteForm(message) {
    var form = document.getElementById("note-form");
    if (!form) return false;
    var field = form.querySelector("input[name=message]");
    var label = form.querySelector("label[for=note-text]");
    if (message && field) {
      var id = message.id.replace("message-", "");
      field.value = id;
      if (label) label.textContent = "New note on message #" + id;
      message.appendChild(form);
      form.classList.add("note-form-inline");
    }
    var text = form.querySelector("textarea[name=text]");
    text.focus();
    form.scrollIntoView({ block: "nearest" });
    return true;
  }
  window.openNoteForm = openNoteForm;

  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("a.note-link[data-note-message]");
    if (!link || event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
    var message = link.closest("li[id^='message-']");
    if (message && openNoteForm(message)) event.preventDefault();
  });

  document.addEventListener("keydown", function (event) {
    if (event.key !== "n" || event.defaultPrevented || typing(event.target)) return;
    if (event.ctrlKey || event.metaKey || event.altKey || document.querySelector("dialog[open]")) return;
    if (document.getElementById("review-bar") || !document.getElementById("note-form")) return;
    var marked = document.querySelector("#messages > li.kb-current");
    var active = document.activeElement;
    var message = marked || (active && active.closest ? active.closest("#messages > li[id^='message-']") : null);
    if (openNoteForm(message)) event.preventDefault();
  });
})();

// The live pill ("3 new messages ↓") goes once followed.
document.addEventListener("click", function (event) {
  var pill = event.target.closest && event.target.closest("#live-pill");
  if (pill) pill.hidden = true;
});

// Filter forms (the list, search, a tool's calls): a refused value is shown beside
// its field, not only in the banner. The server's 400 banner names the field
// (data-field); a time range that ends before it starts is stopped in the browser.
(function () {
  "use strict";

  function clearFieldErrors(form) {
    form.querySelectorAll(".field-error").forEach(function (note) { note.remove(); });
    form.querySelectorAll("[aria-invalid=true]").forEach(function (field) {
      field.removeAttribute("aria-invalid");
      field.removeAttribute("aria-describedby");
    });
  }

  function showFieldError(name, message) {
    var field = document.querySelector("form.filters [name='" + CSS.escape(name) + "']");
    if (!field || field.type === "hidden") return false;
    var form = field.form;
    clearFieldErrors(form);
    var note = document.createElement("span");
    note.className = "field-error";
    note.id = "field-error-" + name.replace(/[^A-Za-z0-9_-]/g, "_");
    note.textContent = message;
    var label = field.closest("label") || field;
    label.insertAdjacentElement("afterend", note);
    field.setAttribute("aria-invalid", "true");
    field.setAttribute("aria-describedby", note.id);
    var folded = field.closest("details");
    if (folded) folded.open = true;
    field.focus();
    return true;
  }

  document.addEventListener("htmx:afterSettle", function (event) {
    var flash = document.getElementById("flash");
    if (!flash || !flash.contains(event.target) && event.target !== flash) return;
    var banner = flash.querySelector(".banner[data-field]");
    if (banner) showFieldError(banner.getAttribute("data-field"), banner.textContent.trim());
  });

  document.addEventListener("htmx:beforeRequest", function (event) {
    var form = event.detail.elt && event.detail.elt.closest && event.detail.elt.closest("form.filters");
    if (form) clearFieldErrors(form);
  });

  function checkRange(form) {
    var start = form.querySelector("[data-range-start]");
    var end = form.querySelector("[data-range-end]");
    if (!start || !end) return;
    var wrong = start.value && end.value && end.value < start.value;
    end.setCustomValidity(wrong ? "The end of the time range must come after its start." : "");
  }

  document.addEventListener("input", function (event) {
    var field = event.target;
    if (field.matches && field.matches("[data-range-start], [data-range-end]") && field.form) {
      checkRange(field.form);
    }
  });
  // htmx checks a form's validity before it sends; say why it did not.
  document.addEventListener("htmx:validation:halted", function (event) {
    var form = event.detail.elt && event.detail.elt.closest && event.detail.elt.closest("form");
    if (form) {
      var folded = form.querySelector("details:has(:invalid)");
      if (folded) folded.open = true;
      form.reportValidity();
    }
  });
})();

// Reveal: "reveal…" beside a message with masked values opens the page's one reveal
// form for it; the answer (that message, in full) replaces the message in place.
(function () {
  "use strict";
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("button[data-reveal-message]");
    var dialog = document.getElementById("reveal-form");
    if (button && dialog) {
      var id = button.getAttribute("data-reveal-message");
      var form = dialog.querySelector("form");
      form.querySelector("input[name=message]").value = id;
      form.setAttribute("hx-target", "#message-" + id);
      dialog.querySelector("[data-reveal-number]").textContent = "#" + id;
      dialog.showModal();
      dialog.querySelector("input[name=reason]").focus();
      return;
    }
    if (event.target.closest && event.target.closest("[data-close-reveal]") && dialog) dialog.close();
  });
  document.addEventListener("htmx:afterRequest", function (event) {
    var dialog = document.getElementById("reveal-form");
    if (dialog && dialog.contains(event.detail.elt) && event.detail.successful) {
      dialog.close();
      dialog.querySelector("input[name=reason]").value = "";
    }
  });
})();
