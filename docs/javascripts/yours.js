/* "Add your machine": a reader's own results file joins the race (and the gallery).
 *
 * The file is read in the browser and never leaves it: no upload, no request but the
 * site's own schema. It is checked against the same schema the build uses
 * (data/results.schema.json, validated by the vendored @cfworker/json-schema) and then
 * by the rules a schema cannot say, the ones the build's store.py applies to the times
 * the race replays. Every string from the file is inserted with textContent only.
 * A kept file (localStorage) is validated again on every load: storage is input too.
 */
import { Validator } from "./vendor/cfworker-json-schema/index.js";

const MAX_BYTES = 8 * 1024 * 1024; // a full results file is a few hundred kB
const MAX_DEPTH = 32; // a results file nests about 5 deep
const STORAGE_KEYS = { file: "crossover.yours.v1", browser: "crossover.browser.v1" };
const SCHEMA_URL = new URL("../data/results.schema.json", import.meta.url);
const EPOCH = "epoch_time";
const CPU_DEVICES = ["cpu", "wasm"];
const DEVICE_KIND = { cpu: "CPU", cuda: "GPU (CUDA)", mps: "GPU (MPS)", webgpu: "GPU (WebGPU)", wasm: "CPU (WebAssembly)" };
const BROWSER_STACK = "tensorflow.js"; // software.stack of a file "Race your browser" wrote

class FileProblem extends Error {
  constructor(field, problem) { super(problem); this.field = field; }
}

/* JSON Pointer ("#/benchmarks/3/stats") as the build's errors write a field ("$.benchmarks[3].stats"). */
function fieldOf(pointer) {
  return pointer.replace(/^#/, "").split("/").filter(Boolean).map(function (part) {
    const key = part.replace(/~1/g, "/").replace(/~0/g, "~");
    return /^\d+$/.test(key) ? "[" + key + "]" : "." + key;
  }).reduce(function (path, part) { return path + part; }, "$");
}

function quote(value) {
  const text = JSON.stringify(value);
  return text === undefined ? String(value) : text.length > 80 ? text.slice(0, 80) + "…" : text;
}

/* Every number is finite and sane: JSON.parse turns 1e999 into Infinity without a word. */
function checkNumbers(value, where, limit) {
  if (typeof value === "number") {
    if (!isFinite(value)) throw new FileProblem(where, "is a number too large to represent (such as 1e999)");
    if (Math.abs(value) > limit) throw new FileProblem(where, quote(value) + " is out of range");
  } else if (Array.isArray(value)) {
    value.forEach(function (item, i) { checkNumbers(item, where + "[" + i + "]", limit); });
  } else if (value && typeof value === "object") {
    Object.keys(value).forEach(function (key) { checkNumbers(value[key], where + "." + key, limit); });
  }
}

/* How deeply objects and arrays nest, counted without recursion (a hostile file nests thousands deep). */
function nestingDepth(root) {
  let deepest = 0;
  const stack = [[root, 0]];
  while (stack.length) {
    const [value, depth] = stack.pop();
    if (!value || typeof value !== "object") continue;
    if (depth + 1 > MAX_DEPTH) return depth + 1;
    deepest = Math.max(deepest, depth + 1);
    Object.keys(value).forEach(function (key) { stack.push([value[key], depth + 1]); });
  }
  return deepest;
}

