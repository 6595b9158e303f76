// Code on demand: a "Code behind this" block keeps only a link to its source listing (the
// build moved each listing to code-behind/, build_hooks/code_on_demand.py). Opening the block
// puts the listing back in place; where the file cannot be fetched, the link stays.
(() => {
  async function load(holder) {
    holder.dataset.state = "loading";
    try {
      const response = await fetch(holder.dataset.listing);
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const page = new DOMParser().parseFromString(await response.text(), "text/html");
      const listing = page.querySelector("body > .highlight");
      if (!listing) throw new Error("no listing in the file");
      holder.replaceChildren(document.adoptNode(listing));
      holder.dataset.state = "loaded";
    } catch (error) {
      holder.dataset.state = "failed";
      holder.append(` The listing could not be loaded here (${error.message}); the link opens it.`);
    }
  }

  // "toggle" does not bubble, but a capturing listener on the document sees every block's.
  document.addEventListener("toggle", (event) => {
    const block = event.target;
    if (!(block instanceof HTMLDetailsElement) || !block.open) return;
    for (const holder of block.querySelectorAll(":scope > .crossover-code__listing[data-listing]")) {
      if (!holder.dataset.state) load(holder);
    }
  }, true);
})();
