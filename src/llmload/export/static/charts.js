/* llmload's charts, drawn with uPlot, for report.html, llmload compare and the web UI's LLM tab.

   One input for every page: {figures: [figure], requests: sample or null}, where a figure is
   export/series.py's FigureSpec as JSON (export/charts.py writes it) and the sample is
   export/request_sample.py's columns. Nothing here fetches anything: the report opens from
   file:// with every request forbidden, and the web UI hands in what it polled. */
(function () {
  "use strict";

  var PALETTE = ["#1c7ed6", "#e8590c", "#2f9e44", "#c2255c", "#7048e8", "#0c8599", "#f08c00",
    "#5c940d", "#862e9c", "#495057"];
  // a request's outcome is "ok", "unfinished" or the kind of its failure (http_5xx, timeout, ...)
  function outcomeColor(outcome) {
    return outcome === "ok" ? "#1c7ed6" : outcome === "unfinished" ? "#f59f00" : "#e03131";
  }
  var WIDTH = 560;
  var HEIGHT = 300;
  var NINES = [0.5, 0.9, 0.99, 0.999, 0.9999];

  function num(v) {
    if (v == null || isNaN(v)) return "-";
    return v.toLocaleString("en-US", {minimumFractionDigits: 2, maximumFractionDigits: 2});
  }

  function percentile(q) {
    if (q == null) return "-";
    return "p" + String(+(q * 100).toFixed(2));
  }

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text != null) node.textContent = text;
    return node;
  }

  // uPlot wants one ascending x array shared by every series: the union of the series' x,
  // each series null where it has no point (gaps are spanned, so a curve stays one line).
  function aligned(fig) {
    var first = fig.series[0].x;
    var same = fig.series.every(function (s) {
      return s.x.length === first.length && s.x.every(function (x, i) { return x === first[i]; });
    });
    var xs = first.slice();
    if (!same) {
      var seen = new Set();
      xs = [];
      fig.series.forEach(function (s) {
        s.x.forEach(function (x) { if (!seen.has(x)) { seen.add(x); xs.push(x); } });
      });
      xs.sort(function (a, b) { return a - b; });
    }
    var at = new Map(xs.map(function (x, i) { return [x, i]; }));
    function column(s, values) {
      if (values == null) return null;
      if (same) return values.slice();
      var out = new Array(xs.length).fill(null);
      s.x.forEach(function (x, i) { out[at.get(x)] = values[i]; });
      return out;
    }
    return {
      data: [xs].concat(fig.series.map(function (s) { return column(s, s.y); })),
      low: fig.series.map(function (s) { return column(s, s.low); }),
      high: fig.series.map(function (s) { return column(s, s.high); }),
      labels: fig.series.map(function (s) { return column(s, s.point_labels); }),
    };
  }

  function xScale(fig) {
    if (fig.xscale === "log2") return {time: false, distr: 3, log: 2};
    if (fig.xscale === "nines") {
      return {
        // uPlot's own padding of a custom scale can step past 1, outside the transform
        time: false, distr: 100, range: function (u, min, max) { return [min, max]; },
        fwd: function (v) { return -Math.log10(1 - v); },
        bwd: function (v) { return 1 - Math.pow(10, -v); },
      };
    }
    return {time: false};
  }

  function xAxis(fig, levels) {
    var axis = {label: fig.xlabel};
    if (fig.xscale === "nines") {
      axis.splits = function (u) {
        return NINES.filter(function (q) { return q >= u.scales.x.min && q <= u.scales.x.max; });
      };
      axis.values = function (u, splits) { return splits.map(percentile); };
    } else if (fig.xscale === "log2") {
      axis.splits = function () { return levels; };
      axis.values = function (u, splits) { return splits.map(String); };
    }
    return axis;
  }

  function fromZero(u, min, max) { return [0, max > 0 ? max * 1.05 : 1]; }

  // What uPlot does not draw itself: stage-start markers, repeat-spread whiskers, point labels.
  // Reads the figure and its aligned columns from the chart, so a refresh draws the new ones.
  function overlay(u) {
    var fig = u.llmloadFigure;
    var extra = u.llmloadColumns;
    if (!fig || !extra) return;
    var ctx = u.ctx;
    var px = uPlot.pxRatio;
    var box = u.bbox;
    ctx.save();
    ctx.font = Math.round(10 * px) + "px sans-serif";
    (fig.markers || []).forEach(function (m) {
      var x = u.valToPos(m[0], "x", true);
      if (x < box.left || x > box.left + box.width) return;
      ctx.strokeStyle = "#adb5bd";
      ctx.setLineDash([4 * px, 3 * px]);
      ctx.beginPath();
      ctx.moveTo(x, box.top);
      ctx.lineTo(x, box.top + box.height);
      ctx.stroke();
      ctx.setLineDash([]);
      ctx.fillStyle = "#5b6474";
      ctx.fillText(m[1], x + 3 * px, box.top + 11 * px);
    });
    fig.series.forEach(function (s, i) {
      if (!u.series[i + 1].show) return;
      var scale = s.right_axis ? "r" : "y";
      var ys = u.data[i + 1];
      var low = extra.low[i];
      var high = extra.high[i];
      var labels = extra.labels[i];
      ctx.strokeStyle = ctx.fillStyle = u.series[i + 1]._stroke || "#000";
      u.data[0].forEach(function (xv, j) {
        if (ys[j] == null) return;
        var x = u.valToPos(xv, "x", true);
        if (low && high && low[j] != null && high[j] != null) {
          var lo = u.valToPos(low[j], scale, true);
          var hi = u.valToPos(high[j], scale, true);
          ctx.beginPath();
          ctx.moveTo(x, lo); ctx.lineTo(x, hi);
          ctx.moveTo(x - 4 * px, lo); ctx.lineTo(x + 4 * px, lo);
          ctx.moveTo(x - 4 * px, hi); ctx.lineTo(x + 4 * px, hi);
          ctx.stroke();
        }
        if (labels && labels[j]) {
          ctx.fillText(labels[j], x + 5 * px, u.valToPos(ys[j], scale, true) - 5 * px);
        }
      });
    });
    ctx.restore();
  }

  // Once zoomed, the mouse wheel pans the x axis by a tenth of the shown range per notch,
  // within the data's own extent.
  function pannable(u, extent) {
    u.over.addEventListener("wheel", function (e) {
      var x = u.scales.x;
      var span = x.max - x.min;
      var full = extent();
      if (!(span < full[1] - full[0])) return;  // not zoomed: the page scrolls as usual
      e.preventDefault();
      var step = (e.deltaY || e.deltaX) > 0 ? span / 10 : -span / 10;
      var min = Math.min(Math.max(x.min + step, full[0]), full[1] - span);
      u.setScale("x", {min: min, max: min + span});
    }, {passive: false});
  }

  function figureChart(fig, target, width) {
    var columns = aligned(fig);
    var levels = columns.data[0];
    var right = fig.series.some(function (s) { return s.right_axis; });
    var many = columns.data[0].length > 60;
    var series = [{
      label: fig.xlabel,
      value: function (u, v) { return fig.xscale === "nines" ? percentile(v) : num(v); },
    }];
    fig.series.forEach(function (s, i) {
      series.push({
        label: s.label,
        stroke: s.dashed ? "#495057" : PALETTE[i % PALETTE.length],
        width: 1.5,
        dash: s.dashed ? [6, 4] : undefined,
        spanGaps: true,
        scale: s.right_axis ? "r" : "y",
        paths: s.step ? uPlot.paths.stepped({align: 1}) : undefined,
        points: {show: !many && !s.step},
        value: function (u, v) { return num(v); },
      });
    });
    var axes = [xAxis(fig, levels), {label: fig.ylabel, size: 60}];
    if (right) axes.push({label: fig.right_ylabel || "", scale: "r", side: 1, grid: {show: false}, size: 60});
    var opts = {
      title: fig.title,
      width: width || WIDTH,
      height: HEIGHT,
      scales: {x: xScale(fig), y: {range: fromZero}, r: {range: fromZero}},
      series: series,
      axes: axes,
      cursor: {drag: {x: true, y: false}},
      hooks: {draw: [overlay]},
    };
    var u = new uPlot(opts, columns.data, target);
    // uPlot paints after the constructor returns (its first commit is queued): in time for these
    u.llmloadFigure = fig;
    u.llmloadColumns = columns;
    if (fig.group === "time") {
      pannable(u, function () { return [u.data[0][0], u.data[0][u.data[0].length - 1]]; });
    }
    return u;
  }

  // Each sampled request as a bar from its start to its last byte: client queue grey, waiting
  // for the first token light, streaming in its outcome's colour, the first token ticked.
  function requestsChart(req, target, info, width) {
    var n = req.start_s.length;
    var lastEnd = Math.max.apply(null, req.end_s);
    var drawBars = function (u) {
      var ctx = u.ctx;
      var px = uPlot.pxRatio;
      var box = u.bbox;
      var thick = Math.max(1, Math.min(6 * px, box.height / n * 0.8));
      ctx.save();
      ctx.beginPath();
      ctx.rect(box.left, box.top, box.width, box.height);
      ctx.clip();
      for (var i = 0; i < n; i++) {
        var y = u.valToPos(i + 0.5, "y", true) - thick / 2;
        var x0 = u.valToPos(req.start_s[i], "x", true);
        var sent = req.sent_s[i] == null ? req.start_s[i] : req.sent_s[i];
        var xs = u.valToPos(sent, "x", true);
        var first = req.first_s[i];
        var xf = first == null ? null : u.valToPos(first, "x", true);
        var xe = u.valToPos(req.end_s[i], "x", true);
        ctx.fillStyle = "#ced4da";
        ctx.fillRect(x0, y, Math.max(xs - x0, 0), thick);
        ctx.fillStyle = "#a5d8ff";
        ctx.fillRect(xs, y, Math.max((xf == null ? xe : xf) - xs, 0), thick);
        if (xf != null) {
          ctx.fillStyle = outcomeColor(req.outcome[i]);
          ctx.fillRect(xf, y, Math.max(xe - xf, 1), thick);
          ctx.fillStyle = "#212529";
          ctx.fillRect(xf, y, Math.max(px, 1), thick);
        } else if (req.outcome[i] !== "ok") {
          ctx.fillStyle = outcomeColor(req.outcome[i]);
          ctx.fillRect(xe - 2 * px, y, 2 * px, thick);
        }
      }
      ctx.restore();
    };
    var opts = {
      title: "Requests over time (" + n + (req.total > n ? " of " + req.total + ", sampled" : "") + ")",
      width: width || 2 * WIDTH + 12,
      height: Math.max(HEIGHT, Math.min(600, n * 2)),
      scales: {x: {time: false, range: function (u, min, max) { return [min, max]; }},
        y: {range: [0, n]}},
      series: [{label: "time (s)", value: function (u, v) { return num(v); }}, {label: "requests", show: false}],
      axes: [{label: "time since the first request (s)"}, {label: "requests, by start", size: 60}],
      cursor: {drag: {x: true, y: false}, points: {show: false}},
      legend: {show: false},
      hooks: {
        draw: [drawBars],
        setCursor: [function (u) {
          var top = u.cursor.top;
          if (top == null || top < 0) { info.textContent = ""; return; }
          var i = Math.floor(u.posToVal(top, "y"));
          if (i < 0 || i >= n) { info.textContent = ""; return; }
          info.textContent = [req.id[i], "stage " + req.stage[i] + " " + req.phase[i], req.name[i],
            req.outcome[i] + (req.status[i] ? " (HTTP " + req.status[i] + ")" : ""),
            "TTFT " + num(req.ttft_ms[i]) + " ms", "E2E " + num(req.e2e_ms[i]) + " ms",
            (req.output_tokens[i] == null ? "-" : req.output_tokens[i]) + " tokens",
            req.error[i]].filter(Boolean).join(" · ");
        }],
      },
    };
    var u = new uPlot(opts, [[0, lastEnd], [null, null]], target);
    pannable(u, function () { return [0, lastEnd]; });
    return u;
  }

  var COLUMNS = [
    ["id", "request", false], ["stage", "stage", true], ["phase", "phase", false],
    ["name", "name", false], ["outcome", "outcome", false], ["status", "HTTP", true],
    ["ttft_ms", "TTFT ms", true], ["e2e_ms", "E2E ms", true], ["output_tokens", "tokens", true],
    ["error", "error", false],
  ];

  function distinct(values) {
    return Array.from(new Set(values.map(String))).sort();
  }

  // The sampled requests, failures first; filter by outcome, stage and name, sort by a column.
  function requestsTable(req, target) {
    var n = req.start_s.length;
    var state = {outcome: "", stage: "", name: "", sort: null, descending: false};
    var controls = el("div", {class: "controls"});
    ["outcome", "stage", "name"].forEach(function (key) {
      var select = el("select", {"data-filter": key});
      select.appendChild(el("option", {value: ""}, "every " + key));
      if (key === "outcome") select.appendChild(el("option", {value: "!ok"}, "every failure"));
      distinct(req[key]).forEach(function (v) { select.appendChild(el("option", {value: v}, v)); });
      select.addEventListener("change", function () { state[key] = select.value; fill(); });
      controls.appendChild(select);
    });
    var count = el("span", {class: "note"});
    controls.appendChild(count);
    var table = el("table", {class: "wide requests"});
    var head = el("tr");
    COLUMNS.forEach(function (c) {
      var th = el("th", {"data-key": c[0], class: c[2] ? "sortable" : "k"}, c[1]);
      if (c[2]) {
        th.addEventListener("click", function () {
          state.descending = state.sort === c[0] ? !state.descending : true;
          state.sort = c[0];
          fill();
        });
      }
      head.appendChild(th);
    });
    var thead = el("thead");
    thead.appendChild(head);
    var body = el("tbody");
    table.appendChild(thead);
    table.appendChild(body);
    function fill() {
      var rows = [];
      for (var i = 0; i < n; i++) {
        if (state.outcome === "!ok" ? req.outcome[i] === "ok"
          : state.outcome && String(req.outcome[i]) !== state.outcome) continue;
        if (state.stage && String(req.stage[i]) !== state.stage) continue;
        if (state.name && String(req.name[i]) !== state.name) continue;
        rows.push(i);
      }
      rows.sort(function (a, b) {
        if (state.sort) {
          var va = req[state.sort][a], vb = req[state.sort][b];
          if (va == null) return 1;
          if (vb == null) return -1;
          return state.descending ? vb - va : va - vb;
        }
        var fa = req.outcome[a] === "ok" ? 1 : 0, fb = req.outcome[b] === "ok" ? 1 : 0;
        return fa - fb || req.start_s[a] - req.start_s[b];
      });
      body.textContent = "";
      rows.forEach(function (i) {
        var tr = el("tr", req.outcome[i] === "ok" ? {} : {class: "bad"});
        COLUMNS.forEach(function (c) {
          var v = req[c[0]][i];
          var text = v == null ? "-" : (c[0] === "ttft_ms" || c[0] === "e2e_ms") ? num(v) : String(v);
          tr.appendChild(el("td", c[2] ? {} : {class: "k"}, text));
        });
        body.appendChild(tr);
      });
      count.textContent = " " + rows.length + " of " + n + " sampled requests shown" +
        (req.total > n ? " (" + req.total + " in the run)" : "");
    }
    fill();
    var scroll = el("div", {class: "scroll requests-scroll"});
    scroll.appendChild(table);
    target.appendChild(controls);
    target.appendChild(scroll);
  }

  var pickers = [];  // each drawn group's stage picker: pickStage calls them all

  function pickStage(stage) { pickers.forEach(function (pick) { pick(stage); }); }

  // Buttons that show one stage's curves (or all) in every per-stage chart at once.
  function stagePicker(charts, figures, target) {
    var stages = [];
    figures.forEach(function (f) {
      f.series.forEach(function (s) {
        if (s.stage != null && stages.indexOf(s.stage) < 0) stages.push(s.stage);
      });
    });
    if (stages.length < 2) return;
    var bar = el("div", {class: "controls"});
    bar.appendChild(el("span", {class: "note"}, "show stage: "));
    function pick(stage) {
      figures.forEach(function (f) {
        var u = charts[f.name];
        f.series.forEach(function (s, i) {
          u.setSeries(i + 1, {show: stage == null || s.stage === stage});
        });
      });
    }
    pickers.push(pick);
    var all = el("button", {type: "button", "data-stage": "all"}, "all");
    all.addEventListener("click", function () { pick(null); });
    bar.appendChild(all);
    stages.sort(function (a, b) { return a - b; }).forEach(function (stage) {
      var b = el("button", {type: "button", "data-stage": String(stage)}, String(stage));
      b.addEventListener("click", function () { pick(stage); });
      bar.appendChild(b);
    });
    target.appendChild(bar);
  }

  var GROUPS = [
    ["distribution", "Latency distributions", "Each stage's latency by percentile: the p50, " +
      "p90, p99 and p99.9 of summary.json are points of these curves. Hover for values, drag " +
      "to zoom (double-click resets), click a legend entry to hide it."],
    ["time", "Over time", "Each second of the run; dashed lines mark stage starts. Drag to " +
      "zoom, then the mouse wheel pans; double-click resets."],
    ["concurrency", "Against concurrency", "One point per level (whiskers: spread over repeats)."],
    ["tradeoff", "Trade-offs", "Labelled by concurrency; dashed: the Pareto frontier."],
  ];

  function group(fig) { return fig.group || "concurrency"; }

  // Draws every figure of `data` into `root`, grouped; returns the uPlot instances by name.
  function draw(root, data, width) {
    var charts = {};
    root.textContent = "";
    pickers = [];
    GROUPS.forEach(function (g) {
      var figures = data.figures.filter(function (f) { return group(f) === g[0]; });
      if (!figures.length) return;
      var section = el("section", {class: "charts", "data-group": g[0]});
      section.appendChild(el("h2", {}, g[1]));
      section.appendChild(el("p", {class: "note"}, g[2]));
      var picker = el("div");
      section.appendChild(picker);
      var grid = el("div", {class: "plots"});
      section.appendChild(grid);
      figures.forEach(function (fig) {
        var box = el("figure", {id: "chart-" + fig.name, "data-chart": fig.name});
        grid.appendChild(box);
        // time runs along the page: its charts take the width of two
        charts[fig.name] = figureChart(fig, box, width || (g[0] === "time" ? 2 * WIDTH + 12 : WIDTH));
        if (fig.caption) box.appendChild(el("figcaption", {}, fig.caption));
      });
      stagePicker(charts, figures, picker);
      root.appendChild(section);
    });
    if (data.requests && data.requests.start_s.length) {
      var section = el("section", {class: "charts", "data-group": "requests"});
      section.appendChild(el("h2", {}, "Requests"));
      section.appendChild(el("p", {class: "note"}, "Each bar is one request from its start to " +
        "its last byte: grey while the client queued it, light while the server had not yet " +
        "answered a token, then blue (ok), orange (unfinished) or red (failed) while it " +
        "streamed. Hover a bar for the request; the table below lists the same requests, " +
        "failures first. Drag to zoom, wheel to pan. requests.jsonl has them all."));
      var box = el("figure", {id: "chart-requests", "data-chart": "requests"});
      var info = el("p", {class: "note", id: "request-info"});
      section.appendChild(box);
      charts.requests = requestsChart(data.requests, box, info, width ? width : undefined);
      section.appendChild(info);
      var tableBox = el("div", {id: "requests-table"});
      section.appendChild(tableBox);
      requestsTable(data.requests, tableBox);
      root.appendChild(section);
    }
    return charts;
  }

  // New numbers for a chart already drawn: the x range the reader zoomed to stays.
  function refresh(u, fig) {
    var zoomed = u.scales.x.min !== u.data[0][0] || u.scales.x.max !== u.data[0][u.data[0].length - 1];
    var columns = aligned(fig);
    u.llmloadFigure = fig;
    u.llmloadColumns = columns;
    u.setData(columns.data, !zoomed);
  }

  // The report's stage table: a click on a stage's row shows that stage's curves.
  function linkStageRows() {
    var heading = Array.prototype.find.call(document.querySelectorAll("h2"), function (h) {
      return h.textContent === "Stages";
    });
    var next = heading && heading.nextElementSibling;
    while (next && !next.classList.contains("scroll")) next = next.nextElementSibling;
    var table = next && next.querySelector("table");
    if (!table) return;
    Array.prototype.forEach.call(table.querySelectorAll("tbody tr"), function (tr) {
      var stage = Number(tr.children[0].textContent);
      tr.style.cursor = "pointer";
      tr.title = "show this stage's distributions";
      tr.addEventListener("click", function () { pickStage(stage); });
    });
  }

  window.llmloadCharts = {draw: draw, refresh: refresh, pickStage: pickStage};

  var source = document.getElementById("llmload-charts");
  if (source) {
    var root = document.getElementById("charts");
    window.llmloadCharts.drawn = draw(root, JSON.parse(source.textContent));
    if (pickers.length) linkStageRows();
  }
})();