function checkSchema(doc, schema, join) {
  if (!doc || typeof doc !== "object" || Array.isArray(doc)) throw new FileProblem("$", "expected a JSON object at the top level");
  if (nestingDepth(doc) > MAX_DEPTH) {
    throw new FileProblem("$", "this is not a Crossover results file (objects nested more than " + MAX_DEPTH + " deep)");
  }
  if (!("schema_version" in doc) && !("benchmarks" in doc)) {
    throw new FileProblem("$", "this is not a Crossover results file (it has no schema_version and no benchmarks)");
  }
  if (Number.isInteger(doc.schema_version) && doc.schema_version > join.schema_version) {
    throw new FileProblem("$.schema_version", "written by a newer Crossover (schema " + doc.schema_version +
      "); this site reads schema " + join.schema_version);
  }
  const result = new Validator(schema, "2020-12", false).validate(doc);
  if (!result.valid) {
    // The deepest error names the field itself, not the objects around it.
    const deepest = result.errors.slice().sort(function (a, b) {
      return b.instanceLocation.length - a.instanceLocation.length;
    })[0];
    throw new FileProblem(fieldOf(deepest.instanceLocation), deepest.error);
  }
  checkNumbers(doc, "$", join.max_number);
  if (doc.mode !== join.mode) {
    throw new FileProblem("$.mode", doc.mode === "quick"
      ? "this file was measured in quick mode (tiny sizes, for tests): its times cannot race this site's full " +
        "measurements; run the notebook again without CROSSOVER_QUICK=1"
      : "this file holds " + doc.mode + "-mode measurements, but this site was built in " + join.mode + " mode");
  }
}

/* The epoch points the race can use: same rows, widths and batches as this page's. */
function epochPoints(doc, race) {
  if (!doc.experiments[EPOCH]) {
    throw new FileProblem("$.experiments." + EPOCH, "has no epoch times: the race needs the " + EPOCH +
      " experiment (the lab notebook and make measure both record it)");
  }
  const [low, high] = race.join.time_bounds;
  const used = [];
  let leftOut = 0;
  doc.benchmarks.forEach(function (bench, i) {
    if (bench.group !== EPOCH || (bench.status || "ok") !== "ok") return;
    const where = "$.benchmarks[" + i + "]";
    const s = bench.stats, p = bench.params;
    if (!s) throw new FileProblem(where + ".stats", "is missing from a measured point");
    if (bench.unit !== "s") throw new FileProblem(where + ".unit", quote(bench.unit) + " is not seconds");
    ["median", "q1", "q3", "min", "max"].forEach(function (key) {
      if (!(s[key] >= low && s[key] <= high)) {
        throw new FileProblem(where + ".stats." + key, quote(s[key]) + " is not a time between " + low + " s and " + high + " s");
      }
    });
    if (!(s.min <= s.median && s.median <= s.max)) throw new FileProblem(where + ".stats.median", "is outside [min, max]");
    if (!(s.q1 <= s.median && s.median <= s.q3)) throw new FileProblem(where + ".stats.median", "is outside [q1, q3]");
    ["width", "batch", "rows"].forEach(function (key) {
      if (!Number.isInteger(p[key]) || p[key] < 1) throw new FileProblem(where + ".params." + key, quote(p[key]) + " is not a positive whole number");
    });
    if (race.join.rows.indexOf(p.rows) < 0 || race.widths.indexOf(p.width) < 0 || race.batches.indexOf(p.batch) < 0) {
      leftOut += 1;
      return;
    }
    used.push(bench);
  });
  if (!used.length) {
    throw new FileProblem("$.benchmarks", "no epoch time matches this race (epochs of " + race.join.rows.join(" or ") +
      " rows, widths " + race.widths.join(", ") + ", batches " + race.batches.join(", ") + ")");
  }
  return { used: used, leftOut: leftOut };
}

/* A string from the file as the page shows it: bidirectional controls removed, as the build does,
 * so an unclosed right-to-left override cannot make "16" read "61" in the words around it. */
