/* "Race your browser": the race's model trained in this browser, on its GPU (WebGPU) and on its
 * CPU (WebAssembly, one thread), with TensorFlow.js served by this site (vendor/tfjs, from
 * tools/package-lock.json). Loaded only when the reader presses the button (yours.js imports it).
 *
 * It copies the epoch_time experiment: the same rows, widths and batches (the page's plan, from
 * the build), a 512 -> width -> 10 MLP with PyTorch's initialisation, softmax cross-entropy and
 * plain SGD. Every epoch is timed to completion: the clock stops only after the last step's loss
 * has been read back, which waits for everything the GPU had queued. Backends alternate epoch by
 * epoch and rounds repeat the sweep, so a slow moment of the machine lands on both lanes; the
 * time box cuts rounds, never an epoch. The result is a results file in the project's schema
 * (software.stack says TensorFlow.js), which joins the race through the same checks as any file.
 */

const VENDOR = new URL("./vendor/tfjs/", import.meta.url);
const SCRIPTS = ["tf.es2017.min.js", "tf-backend-webgpu.es2017.min.js", "tf-backend-wasm.es2017.min.js"];
const WARM_UP_STEPS = 3; // compiles each batch's kernels (and shaders) before anything is timed
const BACKEND_NAME = { webgpu: "WebGPU", wasm: "WebAssembly" };

class Stop extends Error {} // the run ends here on purpose (Stop pressed, tab hidden): keep what finished

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

/* TensorFlow.js and its two backends, fetched once from this site. */
function loadLibrary() {
  if (!library) {
    library = SCRIPTS.reduce(function (chain, name) {
      return chain.then(function () { return loadScript(new URL(name, VENDOR)); });
    }, Promise.resolve()).then(function () {
      const tf = window.tf;
      // One thread: threads need a cross-origin-isolated page, which a static host cannot promise.
      tf.env().set("WASM_HAS_MULTITHREAD_SUPPORT", false);
      tf.wasm.setWasmPaths(VENDOR.href);
      return tf;
    });
    library.catch(function () { library = null; });
  }
  return library;
}

/* The GPU TensorFlow.js will use (it asks for the high-performance adapter too), or why there is none. */
async function gpuAdapter() {
  if (!navigator.gpu) {
    return { problem: "This browser offers no WebGPU (Chrome and Edge 113 or later, Safari 26 and Firefox 141 on " +
      "Windows do), so only the CPU lane races." };
  }
  let adapter = null;
  try { adapter = await navigator.gpu.requestAdapter({ powerPreference: "high-performance" }); } catch (error) { /* below */ }
  if (!adapter) {
    return { problem: "WebGPU is here but offered no GPU adapter (the browser may block this GPU or its driver), " +
      "so only the CPU lane races." };
  }
  const info = adapter.info || {};
  const text = function (value) { return typeof value === "string" ? value : ""; };  // a browser may report anything
  const name = text(info.description) || [text(info.vendor), text(info.architecture), text(info.device)]
    .filter(Boolean).join(" ") || "unnamed adapter";
  const software = Boolean(info.isFallbackAdapter) ||
    SOFTWARE_ADAPTER.test([info.vendor, info.architecture, info.device, info.description].map(text).join(" "));
  return { adapter: { name: name.slice(0, 200), vendor: text(info.vendor).slice(0, 100),
    architecture: text(info.architecture).slice(0, 100), fallback_adapter: software } };
}

/* Adapters that are a CPU emulating a GPU: a browser flags few of them as a fallback, but names them all. */
const SOFTWARE_ADAPTER = /swiftshader|llvmpipe|lavapipe|softpipe|basic render|\bwarp\b|software/i;

