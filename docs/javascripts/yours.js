/* "Add your machine": a reader's own results file joins the race (and the gallery).
 *
 * The file is read in the browser and never leaves it: no upload, no request but the
 * site's own schema. It is checked against the same schema the build uses
 * (data/results.schema.json, validated by the vendored @cfworker/json-schema) and then
 * by the rules a schema cannot say, the ones the build's store.py applies to the times
 * the race replays. Every string from the file is inserted with textContent only.
 * A kept file (localStorage) is validated again on every load: storage is input too.
 */

const MAX_BYTES = 8 * 1024 * 1024; // a full results file is a few hundred kB
const MAX_DEPTH = 32; // a results file nests about 5 deep
const STORAGE_KEYS = { file: "crossover.yours.v1", browser: "crossover.browser.v1" };
const SCHEMA_URL = new URL("../data/results.schema.json", import.meta.url);
const EPOCH = "epoch_time";
const CPU_DEVICES = ["cpu", "wasm"];
const DEVICE_KIND = { cpu: "CPU", cuda: "GPU (CUDA)", mps: "GPU (MPS)", webgpu: "GPU (WebGPU)", wasm: "CPU (WebAssembly)" };
const BROWSER_STACK = "tensorflow.js"; // software.stack of a file "Race your browser" wrote
// A reader's epoch may be this many times faster than this build's fastest lane, or slower than its
// slowest, at one size: wider than any gap between real machines (an H200 and a 2-core CPU are ~100×
// apart), far narrower than a typo or a wrong unit (80,000 s for a 64-row batch).
const PLAUSIBLE_FACTOR = 1000;
const HOW_TO_MAKE_ONE = "make one with \u201cRace your browser\u201d on the race page, or on your machine with " +
  "make measure (python -m build_hooks.measure) in a copy of this project";
const REMEASURE = "a file Crossover writes always has this right, so measure again rather than edit the file";

class FileProblem extends Error {
  constructor(field, problem) { super(problem); this.field = field; this.where = ""; this.about = ""; }
  /* As a reader reads it: the field in words, what is wrong and what to do, then where exactly. */
  describe() {
    const where = this.where + (this.about ? " (" + this.about + ")" : "");
    // "(field $)" would only say "the whole file" in a programmer's notation.
    return (where ? where + ": " : "") + this.message + (this.field === "$" ? "" : " (field " + this.field + ")");
  }
}

/* JSON Pointer ("#/benchmarks/3/stats") as the build's errors write a field ("$.benchmarks[3].stats"). */
function fieldOf(pointer) {
  return pointerParts(pointer).map(function (key) {
    return /^\d+$/.test(key) ? "[" + key + "]" : "." + key;
  }).reduce(function (path, part) { return path + part; }, "$");
}

function pointerParts(pointer) {
  return pointer.replace(/^#/, "").split("/").filter(Boolean).map(function (part) {
    return part.replace(/~1/g, "/").replace(/~0/g, "~");
  });
}

/* A value as a message quotes it: numbers as numbers (Infinity, not JSON's null), text in quotes, short. */
function quote(value) {
  if (typeof value === "number") return String(value);
  const text = JSON.stringify(value);
  return text === undefined ? String(value) : text.length > 80 ? text.slice(0, 80) + "…" : text;
}

/* What a reader calls a field whose key does not say it; any other key is read with "_" as a space
 * (store.FIELD_NAMES is the build's table). */
const FIELD_NAMES = { machine_id: "machine id", machine_info: "machine description", cpu: "CPU", gpu: "GPU",
  commit_info: "commit", datetime: "date", benchmarks: "list of benchmarks", threads_used: "thread count",
  torch: "torch version", python: "Python version", isa: "instruction-set list", stats: "statistics", data: "samples" };

/* "$.benchmarks[0].params" as a reader says it: "benchmark 1 (its name), its params" (store.field_words). */
function fieldWords(field, doc) {
  let parts = (field.match(/\.[^.[\]]+|\[\d+\]/g) || []).map(function (part) {
    return part[0] === "[" ? Number(part.slice(1, -1)) : part.slice(1);
  });
  let anchor = "";
  if (parts[0] === "benchmarks" && typeof parts[1] === "number") {
    anchor = benchmarkWords(doc, parts[1]);
    parts = parts.slice(2);
  } else if (parts[0] === "experiments" && parts.length > 1) {
    anchor = "experiment " + quote(parts[1]);
    parts = parts.slice(2);
  }
  const item = typeof parts[parts.length - 1] === "number" ? ", item " + (parts.pop() + 1) : "";
  const keys = parts.filter(function (key) { return typeof key === "string"; })
    .map(function (key) { return FIELD_NAMES[key] || key.replace(/_/g, " "); });
  if (!keys.length) return (anchor || "the file") + item;
  const inside = keys.length > 1 ? " in " + (anchor ? "its " : "the ") + keys[keys.length - 2] : "";
  return (anchor ? anchor + ", its " : "the ") + keys[keys.length - 1] + inside + item;
}