const BIDI_CONTROLS = /[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/g;
function plain(text) { return String(text).replace(BIDI_CONTROLS, ""); }

function isBrowserRun(doc) { return doc.software.stack === BROWSER_STACK; }

function threads(n) { return n + (n === 1 ? " thread" : " threads"); }

/* The widest vector or matrix extension a file records, e.g. ", AVX2": the build's own table
 * (dataset.VECTOR_UNITS, shipped in the race data), so a file is named as the build names it. */
function vectorUnits(cpu, join) {
  const isa = cpu.isa || [];
  const found = join.vector_units.find(function (pair) { return isa.indexOf(pair[0]) >= 0; });
  return found ? ", " + found[1] : "";
}

function deviceLabel(doc, device, join) {
  const cpu = doc.machine_info.cpu, gpu = doc.machine_info.gpu;
  if (isBrowserRun(doc)) {  // a browser's stacks, named as such: not PyTorch, not a named CPU
    return device === "webgpu"
      ? "Your browser: GPU (WebGPU, " + (gpu && gpu.name ? plain(gpu.name) : "unnamed adapter") +
        (gpu && gpu.fallback_adapter ? ", a software fallback: a CPU emulating a GPU" : "") + ")"
      : "Your browser: CPU (WebAssembly, " + threads(cpu.threads_used) + ")";
  }
  if (device === "cpu") return "CPU: " + plain(cpu.brand) + ", " + cpu.threads_used + " threads" + vectorUnits(cpu, join);
  return (gpu && gpu.name ? plain(gpu.name) : "GPU") + " · " + DEVICE_KIND[device];
}

function provenanceOf(doc, fileName, slot) {
  const sw = doc.software;
  if (isBrowserRun(doc)) {
    return plain("Your browser's run" + (slot === "file" ? " (file " + fileName + ")" : "") + ": measured " + doc.datetime + " with TensorFlow.js " + sw.tfjs +
      (sw.tfjs_webgpu ? ", WebGPU backend " + sw.tfjs_webgpu : "") + (sw.tfjs_wasm ? ", WebAssembly backend " + sw.tfjs_wasm : "") +
      " in " + sw.browser);
  }
  return plain("Your file " + fileName + ": measured " + doc.datetime + " with torch " + sw.torch +
    " and Python " + sw.python + (sw.os ? " on " + sw.os : ""));
}

function machineLabel(doc, join) {
  const cpu = doc.machine_info.cpu;
  return isBrowserRun(doc) ? "Your browser (TensorFlow.js)"
    : plain(cpu.brand) + " (" + cpu.threads_used + " threads" + vectorUnits(cpu, join) + "), your file";
}

/* A step's cost is its epoch over its steps; how a batch-B step compares with a 1-sample one. */
function regime(points, batch, race) {
  const one = points["1"], here = points[String(batch)];
  if (!one || !here) return null;
  const ratio = (here.seconds / here.steps) / (one.seconds / one.steps);
  return { ratio: ratio, kind: ratio < race.fixedCostRatio ? "fixed" : "throughput", same: ratio < race.meaningfulRatio };
}

/* The race's rule for a lead: at least the meaningful ratio, with the quartiles apart. */
function ahead(slow, fast, race) {
  return slow.seconds >= fast.seconds * race.meaningfulRatio && slow.q1 > fast.q3;
}

/* The first batch of the unbroken run of GPU leads that reaches the largest batch both lanes
 * measured (the build's analysis.crossover): a batch only other machines measured is no gap. */
function crossover(cpu, gpu, batches, race) {
  const common = batches.filter(function (b) { return cpu[String(b)] && gpu[String(b)]; });
  let found = null;
  for (let i = common.length - 1; i >= 0; i--) {
    const b = String(common[i]);
    if (!ahead(cpu[b], gpu[b], race)) break;
    found = common[i];
  }
  return found;
}

/* Parse, validate and turn a reader's results file into race lanes. Throws FileProblem.
 * `slot` names where the lanes come from ("file" or "browser"), so both can race at once. */
export function readResults(text, schema, race, fileName, slot = "file") {
  let doc;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    throw new FileProblem("$", "not valid JSON (" + String(error.message).slice(0, 120) + ")");
  }
  checkSchema(doc, schema, race.join);
  const points = epochPoints(doc, race);
  const machineId = "yours-" + slot + "-" + doc.machine_id;
  const provenance = provenanceOf(doc, fileName, slot);
  const epochs = {};
  points.used.forEach(function (bench) {
    const p = bench.params, device = p.device;
    epochs[device] = epochs[device] || {};
    epochs[device][p.width] = epochs[device][p.width] || {};
    epochs[device][p.width][p.batch] = {
      seconds: bench.stats.median, q1: bench.stats.q1, q3: bench.stats.q3, rows: p.rows,
      steps: Math.ceil(p.rows / p.batch),
    };
  });
  const lanes = Object.keys(epochs).sort().map(function (device) {
    Object.keys(epochs[device]).forEach(function (width) {
      const byBatch = epochs[device][width];
      Object.keys(byBatch).forEach(function (batch) { byBatch[batch].regime = regime(byBatch, batch, race); });
    });
    return { id: "yours-" + slot + "-" + device, slot: slot, machine: doc.machine_id, machine_id: machineId, device: device,
      label: deviceLabel(doc, device, race.join), kind: race.join.gpu_devices.indexOf(device) >= 0 ? "GPU" : "CPU",
      estimate: false, yours: true, provenance: provenance, epochs: epochs[device] };
  });
  // The build's own list (dataset.GPU_DEVICES), so a page and a reader's file agree on what a GPU is.
  const gpu = race.join.gpu_devices.find(function (d) { return epochs[d]; });
  const cpu = CPU_DEVICES.find(function (d) { return epochs[d]; });
  const crossovers = {};
  if (gpu && cpu) {
    race.widths.forEach(function (w) {
      if (epochs[cpu][w] && epochs[gpu][w]) crossovers[String(w)] = crossover(epochs[cpu][w], epochs[gpu][w], race.batches, race);
    });
  }
  return { lanes: lanes, leftOut: points.leftOut, provenance: provenance,
    machine: { id: machineId, label: machineLabel(doc, race.join), yours: true, crossover: crossovers },
    verdict: gpu && cpu ? function (width) { return verdict(epochs[cpu][width], epochs[gpu][width], race); } : null };
}

