/* Recall check: count how many answers the reader has revealed.
 * Without JavaScript the questions are plain <details> disclosures and still work. */
(function () {
  "use strict";
  function boot() {
    Array.prototype.forEach.call(document.querySelectorAll(".recall"), function (box) {
      if (box.dataset.ready) return;
      box.dataset.ready = "1";
      var items = box.querySelectorAll("details");
      var count = box.querySelector(".recall__count");
      function update() {
        var open = Array.prototype.filter.call(items, function (d) { return d.open; }).length;
        count.textContent = "Revealed " + open + " of " + items.length + " answers.";
      }
      Array.prototype.forEach.call(items, function (d) { d.addEventListener("toggle", update); });
      update();
    });
  }
  if (window.document$ && window.document$.subscribe) window.document$.subscribe(boot);
  else document.addEventListener("DOMContentLoaded", boot);
})();
