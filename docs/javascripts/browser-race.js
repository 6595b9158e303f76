/* "Race your browser": the race's model trained in this browser, on its GPU (WebGPU) and on its
 * CPU (WebAssembly, one thread), with TensorFlow.js served by this site (vendor/tfjs, from
 * tools/package-lock.json). Loaded only when the reader presses the button (yours.js imports it).
 *
 * The training itself (browser-race-train.js) runs in a dedicated worker: the page never waits on an
 * epoch, and Stop ends the worker at once, keeping every epoch it had reported. Where a worker cannot
 * start, the same file runs on the page and pauses between steps. This module gathers the epochs and
 * writes them as a results file in the project's schema (software.stack says TensorFlow.js), which
 * joins the race through the same checks as any file.
 */

const VENDOR = new URL("./vendor/tfjs/", import.meta.url);
const TRAINER = new URL("./browser-race-train.js", import.meta.url);
const BACKEND_NAME = { webgpu: "WebGPU", wasm: "WebAssembly" };
const STOP_POLL_MS = 50; // how often the page looks at the Stop button while the worker trains

let library = null;

function loadScript(url) {
  return new Promise(function (resolve, reject) {
    const script = document.createElement("script");
    script.src = url.href;
    script.onload = resolve;
    script.onerror = function () { reject(new Error("could not load " + url.pathname + " from this site")); };
    document.head.appendChild(script);
  });
}

/* On the page (no worker): the trainer, then the library files it names, fetched once from this site. */
function loadOnPage() {
  if (!library) {
    library = loadScript(TRAINER).then(function () {
      return window.crossoverTrain.SCRIPTS.reduce(function (chain, name) {
        return chain.then(function () { return loadScript(new URL(name, VENDOR)); });
      }, Promise.resolve());
    }).then(function () {
      const tf = window.tf;
      tf.env().set("WASM_HAS_MULTITHREAD_SUPPORT", false);  // threads need a cross-origin-isolated page
      tf.wasm.setWasmPaths(VENDOR.href);
      return tf;
    });
    library.catch(function () { library = null; });
  }
  return library;
}

function quantile(sorted, q) {  // linear interpolation between order statistics
  const at = (sorted.length - 1) * q, lo = Math.floor(at), hi = Math.ceil(at);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (at - lo);
}

function statsOf(samples) {
  const sorted = samples.slice().sort(function (a, b) { return a - b; });
  const q1 = quantile(sorted, 0.25), q3 = quantile(sorted, 0.75);
  const stats = { median: quantile(sorted, 0.5), q1: q1, q3: q3, iqr: q3 - q1, min: sorted[0], max: sorted[sorted.length - 1],
    mean: samples.reduce(function (a, b) { return a + b; }, 0) / samples.length, data: samples.slice() };
  if (samples.length >= 2) stats.round_medians = samples.slice(); // one epoch per round
  return stats;
}

function hash(text) {  // FNV-1a, 32 bits, as 8 hex digits: a stable id, not a secret
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return ("0000000" + h.toString(16)).slice(-8);
}

function clock(seconds) {
  return seconds >= 90 ? Math.round(seconds / 60) + " min" : Math.max(1, Math.round(seconds)) + " s";
}

/* Both lanes train on the same numbers, so their last losses should agree closely: a check anyone can read. */
function lossSentence(loss, batches) {
  const parts = Object.keys(loss).map(function (backend) {
    const last = batches.filter(function (b) { return loss[backend][b] !== undefined; }).pop();
    return last === undefined ? null : loss[backend][last].toPrecision(4) + " on " + BACKEND_NAME[backend] + " (batch " + last + ")";
  }).filter(Boolean);
  return parts.length ? " Training loss after the last timed epoch: " + parts.join(", ") + "." : "";
}