/* A sentence about one machine's own CPU and GPU lanes at one width, by the race's rules:
 * where the GPU pulls ahead for good, by how much at the largest batch, "about the same" inside the spread. */
export function verdict(cpu, gpu, race) {
  if (!cpu || !gpu) return "";
  const common = race.batches.filter(function (b) { return cpu[String(b)] && gpu[String(b)]; });
  if (!common.length) return "";
  const last = String(common[common.length - 1]), first = String(common[0]);
  const from = crossover(cpu, gpu, race.batches, race);
  const ratio = function (a, b) { return (a.seconds / b.seconds).toFixed(1) + "×"; };
  const at = function (b) {
    if (ahead(cpu[b], gpu[b], race)) return "at batch " + b + " the GPU finishes " + ratio(cpu[b], gpu[b]) + " faster";
    if (ahead(gpu[b], cpu[b], race)) return "at batch " + b + " the CPU finishes " + ratio(gpu[b], cpu[b]) + " faster";
    return "at batch " + b + " the two are about the same (within the spread of the timed epochs)";
  };
  const lead = from === null ? "The GPU is not ahead beyond the spread at the largest batch, so there is no crossover here"
    : from === common[0] ? "The GPU is ahead at every batch measured"
    : "The GPU pulls ahead from batch " + from + " on";
  return lead + "; " + at(first) + (last !== first ? ", and " + at(last) : "") + ".";
}

/* ---- the page: a slot is one source of lanes (a file, or a browser run) that can be kept or forgotten ---- */

function storage() {
  try { return window.localStorage; } catch (error) { return null; } // blocked storage is not an error
}

let schemaRequest = null; // the build's schema, fetched once from this site when first needed
function buildSchema() {
  schemaRequest = schemaRequest || fetch(SCHEMA_URL).then(function (response) { return response.json(); });
  schemaRequest.catch(function () { schemaRequest = null; });
  return schemaRequest;
}

