// The review keys (issue 20), loaded only where a review region is on the page.
// keys.js moves between messages (j/k) and lists the page's shortcuts (?); here,
// on a session opened from a queue, n writes a note on the current message and
// p/f/s give a verdict (each saves and opens the next session); on a queue's
// page, n claims the next session. Every key is also a link or a button, and is
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

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || typing(event.target)) { return; }
    if (event.ctrlKey || event.metaKey || event.altKey || document.querySelector("dialog[open]")) { return; }
    var inReview = !!document.getElementById("review-bar");
    var handled = false;
    if (inReview) {
      if (event.key === "n") { handled = noteOnCurrent(); }
      else if (event.key === "p" || event.key === "f" || event.key === "s") { handled = press(event.key); }
    } else if (event.key === "n") {
      handled = press("n");  // a queue's page: "Review next"
    }
    if (handled) { event.preventDefault(); }
  });
})();
