/* The training half of "Race your browser": it runs in a dedicated worker that browser-race.js starts, so
 * the page stays responsive however long an epoch takes, and Stop ends the worker at once. Where a
 * worker cannot start, browser-race.js loads this same file on the page, and the run yields between steps.
 *
 * It copies the epoch_time experiment: the same rows, widths and batches (the page's plan, from the
 * build), a 512 -> width -> 10 MLP with PyTorch's initialisation, softmax cross-entropy and plain SGD.
 * Every epoch is timed to completion: the clock stops only after the last step's loss has been read
 * back, which waits for everything the GPU had queued. Backends alternate epoch by epoch and rounds
 * repeat the sweep, so a slow moment of the machine lands on both lanes; the time box cuts the smallest
 * batches (from the pace of the larger ones, timed first) and rounds, never an epoch.
 *
 * It reports by messages: "started" (library versions, the GPU adapter, the backends that started),
 * "progress", "sized" (batches left out to fit the box), "epoch" (one timed epoch), "round" (a full round
 * done), "problem", and "end" or "failed".
 */
(function (scope) {
  "use strict";

  const WARM_UP_STEPS = 3; // compiles each batch's kernels (and shaders) before anything is timed
  const BACKEND_NAME = { webgpu: "WebGPU", wasm: "WebAssembly" };
  const SCRIPTS = ["tf.es2017.min.js", "tf-backend-webgpu.es2017.min.js", "tf-backend-wasm.es2017.min.js"];
  const PAUSE_EVERY_MS = 50; // on the page (no worker), the longest the run holds it before letting it draw
  const MIN_TIMED_STEPS = 32; // the fewest steps an epoch timed in part is timed on (sample)

  class Stop extends Error {} // Stop pressed (on the page; a worker is simply ended): keep what finished

  /* Adapters that are a CPU emulating a GPU: a browser flags few of them as a fallback, but names them all. */
  const SOFTWARE_ADAPTER = /swiftshader|llvmpipe|lavapipe|softpipe|basic render|\bwarp\b|software/i;

  /* What a reader is told about an adapter: a browser may report anything, so only strings count. */
  function describeAdapter(info) {
    const text = function (value) { return typeof value === "string" ? value : ""; };
    const name = text(info.description) || [text(info.vendor), text(info.architecture), text(info.device)]
      .filter(Boolean).join(" ") || "unnamed adapter";
    const software = Boolean(info.isFallbackAdapter) ||
      SOFTWARE_ADAPTER.test([info.vendor, info.architecture, info.device, info.description].map(text).join(" "));
    return { name: name.slice(0, 200), vendor: text(info.vendor).slice(0, 100),
      architecture: text(info.architecture).slice(0, 100), fallback_adapter: software };
  }

  /* The GPU TensorFlow.js will use (it asks for the high-performance adapter too), or why there is none. */
  async function gpuAdapter(offered) {
    const gpu = scope.navigator && scope.navigator.gpu;
    if (!offered || !gpu) {
      return { problem: offered ? "This browser offers WebGPU to the page but not to a worker, so only the CPU lane races." :
        "This browser offers no WebGPU (Chrome and Edge 113 or later, Safari 26 and Firefox 141 on Windows do), " +
        "so only the CPU lane races." };
    }
    let adapter = null;
    try { adapter = await gpu.requestAdapter({ powerPreference: "high-performance" }); } catch (error) { /* below */ }
    if (!adapter) {
      return { problem: "WebGPU is here but offered no GPU adapter (the browser may block this GPU or its driver), " +
        "so only the CPU lane races." };
    }
    return { adapter: describeAdapter(adapter.info || {}) };
  }

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
  function makeTrainer(tf, plan, width, batch, data, pause) {
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
        if (pause) await pause();  // on the page only: the time spent drawing it is inside the epoch
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

  function clock(seconds) {
    return seconds >= 90 ? Math.round(seconds / 60) + " min" : Math.max(1, Math.round(seconds)) + " s";
  }

  /* Whether the next smaller batch fits the box. Round 1 runs from the largest batch down, so each batch's cost is
   * forecast from the smallest one timed so far: its cost per step (which only falls with the batch) times the new
   * batch's steps, on every backend. It fits if the rest of round 1 and the remaining minimum rounds, each with it,
   * end inside the box. Small batches hold most of an epoch's steps, so they are the ones left out. */
  function nextFits(next, perStep, rows, roundSoFar, elapsed, rounds, budget) {
    const steps = Math.ceil(rows / next);
    const cost = Object.keys(perStep).reduce(function (sum, k) { return sum + perStep[k] * steps; }, 0);
    return elapsed + cost + (rounds - 1) * (roundSoFar + cost) <= budget;
  }

  /* Load TensorFlow.js (in a worker: its scripts; on the page browser-race.js already has) and pick the backends. */
  async function startBackends(tf, options, post) {
    const problems = [];
    const gpu = await gpuAdapter(options.offerGpu);
    if (gpu.problem) problems.push(gpu.problem);
    const backends = [];
    const watch = { lost: null, error: null };
    if (gpu.adapter) {
      if (await tf.setBackend("webgpu").catch(function () { return false; })) {
        backends.push("webgpu");
        const device = tf.backend().device;
        if (device) {
          device.lost.then(function (info) { watch.lost = info.message || info.reason || "no reason given"; });
          device.addEventListener("uncapturederror", function (event) { watch.error = event.error && event.error.message || "a GPU error"; });
        }
      } else {
        problems.push("WebGPU offered an adapter, but TensorFlow.js could not start on it, so only the CPU lane races.");
      }
    }
    if (await tf.setBackend("wasm").catch(function () { return false; })) backends.push("wasm");
    else problems.push("TensorFlow.js could not start WebAssembly in this browser, so the CPU lane is missing.");
    const simd = backends.indexOf("wasm") >= 0 ? Boolean(await tf.env().getAsync("WASM_HAS_SIMD_SUPPORT")) : false;
    post({ type: "started", tfjs: tf.version.tfjs, tfjs_wasm: String(tf.wasm.version_wasm || "").slice(0, 50), simd: simd,
      adapter: gpu.adapter || null, backends: backends.slice(), problems: problems });
    return { backends: backends, watch: watch, software: Boolean(gpu.adapter && gpu.adapter.fallback_adapter) };
  }

  /* Train and time every batch of the plan at options.width on the backends that started, reporting by post(message).
   * stopped() is asked between epochs; pause, on the page only, lets it draw between steps. */
  async function run(tf, options, post, stopped, pause) {
    const started = await startBackends(tf, options, post);
    const backends = started.backends, watch = started.watch;
    if (!backends.length) return;
    const plan = Object.assign({}, options.plan);
    if (started.software && plan.max_rounds > plan.min_rounds) {
      // An emulated GPU is slow on every size: the fewest rounds that still give a spread.
      plan.max_rounds = plan.min_rounds;
    }
    const data = makeData(plan.rows, plan.inputs, plan.classes);
    const trainers = {}, perStep = {}, epochTime = {}, timedSteps = {};
    backends.forEach(function (b) { trainers[b] = {}; });
    const t0 = performance.now(), budget = plan.budget_s;
    const elapsed = function () { return (performance.now() - t0) / 1000; };
    let rounds = 0, planned = plan.min_rounds, epochsDone = 0;
    // Largest batch first: its epoch is the shortest, so the first numbers come fast and size the rest.
    plan.batches = plan.batches.slice().sort(function (a, b) { return b - a; });

    async function timeOne(backend, batch) {
      await tf.setBackend(backend);
      if (!trainers[backend][batch]) {
        trainers[backend][batch] = makeTrainer(tf, plan, options.width, batch, data, pause);
        await trainers[backend][batch].epoch(WARM_UP_STEPS, function () { return false; });
      }
      const trainer = trainers[backend][batch];
      const steps = Math.min(trainer.steps, timedSteps[batch] || trainer.steps);
      const [timed, loss] = await trainer.epoch(steps, stopped);
      if (backend === "webgpu" && (watch.lost || watch.error)) {
        throw new Error(watch.lost ? "the GPU device was lost (" + watch.lost + ")" : watch.error);
      }
      const seconds = timed * trainer.steps / steps;  // part of an epoch timed (sampled): its steps, scaled to them all
      perStep[backend] = timed / steps;  // the latest is the smallest batch's: the closest forecast
      epochTime[backend + batch] = seconds;
      post({ type: "epoch", backend: backend, batch: batch, seconds: seconds, loss: loss });
    }

    // The forecast is the measured epochs' pace times the epochs still planned, not capped by the box: a
    // slow device's bar then says how long is really left instead of sitting full at "about 1 s left".
    function say(backend, batch) {
      const perRound = plan.batches.length * backends.length;
      const done = elapsed(), left = epochsDone ? (done / epochsDone) * Math.max(1, perRound * planned - epochsDone) : null;
      post({ type: "progress", fraction: left === null ? 0 : done / (done + left), text: "Round " + (rounds + 1) + " of " +
        planned + ": batch " + batch + " on " + BACKEND_NAME[backend] + (left === null ? "" : " \u00b7 about " + clock(left) + " left") });
    }

    // Round 1's seconds so far on `batches`, every backend.
    function roundTime(batches) {
      return batches.reduce(function (sum, b) {
        return sum + backends.reduce(function (s, k) { return s + (epochTime[k + b] || 0); }, 0);
      }, 0);
    }

    // In round 1, after each batch: leave out every smaller one once the next would not fit the box.
    function size(i) {
      if (rounds > 0 || i < 1 || i + 1 >= plan.batches.length) return;  // two batches at least: a line, not a dot
      const done = plan.batches.slice(0, i + 1);
      if (nextFits(plan.batches[i + 1], perStep, plan.rows, roundTime(done), elapsed(), plan.min_rounds, budget)) return;
      post({ type: "sized", kept: done, dropped: plan.batches.slice(i + 1) });
      plan.batches = done;
    }

    // After round 1's largest batch: when the second, which is always kept (two batches make a line), would overrun
    // the box with whole epochs, time part of each of its epochs and scale. Its steps all have the same shape and
    // cost, so the part's time per step is the epoch's. Fewer batches first (size), then fewer steps timed.
    function sample(i) {
      if (rounds > 0 || i !== 0 || plan.batches.length < 2) return;
      const next = plan.batches[1], steps = Math.ceil(plan.rows / next);
      const first = roundTime(plan.batches.slice(0, 1));
      const perStepAll = Object.keys(perStep).reduce(function (sum, k) { return sum + perStep[k]; }, 0);
      const fits = Math.floor((budget - elapsed() - (plan.min_rounds - 1) * first) / (plan.min_rounds * perStepAll));
      if (fits >= steps || steps <= MIN_TIMED_STEPS) return;
      timedSteps[next] = Math.max(MIN_TIMED_STEPS, fits);
      post({ type: "sampled", batch: next, steps: timedSteps[next], of: steps });
    }

    try {
      while (rounds < plan.max_rounds && backends.length) {
        const roundStart = elapsed();
        // Alternate which backend goes first, so neither always meets the machine's state first.
        const order = rounds % 2 ? backends.slice().reverse() : backends.slice();
        for (let i = 0; i < plan.batches.length; i++) {
          const batch = plan.batches[i];
          for (const backend of order) {
            if (backends.indexOf(backend) < 0) continue;  // dropped after a failure
            say(backend, batch);  // before the epoch: the text names the backend now running
            try {
              await timeOne(backend, batch);
            } catch (error) {
              if (error instanceof Stop || backend !== "webgpu") throw error;
              backends.splice(backends.indexOf("webgpu"), 1);
              post({ type: "problem", text: "The GPU lane stopped at batch " + batch + " (" + String(error.message || error).slice(0, 200) +
                "); the epochs it had finished are kept, and the CPU lane went on." });
            }
            epochsDone += 1;
            if (pause) await pause();
            if (stopped()) throw new Stop();
          }
          size(i);
          sample(i);
        }
        rounds += 1;
        post({ type: "round", rounds: rounds });
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
    } finally {
      Object.keys(trainers).forEach(function (b) { Object.keys(trainers[b]).forEach(function (k) { trainers[b][k].dispose(); }); });
    }
    post({ type: "end", seconds: elapsed() });
  }

  /* On the page: a pause that lets the page draw and take a Stop click, at most every PAUSE_EVERY_MS. */
  function pauser() {
    let last = performance.now();
    return async function () {
      if (performance.now() - last < PAUSE_EVERY_MS) return;
      await new Promise(function (resolve) { setTimeout(resolve, 0); });
      last = performance.now();
    };
  }

  scope.crossoverTrain = { run: run, pauser: pauser, describeAdapter: describeAdapter, SCRIPTS: SCRIPTS, BACKEND_NAME: BACKEND_NAME };

  // In a worker: load the library next to this file, then run what the page asks.
  if (typeof WorkerGlobalScope !== "undefined" && scope instanceof WorkerGlobalScope) {
    scope.onmessage = function (event) {
      const options = event.data;
      const post = function (message) { scope.postMessage(message); };
      try {
        SCRIPTS.forEach(function (name) { scope.importScripts(new URL(name, options.vendor).href); });
      } catch (error) {
        post({ type: "failed", message: "could not load TensorFlow.js from this site in a worker", loading: true });
        return;
      }
      const tf = scope.tf;
      // One thread: threads need a cross-origin-isolated page, which a static host cannot promise.
      tf.env().set("WASM_HAS_MULTITHREAD_SUPPORT", false);
      tf.wasm.setWasmPaths(options.vendor);
      run(tf, options, post, function () { return false; }, null).catch(function (error) {
        post({ type: "failed", message: String(error && error.message || error).slice(0, 300) });
      });
    };
  }
})(self);
