/* llmload history's trend page: the report's charts (charts.js) of one key's runs, with what
   only this page needs. export/history_page.py writes the data: {runs: [run], sections:
   [{title, note, figures}]}, where a figure is charts.js's, plus its repeats' band
   ({low, high}, a value per point) and its points' runs (indices into runs). Nothing here
   fetches anything: the page opens from file:// with every request forbidden. */
(function () {
  "use strict";
  var BAND = "rgba(28, 126, 214, 0.18)";
  var RUN_TICKS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000];

  function num(v) {
    return v.toLocaleString("en-US", {minimumFractionDigits: 2, maximumFractionDigits: 2});
  }

  // The range over a run's repeats: a quad from each point to the next, and a short bar at
  // every point, so a run alone between gaps still shows its range.
  function drawBand(u, band) {
    var ctx = u.ctx;
    var px = uPlot.pxRatio;
    var box = u.bbox;
    var xs = u.data[0];
    function at(i) {
      if (band.low[i] == null || band.high[i] == null) return null;
      return {
        x: u.valToPos(xs[i], "x", true),
        lo: u.valToPos(band.low[i], "y", true),
        hi: u.valToPos(band.high[i], "y", true),
      };
    }
    ctx.save();
    ctx.beginPath();
    ctx.rect(box.left, box.top, box.width, box.height);
    ctx.clip();
    ctx.fillStyle = BAND;
    for (var i = 0; i < xs.length; i++) {
      var here = at(i);
      if (!here) continue;
      ctx.fillRect(here.x - 3 * px, here.hi, 6 * px, Math.max(here.lo - here.hi, px));
      var next = i + 1 < xs.length ? at(i + 1) : null;
      if (!next) continue;
      ctx.beginPath();
      ctx.moveTo(here.x, here.hi);
      ctx.lineTo(next.x, next.hi);
      ctx.lineTo(next.x, next.lo);
      ctx.lineTo(here.x, here.lo);
      ctx.closePath();
      ctx.fill();
    }
    ctx.restore();
  }

  function describe(run, fig, i) {
    var band = fig.band;
    var repeats = band.low[i] != null && band.low[i] !== band.high[i]
      ? "repeats " + num(band.low[i]) + " to " + num(band.high[i]) : "";
    return ["run " + run.n, run.id, run.started, run.engine, run.labels,
      run.commit ? "commit " + run.commit : "", run.verdict, repeats].filter(Boolean).join(" · ");
  }

  // uPlot calls an instance's hooks from its own (mutable) lists: added before its first
  // paint, which it queues, they run from that paint on.
  function hook(u, name, fn) {
    (u.hooks[name] = u.hooks[name] || []).push(fn);
  }

  function decorate(u, fig, runs) {
    hook(u, "drawClear", function (u) { drawBand(u, fig.band); });
    var info = document.createElement("p");
    info.className = "note run-info";
    info.setAttribute("data-run-info", fig.name);
    info.style.maxWidth = u.width + "px";  // a long fingerprint wraps under its chart
    u.root.insertAdjacentElement("afterend", info);
    hook(u, "setCursor", function (u) {
      var i = u.cursor.idx;
      info.textContent = i == null ? "" : describe(runs[fig.runs[i]], fig, i);
    });
    // x is a run's number: ticks on whole runs only
    u.axes[0].incrs = function () { return RUN_TICKS; };
    u.redraw(false, true);
  }

  var source = document.getElementById("llmload-history");
  if (!source) return;
  var data = JSON.parse(source.textContent);
  var root = document.getElementById("history-charts");
  var drawn = {};
  data.sections.forEach(function (section) {
    var box = document.createElement("div");
    root.appendChild(box);
    var charts = window.llmloadCharts.draw(box, {figures: section.figures, requests: null});
    // charts.js heads its groups in the report's words; this page's section is one metric
    box.querySelector("section > h2").textContent = section.title;
    box.querySelector("section > p.note").textContent = section.note;
    section.figures.forEach(function (fig) {
      decorate(charts[fig.name], fig, data.runs);
      drawn[fig.name] = charts[fig.name];
    });
  });
  window.llmloadCharts.drawn = drawn;
})();
