/* The web UI's LLM tab: report.html's charts (charts.js), redrawn from what the run has
   measured so far. Locust's page draws its extra tabs as tables only; this script, added to
   its index page by llmload/locust/webui.py, puts the charts above the LLM tab's table while
   that tab is open, and polls llmload's own route for their data every two seconds. */
(function () {
  "use strict";
  var PERIOD_MS = 2000;
  var box = document.createElement("div");
  box.id = "llmload-live";
  box.className = "llmload-live";
  var drawn = null;
  var shape = "";

  function llmTabOpen() {
    var tab = document.querySelector('[role="tab"][aria-selected="true"]');
    return tab !== null && tab.textContent.trim() === "LLM";
  }

  // Right above the open tab's table, inside Locust's own container.
  function place() {
    // (uPlot's legends are tables too: Locust's is the first one outside the charts)
    var table = Array.prototype.find.call(document.querySelectorAll("main table"), function (t) {
      return !box.contains(t);
    });
    var paper = table && table.closest(".MuiPaper-root");
    if (!paper || !paper.parentElement) return false;
    if (box.nextSibling !== paper) paper.parentElement.insertBefore(box, paper);
    return true;
  }

  function shapeOf(data) {
    return data.figures.map(function (f) { return f.name + ":" + f.series.length; }).join(",");
  }

  function show(data) {
    var now = shapeOf(data);
    if (drawn && now === shape) {
      // same charts, new numbers: keep the reader's zoom and hidden series
      data.figures.forEach(function (f) { window.llmloadCharts.refresh(drawn[f.name], f); });
      return;
    }
    drawn = window.llmloadCharts.draw(box, data);
    window.llmloadCharts.drawn = drawn;
    shape = now;
  }

  function poll() {
    if (!llmTabOpen() || !place()) {
      box.style.display = "none";
      setTimeout(poll, PERIOD_MS / 4);
      return;
    }
    box.style.display = "";
    fetch("./llmload/charts.json", {cache: "no-store"})
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (data) { if (data) show(data); })
      .catch(function () { /* the run ended or the server went away: keep the last charts */ })
      .then(function () { setTimeout(poll, PERIOD_MS); });
  }
  poll();
})();
