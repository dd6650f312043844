// The review keyboard (issue 20), loaded only where a review region is on the page:
// on a session opened from a queue, j/k move between messages, n writes a note on
// the focused one, p/f/s give a verdict (each saves and opens the next session),
// ? shows the shortcuts; on a queue's page, n claims the next session.
// Every key here is also a link or a button, so nothing needs the keyboard.
(function () {
  "use strict";

  function typing(target) {
    var tag = (target.tagName || "").toLowerCase();
    return tag === "input" || tag === "textarea" || tag === "select" || target.isContentEditable;
  }

  function messages() {
    return Array.prototype.slice.call(document.querySelectorAll("ol.messages > li[id^='message-']"));
  }

  function focusMessage(step) {
    var all = messages();
    if (!all.length) { return; }
    var current = document.querySelector("ol.messages > li.focused");
    var index = current ? all.indexOf(current) + step : (step > 0 ? 0 : all.length - 1);
    index = Math.max(0, Math.min(all.length - 1, index));
    if (current) { current.classList.remove("focused"); }
    var next = all[index];
    next.classList.add("focused");
    next.setAttribute("tabindex", "-1");
    next.focus({ preventScroll: true });
    next.scrollIntoView({ block: "nearest" });
  }

  function noteOnFocused() {
    var form = document.getElementById("note-form");
    if (!form) { return false; }
    var focused = document.querySelector("ol.messages > li.focused");
    var field = form.querySelector("input[name=message]");
    var target = form.querySelector("[data-note-target]");
    if (focused && field) {
      var id = focused.id.replace("message-", "");
      field.value = id;
      if (target) { target.textContent = "on message #" + id; }
    }
    var text = form.querySelector("textarea[name=text]");
    text.focus();
    return true;
  }

  function press(key) {
    var button = document.querySelector("[data-review-key='" + key + "']");
    if (!button) { return false; }
    if (button.form && button.form.requestSubmit) { button.form.requestSubmit(button); } else { button.click(); }
    return true;
  }

  function toggleHelp() {
    var help = document.getElementById("shortcuts-help");
    if (!help) { return false; }
    help.hidden = !help.hidden;
    return true;
  }

  document.addEventListener("click", function (event) {
    var toggle = event.target.closest("[data-shortcuts-toggle]");
    if (toggle) { toggleHelp(); }
  });

  document.addEventListener("keydown", function (event) {
    if (typing(event.target) || event.ctrlKey || event.metaKey || event.altKey) { return; }
    var inReview = !!document.getElementById("review-bar");
    var handled = false;
    if (inReview) {
      if (event.key === "j") { focusMessage(1); handled = true; }
      else if (event.key === "k") { focusMessage(-1); handled = true; }
      else if (event.key === "n") { handled = noteOnFocused(); }
      else if (event.key === "p" || event.key === "f" || event.key === "s") { handled = press(event.key); }
      else if (event.key === "?") { handled = toggleHelp(); }
    } else if (event.key === "n") {
      handled = press("n");  // a queue's page: "Review next"
    }
    if (handled) { event.preventDefault(); }
  });
})();
