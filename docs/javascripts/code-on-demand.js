// Code on demand: a "Code behind this" block, or a "Code" tab, keeps only a link to its source
// listing (the build moved each listing to code-behind/, build_hooks/code_on_demand.py). Opening
// the block or tab puts the listing back in place, with the theme's copy button; where the file
// cannot be fetched, the link stays.
(() => {
  let copies = 0;

  async function load(holder) {
    holder.dataset.state = "loading";
    try {
      const response = await fetch(holder.dataset.listing);
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const page = new DOMParser().parseFromString(await response.text(), "text/html");
      const listing = page.querySelector("body > .highlight");
      if (!listing) throw new Error("no listing in the file");
      holder.replaceChildren(document.adoptNode(listing));
      withCopyButton(listing.querySelector("pre"));
      holder.dataset.state = "loaded";
    } catch (error) {
      holder.dataset.state = "failed";
      holder.append(` The listing could not be loaded here (${error.message}); the link opens it.`);
    }
  }

  // The theme adds its copy button to the code it finds at load; its clipboard handler is
  // delegated, so a button of the same shape works on a listing that arrives later.
  function withCopyButton(pre) {
    if (!pre || !pre.querySelector(":scope > code")) return;
    pre.id = pre.id || `__code_on_demand_${copies++}`;
    const nav = document.createElement("nav");
    nav.className = "md-code__nav";
    const button = document.createElement("button");
    button.className = "md-code__button";
    button.title = "Copy to clipboard";
    button.dataset.clipboardTarget = `#${pre.id} > code`;
    button.dataset.mdType = "copy";
    nav.append(button);
    pre.prepend(nav);
  }

  // A listing in the tab a set shows from the start loads as the reader scrolls near it.
  const nearby = "IntersectionObserver" in window ? new IntersectionObserver((entries) => {
    for (const entry of entries) {
      if (entry.isIntersecting && entry.target.offsetParent !== null) {
        nearby.unobserve(entry.target);
        if (!entry.target.dataset.state) load(entry.target);
      }
    }
  }, { rootMargin: "400px 0px" }) : null;

  function loadIn(container, now) {
    for (const holder of container.querySelectorAll(".crossover-code__listing[data-listing]")) {
      if (holder.dataset.state) continue;
      if (now || !nearby) load(holder);
      else nearby.observe(holder);
    }
  }

  // The tab each set shows; the theme's linked tabs switch other sets without a change event,
  // so every set is looked at after a tab changes anywhere (a tab just chosen loads at once).
  function loadShownTabs(now) {
    for (const set of document.querySelectorAll(".tabbed-set")) {
      const inputs = [...set.querySelectorAll(":scope > input")];
      const blocks = set.querySelectorAll(":scope > .tabbed-content > .tabbed-block");
      const shown = blocks[inputs.findIndex((input) => input.checked)];
      if (shown) loadIn(shown, now);
    }
  }

  // "toggle" does not bubble, but a capturing listener on the document sees every block's.
  document.addEventListener("toggle", (event) => {
    const block = event.target;
    if (block instanceof HTMLDetailsElement && block.open) {
      for (const holder of block.querySelectorAll(":scope > .crossover-code__listing[data-listing]")) {
        if (!holder.dataset.state) load(holder);
      }
    }
  }, true);
  document.addEventListener("change", (event) => {
    if (event.target instanceof HTMLInputElement && event.target.closest(".tabbed-set")) setTimeout(() => loadShownTabs(true), 0);
  }, true);
  loadShownTabs(false);
})();