/* Seeded rows and labels (mulberry32 + Box-Muller): every backend trains on the same numbers. */
function makeData(rows, inputs, classes) {
  let state = 20240601;
  const random = function () {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const x = new Float32Array(rows * inputs);
  for (let i = 0; i < x.length; i++) x[i] = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const labels = new Int32Array(rows);
  for (let i = 0; i < rows; i++) labels[i] = Math.floor(random() * classes);
  return { x: x, labels: labels };
}

/* One configuration on the current backend: its model, optimiser and batches, and epoch(steps). */
function makeTrainer(tf, plan, width, batch, data) {
  const rows = plan.rows, inputs = plan.inputs, classes = plan.classes;
  const x = tf.tensor2d(data.x, [rows, inputs]);
  const y = tf.tidy(function () { return tf.oneHot(tf.tensor1d(data.labels, "int32"), classes).toFloat(); });
  // PyTorch's nn.Linear default: weights and biases uniform in ±1/sqrt(fan_in).
  const layer = function (fanIn, fanOut, seed) {
    const bound = 1 / Math.sqrt(fanIn);
    return [tf.variable(tf.randomUniform([fanIn, fanOut], -bound, bound, "float32", seed)),
      tf.variable(tf.randomUniform([fanOut], -bound, bound, "float32", seed + 1))];
  };
  const [w1, b1] = layer(inputs, width, 1), [w2, b2] = layer(width, classes, 3);
  const optimiser = tf.train.sgd(plan.learning_rate);
  // Batches are cut before timing: PyTorch's x[start:start + batch] is a view that costs no kernel.
  const batches = [];
  for (let start = 0; start < rows; start += batch) {
    const n = Math.min(batch, rows - start);
    batches.push([x.slice([start, 0], [n, inputs]), y.slice([start, 0], [n, classes])]);
  }
  const forward = function (xb) { return tf.relu(xb.matMul(w1).add(b1)).matMul(w2).add(b2); };

  /* Train `steps` batches; resolves to [seconds, loss] once the last loss is back on the host. */
  async function epoch(steps, stopped) {
    const t0 = performance.now();
    let last = null;
    for (let i = 0; i < steps; i++) {
      const [xb, yb] = batches[i % batches.length];
      const cost = optimiser.minimize(function () { return tf.losses.softmaxCrossEntropy(yb, forward(xb)); }, true, [w1, b1, w2, b2]);
      if (last) last.dispose();
      last = cost;
    }
    const loss = (await last.data())[0]; // waits for every queued step: the GPU's queue is inside the time
    const seconds = (performance.now() - t0) / 1000;
    last.dispose();
    if (stopped()) throw new Stop();
    return [seconds, loss];
  }

  function dispose() {
    batches.forEach(function (pair) { pair[0].dispose(); pair[1].dispose(); });
    [x, y, w1, b1, w2, b2].forEach(function (t) { t.dispose(); });
    optimiser.dispose();
  }
  return { epoch: epoch, steps: batches.length, dispose: dispose };
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
function resultsFile(tf, plan, width, join, run) {
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
    environment_key: "tfjs-" + tf.version.tfjs + "-" + id,
    machine_info: {
      cpu: { brand: "not named (a browser does not say which CPU it runs on)", arch: "unknown", threads_used: 1,
        cores_available: navigator.hardwareConcurrency || null, clock_hz: null, fp32_peak_flops: null,
        peak_formula: "not known: a browser reports neither its CPU's model nor its clock" },
      gpu: run.adapter || null,
    },
    // The WebGPU backend exports no version of its own: it is the same locked release (tools/package-lock.json).
    software: { stack: "tensorflow.js", tfjs: tf.version.tfjs, tfjs_wasm: String(tf.wasm.version_wasm || "").slice(0, 50),
      browser: browser, wasm_simd: run.simd },
    commit_info: { id: null, dirty: null }, datetime: now,
    experiments: { epoch_time: { bench_version: 1, cache_key: "browser-" + id + "-" + hash(JSON.stringify(plan)),
      measured_at: now, duration_s: run.seconds, devices: devices,
      note: ("Race your browser: width " + width + ", " + run.rounds + (run.rounds === 1 ? " round" : " rounds") + ", every batch on " +
        devices.map(function (d) { return BACKEND_NAME[d]; }).join(" and ") + ", alternating").slice(0, 500) } },
    benchmarks: benchmarks,
  };
}

/* Train and time every batch of the plan at `width` on WebGPU (if there is one) and WebAssembly.
 * ui.progress(fraction, text) reports; ui.stopped() asks whether Stop was pressed.
 * Resolves to { doc, name, summary, problems }: doc is null when nothing finished. */
export async function raceBrowser(plan, width, join, ui) {
  const problems = [];
  const gpu = await gpuAdapter();
  if (gpu.problem) problems.push(gpu.problem);
  ui.progress(0, "Loading TensorFlow.js from this site\u2026");
  const tf = await loadLibrary();
  const backends = [];
  let lostGpu = null, gpuError = null;
  if (gpu.adapter) {
    if (await tf.setBackend("webgpu").catch(function () { return false; })) {
      backends.push("webgpu");
      const device = tf.backend().device;
      if (device) {
        device.lost.then(function (info) { lostGpu = info.message || info.reason || "no reason given"; });
        device.addEventListener("uncapturederror", function (event) { gpuError = event.error && event.error.message || "a GPU error"; });
      }
    } else {
      problems.push("WebGPU offered an adapter, but TensorFlow.js could not start on it, so only the CPU lane races.");
    }
  }
  if (await tf.setBackend("wasm").catch(function () { return false; })) backends.push("wasm");
  else problems.push("TensorFlow.js could not start WebAssembly in this browser, so the CPU lane is missing.");
  if (!backends.length) return { doc: null, problems: problems };

  const simd = backends.indexOf("wasm") >= 0 ? Boolean(await tf.env().getAsync("WASM_HAS_SIMD_SUPPORT")) : false;
  const data = makeData(plan.rows, plan.inputs, plan.classes);
  const samples = {}, loss = {}, trainers = {};
  backends.forEach(function (b) { samples[b] = {}; loss[b] = {}; trainers[b] = {}; });
  let hidden = false;
  const onVisibility = function () { if (document.visibilityState === "hidden") hidden = true; };
  document.addEventListener("visibilitychange", onVisibility);
  const stopped = function () { return hidden || ui.stopped(); };

  const t0 = performance.now(), budget = plan.budget_s;
  const perRound = plan.batches.length * backends.length;
  let rounds = 0, planned = plan.min_rounds, epochsDone = 0;
  const elapsed = function () { return (performance.now() - t0) / 1000; };

  async function timeOne(backend, batch) {
    await tf.setBackend(backend);
    if (!trainers[backend][batch]) {
      trainers[backend][batch] = makeTrainer(tf, plan, width, batch, data);
      await trainers[backend][batch].epoch(WARM_UP_STEPS, function () { return false; });
    }
    const trainer = trainers[backend][batch];
    const [seconds, last] = await trainer.epoch(trainer.steps, stopped);
    if (backend === "webgpu" && (lostGpu || gpuError)) throw new Error(lostGpu ? "the GPU device was lost (" + lostGpu + ")" : gpuError);
    (samples[backend][batch] = samples[backend][batch] || []).push(seconds);
    loss[backend][batch] = last;
  }

  // The forecast is the measured epochs' pace times the epochs still planned, not capped by the box: a
  // slow device's bar then says how long is really left instead of sitting full at "about 1 s left".
  function say(backend, batch) {
    const done = elapsed(), left = epochsDone ? (done / epochsDone) * Math.max(1, perRound * planned - epochsDone) : null;
    ui.progress(left === null ? 0 : done / (done + left), "Round " + (rounds + 1) + " of " + planned + ": batch " + batch +
      " on " + BACKEND_NAME[backend] + (left === null ? "" : " \u00b7 about " + clock(left) + " left"));
  }

  try {
    while (rounds < plan.max_rounds && backends.length) {
      const roundStart = elapsed();
      // Alternate which backend goes first, so neither always meets the machine's state first.
      const order = rounds % 2 ? backends.slice().reverse() : backends.slice();
      for (const batch of plan.batches) {
        for (const backend of order) {
          if (backends.indexOf(backend) < 0) continue;  // dropped after a failure
          say(backend, batch);  // before the epoch: the text names the backend now running
          try {
            await timeOne(backend, batch);
          } catch (error) {
            if (error instanceof Stop || backend !== "webgpu") throw error;
            backends.splice(backends.indexOf("webgpu"), 1);
            problems.push("The GPU lane stopped at batch " + batch + " (" + String(error.message || error).slice(0, 200) +
              "); the epochs it had finished are kept, and the CPU lane went on.");
          }
          epochsDone += 1;
          await new Promise(function (resolve) { setTimeout(resolve, 0); }); // let the page draw and Stop be pressed
          if (stopped()) throw new Stop();
        }
      }
      rounds += 1;
      // The time box: past the minimum, another round only if one more like this one fits. A
      // slow device stops short of the minimum once a round would overrun twice the box, but
      // never before two rounds (one sample has no spread to judge by).
      const roundTime = elapsed() - roundStart;
      const fit = rounds + Math.floor((budget - elapsed()) / roundTime);
      const overrun = elapsed() + roundTime > 2 * budget;
      planned = Math.min(plan.max_rounds, Math.max(plan.min_rounds, rounds, fit));
      if (rounds >= plan.min_rounds && fit <= rounds) break;
      if (rounds >= Math.min(2, plan.min_rounds) && overrun) break;
    }
  } catch (error) {
    if (!(error instanceof Stop)) throw error;
    problems.push(hidden ? "The tab went to the background, and browsers slow background tabs down, so the run stopped " +
      "there; the epochs finished before are kept." : "Stopped: the epochs finished before are kept.");
  } finally {
    document.removeEventListener("visibilitychange", onVisibility);
    Object.keys(trainers).forEach(function (b) { Object.keys(trainers[b]).forEach(function (k) { trainers[b][k].dispose(); }); });
  }
  const seconds = elapsed();
  const doc = resultsFile(tf, plan, width, join, { samples: samples, loss: loss, adapter: gpu.adapter, simd: simd,
    rounds: Math.max(rounds, 1), seconds: seconds });
  ui.progress(1, "");
  const date = new Date().toISOString().slice(0, 16).replace("T", " ");
  const timed = Object.keys(samples).reduce(function (n, b) {
    return n + Object.keys(samples[b]).reduce(function (m, k) { return m + samples[b][k].length; }, 0);
  }, 0);
  // The batches it reached, not the plan's: a stopped run names where it stopped.
  const reached = plan.batches.filter(function (b) { return Object.keys(samples).some(function (k) { return samples[k][b]; }); });
  const batches = reached.length === 1 ? "batch " + reached[0] : "batches " + reached[0] + " to " + reached[reached.length - 1];
  return { doc: doc, problems: problems, name: "your browser, " + date,
    summary: "Timed " + timed + " epochs of " + plan.rows + " rows at width " + width + " (" + batches + ", " + rounds +
      (rounds === 1 ? " full round" : " full rounds") +
      ") in " + clock(seconds) + "." + lossSentence(loss, plan.batches) };
}