function benchmarkWords(doc, index) {
  const bench = doc && Array.isArray(doc.benchmarks) ? doc.benchmarks[index] : null;
  const name = bench && typeof bench.name === "string" ? plain(bench.name) : null;
  return "benchmark " + (index + 1) + (name ? " (" + (name.length > 60 ? name.slice(0, 60) + "…" : name) + ")" : "");
}

/* The schema's patterns in words, keyed by the pattern itself (store.PATTERN_WORDS is the build's table). */
const PATTERN_WORDS = {
  "^[a-z0-9][a-z0-9-]{0,80}$": "lower-case letters a-z, digits and hyphens only, starting with a letter or digit, " +
    "at most 81 characters (such as \"my-laptop-m3\")",
  "^[a-z][a-z0-9_]{0,63}$": "a lower-case letter, then lower-case letters, digits or underscores, at most 64 " +
    "characters (such as \"epoch_time\")",
  "^[0-9a-f]{7,64}$": "a git commit id: 7 to 64 hexadecimal digits 0-9 and a-f",
  "^[a-z0-9_]{1,32}$": "lower-case letters, digits and underscores, 1 to 32 characters (such as \"avx2\")",
};
const TYPE_WORDS = { object: "an object", array: "a list", string: "text", boolean: "true or false", "null": "null",
  integer: "a whole number", number: "a number" };

function whatIs(value) {
  if (typeof value === "string") return "the text " + quote(value);
  if (typeof value === "number") return "the number " + quote(value);
  return value === null ? "null" : Array.isArray(value) ? "a list" : typeof value === "object" ? "an object" : "true or false";
}

function list(values) { return values.map(quote).join(", "); }

/* Each schema keyword's complaint in words: f(the bad value, the keyword's value in the schema, its subschema)
 * (store.SCHEMA_WORDS is the build's table). */
const SCHEMA_WORDS = {
  type: function (x, v) { return "is " + whatIs(x) + ", but must be " + [].concat(v).map(function (t) { return TYPE_WORDS[t] || t; }).join(" or ") + "; " + REMEASURE; },
  pattern: function (x, v) { return quote(x) + " is not allowed: it must be " + (PATTERN_WORDS[v] || "text matching " + v) + "; change it to such a value"; },
  required: function (x, v) { return "has no " + list(v.filter(function (k) { return !(k in x); })) + ", which every results file has here; " + REMEASURE; },
  "enum": function (x, v) { return quote(x) + " is not one of " + list(v) + "; change it to one of them"; },
  "const": function (x, v) { return quote(x) + " must be " + quote(v); },
  minimum: function (x, v) { return quote(x) + " is below the smallest allowed value, " + quote(v) + "; " + REMEASURE; },
  exclusiveMinimum: function (x, v) { return quote(x) + " must be more than " + quote(v) + "; " + REMEASURE; },
  maximum: function (x, v) { return quote(x) + " is above the largest allowed value, " + quote(v) + "; " + REMEASURE; },
  exclusiveMaximum: function (x, v) { return quote(x) + " must be less than " + quote(v) + "; " + REMEASURE; },
  minLength: function (x, v) { return quote(x) + " is shorter than the " + v + " characters it must have at least"; },
  maxLength: function (x, v) { return "is " + x.length + " characters long; at most " + v + " are allowed: shorten it"; },
  minItems: function (x, v) { return "has " + x.length + " items; at least " + v + " are needed; " + REMEASURE; },
  maxItems: function (x, v) { return "has " + x.length + " items; at most " + v + " are allowed"; },
  uniqueItems: function () { return "lists the same item twice; list each once"; },
  // additionalProperties: false reaches the extra key itself as a `false` schema.
  "false": function () { return "is not a field a Crossover results file has here: remove it"; },
  oneOf: function (x) { return "is " + whatIs(x) + ", which is none of the forms this field takes; " + REMEASURE; },
  anyOf: function (x) { return "is " + whatIs(x) + ", which is none of the forms this field takes; " + REMEASURE; },
  not: function () { return "must not be here in this form; " + REMEASURE; },
};
// Keywords that only say "something inside failed": the error worth reading is one of theirs.
const WRAPPERS = ["$ref", "$recursiveRef", "if", "properties", "patternProperties", "additionalProperties", "items",
  "prefixItems", "additionalItems", "allOf", "dependentSchemas", "propertyNames", "unevaluatedProperties", "oneOf", "anyOf"];