/* The run, as a results file in the project's schema: one point per backend and batch that finished an epoch. */
function resultsFile(plan, width, join, run) {
  const now = new Date().toISOString();
  const browser = navigator.userAgent.slice(0, 300);
  const id = hash(browser + "|" + (run.adapter ? run.adapter.name : "no webgpu"));
  const benchmarks = [];
  Object.keys(run.samples).forEach(function (device) {
    plan.batches.forEach(function (batch) {
      const samples = run.samples[device][batch];
      if (!samples || !samples.length) return;
      benchmarks.push({ group: "epoch_time", name: "epoch_time[" + device + "-w" + width + "-b" + batch + "]",
        params: { device: device, batch: batch, width: width, rows: plan.rows }, unit: "s", stats: statsOf(samples),
        extra_info: { steps: Math.ceil(plan.rows / batch), loss: run.loss[device][batch] },
        options: { rounds: samples.length, threads: device === "wasm" ? 1 : null, samples_per_round: samples.map(function () { return 1; }) } });
    });
  });
  if (!benchmarks.length) return null;
  const devices = Object.keys(run.samples).filter(function (d) { return benchmarks.some(function (b) { return b.params.device === d; }); });
  return {
    schema_version: join.schema_version, mode: plan.mode, machine_id: "browser-" + id,
    environment_key: "tfjs-" + run.tfjs + "-" + id,
    machine_info: {
      cpu: { brand: "not named (a browser does not say which CPU it runs on)", arch: "unknown", threads_used: 1,
        cores_available: navigator.hardwareConcurrency || null, clock_hz: null, fp32_peak_flops: null,
        peak_formula: "not known: a browser reports neither its CPU's model nor its clock" },
      gpu: run.adapter || null,
    },
    // The WebGPU backend exports no version of its own: it is the same locked release (tools/package-lock.json).
    software: { stack: "tensorflow.js", tfjs: run.tfjs, tfjs_wasm: run.tfjs_wasm,
      browser: browser, wasm_simd: run.simd },
    commit_info: { id: null, dirty: null }, datetime: now,
    experiments: { epoch_time: { bench_version: 1, cache_key: "browser-" + id + "-" + hash(JSON.stringify(plan)),
      measured_at: now, duration_s: run.seconds, devices: devices,
      note: ("Race your browser: width " + width + ", " + run.rounds + (run.rounds === 1 ? " round" : " rounds") + ", every batch on " +
        devices.map(function (d) { return BACKEND_NAME[d]; }).join(" and ") + ", alternating" +
        (run.sampled ? "; " + sampledWords(run.sampled) : "")).slice(0, 500) } },
    benchmarks: benchmarks,
  };
}

/* The trainer in a dedicated worker; null where this browser cannot start one (the page trains then). */
function startWorker() {
  try {
    return typeof Worker === "function" ? new Worker(TRAINER) : null;
  } catch (error) {
    return null;  // a page's policy may forbid workers
  }
}

/* Train and time every batch of the plan at `width` on WebGPU (if there is one) and WebAssembly.
 * ui.progress(fraction, text) reports; ui.stopped() asks whether Stop was pressed; ui.started(adapter) hears which
 * GPU adapter trains, before the first epoch; ui.partial(doc, words) receives the file so far as each size finishes.
 * Resolves to { doc, name, summary, problems }: doc is null when nothing finished. */
export async function raceBrowser(plan, width, join, ui) {
  const run = { samples: {}, loss: {}, problems: [], rounds: 0, adapter: null, simd: false, tfjs: null, tfjs_wasm: "",
    started: false, stoppedBy: null, dropped: [], sampled: null };
  const t0 = performance.now();
  const options = { plan: plan, width: width, vendor: VENDOR.href, offerGpu: "gpu" in navigator };
  ui.progress(0, "Loading TensorFlow.js from this site\u2026");

  const receive = function (message) {
    if (message.type === "started") {
      Object.assign(run, { started: true, adapter: message.adapter, simd: message.simd, tfjs: message.tfjs,
        tfjs_wasm: message.tfjs_wasm });
      run.problems.push.apply(run.problems, message.problems);
      message.backends.forEach(function (b) { run.samples[b] = {}; run.loss[b] = {}; });
      if (ui.started) ui.started(message.adapter);
    } else if (message.type === "progress") {
      ui.progress(message.fraction, message.text);
    } else if (message.type === "epoch") {
      (run.samples[message.backend][message.batch] = run.samples[message.backend][message.batch] || []).push(message.seconds);
      run.loss[message.backend][message.batch] = message.loss;
      joinSoFar(message.batch);
    } else if (message.type === "round") {
      run.rounds = message.rounds;
    } else if (message.type === "sized") {
      run.dropped = message.dropped;
    } else if (message.type === "sampled") {
      run.sampled = { batch: message.batch, steps: message.steps, of: message.of };
    } else if (message.type === "problem") {
      run.problems.push(message.text);
    }
  };

  // Lanes join as each size finishes on every backend, not only at the end: a slow device shows something early.
  const joined = [];
  function joinSoFar(batch) {
    const backends = Object.keys(run.samples);
    if (!ui.partial || joined.indexOf(batch) >= 0 || !backends.every(function (b) { return run.samples[b][batch]; })) return;
    joined.push(batch);
    const doc = resultsFile(plan, width, join, Object.assign({}, run, { rounds: Math.max(run.rounds, 1),
      seconds: (performance.now() - t0) / 1000 }));
    if (doc) ui.partial(doc, "So far: batch" + (joined.length === 1 ? " " : "es ") + joined.join(", ") + "; the run goes on.");
  }

  let hidden = false;
  const onVisibility = function () { if (document.visibilityState === "hidden") hidden = true; };
  document.addEventListener("visibilitychange", onVisibility);
  const stopped = function () { return hidden || ui.stopped(); };
  try {
    const worker = startWorker();
    await (worker ? inWorker(worker, options, receive, stopped, run) : onPage(options, receive, stopped, run));
  } finally {
    document.removeEventListener("visibilitychange", onVisibility);
  }
  return finish(plan, width, join, run, hidden, (performance.now() - t0) / 1000);
}

