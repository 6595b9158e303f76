// Search on demand: the theme's search index (~250 KiB) and worker (40 KiB) wait until a reader
// reaches for search (box or icon pointed at, touched or focused; /, s or f; ?q= or ?h=). The
// theme's code is untouched: its index request is sent late and its worker starts when needed.
// Loaded before the theme's bundle (overrides/main.html), so the bundle finds both wrappers.
(() => {
  const INDEX = /\/search\/search_index\.json$/;
  const WORKER = /\/assets\/javascripts\/workers\/search\.[0-9a-f]+\.min\.js$/;
  const SHORTCUTS = new Set(["/", "s", "f"]);
  const pending = [];
  let wanted = false;

  function want() {
    if (wanted) return;
    wanted = true;
    for (const start of pending.splice(0)) start();
  }

  const matches = (pattern, url) => pattern.test(new URL(String(url), location.href).pathname);

  // The index request: opened as the theme opens it, sent once search is wanted.
  const { open, send } = XMLHttpRequest.prototype;
  XMLHttpRequest.prototype.open = function (method, url, ...rest) {
    this.crossoverIndex = matches(INDEX, url);
    return open.call(this, method, url, ...rest);
  };
  XMLHttpRequest.prototype.send = function (...args) {
    if (this.crossoverIndex && !wanted) {
      pending.push(() => send.apply(this, args));
      return undefined;
    }
    return send.apply(this, args);
  };

  // The search worker: a stand-in that keeps the theme's messages until the real one starts.
  const RealWorker = window.Worker;
  class WorkerOnDemand extends EventTarget {
    constructor(url, options) {
      super();
      this.queue = [];
      pending.push(() => {
        this.real = new RealWorker(url, options);
        this.real.addEventListener("message", (event) => this.dispatchEvent(new MessageEvent("message", { data: event.data })));
        this.real.addEventListener("error", (event) => this.dispatchEvent(new Event(event.type)));
        for (const message of this.queue.splice(0)) this.real.postMessage(message);
      });
    }

    postMessage(message) {
      if (this.real) this.real.postMessage(message);
      else this.queue.push(message);
    }

    terminate() {
      if (this.real) this.real.terminate();
    }
  }
  window.Worker = function Worker(url, options) {
    return matches(WORKER, url) && !wanted ? new WorkerOnDemand(url, options) : new RealWorker(url, options);
  };

  const params = new URLSearchParams(location.search);
  if (params.has("q") || params.has("h")) want();
  const inSearch = (target) => target instanceof Element && target.closest(".md-search, label[for='__search']");
  for (const type of ["pointerover", "pointerdown", "focusin"]) {
    document.addEventListener(type, (event) => { if (inSearch(event.target)) want(); }, { capture: true, passive: true });
  }
  document.addEventListener("keydown", (event) => {
    const typing = event.target instanceof Element && event.target.closest("input, textarea, select, [contenteditable]");
    if (SHORTCUTS.has(event.key) && !typing && !event.ctrlKey && !event.metaKey && !event.altKey) want();
  }, { capture: true });
})();