/* One source of lanes marked yours: its elements are #<prefix>-keep, -forget, -status and -problem.
 * What it holds joins the race with race.setYours(name, lanes, machine), replacing its own earlier lanes only. */
function makeSlot(name, box, race, prefix, words) {
  const $ = function (part) { return box.querySelector("#" + prefix + "-" + part); };
  const keep = $("keep"), forget = $("forget"), status = $("status"), problem = $("problem");
  const key = STORAGE_KEYS[name];
  let current = null; // what is now in the race: kept when "keep" is ticked, before or after adding it

  function say(text) { status.textContent = text; problem.textContent = ""; }
  function fail(what, error) {
    // What is already in the page stays there: say so, or the reader thinks it is gone too.
    status.textContent = current ? "Still showing " + current.name + "." : "";
    const detail = error instanceof FileProblem ? "field " + error.field + ": " + error.message
      : String(error && error.message || error);
    problem.textContent = what + ": " + detail;
  }

  function show(result, restored, extra) {
    if (race.setYours) race.setYours(name, result.lanes, result.machine);
    if (race.render) race.render(result);
    if (words.shown) words.shown(result, current.text);
    say((restored ? "Restored from this browser: " : words.added) +
      result.lanes.map(function (l) { return l.label; }).join(" and ") + ", marked yours" + (race.setYours ? " in the race above. " : ". ") +
      (extra ? extra + " " : "") + result.provenance + "." +
      (result.leftOut ? " " + result.leftOut + " epoch times of other sizes were left out." : "") +
      " " + words.kept);
    forget.hidden = false;
  }

  /* Validate `text` as a results file and race it; returns the result, or null after saying why not. */
  async function add(text, fileName, fromStorage, extra) {
    try {
      const result = readResults(text, await buildSchema(), race, fileName, name);
      current = { name: fileName, text: text };
      show(result, fromStorage, extra);
      if (keep.checked && !fromStorage) remember();
      return result;
    } catch (error) {
      if (fromStorage) {
        drop();
        fail(words.dropped + " (" + fileName + ") was dropped", error);
      } else {
        fail(fileName + " was not added", error);
      }
      return null;
    }
  }

  function drop() {
    const store = storage();
    try { if (store) store.removeItem(key); } catch (error) { /* storage went away: nothing more to drop */ }
    keep.checked = false;
  }

  function remember() {
    const store = storage();
    if (!store || !current) return;
    try { store.setItem(key, JSON.stringify(current)); }
    catch (error) { say(status.textContent + " It is too big to keep in this browser."); }
  }

  keep.addEventListener("change", function () {
    if (keep.checked) remember();
    else drop();
  });
  forget.addEventListener("click", function () {
    drop();
    if (race.setYours) race.setYours(name, [], null);
    if (race.render) race.render(null);
    current = null;
    forget.hidden = true;
    if (words.shown) words.shown(null, null);
    say(words.forgotten);
  });

  /* A kept entry is input like any other: anything but {name: string, text: string} is dropped with a word. */
  function restore() {
    const store = storage();
    let kept = null;
    try { kept = store && store.getItem(key); } catch (error) { return; } // storage blocked: nothing kept
    if (!kept) return;
    let saved = null;
    try { saved = JSON.parse(kept); } catch (error) { /* not JSON: dropped below */ }
    if (keptShape(saved)) {
      keep.checked = true;
      add(saved.text, saved.name, true);
      return;
    }
    drop();
    fail(words.dropped + " was dropped", new Error("what this browser kept is not a results file as this page stores one"));
  }

  /* A problem beside what is shown (the run stopped early, no WebGPU): what joined stays said. */
  function warn(text) { problem.textContent = text; }

  return { add: add, say: say, fail: fail, warn: warn, restore: restore };
}