/* Run the trainer in `worker`; resolves when it ends, fails, or Stop ends it (at once, keeping what it reported). */
function inWorker(worker, options, receive, stopped, run) {
  return new Promise(function (resolve, reject) {
    const poll = setInterval(function () {
      if (!stopped()) return;
      run.stoppedBy = "stop";
      end(resolve);
    }, STOP_POLL_MS);
    function end(settle, value) {
      // Nothing the worker sent before it ended may arrive after: a late join would replace the final one.
      clearInterval(poll); worker.onmessage = null; worker.terminate(); settle(value);
    }
    worker.onmessage = function (event) {
      const message = event.data;
      if (message.type === "end") end(resolve);
      else if (message.type === "failed") end(reject, new Error(message.message));
      else receive(message);
    };
    worker.onerror = function (event) {
      event.preventDefault();
      end(reject, new Error("the browser race's worker failed" + (event.message ? " (" + event.message + ")" : "")));
    };
    worker.postMessage(options);
  });
}

/* No worker: the trainer on the page, pausing between steps so that the page still draws and hears Stop. */
async function onPage(options, receive, stopped, run) {
  const tf = await loadOnPage();
  run.problems.push("This browser could not start a worker, so the race ran on the page itself: its times include " +
    "the page's pauses to draw.");
  try {
    await window.crossoverTrain.run(tf, options, receive, stopped, window.crossoverTrain.pauser());
  } finally {
    if (stopped()) run.stoppedBy = "stop";
  }
}

/* "batch 1 was timed on 64 of its 512 steps per epoch, each epoch scaled from them": a sampled batch, said. */
function sampledWords(sampled) {
  return "batch " + sampled.batch + " was timed on " + sampled.steps + " of its " + sampled.of +
    " steps per epoch, each epoch scaled from them";
}

/* What the page shows once the run is over: the results file, problems, and a one-line summary. */
function finish(plan, width, join, run, hidden, seconds) {
  if (run.stoppedBy || hidden) {
    run.problems.push(hidden ? "The tab went to the background, and browsers slow background tabs down, so the run stopped " +
      "there; the epochs finished before are kept." : "Stopped: the epochs finished before are kept.");
  }
  if (run.dropped.length) {
    run.problems.push("To fit the time box, batch" + (run.dropped.length === 1 ? " " : "es ") + run.dropped.join(", ") +
      (run.dropped.length === 1 ? " was" : " were") + " left out.");
  }
  if (run.sampled) run.problems.push("To fit the time box, " + sampledWords(run.sampled) + ".");
  if (!run.started) return { doc: null, problems: run.problems };
  const doc = resultsFile(plan, width, join, Object.assign({}, run, { rounds: Math.max(run.rounds, 1), seconds: seconds }));
  const date = new Date().toISOString().slice(0, 16).replace("T", " ");
  const timed = Object.keys(run.samples).reduce(function (n, b) {
    return n + Object.keys(run.samples[b]).reduce(function (m, k) { return m + run.samples[b][k].length; }, 0);
  }, 0);
  // The batches it reached, not the plan's: a stopped run names where it stopped.
  const reached = plan.batches.filter(function (b) { return Object.keys(run.samples).some(function (k) { return run.samples[k][b]; }); });
  const batches = reached.length === 1 ? "batch " + reached[0] : "batches " + reached[0] + " to " + reached[reached.length - 1];
  return { doc: doc, problems: run.problems, name: "your browser, " + date,
    summary: "Timed " + timed + " epochs of " + plan.rows + " rows at width " + width + " (" + batches + ", " + run.rounds +
      (run.rounds === 1 ? " full round" : " full rounds") +
      ") in " + clock(seconds) + "." + lossSentence(run.loss, plan.batches) };
}
