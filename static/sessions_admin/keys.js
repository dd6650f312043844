// sessions-admin: the keyboard, the same on every screen. The shortcuts are
// listed in the "?" dialog of base.html; keep the two in step.
//
//   /       the header's search box (cursor after what it holds)
//   j / k   next / previous item: list rows, search hits, tool calls, messages
//   Enter   open the current item (its first link; on a message, its values)
//   [ / ]   previous / next failed tool call
//   e       expand or collapse every value on the page
//   ?       the list of shortcuts
//   Escape  close a menu or dialog; in a text box, leave it
// A review queue's keys (n, p, f, s) are review.js's; the pages that load it add
// them to the dialog (templates/sessions_admin/_review_keys.html).
(function () {
  "use strict";

  // What j/k walk, in page order. One selector per screen's items.
  var ITEMS = [
    "table.sessions tbody tr[data-session-id]",
    "a.hit",
    "#messages > li.msg",
    "table.tools tbody tr",
    "table.tool-calls tbody tr:not(.more-row)",
    "table.error-groups tbody tr",
    "table.principals tbody tr"
  ].join(", ");  // not the outline's rows: hundreds of them before the first message
  // A failed tool call: a message whose card reports an error, or a failed row of a tool's calls.
  var FAILED = "#messages > li.msg.has-error, table.tool-calls tbody tr.call-error";

  function typingIn(element) {
    if (!element || !element.tagName) return false;
    var tag = element.tagName.toLowerCase();
    if (tag === "textarea" || tag === "select" || element.isContentEditable) return true;
    if (tag !== "input") return false;
    // Checkboxes, radios and buttons take no text: the keys stay shortcuts there.
    return ["checkbox", "radio", "button", "submit", "reset", "range", "color", "file"]
      .indexOf((element.type || "text").toLowerCase()) === -1;
  }

  function visible(element) {
    return element.offsetParent !== null || element.getClientRects().length > 0;
  }

  function items(selector) {
    return Array.prototype.filter.call(document.querySelectorAll(selector), visible);
  }

  var current = null;

  function mark(item) {
    if (current && current !== item) current.classList.remove("kb-current");
    current = item;
    item.classList.add("kb-current");
    // A row or a message is not focusable by itself; -1 keeps it out of the Tab order.
    if (!item.matches("a[href], button")) item.setAttribute("tabindex", "-1");
    item.focus({ preventScroll: true });
    item.scrollIntoView({ block: "nearest" });
  }

  // The item holding the focus (or the last one marked, if it is still on the page).
  function currentIndex(list) {
    var active = document.activeElement;
    for (var i = 0; i < list.length; i++) {
      if (list[i] === active || list[i].contains(active)) return i;
    }
    return current ? list.indexOf(current) : -1;
  }

  function step(selector, delta) {
    var list = items(selector);
    if (!list.length) return false;
    var at = currentIndex(list);
    if (at === -1 && selector === FAILED) {
      // Not on a failure yet: the next one below (or above) where the reader is.
      var all = items(ITEMS);
      var here = currentIndex(all);
      var origin = here === -1 ? null : all[here];
      var pick = null;
      list.forEach(function (candidate) {
        if (pick && delta > 0) return;
        var after = !origin || (origin.compareDocumentPosition(candidate) & Node.DOCUMENT_POSITION_FOLLOWING);
        if (delta > 0 ? after : !after) pick = candidate;
      });
      if (pick) mark(pick);
      return Boolean(pick);
    }
    var next = at === -1 ? (delta > 0 ? 0 : list.length - 1) : at + delta;
    if (next < 0 || next >= list.length) return false;
    mark(list[next]);
    return true;
  }

  function say(text) {
    var status = document.getElementById("kb-status");
    if (!status) return;
    status.textContent = text;
    clearTimeout(say.timer);
    say.timer = setTimeout(function () { status.textContent = ""; }, 2500);
  }

  function open(item) {
    if (item.matches("a[href]")) { item.click(); return; }
    if (item.matches("#messages > li.msg")) {
      // A message opens in place: its values unfold (or fold again).
      var blocks = item.querySelectorAll("details.json-block");
      var shut = Array.prototype.some.call(blocks, function (d) { return !d.open; });
      blocks.forEach(function (d) { d.open = shut; });
      return;
    }
    var link = item.querySelector("a[href]:not(.copy)");
    if (link) link.click();
  }

  // Every value block on the page, opened when one is shut, else all shut.
  function toggleAll() {
    var blocks = document.querySelectorAll("main details:not(.menu)");
    var shut = Array.prototype.some.call(blocks, function (d) { return !d.open; });
    blocks.forEach(function (d) { d.open = shut; });
    document.querySelectorAll("[data-expand-all]").forEach(function (button) {
      button.textContent = shut ? "Collapse all" : "Expand all";
      button.setAttribute("aria-pressed", shut ? "true" : "false");
    });
    return shut;
  }

  function closeMenus(except) {
    var closed = false;
    document.querySelectorAll("details.menu[open]").forEach(function (menu) {
      if (menu === except) return;
      menu.open = false;
      closed = true;
    });
    return closed;
  }

  function focusSearch() {
    var box = document.getElementById("goto-id");
    if (!box) return false;
    box.focus();
    // At the end of what it holds, so typing adds to the query rather than before it.
    var end = box.value.length;
    try { box.setSelectionRange(end, end); } catch (e) { /* a type without selection */ }
    return true;
  }

  function help() {
    var dialog = document.getElementById("shortcuts");
    if (dialog && !dialog.open) dialog.showModal();
    return Boolean(dialog);
  }

  var KEYS = {
    "/": focusSearch,
    "j": function () { return step(ITEMS, 1) || true; },
    "k": function () { return step(ITEMS, -1) || true; },
    "]": function () { if (!step(FAILED, 1)) say("No failed tool call further down this page."); return true; },
    "[": function () { if (!step(FAILED, -1)) say("No failed tool call further up this page."); return true; },
    "e": function () { say(toggleAll() ? "Expanded every value." : "Collapsed every value."); return true; },
    "?": help
  };

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    var target = event.target;
    if (event.key === "Escape") {
      if (closeMenus()) { event.preventDefault(); return; }
      var dialog = document.querySelector("dialog[open]");
      if (dialog) { event.preventDefault(); dialog.close(); return; }
      if (typingIn(target)) { event.preventDefault(); target.blur(); }
      return;
    }
    if (typingIn(target) || document.querySelector("dialog[open]")) return;
    if (event.key === "Enter") {
      if (current && current.isConnected && (target === current || target === document.body)) {
        event.preventDefault();
        open(current);
      }
      return;
    }
    var action = KEYS[event.key];
    if (action && action()) event.preventDefault();
  });

  // A click elsewhere closes an open menu, as a menu does.
  document.addEventListener("click", function (event) {
    var inside = event.target.closest && event.target.closest("details.menu");
    // A choice made in a menu closes it too (its link or dialog takes over).
    closeMenus(event.target.closest && event.target.closest(".menu-items a") ? null : inside);
    var expand = event.target.closest && event.target.closest("[data-expand-all]");
    if (expand) { event.preventDefault(); toggleAll(); }
    var helpButton = event.target.closest && event.target.closest("[data-show-shortcuts]");
    if (helpButton) { event.preventDefault(); help(); }
  });

  // Controls that only work with JavaScript stay hidden without it.
  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-needs-js]").forEach(function (el) { el.hidden = false; });
  });
  document.addEventListener("htmx:afterSettle", function (event) {
    (event.target.parentNode || event.target).querySelectorAll("[data-needs-js]").forEach(function (el) { el.hidden = false; });
  });
})();