const FILE_WORDS = {
  added: "Added: ", kept: "It stays in this browser after a reload only while \u201ckeep\u201d is ticked.",
  dropped: "The file kept from an earlier visit", forgotten: "Forgotten: your file is gone from this page and from this browser.",
};
const BROWSER_WORDS = {
  added: "Your browser joined the race: ", kept: "They stay in this browser after a reload only while \u201ckeep\u201d is ticked.",
  dropped: "The browser run kept from an earlier visit",
  forgotten: "Forgotten: your browser's lanes are gone from this page and from this browser.",
};

/* "Add your machine": a file picked or dropped on the box. */
function setupFile(box, race) {
  const slot = makeSlot("file", box, race, "yours", FILE_WORDS);
  const input = box.querySelector("#yours-file");

  function readFile(file) {
    if (!file) return;
    if (file.size > MAX_BYTES) {
      slot.fail(file.name + " was not added", new FileProblem("$", "the file is " + (file.size / 1e6).toFixed(1) + " MB; the race reads files up to " +
        MAX_BYTES / (1024 * 1024) + " MB (a full results file is a few hundred kB)"));
      return;
    }
    file.text().then(function (text) { slot.add(text, file.name, false); },
      function (error) { slot.fail(file.name + " was not added", error); });
  }

  input.addEventListener("change", function () { readFile(input.files[0]); input.value = ""; });
  // A file dropped beside the box would make the browser leave the page to show it.
  ["dragover", "drop"].forEach(function (type) {
    document.addEventListener(type, function (event) { if (!box.contains(event.target)) event.preventDefault(); });
  });
  box.addEventListener("dragover", function (event) { event.preventDefault(); box.classList.add("yours--over"); });
  box.addEventListener("dragleave", function () { box.classList.remove("yours--over"); });
  box.addEventListener("drop", function (event) {
    event.preventDefault();
    box.classList.remove("yours--over");
    readFile(event.dataTransfer.files[0]);
  });
  box.hidden = false;
  slot.restore();
}

/* "Race your browser": nothing loads until the button is pressed. Then browser-race.js trains the
 * race's model in this browser and its results file joins the race through a slot, like a file. */
function setupBrowser(box, race, plan) {
  const $ = function (part) { return box.querySelector("#browser-" + part); };
  if (!plan) {  // nothing of this build's mode to copy: say so rather than offer a button that cannot work
    $("start").disabled = true;
    $("status").textContent = "This build measured no epochs on its own CPU, so there are no sizes to race in your browser.";
    box.hidden = false;
    return;
  }
  const start = $("start"), stop = $("stop"), bar = $("progress"), eta = $("eta");
  const download = $("download"), said = $("verdict");
  let stopping = false, link = null, shownWidth = null;
  const words = Object.assign({}, BROWSER_WORDS, {
    shown: function (result, text) {
      if (link) URL.revokeObjectURL(link);
      link = text ? URL.createObjectURL(new Blob([text], { type: "application/json" })) : null;
      download.hidden = !link;
      if (link) download.href = link;
      said.textContent = result ? sentence(result) : "";
    },
  });
  const slot = makeSlot("browser", box, race, "browser", words);

  function sentence(result) {
    const width = shownWidth || Object.keys(result.lanes[0].epochs)[0];
    if (!result.verdict) return "At width " + width + " only the CPU lane ran, so there is no crossover to look for.";
    return "In your browser, at width " + width + ": " + result.verdict(width);
  }

  function chosenWidth() {  // the race's width when the browser plan has it, else the plan's nearest
    const chosen = Number(document.getElementById("race-width").value);
    return plan.widths.reduce(function (best, w) { return Math.abs(w - chosen) < Math.abs(best - chosen) ? w : best; }, plan.widths[0]);
  }

  function done() { start.disabled = false; stop.hidden = true; bar.hidden = true; eta.textContent = ""; }

  start.addEventListener("click", async function () {
    const width = chosenWidth();
    start.disabled = true; stop.hidden = false; stop.disabled = false; bar.hidden = false; bar.value = 0; stopping = false;
    slot.say("Loading TensorFlow.js from this site\u2026");
    let run;
    try {
      const module = await import("./browser-race.js");
      run = await module.raceBrowser(plan, width, race.join, {
        progress: function (fraction, text) { bar.value = fraction; eta.textContent = text; },
        stopped: function () { return stopping; },
      });
    } catch (error) {
      slot.fail("The browser race could not run", error);
      done();
      return;
    }
    if (!run.doc) {
      slot.fail("Nothing was timed", new Error(run.problems.join(" ")));
    } else {
      shownWidth = String(width);
      await slot.add(JSON.stringify(run.doc), run.name, false, run.summary);
      if (run.problems.length) slot.warn(run.problems.join(" "));
    }
    done(); // only now: the page has said everything about this run
  });
  stop.addEventListener("click", function () { stopping = true; stop.disabled = true; eta.textContent = "Stopping after this epoch\u2026"; });
  box.hidden = false;
  slot.restore();
}

