// The review keys (issue 20), loaded only where a review region is on the page.
// keys.js moves between messages (j/k) and lists the page's shortcuts (?); here,
// on a session opened from a queue, n writes a note on the current message, r
// the reason that goes with the verdict, and p/f/s give a verdict: the key shows
// "Pass in 4 s · Undo" first (u, Esc or the button undo it; another verdict key
// replaces it), then saves and opens the next session. The buttons themselves,
// clicked, save at once. On a queue's page, n claims the next session. Every key is also a link or a button, and is
// listed in the "?" dialog by templates/sessions_admin/_review_keys.html.
(function () {
  "use strict";

  function typing(target) {
    var tag = (target.tagName || "").toLowerCase();
    return tag === "input" || tag === "textarea" || tag === "select" || target.isContentEditable;
  }

  // The message keys.js marked (j/k), or the one holding the focus.
  function currentMessage() {
    var marked = document.querySelector("#messages > li.kb-current");
    if (marked) { return marked; }
    var active = document.activeElement;
    return active && active.closest ? active.closest("#messages > li[id^='message-']") : null;
  }

  function noteOnCurrent() {
    var form = document.getElementById("note-form");
    if (!form) { return false; }
    var message = currentMessage();
    if (window.openNoteForm) { return window.openNoteForm(message); }
    var field = form.querySelector("input[name=message]");
    var target = form.querySelector("[data-note-target]");
    if (message && field) {
      var id = message.id.replace("message-", "");
      field.value = id;
      if (target) { target.textContent = "on message #" + id; }
    }
    form.querySelector("textarea[name=text]").focus();
    return true;
  }

  function press(key) {
    var button = document.querySelector("[data-review-key='" + key + "']");
    if (!button) { return false; }
    if (button.form && button.form.requestSubmit) { button.form.requestSubmit(button); } else { button.click(); }
    return true;
  }

  // A verdict key waits UNDO_MS before it saves, saying so in #verdict-pending.
  var UNDO_MS = 4000;
  var pending = null;

  function say(text) {
    var box = document.getElementById("verdict-pending");
    if (!box) { return; }
    box.querySelector("[data-pending-text]").textContent = text;
    box.hidden = !text;
  }

  function undo() {
    if (!pending) { return false; }
    clearInterval(pending.timer);
    pending = null;
    say("");
    var status = document.getElementById("kb-status");
    if (status) { status.textContent = "Verdict undone: nothing was saved."; }
    return true;
  }

  function verdictKey(key) {
    var button = document.querySelector("[data-review-key='" + key + "']");
    if (!button || !document.getElementById("verdict-pending")) { return press(key); }
    if (pending) { clearInterval(pending.timer); }
    var left = UNDO_MS / 1000;
    var word = button.value.charAt(0).toUpperCase() + button.value.slice(1);
    pending = { key: key, timer: setInterval(function () {
      left -= 1;
      if (left <= 0) { clearInterval(pending.timer); pending = null; say("Saving…"); press(key); return; }
      say(word + " in " + left + " s: u or Esc to undo");
    }, 1000) };
    say(word + " in " + left + " s: u or Esc to undo");
    return true;
  }

  function reasonBox() {
    var box = document.getElementById("verdict-reason");
    if (!box) { return false; }
    box.open = true;
    box.querySelector("textarea").focus();
    return true;
  }

  document.addEventListener("click", function (event) {
    if (event.target.closest && event.target.closest("[data-undo-verdict]")) { undo(); }
  });

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || typing(event.target)) { return; }
    if (event.ctrlKey || event.metaKey || event.altKey || document.querySelector("dialog[open]")) { return; }
    var inReview = !!document.getElementById("review-bar");
    var handled = false;
    if (inReview) {
      if (pending && (event.key === "u" || event.key === "Escape")) { handled = undo(); }
      else if (event.key === "n") { handled = noteOnCurrent(); }
      else if (event.key === "r") { handled = reasonBox(); }
      else if (event.key === "p" || event.key === "f" || event.key === "s") { handled = verdictKey(event.key); }
    } else if (event.key === "n") {
      handled = press("n");  // a queue's page: "Review next"
    }
    if (handled) { event.preventDefault(); }
  });
})();
