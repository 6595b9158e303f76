// "Race your browser" and "Add your machine" on demand: their script (yours.js, ~45 KiB) loads when a reader
// comes within a screen of either box, or has kept a file or a browser's lanes here, or the browser cannot
// tell where the reader is. A first visit to the top of the race page fetches none of it.
(() => {
  const KEPT = ["crossover.yours.v1", "crossover.browser.v1"];  // yours.js's STORAGE_KEYS
  const AHEAD = "100% 0px";  // a screen's height before a box comes into view
  const script = new URL("yours.js", document.currentScript.src).href;
  let loaded = false;

  function load() {
    if (loaded) return;
    loaded = true;
    import(script);
  }

  function kept() {
    try {
      return KEPT.some((key) => localStorage.getItem(key) !== null);
    } catch {
      return false;  // storage refused: nothing kept to restore
    }
  }

  // The boxes stay hidden until yours.js runs, and a hidden box never intersects: the heading above it is watched.
  function headingAbove(box) {
    let node = box;
    while (node && !/^H[1-6]$/.test(node.tagName)) node = node.previousElementSibling;
    return node || box.parentElement;
  }

  function start() {
    const boxes = [...document.querySelectorAll("#yours, #browser")];
    if (!boxes.length) return;
    if (kept() || !("IntersectionObserver" in window)) return load();
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((entry) => entry.isIntersecting)) {
        observer.disconnect();
        load();
      }
    }, { rootMargin: AHEAD });
    for (const box of boxes) observer.observe(headingAbove(box));
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