function keptShape(saved) {
  return saved !== null && typeof saved === "object" && !Array.isArray(saved) && typeof saved.text === "string" &&
    typeof saved.name === "string" && saved.name.length <= 255 && saved.text.length <= MAX_BYTES;
}

/* On the race page the race provides the page's sizes; on the gallery the race data does, and a card shows the file. */
function boot() {
  const box = document.getElementById("yours");
  if (!box || box.dataset.ready) return;
  box.dataset.ready = "1";
  // Both pages carry the race's data: the sizes and rules a file must match come from it.
  const data = JSON.parse(document.getElementById("race-data").textContent);
  const race = { join: data.join, widths: data.widths, batches: data.batches, fixedCostRatio: data.fixed_cost_ratio,
    meaningfulRatio: data.meaningful_ratio };
  if (!document.getElementById("race")) {  // the gallery: a card
    race.render = function (result) { renderCard(result, data); };
    setupFile(box, race);
    return;
  }
  const join = function () {
    race.setYours = window.crossoverRace.setYours;
    setupFile(box, race);
    const browserBox = document.getElementById("browser");
    if (browserBox) setupBrowser(browserBox, race, data.browser);
  };
  if (window.crossoverRace) join();
  else document.addEventListener("crossover:race-ready", join, { once: true });
}

/* "12.3 ms": three significant figures in the largest unit that keeps the number at 1 or more. */
function seconds(value) {
  const unit = [[1, "s"], [1e-3, "ms"], [1e-6, "µs"], [1e-9, "ns"]].find(function (u) { return value >= u[0]; }) || [1e-9, "ns"];
  return (value / unit[0]).toPrecision(3) + " " + unit[1];
}

/* The gallery's card: the file's provenance and its epoch times at the race's default width. */
function renderCard(result, data) {
  const card = document.getElementById("yours-card");
  card.textContent = "";
  if (!result) { card.hidden = true; return; }
  const width = data.widths.indexOf(32) >= 0 ? "32" : String(data.widths[0]);
  const make = function (tag, text) { const node = document.createElement(tag); if (text !== undefined) node.textContent = text; return node; };
  card.appendChild(make("p", result.provenance + "."));
  const table = make("table"), head = make("tr");
  table.appendChild(make("caption", "Your machine: one epoch of " + data.join.rows.join(" or ") + " rows at width " + width + ", by batch size"));
  head.appendChild(make("th", "batch"));
  result.lanes.forEach(function (lane) { head.appendChild(make("th", lane.label)); });
  table.appendChild(head);
  data.batches.forEach(function (batch) {
    const row = make("tr");
    row.appendChild(make("td", String(batch)));
    result.lanes.forEach(function (lane) {
      const point = (lane.epochs[width] || {})[batch];
      const cell = make("td", point ? seconds(point.seconds) : "not measured");
      if (point) cell.setAttribute("data-seconds", String(point.seconds));
      row.appendChild(cell);
    });
    table.appendChild(row);
  });
  card.appendChild(table);
  card.hidden = false;
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", boot);
else boot();
