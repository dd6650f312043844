// The admin's "Clear all sessions" page: the red button stays disabled until the
// typed phrase is the one the page asks for. The server checks the phrase again
// (this only saves a round trip); without JavaScript the button is enabled as drawn.
(function () {
  "use strict";
  function watch(input) {
    var button = document.getElementById(input.getAttribute("data-confirms"));
    if (!button) return;
    var phrases = [input.getAttribute("data-phrase"), input.getAttribute("data-phrase-plain")];
    function update() {
      // As the server reads it: surrounding spaces do not count.
      button.disabled = phrases.indexOf(input.value.trim()) === -1;
    }
    input.addEventListener("input", update);
    update();
  }
  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("input[data-confirms]").forEach(watch);
  });
})();