/* The subschema at a keyword location ("#/else/$ref/properties/…"), following the schema's local $refs. */
function schemaAt(schema, location) {
  return pointerParts(location).reduce(function (node, key) {
    if (!node || typeof node !== "object") return null;
    return key === "$ref" && typeof node.$ref === "string" ? schemaAt(schema, node.$ref) : node[key];
  }, schema);
}

function valueAt(doc, pointer) {
  return pointerParts(pointer).reduce(function (node, key) { return node == null ? node : node[key]; }, doc);
}

/* The one schema error a reader gets, in words: the deepest that is not a wrapper; at one depth, a type
 * complaint last, as it is the alternative not meant ("null" beside a GPU record that lacks a key). */
function schemaProblem(errors, schema, doc) {
  const leaves = errors.filter(function (e) { return WRAPPERS.indexOf(e.keyword) < 0; });
  const depth = function (e) { return 2 * pointerParts(e.instanceLocation).length + (e.keyword === "type" ? 0 : 1); };
  const error = (leaves.length ? leaves : errors).slice().sort(function (a, b) { return depth(b) - depth(a); })[0];
  const at = error.keyword === "false" ? null : schemaAt(schema, error.keywordLocation.replace(/\/[^/]*$/, ""));
  const aboutKey = error.keywordLocation.indexOf("/propertyNames/") >= 0;  // a key's name, not its value
  const value = aboutKey ? pointerParts(error.instanceLocation).pop() : valueAt(doc, error.instanceLocation);
  const words = SCHEMA_WORDS[error.keyword];
  const what = words && (error.keyword === "false" || at) ? words(value, at && at[error.keyword], at) : error.error;
  const field = fieldOf(aboutKey ? error.instanceLocation.replace(/\/[^/]*$/, "") : error.instanceLocation);
  const problem = new FileProblem(field, (aboutKey ? "the name " : field === "$" ? "the file " : "") + what);
  problem.about = problem.field !== "$" && at && typeof at.description === "string" ? at.description.split(/[.:;] /)[0].replace(/\.$/, "").slice(0, 120) : "";
  return problem;
}

