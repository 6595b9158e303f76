/* The CPU-vs-GPU race. Plain JavaScript, no dependencies.
 *
 * Every time shown comes from the JSON baked into the page at build time
 * (#race-data), which holds the build's measured epoch times, or from a reader's own
 * results file that yours.js validated and handed over through window.crossoverRace.
 * Strings from results files are only ever set with textContent, never parsed as HTML.
 */
(function () {
  "use strict";

  var BREAK_RATIO = 20;  // a bar scale spans at most this many times the fastest lane: it gets 5% of the track
  var SCREEN_SECONDS = 5; // the slowest lane takes this long on screen
  var SVG = "http://www.w3.org/2000/svg";
  // A lane is told apart by more than colour: each has a colour, a dash pattern and a letter,
  // drawn at its line's end, beside its name in the lanes and in the legend. Twelve dash patterns
  // and six colours: up to twelve lanes, no two share a dash or a letter, and none a colour and dash.
  var DASHES = ["", "7 3", "2 3", "9 3 2 3", "4 4", "1 2", "12 3", "6 2 1 2", "3 6", "10 2 2 2 2 2", "5 2 5 6", "1 4"];
  var STYLES = 6; // .race-chart__line--s0 ... s5 in crossover.css: colour-blind-safe colours

  function formatSeconds(s) {
    var units = [[1, "s"], [1e-3, "ms"], [1e-6, "µs"]];
    for (var i = 0; i < units.length; i++) {
      if (s >= units[i][0] || i === units.length - 1) {
        var v = s / units[i][0];
        var digits = Math.max(0, 2 - Math.floor(Math.log10(Math.abs(v) || 1)));
        return v.toFixed(digits) + " " + units[i][1];
      }
    }
  }

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function svgEl(tag, attrs) {
    var node = document.createElementNS(SVG, tag);
    Object.keys(attrs).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    return node;
  }

  function init(root) {
    var data = JSON.parse(document.getElementById("race-data").textContent);
    var $ = function (sel) { return root.querySelector(sel); };
    var batchInput = $("#race-batch"), batchOut = $("#race-batch-value");
    var widthSelect = $("#race-width"), machineSelect = $("#race-machine");
    var lanesBox = $("#race-lanes"), result = $("#race-result"), scaleNote = $("#race-scale");
    var reducedMotion = window.matchMedia("(prefers-reduced-motion: reduce)").matches;
    var frame = null;

    if (!data.lanes.length) {
      result.textContent = "No epoch times were measured in this build, so there is nothing to race.";
      root.hidden = false;
      return;
    }

    batchInput.max = String(data.batches.length - 1);
    // The setting the race opens at (build_hooks/race.py's opening), which the page's intro names.
    batchInput.value = String(Math.max(0, data.batches.indexOf(data.opening.batch)));
    data.widths.forEach(function (w) { widthSelect.appendChild(el("option", { value: String(w) }, String(w))); });
    widthSelect.value = String(data.opening.width);
    function fillMachines() {
      var chosen = machineSelect.value;
      machineSelect.textContent = "";
      machineSelect.appendChild(el("option", { value: "" }, "All machines"));
      data.machines.forEach(function (m) {
        machineSelect.appendChild(el("option", { value: m.id }, m.label));  // a reader's says "your file"
      });
      var ids = data.machines.map(function (m) { return m.id; });
      machineSelect.value = ids.indexOf(chosen) >= 0 ? chosen : "";
      machineSelect.parentElement.hidden = data.machines.length < 2;
    }
    fillMachines();
    // With a measured GPU, the race opens on its machine: that GPU against its own CPU, the grid's pairing.
    // "All machines" stays one choice away; a link or a reader's own lanes change it.
    var measuredGpu = data.lanes.filter(function (lane) { return lane.kind === "GPU" && !lane.estimate; })[0];
    if (measuredGpu && !machineSelect.parentElement.hidden) machineSelect.value = measuredGpu.machine_id;

    // A link such as race/?batch=64&width=512 (the verdict grid's cells) opens the race at that setting and runs it:
    // the reader followed a cell to see that race. A value the race does not have is ignored. True if one was taken.
    function fromLink() {
      var params = new URLSearchParams(location.search), taken = false;
      var b = data.batches.indexOf(Number(params.get("batch")));
      if (params.get("batch") !== null && b >= 0) { batchInput.value = String(b); taken = true; }
      var w = params.get("width");
      if (w !== null && data.widths.map(String).indexOf(w) >= 0) { widthSelect.value = w; taken = true; }
      // The grid's cells name their pairing's machine: the race then shows the two lanes that cell compares.
      var m = params.get("machine");
      if (m !== null && data.machines.some(function (x) { return x.id === m; })) machineSelect.value = m;
      return taken;
    }

    function batch() { return data.batches[Number(batchInput.value)]; }
    function width() { return widthSelect.value; }
    function activeLanes() {
      return data.lanes.filter(function (lane) {
        return !machineSelect.value || lane.machine_id === machineSelect.value;
      });
    }
    function pointFor(lane) {
      var byWidth = lane.epochs[width()];
      return byWidth ? byWidth[String(batch())] : undefined;
    }
    // The rule of build_hooks/race.py's out_of_line: the loser's epoch is slower than a neighbour allows (beyond
    // the meaningful ratio), and the win would not clear the neighbour's time. Returns which neighbour, or "".
    // "half": its epoch at half the batch was faster; "double": its steps at twice the batch were quicker.
    function outOfLine(lane, rival) {
      var byWidth = lane.epochs[width()] || {}, here = pointFor(lane), ratio = data.meaningful_ratio;
      var half = byWidth[String(batch() / 2)], double = byWidth[String(batch() * 2)];
      if (half && here.seconds > ratio * half.seconds && half.seconds < ratio * rival) { return "half"; }
      if (!double) { return ""; }
      var paced = double.seconds / Math.ceil(double.rows / (batch() * 2)) * Math.ceil(here.rows / batch());
      return here.seconds > ratio * paced && paced < ratio * rival ? "double" : "";
    }
    // The grid's ↑ (build_hooks/race.py's against_half): a loser slower than at half the batch, whose lead still
    // holds against that faster epoch. Returns the lead against it, or 0.
    function slowedLead(lane, rival) {
      var half = (lane.epochs[width()] || {})[String(batch() / 2)], here = pointFor(lane);
      return half && here.seconds > data.meaningful_ratio * half.seconds ? half.seconds / rival : 0;
    }
    var OUT_OF_LINE = {
      half: " But the slower lane took longer than at half the batch. Against that time, this lead would not hold.",
      double: " But the slower lane's steps took longer than at twice the batch. At that pace, this lead would" +
        " not hold."
    };

    function tickLabel(s) {
      return formatSeconds(s).replace(/\.0+ /, " ").replace(/(\.\d*?)0+ /, "$1 ");
    }

    function regimeText(point) {
      // Every lane's step is its epoch divided by its steps (build_hooks/race.py), so the note describes this run.
      return point.regime ? stepRegime(point) : "";
    }

    function stepRegime(point) {
      if (batch() === 1) {
        return "one sample per step: " + point.rows + " steps, each paying the full fixed cost of a step";
      }
      var step = article(batch()) + " " + batch() + "-sample step";
      // Said of the lane's own step, so it reads as well for a winner as for a loser.
      if (point.regime.same) {
        return "its step barely grows with the batch: " + step + " costs about the same as a 1-sample step";
      }
      var ratio = point.regime.ratio.toFixed(1) + "×";
      return point.regime.kind === "fixed"
        ? "its step grows far more slowly than the batch: " + step + " costs only " + ratio + " a 1-sample step"
        : "its step grows with the batch: " + step + " costs " + ratio + " a 1-sample step";
    }

    function stepCosts(fast, slow) {
      var each = function (p) { return formatSeconds(p.seconds / stepsOf(p)); };
      // "within the epoch": its share of the replayed epoch, which can differ from a step timed alone (batch-size page).
      return stepsOf(fast) === stepsOf(slow)
        ? "Both take " + stepsOf(fast) + " steps: " + each(fast) + " each within the epoch, against " + each(slow) + "."
        : "Its " + stepsOf(fast) + " steps took " + each(fast) + " each, against " + stepsOf(slow) + " of " +
          each(slow) + ".";
    }
    function stepsOf(point) { return point.steps || Math.ceil(point.rows / batch()); }

    function article(n) {  // "an 8-sample step", "a 16-sample step"
      return /^(8|11|18)/.test(String(n)) && !/^1[18]\d\d$/.test(String(n)) ? "an" : "a";
    }

    function tag(lane) { return lane.label + (lane.estimate ? " (estimate)" : lane.yours ? " (yours)" : ""); }

    // By the lane's place among all lanes, so a lane keeps its look whatever is filtered or chosen.
    function styleIndex(lane) { return Math.max(0, data.lanes.indexOf(lane)); }
    // One letter per lane everywhere (the static chart and its key use the same), whatever is filtered or chosen.
    function letter(lane) { return String.fromCharCode(65 + styleIndex(lane) % 26); }
    function dash(lane) { return DASHES[styleIndex(lane) % DASHES.length]; }

    function buildLanes() {
      lanesBox.textContent = "";
      var lanes = activeLanes();
      lanes.forEach(function (lane) {
        var point = pointFor(lane);
        var row = el("div", { "class": "race-lane" + (lane.estimate ? " race-lane--estimate" : "") +
          (lane.yours ? " race-lane--yours" : ""), role: "group", "aria-label": tag(lane), "data-lane": lane.id });
        var name = el("div", { "class": "race-lane__name" });
        name.appendChild(el("span", { "class": "race-key race-key--s" + styleIndex(lane) % STYLES, "aria-hidden": "true" }, letter(lane)));
        name.appendChild(document.createTextNode(lane.label));
        if (lane.estimate) name.appendChild(el("span", { "class": "race-estimate" }, " (estimate)"));
        if (lane.yours) name.appendChild(el("span", { "class": "race-yours" }, "yours"));
        var track = el("div", { "class": "race-lane__track" });
        // The bar takes the lane's own colour, as its key and its chart line do: the name says CPU or GPU.
        var bar = el("div", { "class": "race-lane__bar race-lane__bar--s" + styleIndex(lane) % STYLES });
        track.appendChild(bar);
        // Before a race a lane has no time to show (not "0 s"); the race fills it in.
        var time = el("span", { "class": "race-lane__time" }, point ? "—" : "not measured");
        var why = el("div", { "class": "race-lane__why" }, point ? "" : "");
        row.appendChild(name); row.appendChild(track); row.appendChild(time); row.appendChild(why);
        lanesBox.appendChild(row);
      });
      var gpuMeasured = lanes.some(function (l) { return l.kind === "GPU"; });
      if (lanes.some(function (l) { return l.estimate; })) {
        lanesBox.appendChild(el("p", { "class": "crossover-note" },
          "Lanes marked (estimate) were not measured: they come from the cost model with published figures."));
      }
      var yours = lanes.filter(function (l) { return l.yours; });
      // The provenance of each of the reader's sources (a file, a browser run), once for all its lanes.
      yours.map(function (l) { return l.provenance; }).filter(function (p, i, all) { return all.indexOf(p) === i; })
        .forEach(function (provenance) {
          lanesBox.appendChild(el("p", { "class": "crossover-note race-lane__provenance" }, provenance + "."));
        });
      if (!gpuMeasured) {
        var missing = el("div", { "class": "race-lane race-lane--missing", role: "group", "aria-label": "GPU" });
        missing.appendChild(el("div", { "class": "race-lane__name" }, "GPU"));
        // Where the build has a GPU lane, the machine chosen just lacks one: say that, not that the build does.
        var buildHasGpu = data.lanes.some(function (l) { return l.kind === "GPU" && !l.yours; });
        missing.appendChild(el("div", { "class": "race-lane__why" }, lanes.length && yours.length === lanes.length
          ? "not measured: your file has no GPU results"
          : buildHasGpu ? "not measured on this machine: choose All machines to race a GPU"
            : "not measured: no GPU results are in this build"));
        lanesBox.appendChild(missing);
      }
      var slowest = Math.max.apply(null, lanes.map(function (l) { var p = pointFor(l); return p ? p.seconds : 0; }));
      var rows = lanes.map(pointFor).filter(Boolean).map(function (p) { return p.rows; })
        .filter(function (r, i, all) { return all.indexOf(r) === i; }).join(" or ");
      scaleNote.textContent = slowest > 0
        ? "A bar's length is its epoch's time: the shorter bar won. " +
          (reducedMotion ? "Reduced motion: results appear at once. "
          : "Animation scale: the slowest lane takes " + SCREEN_SECONDS + " s on screen (1 s on screen = " +
            formatSeconds(slowest / SCREEN_SECONDS) + " measured). ")
          + (lanes.some(function (l) { return l.estimate; })
            ? "Times are epochs of " + rows + " rows: measured for measured lanes, "
              + "estimated for lanes marked (estimate)."
            : "Times are measured epochs of " + rows + " rows.")
          + " A lane's letter marks its line in the chart under the grid."
        : "";
      result.textContent = "";
      drawChart();
    }
    var resized = null;  // redrawn at the width the chart gets after a rotation or resize
    window.addEventListener("resize", function () {
      clearTimeout(resized);
      resized = setTimeout(drawChart, 150);
    });

    function finish(lanes) {
      var timed = lanes.map(function (lane) { return { lane: lane, point: pointFor(lane) }; })
        .filter(function (x) { return x.point; })
        .sort(function (a, b) { return a.point.seconds - b.point.seconds; });
      var full = barScale(timed.map(function (x) { return x.point.seconds; }));
      timed.forEach(function (x) {
        var row = lanesBox.querySelector('[data-lane="' + x.lane.id + '"]');
        var time = row.querySelector(".race-lane__time");
        time.textContent = formatSeconds(x.point.seconds);
        time.setAttribute("data-seconds", String(x.point.seconds));
        // Bars are time on one scale (the slowest lane fills its track): the faster lane's is shorter.
        drawBar(row, x.point.seconds, full);
        row.querySelector(".race-lane__why").textContent = regimeText(x.point);
      });
      if (timed.length === 0) { result.textContent = "Nothing measured for this batch and width."; return; }
      var winner = timed[0];
      if (timed.length === 1) {
        result.textContent = winner.lane.label + " finished in " + formatSeconds(winner.point.seconds) +
          ". Only one device was measured, so there is no opponent.";
      } else {
        var ratio = timed[1].point.seconds / winner.point.seconds;
        // The setting said with the verdict: a guided step changes it, and the line must not read as the last one's.
        var where = " at batch " + batch() + " and width " + widthSelect.value;
        // Closer than the meaningful ratio, or with overlapping spreads, is noise, not a win.
        if (ratio < data.meaningful_ratio || winner.point.q3 >= timed[1].point.q1) {
          // Two decimals under the meaningful ratio, so a 1.07× gap never prints as the threshold itself.
          result.textContent = "About the same: " + tag(winner.lane) + " and " + tag(timed[1].lane) +
            " finished " + ratio.toFixed(ratio < data.meaningful_ratio ? 2 : 1) +
            "× apart" + where + ": too close, given their spread, to call a winner.";
        } else {
          // A lead over a loser off its own trend is the grid's "out of line": said first, with no winner badge,
          // and the loser's note names the neighbour it lagged (its step did not grow with the work).
          var odd = outOfLine(timed[1].lane, winner.point.seconds);
          if (odd) {
            lanesBox.querySelector('[data-lane="' + timed[1].lane.id + '"] .race-lane__why').textContent =
              odd === "half" ? "off its trend: its epoch took longer than at batch " + batch() / 2 +
                ", which runs twice the steps"
              : "off its trend: its steps were slower than at batch " + batch() * 2 + ", which do twice the work";
          } else {  // only a real win earns the badge
            lanesBox.querySelector('[data-lane="' + winner.lane.id + '"]').classList.add("race-lane--winner");
          }
          // One level of brackets only: lane tags carry their own "(estimate)" or "(yours)". The reason is the
          // cost of one step, from the epochs replayed: the lanes' notes say how each step grows with the batch.
          // Lanes of two machines ("All machines") are said to be so: the grid pairs a GPU with its own CPU only.
          var apart = winner.lane.machine_id !== timed[1].lane.machine_id ? " The two lanes are on different machines." : "";
          result.textContent = (odd ? "Out of line, not counted as a win: " : "Winner: ") + tag(winner.lane) + ", " +
            ratio.toFixed(1) + "× faster than " + tag(timed[1].lane) + where + "." + apart + " " +
            stepCosts(winner.point, timed[1].point) + (OUT_OF_LINE[odd] || slowedWords(timed[1].lane, winner));
        }
      }
      showBelow(result);
    }

    function slowedWords(lane, winner) {
      var lead = slowedLead(lane, winner.point.seconds);
      return lead ? " The slower lane took longer than at half the batch. Against that time, the lead is " +
        lead.toFixed(1) + "×." : "";
    }

    function start() {
      reset();
      // On a phone, or a short laptop screen, the lanes and the result line sit under the controls: bring them
      // into view, down to the (still empty) result line, or the race runs off-screen and its verdict lands there.
      showBelow(result);
      var lanes = activeLanes();
      if (reducedMotion) { finish(lanes); return; }
      var slowest = Math.max.apply(null, lanes.map(function (l) { var p = pointFor(l); return p ? p.seconds : 0; }));
      var scale = SCREEN_SECONDS / slowest; // screen seconds per measured second
      var full = barScale(lanes.map(function (l) { var p = pointFor(l); return p ? p.seconds : null; })
        .filter(function (t) { return t !== null; }));
      var t0 = performance.now();
      function tick(now) {
        var screen = (now - t0) / 1000, done = true;
        lanes.forEach(function (lane) {
          var point = pointFor(lane);
          if (!point) return;
          var row = lanesBox.querySelector('[data-lane="' + lane.id + '"]');
          var elapsed = Math.min(point.seconds, screen / scale);
          if (elapsed < point.seconds) done = false;
          drawBar(row, elapsed, full);
          // The steps done so far, so the faster lane is seen to get further, and a lane that is through says so
          // while the others still run: a bar that stops first has won.
          var steps = stepsOf(point), through = elapsed >= point.seconds;
          row.classList.toggle("race-lane--through", through);
          row.querySelector(".race-lane__time").textContent = formatSeconds(elapsed);
          row.querySelector(".race-lane__why").textContent = through ? "through all " + steps + " steps"
            : "step " + Math.min(steps, Math.floor(steps * elapsed / point.seconds) + 1) + " of " + steps;
        });
        if (done) { frame = null; finish(lanes); } else { frame = requestAnimationFrame(tick); }
      }
      frame = requestAnimationFrame(tick);
    }

    function showBelow(node) {
      if (node.getBoundingClientRect().bottom > window.innerHeight) {
        node.scrollIntoView({ block: "nearest", behavior: reducedMotion ? "auto" : "smooth" });
      }
    }

    /* The time a full track stands for: the slowest lane's, unless it is more than BREAK_RATIO times the fastest.
     * Then the track ends there, and slower lanes run off it with a broken end, their time printed beside them:
     * one slow lane no longer flattens every other bar to a sliver. */
    function barScale(times) {
      if (!times.length) return 0;
      var fastest = Math.min.apply(null, times), slowest = Math.max.apply(null, times);
      return Math.min(slowest, BREAK_RATIO * fastest);
    }

    function drawBar(row, seconds, full) {
      var bar = row.querySelector(".race-lane__bar"), off = seconds > full;
      bar.style.width = (off ? 100 : 100 * seconds / full) + "%";
      bar.classList.toggle("race-lane__bar--broken", off);
    }

    function reset() {
      if (frame) cancelAnimationFrame(frame);
      frame = null;
      buildLanes();
    }

    function drawChart() {
      var svg = document.getElementById("race-chart");
      svg.textContent = "";
      // One user unit is one CSS pixel at the width the chart really has, so its 11 px text stays
      // 11 px on a 320 px phone instead of shrinking with a fixed viewBox.
      var shown = Math.round(svg.getBoundingClientRect().width) || 360;
      var W = Math.max(260, shown), H = Math.round(Math.max(200, Math.min(W * 0.62, 280)));
      svg.setAttribute("viewBox", "0 0 " + W + " " + H);
      var lanes = activeLanes(), m = { l: 64, r: 24, t: 14, b: 40 };
      var series = lanes.map(function (lane) {
        var byWidth = lane.epochs[width()] || {};
        return { lane: lane, pts: data.batches.filter(function (b) { return byWidth[String(b)]; })
          .map(function (b) { return [b, byWidth[String(b)].seconds]; }) };
      }).filter(function (s) { return s.pts.length; });
      var ys = [].concat.apply([], series.map(function (s) { return s.pts.map(function (p) { return p[1]; }); }));
      if (!ys.length) return;
      var x0 = Math.log2(data.batches[0]), x1 = Math.log2(data.batches[data.batches.length - 1]);
      // The y range is the data's, padded, not whole decades: lines between 0.8 ms and 1.2 s fill the
      // frame instead of sharing it with two empty decades.
      // More room below: the fastest lanes end there, and their letters need space to spread.
      var y0 = Math.log10(Math.min.apply(null, ys) / 1.8), y1 = Math.log10(Math.max.apply(null, ys) * 1.25);
      if (y1 - y0 < 0.5) { var mid = (y0 + y1) / 2; y0 = mid - 0.25; y1 = mid + 0.25; }
      var X = function (b) { return m.l + (W - m.l - m.r) * (Math.log2(b) - x0) / ((x1 - x0) || 1); };
      var Y = function (s) { return H - m.b - (H - m.t - m.b) * (Math.log10(s) - y0) / (y1 - y0); };
      svg.appendChild(svgEl("rect", { x: m.l, y: m.t, width: W - m.l - m.r, height: H - m.t - m.b, "class": "race-chart__frame" }));
      yTicks(y0, y1, H - m.t - m.b).forEach(function (t) {
        svg.appendChild(svgEl("line", { x1: m.l, x2: W - m.r, y1: Y(t), y2: Y(t), "class": "race-chart__grid" }));
        var ty = svgEl("text", { x: m.l - 4, y: Y(t) + 3, "text-anchor": "end" });
        ty.textContent = tickLabel(t);
        svg.appendChild(ty);
      });
      // Batch labels at least a label's width apart, the last one always: "256512" never runs together.
      var last = data.batches[data.batches.length - 1], drawnAt = -Infinity, room = 30;
      data.batches.forEach(function (b) {
        if (b !== last && (X(b) - drawnAt < room || X(last) - X(b) < room)) return;
        var tx = svgEl("text", { x: X(b), y: H - m.b + 14, "text-anchor": "middle" });
        tx.textContent = String(b);
        svg.appendChild(tx);
        drawnAt = X(b);
      });
      var xl = svgEl("text", { x: (W + m.l) / 2, y: H - 4, "text-anchor": "middle" });
      xl.textContent = "batch size (samples)";
      svg.appendChild(xl);
      // The axis title sits left of the widest tick label ("100 ms" is about 40 px at 11 px).
      var yl = svgEl("text", { x: 10, y: (H - m.b) / 2, transform: "rotate(-90 10 " + (H - m.b) / 2 + ")", "text-anchor": "middle" });
      yl.textContent = "epoch time";
      svg.appendChild(yl);
      series.forEach(function (s) {
        var d = s.pts.map(function (p, i) { return (i ? "L" : "M") + X(p[0]).toFixed(1) + " " + Y(p[1]).toFixed(1); }).join(" ");
        var path = svgEl("path", { d: d, "class": lineClass(s.lane), "data-lane": s.lane.id });
        if (dash(s.lane)) path.setAttribute("stroke-dasharray", dash(s.lane));
        svg.appendChild(path);
      });
      endLabels(svg, series, X, Y, m, H);
      var cur = svgEl("line", { x1: X(batch()), x2: X(batch()), y1: m.t, y2: H - m.b, "class": "race-chart__cursor" });
      svg.appendChild(cur);
      var curLabel = svgEl("text", { x: X(batch()) + (batch() > data.batches[data.batches.length - 2] ? -4 : 4),
        y: H - m.b - 6, "text-anchor": batch() > data.batches[data.batches.length - 2] ? "end" : "start" });
      curLabel.textContent = "batch " + batch();
      svg.appendChild(curLabel);
      var crossings = data.machines.filter(function (machine) {
        return machine.crossover && machine.crossover[width()] && (!machineSelect.value || machineSelect.value === machine.id);
      });
      crossings.forEach(function (machine, i) {
        var c = machine.crossover[width()];
        // With several machines, each mark names its own lanes by their letters.
        var keys = series.filter(function (s) { return s.lane.machine_id === machine.id; })
          .map(function (s) { return letter(s.lane); }).join(" vs ");
        svg.appendChild(svgEl("line", { x1: X(c), x2: X(c), y1: m.t, y2: H - m.b, "class": "race-chart__crossover" }));
        var right = X(c) > (W + m.l) / 2;  // a label past the middle reads leftwards, inside the frame
        var label = svgEl("text", { x: X(c) + (right ? -3 : 3), y: m.t + 13 + 13 * i, "text-anchor": right ? "end" : "start" });
        label.textContent = "crossover" + (crossings.length > 1 && keys ? " " + keys : "") + ": batch " + c;
        svg.appendChild(label);
      });
      var crossing = crossings.length > 0;
      drawLegend(series, crossing);
      var legend = document.getElementById("race-chart-caption");
      legend.textContent = "Epoch time versus batch size at width " + width() +
        " (log scales). Lines: " + series.map(function (s) { return legendName(s.lane); }).join("; ") +
        ". The vertical bar marks the chosen batch" +
        (crossing ? "; a dashed bar marks the measured crossover." : ".");
    }

    function lineClass(lane) {
      return "race-chart__line race-chart__line--s" + styleIndex(lane) % STYLES + (lane.yours ? " race-chart__line--yours" : "");
    }

    // Each line's letter just right of its last point, nudged apart where lines end close together.
    /* Ticks at 1, 2 and 5 times a power of ten inside [10^y0, 10^y1]; only the decades when those would crowd. */
    function yTicks(y0, y1, height) {
      var ticks = [];
      for (var e = Math.floor(y0); e <= Math.ceil(y1); e++) {
        [1, 2, 5].forEach(function (k) { var t = k * Math.pow(10, e); if (Math.log10(t) >= y0 && Math.log10(t) <= y1) ticks.push(t); });
      }
      var decades = ticks.filter(function (t) { return Math.abs(Math.log10(t) - Math.round(Math.log10(t))) < 1e-9; });
      return ticks.length * 16 > height && decades.length >= 2 ? decades : ticks;
    }

    /* Each lane's letter at its line's end. Letters that would overlap are spread as a group centred on
     * their lines' ends (not pushed ever further one way), then kept inside the frame. */
    function endLabels(svg, series, X, Y, m, H) {
      var GAP = 14;  // a line of 11 px text, with its ascent and descent
      var ends = series.map(function (s) {
        var last = s.pts[s.pts.length - 1];
        return { lane: s.lane, x: X(last[0]) + 3, y: Y(last[1]), want: Y(last[1]) };
      }).sort(function (a, b) { return a.want - b.want; });
      var groups = ends.map(function (e) { return { members: [e], top: e.want }; });
      var merged = true;
      while (merged) {  // merge neighbouring groups that overlap, each centred on its members' ends
        merged = false;
        for (var i = 1; i < groups.length; i++) {
          var a = groups[i - 1], b = groups[i];
          if (a.top + a.members.length * GAP > b.top) {
            var members = a.members.concat(b.members);
            var centre = members.reduce(function (sum, e) { return sum + e.want; }, 0) / members.length;
            groups.splice(i - 1, 2, { members: members, top: centre - (members.length - 1) * GAP / 2 });
            merged = true;
            break;
          }
        }
      }
      var low = m.t + 4, high = H - m.b - 6;  // inside the frame, clear of the batch labels under it
      groups.forEach(function (g) { g.members.forEach(function (e, k) { e.y = g.top + k * GAP; }); });
      // Into the frame: down from its top edge, then up from its bottom one, keeping every gap.
      ends.forEach(function (e, k) { e.y = Math.max(e.y, low, k ? ends[k - 1].y + GAP : low); });
      for (var k = ends.length - 1; k >= 0; k--) {
        ends[k].y = Math.min(ends[k].y, k < ends.length - 1 ? ends[k + 1].y - GAP : high);
      }
      ends.forEach(function (e) {
        var text = svgEl("text", { x: e.x, y: e.y + 3, "class": "race-chart__end", "data-lane": e.lane.id });
        text.textContent = letter(e.lane);
        svg.appendChild(text);
      });
    }

    function legendName(lane) {  // machine and device: a build's GPU lane is named by its GPU alone
      return letter(lane) + ": " + tag(lane) + (lane.kind === "GPU" && !/GPU/.test(lane.label) ? " (GPU)" : "");
    }

    // A key drawn with the chart's own line styles: which line is which device, the cursor, the crossover.
    function drawLegend(series, crossing) {
      var list = document.getElementById("race-chart-legend");
      list.textContent = "";
      var entries = series.map(function (s) {
        return [legendName(s.lane), lineClass(s.lane), dash(s.lane)];
      }).concat([["chosen batch", "race-chart__cursor"]]);
      if (crossing) entries.push(["measured crossover", "race-chart__crossover"]);
      entries.forEach(function (entry) {
        var sample = svgEl("svg", { viewBox: "0 0 24 8", width: "24", height: "8", "aria-hidden": "true" });
        var line = svgEl("line", { x1: 0, x2: 24, y1: 4, y2: 4, "class": entry[1] });
        if (entry[2]) line.setAttribute("stroke-dasharray", entry[2]);
        sample.appendChild(line);
        var item = el("li");
        item.appendChild(sample);
        item.appendChild(document.createTextNode(" " + entry[0]));
        list.appendChild(item);
      });
    }

    function update() {
      batchOut.textContent = String(batch());
      // Assistive technology announces the batch size, not the slider's index.
      batchInput.setAttribute("aria-valuetext", "batch " + batch());
      reset();
    }

    batchInput.addEventListener("input", update);
    widthSelect.addEventListener("change", update);
    machineSelect.addEventListener("change", update);
    $("#race-start").addEventListener("click", start);
    $("#race-reset").addEventListener("click", reset);
    Array.prototype.forEach.call(root.querySelectorAll("[data-race-batch]"), function (button) {
      button.addEventListener("click", function () {
        var b = data.batches.indexOf(Number(button.getAttribute("data-race-batch")));
        if (b >= 0) batchInput.value = String(b);
        var w = button.getAttribute("data-race-width");
        var widths = data.widths.map(String);
        if (w === "max") widthSelect.value = widths[widths.length - 1];
        else if (w === "min") widthSelect.value = widths[0];
        else widthSelect.value = initialWidth;  // step 5 races the width the race opens at, whatever 1-4 chose
        update();
        start();
        // The lanes in sight: a reader at the steps' list would watch it move, not the race (#39 read).
        lanesBox.scrollIntoView({ block: "nearest", behavior: reducedMotion ? "auto" : "smooth" });
      });
    });
    var initialWidth = widthSelect.value;
    var linked = fromLink();
    root.hidden = false;
    // Opened from a grid cell: the lanes that cell compares are what the reader came for, not the page's top.
    if (linked && !location.hash) root.scrollIntoView({ block: "start" });
    // The chart sits under the grid (#39: controls, lanes, then the verdict grid), outside the widget's box.
    document.getElementById("race-chart-box").hidden = false;
    update();
    if (linked) start();

    // A reader's own machine or browser (yours.js): lanes marked yours.
    window.crossoverRace = {
      // `slot` is where they come from ("file", "browser"): each replaces only its own earlier lanes.
      setYours: function (slot, lanes, machine) {
        // A run already raced from the other slot (the browser's own file, added again) is replaced, not doubled.
        var sources = lanes.map(function (l) { return l.source; });
        var replaced = data.lanes.filter(function (l) { return l.yours && l.slot !== slot && sources.indexOf(l.source) >= 0; })
          .map(function (l) { return l.machine_id; });
        var mine = function (x) { return x.yours && (x.slot === slot || replaced.indexOf(x.machine_id !== undefined ? x.machine_id : x.id) >= 0); };
        data.lanes = data.lanes.filter(function (l) { return !mine(l); }).concat(lanes);
        data.machines = data.machines.filter(function (m) { return !(m.yours && (m.slot === slot || replaced.indexOf(m.id) >= 0)); })
          .concat([].concat(machine || []).map(function (m) { return Object.assign({ slot: slot }, m); }));
        fillMachines();
        if (lanes.length) machineSelect.value = "";  // the reader's lanes race beside every machine's
        update();
        // Said here too, under the lanes: the file box that also says it sits far below them.
        if (lanes.length) {
          result.textContent = "Added to the race: " + lanes.map(tag).join(" and ") + ". Press Start to race them.";
        }
      }
    };
    document.dispatchEvent(new CustomEvent("crossover:race-ready"));
  }

  // Material's instant navigation replaces the page without a reload; document$ re-runs us.
  function boot() { var root = document.getElementById("race"); if (root && !root.dataset.ready) { root.dataset.ready = "1"; init(root); } }
  if (window.document$ && window.document$.subscribe) window.document$.subscribe(boot);
  else document.addEventListener("DOMContentLoaded", boot);
})();