/* Every number is finite and sane: JSON.parse turns 1e999 into Infinity without a word. */
function checkNumbers(value, where, limit) {
  if (typeof value === "number") {
    if (!isFinite(value)) {
      throw new FileProblem(where, "is " + quote(value) + ": the file writes a number too large to represent " +
        "(such as 1e999), and a measurement is always a finite number; " + REMEASURE);
    }
    if (Math.abs(value) > limit) {
      throw new FileProblem(where, quote(value) + " is out of range (a results file's numbers lie within ±" + limit + "); " + REMEASURE);
    }
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

/* Files this page cannot race, told apart before the schema's first complaint hides what they are (store._check_origin). */
function checkOrigin(doc, join) {
  if (!("schema_version" in doc)) {
    // pytest-benchmark's JSON, whose layout the schema borrows, has these keys and no schema_version.
    const pytest = "machine_info" in doc && "commit_info" in doc;
    throw new FileProblem("$", "this is " + (pytest
      ? "a pytest-benchmark results file (it has machine_info and commit_info but no schema_version), which this page cannot race"
      : "not a Crossover results file (it has no schema_version)") + ": " + HOW_TO_MAKE_ONE);
  }
  if (Number.isInteger(doc.schema_version) && doc.schema_version > join.schema_version) {
    throw new FileProblem("$.schema_version", "written by a newer Crossover (schema " + doc.schema_version +
      "); this site reads schema " + join.schema_version + ": open the file on a site built by that version");
  }
}

function checkSchema(doc, checker, join) {
  if (!doc || typeof doc !== "object" || Array.isArray(doc)) {
    throw new FileProblem("$", "expected a JSON object at the top level; this is not a Crossover results file: " + HOW_TO_MAKE_ONE);
  }
  if (nestingDepth(doc) > MAX_DEPTH) {
    throw new FileProblem("$", "this is not a Crossover results file (objects nested more than " + MAX_DEPTH + " deep): " + HOW_TO_MAKE_ONE);
  }
  checkOrigin(doc, join);
  checkNumbers(doc, "$", join.max_number);  // before the schema, whose bounds would quote Infinity less plainly
  const result = checker.validator.validate(doc);
  if (!result.valid) throw schemaProblem(result.errors, checker.schema, doc);
  if (doc.mode !== join.mode) {
    throw new FileProblem("$.mode", doc.mode === "quick"
      ? "this file was measured in quick mode (tiny sizes, for tests): its times cannot race this site's full " +
        "measurements; run the notebook again without CROSSOVER_QUICK=1"
      : "this file holds " + doc.mode + "-mode measurements, but this site was built in " + join.mode +
        " mode: open it on a site built in " + doc.mode + " mode");
  }
}

/* The epoch points the race can use: same rows, widths and batches as this page's. */
function epochPoints(doc, race) {
  if (!doc.experiments[EPOCH]) {
    throw new FileProblem("$.experiments", "has no " + EPOCH + " experiment, and the race needs its epoch times: " +
      "the lab notebook, make measure and \u201cRace your browser\u201d all record it");
  }
  const [low, high] = race.join.time_bounds;
  const used = [];
  let leftOut = 0;
  doc.benchmarks.forEach(function (bench, i) {
    if (bench.group !== EPOCH || (bench.status || "ok") !== "ok") return;
    const where = "$.benchmarks[" + i + "]";
    const s = bench.stats, p = bench.params;
    if (!s) throw new FileProblem(where, "has no stats, though its status says it was measured; " + REMEASURE);
    if (bench.unit !== "s") throw new FileProblem(where + ".unit", quote(bench.unit) + " is not seconds, the unit of an epoch time; " + REMEASURE);
    ["median", "q1", "q3", "min", "max"].forEach(function (key) {
      if (!(s[key] >= low && s[key] <= high)) {
        throw new FileProblem(where + ".stats." + key, quote(s[key]) + " is not a time between " + low + " s and " + high + " s; " + REMEASURE);
      }
    });
    if (!(s.min <= s.median && s.median <= s.max)) throw new FileProblem(where + ".stats.median", "is outside [min, max]; " + REMEASURE);
    if (!(s.q1 <= s.median && s.median <= s.q3)) throw new FileProblem(where + ".stats.median", "is outside [q1, q3]; " + REMEASURE);
    ["width", "batch", "rows"].forEach(function (key) {
      if (!Number.isInteger(p[key]) || p[key] < 1) throw new FileProblem(where + ".params." + key, quote(p[key]) + " is not a positive whole number; " + REMEASURE);
    });
    if (race.join.rows.indexOf(p.rows) < 0 || race.widths.indexOf(p.width) < 0 || race.batches.indexOf(p.batch) < 0) {
      leftOut += 1;
      return;
    }
    checkPlausible(bench, where, race.lanes);
    used.push(bench);
  });
  if (!used.length) {
    throw new FileProblem("$.benchmarks", "no epoch time matches this race (epochs of " + race.join.rows.join(" or ") +
      " rows, widths " + race.widths.join(", ") + ", batches " + race.batches.join(", ") + "): measure with this site's sizes");
  }
  return { used: used, leftOut: leftOut };
}

/* This build's measured lanes at the size nearest (width, batch) (the same size where measured), their
 * epochs scaled to `rows`: {width, batch, fastest, slowest}, or null without measured lanes. */
function laneRange(lanes, width, batch, rows) {
  const points = [];
  lanes.forEach(function (lane) {
    Object.keys(lane.epochs).forEach(function (w) {
      Object.keys(lane.epochs[w]).forEach(function (b) {
        const point = lane.epochs[w][b];
        points.push({ width: Number(w), batch: Number(b), seconds: point.seconds * rows / point.rows });
      });
    });
  });
  if (!points.length) return null;
  const distance = function (p) { return Math.abs(Math.log(p.width / width)) + Math.abs(Math.log(p.batch / batch)); };
  const nearest = points.reduce(function (best, p) { return distance(p) < distance(best) ? p : best; });
  const there = points.filter(function (p) { return p.width === nearest.width && p.batch === nearest.batch; })
    .map(function (p) { return p.seconds; });
  return { width: nearest.width, batch: nearest.batch, fastest: Math.min.apply(null, there), slowest: Math.max.apply(null, there) };
}

/* A reader's epoch time must lie within PLAUSIBLE_FACTOR of what this build's own lanes take at that size:
 * far outside it is a typo, a wrong unit or a doctored file, and one such point would squash every other bar. */
function checkPlausible(bench, where, lanes) {
  const p = bench.params, t = bench.stats.median, range = laneRange(lanes, p.width, p.batch, p.rows);
  if (!range) return;
  const low = range.fastest / PLAUSIBLE_FACTOR, high = range.slowest * PLAUSIBLE_FACTOR;
  if (t >= low && t <= high) return;
  const size = range.width === p.width && range.batch === p.batch ? "at that size"
    : "at width " + range.width + ", batch " + range.batch + " (the nearest size they measured)";
  throw new FileProblem(where + ".stats.median", seconds(t) + " for one epoch of " + p.rows + " rows at width " + p.width +
    ", batch " + p.batch + " is not a time any machine takes: this site's lanes take " + seconds(range.fastest) + " to " +
    seconds(range.slowest) + " for as many rows " + size + ", and the race refuses an epoch more than " + PLAUSIBLE_FACTOR +
    "× faster or slower than that (outside " + seconds(low) + " to " + seconds(high) + "); check the file's times " +
    "and units, or measure again");
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
    return plain("Your browser's run" + (slot === "file" ? " (file " + fileName + ")" : "") + ": measured " + when(doc.datetime) + " with TensorFlow.js " + sw.tfjs +
      (sw.tfjs_webgpu ? ", WebGPU backend " + sw.tfjs_webgpu : "") + (sw.tfjs_wasm ? ", WebAssembly backend " + sw.tfjs_wasm : "") +
      " in " + browserName(sw.browser));
  }
  return plain("Your file " + fileName + ": measured " + when(doc.datetime) + " with torch " + sw.torch +
    " and Python " + sw.python + (sw.os ? " on " + sw.os : ""));
}

/* "2 Dec 2026, 16:40" in the reader's own locale and time zone, not an ISO timestamp. */
let dateFormat = null;  // made once: a formatter costs milliseconds to build, and every join of a run asks
function when(iso) {
  const date = new Date(iso);
  if (isNaN(date.getTime())) return String(iso);
  dateFormat = dateFormat || new Intl.DateTimeFormat(undefined,
    { day: "numeric", month: "short", year: "numeric", hour: "2-digit", minute: "2-digit" });
  return dateFormat.format(date);
}

/* A promise settled in a later task: what follows runs after the page has had a turn to draw and hear clicks. */
function nextTask() {
  return new Promise(function (resolve) { setTimeout(resolve, 0); });
}

/* "Chrome 131 on Linux" from a user-agent string; the string itself when it names no browser this knows. */
function browserName(agent) {
  const text = String(agent || "");
  const found = [["Edg", "Edge"], ["OPR", "Opera"], ["Firefox", "Firefox"], ["Chrome", "Chrome"], ["Version", "Safari"]]
    .map(function (pair) { const m = text.match(new RegExp(pair[0] + "/(\\d+)")); return m ? pair[1] + " " + m[1] : null; })
    .find(Boolean);
  const system = [["Windows", "Windows"], ["Android", "Android"], ["iPhone", "iOS"], ["iPad", "iPadOS"], ["CrOS", "ChromeOS"],
    ["Mac OS X", "macOS"], ["Linux", "Linux"]].find(function (pair) { return text.indexOf(pair[0]) >= 0; });
  if (!found) return text.slice(0, 80);
  return found + (system ? " on " + system[1] : "");
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
 * `slot` names where the lanes come from ("file" or "browser"), so both can race at once.
 * A site's own data file (results.json, several machines) adds each machine the race does not have yet. */
export function readResults(text, checker, race, fileName, slot = "file") {
  let doc;
  if (!String(text).trim()) throw new FileProblem("$", "the file is empty: choose the .json file a measurement wrote");
  try {
    doc = JSON.parse(text);
  } catch (error) {
    throw new FileProblem("$", "not valid JSON (" + String(error.message).slice(0, 120) + "); was the file cut short or edited by hand?");
  }
  if (doc && doc.format === race.join.merged_format && Array.isArray(doc.machines)) {
    return readSiteData(doc, checker, race, fileName, slot);
  }
  return readDoc(doc, checker, race, fileName, slot);
}

/* A site's "Download the data" file: every machine in it that this race does not already show, checked
 * one by one as a results file of its own (without the two keys the site adds, origin and source). */
function readSiteData(merged, checker, race, fileName, slot) {
  const raced = race.lanes.filter(function (l) { return !l.yours; }).map(function (l) { return l.machine_id; });
  const held = merged.machines.length + (merged.machines.length === 1 ? " machine" : " machines");
  const fresh = merged.machines.filter(function (m) { return m && raced.indexOf(m.machine_id) < 0; });
  if (!fresh.length) {
    throw new FileProblem("$", "this is a site's data file (results.json), holding " + held + ", and all of them are " +
      "already in this race: choose one under Machine above");
  }
  const results = fresh.map(function (entry, i) {
    const doc = Object.assign({}, entry);
    delete doc.origin;
    delete doc.source;
    try {
      return readDoc(doc, checker, race, fileName, slot + "-" + i);
    } catch (error) {
      if (error instanceof FileProblem) error.message = "machine " + (i + 1) + " of the " + fresh.length + " new ones: " + error.message;
      throw error;
    }
  });
  const lanes = [].concat.apply([], results.map(function (r) { return r.lanes; }));
  lanes.forEach(function (lane) { lane.slot = slot; });
  return { lanes: lanes, leftOut: results.reduce(function (n, r) { return n + r.leftOut; }, 0),
    provenance: "From a site's data file holding " + held + ", the " + fresh.length + " new here: " +
      results.map(function (r) { return r.provenance; }).join("; "),
    machine: results.map(function (r) { return r.machine; }), verdict: results[0].verdict };
}

function readDoc(doc, checker, race, fileName, slot) {
  let points;
  try {
    checkSchema(doc, checker, race.join);
    points = epochPoints(doc, race);
  } catch (error) {
    if (error instanceof FileProblem && error.field !== "$") error.where = fieldWords(error.field, doc);
    throw error;
  }
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
      source: doc.machine_id + "@" + doc.datetime,  // the same run, whichever slot brought it (race.setYours)
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
    softwareGpu: Boolean(isBrowserRun(doc) && doc.machine_info.gpu && doc.machine_info.gpu.fallback_adapter && epochs.webgpu),
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

/* The build's schema and the validator (nine modules, about 55 KiB), fetched from this site once,
 * when the first file is added or restored: a visit that adds none downloads neither. */
let checkerRequest = null;
function loadChecker() {
  checkerRequest = checkerRequest || Promise.all([
    fetch(SCHEMA_URL).then(function (response) { return response.json(); }),
    import("./vendor/cfworker-json-schema/index.js"),
  ]).then(function ([schema, module]) {
    // One validator for every file: making one walks the whole schema, which cost more than checking a file.
    return { schema: schema, validator: new module.Validator(schema, "2020-12", false) };
  });
  checkerRequest.catch(function () { checkerRequest = null; });
  return checkerRequest;
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
    const detail = error instanceof FileProblem ? error.describe() : String(error && error.message || error);
    // What happened in bold, then the detail in plain weight: a phone shows a short headline, not a red wall.
    problem.textContent = "";
    const head = document.createElement("strong");
    head.textContent = what + ":";
    problem.append(head, " " + detail);
  }

  /* With `split` (a join while the browser race trains), the race's redraw and the words under it are two tasks:
   * each stays short, so the page answers a click (Stop) between them. */
  async function show(result, restored, extra, split) {
    if (race.setYours) race.setYours(name, result.lanes, result.machine);
    if (race.render) race.render(result);
    if (split) await nextTask();
    if (words.shown) words.shown(result, current.text);
    say((restored ? "Restored from this browser: " : words.added) +
      result.lanes.map(function (l) { return l.label; }).join(" and ") + ", marked yours" + (race.setYours ? " in the race above. " : ". ") +
      (extra ? extra + " " : "") + result.provenance + "." +
      (result.leftOut ? " " + result.leftOut + " epoch times of other sizes were left out." : "") +
      " " + words.kept);
    forget.hidden = false;
  }

  /* Validate `text` as a results file and race it; returns the result, or null after saying why not. With `split`
   * (the browser race's joins, which come while it trains), checking, drawing and saying are tasks of their own. */
  async function add(text, fileName, fromStorage, extra, split) {
    try {
      if (split) await nextTask();  // not inside the task that heard the worker: each part is a task of its own
      const result = readResults(text, await loadChecker(), race, fileName, name);
      if (split) await nextTask();
      current = { name: fileName, text: text };
      await show(result, fromStorage, extra, split);
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
    if (keptShape(saved) && keptFits(name, saved)) {
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
    // Said first: every comparison after it is between two ways of using the CPU.
    const software = result.softwareGpu ? "Your browser's GPU is a software emulation running on the CPU, not a " +
      "graphics card, so its lane shows the emulation's speed. " : "";
    return software + "In your browser, at width " + width + ": " + result.verdict(width);
  }

  function chosenWidth() {  // the race's width when the browser plan has it, else the plan's nearest
    const chosen = Number(document.getElementById("race-width").value);
    return plan.widths.reduce(function (best, w) { return Math.abs(w - chosen) < Math.abs(best - chosen) ? w : best; }, plan.widths[0]);
  }

  function done() { start.disabled = false; stop.hidden = true; bar.hidden = true; eta.textContent = ""; }

  // Every join of every run, one at a time and in order: a late one must not replace a later file's lanes.
  let adding = Promise.resolve(), runs = 0;
  function join(text, fileName, words) {
    adding = adding.then(function () { return slot.add(text, fileName, false, words, true); });
    return adding;
  }

  start.addEventListener("click", async function () {
    const width = chosenWidth(), mine = ++runs;
    start.disabled = true; stop.hidden = false; stop.disabled = false; bar.hidden = false; bar.value = 0; stopping = false;
    box.dataset.run = "running";
    slot.say("Loading TensorFlow.js from this site\u2026");
    let run, racing = false, software = false;
    try {
      const module = await import("./browser-race.js");
      loadChecker();  // fetched while TensorFlow.js loads: the lanes' first join then waits on nothing
      when(new Date().toISOString());  // and the date formatter made (its locale data costs the first call ~10 ms)
      run = await module.raceBrowser(plan, width, race.join, {
        // Said before the first epoch: a software GPU changes what the race means.
        started: function (adapter) { software = Boolean(adapter && adapter.fallback_adapter); },
        progress: function (fraction, text) {
          if (!racing && /^Round /.test(text)) {
            racing = true;
            slot.say(software ? "Racing in your browser. Its GPU is a software emulation on the CPU, so the run is " +
              "shortened: the progress is below." : "Racing in your browser: the progress is below.");
          }
          bar.value = fraction; eta.textContent = text;
        },
        stopped: function () { return stopping; },
        partial: function (doc, words) { join(JSON.stringify(doc), "your browser (so far)", words); },
      });
    } catch (error) {
      await adding;
      slot.fail("The browser race could not run", error);
      done();
      box.dataset.run = "over";
      return;
    }
    // Training has ended (Stop ends the worker at once): the page is ready for another run now, and the final file
    // joins after the joins before it, a few short tasks later.
    done();
    if (!run.doc) {
      await adding;
      slot.fail("Nothing was timed", new Error(run.problems.join(" ")));
    } else {
      shownWidth = String(width);
      await join(JSON.stringify(run.doc), run.name, run.summary);
      if (run.problems.length && mine === runs) slot.warn(run.problems.join(" "));
    }
    if (mine === runs) box.dataset.run = "over";  // everything about this run is said (tests and benchmarks wait on it)
  });
  stop.addEventListener("click", function () { stopping = true; stop.disabled = true; eta.textContent = "Stopping\u2026"; });
  box.hidden = false;
  slot.restore();
}

/* The browser slot keeps only what the browser race made (software.stack "tensorflow.js"): a PyTorch file stored
 * under its key would otherwise come back as "Restored from this browser". */
function keptFits(name, saved) {
  if (name !== "browser") return true;
  try {
    const doc = JSON.parse(saved.text);
    return Boolean(doc && doc.software && doc.software.stack === "tensorflow.js");
  } catch (error) {
    return false;
  }
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
    meaningfulRatio: data.meaningful_ratio,
    lanes: data.lanes.filter(function (lane) { return !lane.estimate; }) };  // measured lanes bound a reader's times
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

/* "12.3 ms": three significant figures in the largest unit that keeps the number at 1 or more ("80000 s", not "8.00e+4 s"). */
function seconds(value) {
  if (value >= 1000) return Math.round(value) + " s";
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
