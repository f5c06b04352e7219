// Vigilo dashboard: the only script. Follows a running run (progress, shard map, the partial gate table) and draws its throughput with
// uPlot. Pages work without it; it reads the same JSON API scripts can call.
(function () {
  "use strict";
  // The state-changing forms (cancel, pause, resume) ask first; without the script they post at once.
  Array.prototype.forEach.call(document.querySelectorAll("form[data-confirm]"), function (form) {
    form.addEventListener("submit", function (e) {
      if (!window.confirm(form.getAttribute("data-confirm"))) { e.preventDefault(); }
    });
  });
  // A transcript opened at an event (?event=SEQ, a search hit): bring the marked event into view.
  var target = document.querySelector(".conversation .target");
  if (target && !window.location.hash) { target.scrollIntoView({ block: "center" }); }
  // A case page: j or the right arrow opens the next case of its list, k or the left arrow the previous one.
  document.addEventListener("keydown", function (e) {
    var t = e.target;
    if (e.altKey || e.ctrlKey || e.metaKey || (t && /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) { return; }
    var link = null;
    if (e.key === "j" || e.key === "ArrowRight") { link = document.getElementById("next-case"); }
    if (e.key === "k" || e.key === "ArrowLeft") { link = document.getElementById("prev-case"); }
    if (link) { e.preventDefault(); window.location.href = link.getAttribute("href"); }
  });
  // The results explorer's table: j or the down arrow moves to the next case, k or the up arrow to the previous one
  // (the row is marked and its case link focused, so Enter opens it, keeping the list).
  var caseLinks = document.querySelectorAll("#cases a.case-link");
  if (caseLinks.length > 0) {
    var current = -1;
    document.addEventListener("keydown", function (e) {
      var t = e.target;
      if (e.altKey || e.ctrlKey || e.metaKey || (t && /^(INPUT|TEXTAREA|SELECT|SUMMARY)$/.test(t.tagName))) { return; }
      var step = (e.key === "j" || e.key === "ArrowDown") ? 1 : (e.key === "k" || e.key === "ArrowUp") ? -1 : 0;
      if (step === 0) { return; }
      e.preventDefault();
      var next = Math.max(0, Math.min(caseLinks.length - 1, current + step));
      if (current >= 0) { caseLinks[current].closest("tr").classList.remove("selected"); }
      current = next;
      caseLinks[current].closest("tr").classList.add("selected");
      caseLinks[current].focus();
    });
  }
  var run = document.getElementById("run");
  if (!run) { return; }
  var id = run.getAttribute("data-run");
  var live = run.getAttribute("data-live") === "true";
  var plot = null;

  function text(elId, value) {
    var el = document.getElementById(elId);
    if (el) { el.textContent = String(value); }
  }

  // Counts as the server renders them: 12,345.
  function count(n) {
    return n === null || n === undefined ? "" : Number(n).toLocaleString("en-US");
  }

  function level(fraction) {
    var l = Math.round(Math.max(0, Math.min(1, fraction)) * 10);
    return "lvl-" + l;
  }

  function getJson(url) {
    return fetch(url, { credentials: "same-origin", headers: { "Accept": "application/json" } }).then(function (r) {
      if (!r.ok) { throw new Error(url + ": HTTP " + r.status); }
      return r.json();
    });
  }

  function drawThroughput() {
    return getJson("/api/runs/" + id + "/throughput?buckets=120").then(function (t) {
      var box = document.getElementById("throughput");
      if (!box || t.points.length === 0 || typeof uPlot === "undefined") { return; }
      var xs = t.points.map(function (p) { return p.t; });
      var ys = t.points.map(function (p) { return p.cases_per_second; });
      // The smoothed rate (exponentially weighted, one-minute time constant) is the line to read; the buckets' own
      // rates, which spike as whole chunks complete, stay as a faint step shape behind it.
      var sm = t.points.map(function (p) { return p.smoothed_cases_per_second; });
      // Zero before the first bucket and after the last, so even one bucket draws as a shape on a sane time axis.
      var w = t.bucket_seconds || 1;
      xs.unshift(xs[0] - w);
      ys.unshift(0);
      sm.unshift(null);
      xs.push(xs[xs.length - 1] + w);
      ys.push(0);
      sm.push(null);
      var empty = document.getElementById("throughput-empty");
      if (empty) { empty.remove(); }
      if (plot) { plot.setData([xs, sm, ys]); return; }
      plot = new uPlot({
        width: Math.min(860, box.clientWidth - 16 || 860),
        height: 220,
        series: [{},
          { label: "cases/s (smoothed)", stroke: "#1f4e79", width: 2 },
          { label: "per bucket", stroke: "rgba(31,78,121,0.35)", fill: "rgba(31,78,121,0.08)",
            paths: uPlot.paths.stepped({ align: 1 }) }],
        axes: [{}, { label: "cases/s" }]
      }, [xs, sm, ys], box);
    });
  }

  function refresh() {
    return getJson("/api/runs/" + id).then(function (s) {
      var e = s.execution;
      text("run-status", s.status);
      text("cases-done", count(e.cases_done));
      text("cases-total", count(e.cases));
      text("chunks-done", count(e.chunks_done));
      text("chunks-total", count(e.chunks));
      text("chunks-failed", count(e.chunks_failed));
      text("chunks-requeued-after-expiry", count(e.chunks_requeued_after_expiry));
      var f = e.cases ? e.cases_done / e.cases : 0;
      text("percent", (f * 100).toFixed(1) + "%");
      var fill = document.getElementById("progress-fill");
      if (fill) { fill.className = "fill " + level(f); }
      showWaits(s.waiting || []);
      showGates(s.gates || []);
      showLive(s.live || {});
      e.shards.forEach(function (sh) {
        var cell = document.getElementById("shard-" + sh.shard);
        if (!cell) { return; }
        if (sh.cases_done === null) {
          cell.className = "cell unknown";
          cell.title = "shard " + sh.shard + " (" + sh.placement + ", " + sh.state + "): " + sh.chunks + " chunks, " +
            sh.cases + " cases; progress unknown (execution database unreachable)";
          return;
        }
        var sf = sh.cases ? sh.cases_done / sh.cases : 0;
        cell.className = "cell " + level(sf) + (sh.chunks_failed > 0 ? " has-failed" : "");
        cell.title = "shard " + sh.shard + " (" + sh.placement + ", " + sh.state + "): " + sh.chunks_done + "/" +
          sh.chunks + " chunks, " + sh.cases_done + "/" + sh.cases + " cases";
      });
      return s;
    });
  }

  function percent(fraction) {
    return (fraction * 100).toFixed(1) + "%";
  }

  // The partial gate table's counts, rates and intervals, as the page renders them (the decision and the final
  // table come with the reload once the run ends).
  function showGates(gates) {
    var rows = document.querySelectorAll("#gates tr[data-gate]");
    gates.forEach(function (g) {
      var row = null;
      rows.forEach(function (r) { if (r.getAttribute("data-gate") === g.name) { row = r; } });
      if (!row) { return; }
      function cell(cls, value) {
        var el = row.querySelector("td." + cls);
        if (el) { el.textContent = String(value); }
      }
      cell("executed", count(g.executed));
      cell("passed", count(g.passed));
      cell("failed", count(g.failed));
      cell("errored", count(g.errored));
      cell("pass-rate", percent(g.pass_rate));
      cell("executed-rate", g.executed_pass_rate === null || g.executed_pass_rate === undefined ? "\u2013" :
        percent(g.executed_pass_rate));
      cell("ci", String(+(g.confidence * 100).toFixed(4)) + "% CI [" + percent(g.ci_low) + ", " +
        percent(g.ci_high) + "]");
      var ci = row.querySelector("td.ci");
      if (ci) { ci.title = "standard error " + percent(g.stderr); }
      if (g.pass_at_k) {
        var ks = Object.keys(g.pass_at_k).map(Number);
        var n = ks.length;
        cell("pass-at-k", shownK(n).map(function (k) {
          return "pass@" + k + " " + g.pass_at_k[String(k)].toFixed(2);
        }).join(" \u00b7 "));
      }
    });
  }

  // The smoothed throughput, the ETA and the no-worker hint, as the page renders them (RunPages.putLive).
  function showLive(l) {
    if (l.cases_per_second !== null && l.cases_per_second !== undefined) {
      var r = l.cases_per_second;
      text("rate-now", (r < 10 ? r.toFixed(2) : r.toFixed(1)) + " cases/s");
    }
    text("eta", l.eta_seconds === null || l.eta_seconds === undefined ? "unknown" :
      duration(l.eta_seconds) + " (about " + l.eta_at.replace("T", " ").replace(/\.\d+/, "").replace("Z", " UTC") + ")");
    var hint = document.getElementById("no-worker");
    if (hint) { hint.hidden = !l.no_worker; }
  }

  // A duration as Views.duration writes it: 42 s, 3 min 5 s, 2 h 10 min.
  function duration(seconds) {
    var s = Math.floor(seconds);
    if (s < 60) { return s + " s"; }
    if (s < 3600) { return Math.floor(s / 60) + " min " + (s % 60) + " s"; }
    return Math.floor(s / 3600) + " h " + Math.floor((s % 3600) / 60) + " min";
  }

  // The k the page shows for n epochs (GateResult.shownK): every k up to 5, else 1, 2, 5, 10, ... below n, and n.
  function shownK(n) {
    var ks = [];
    if (n <= 5) {
      for (var k = 1; k <= n; k++) { ks.push(k); }
      return ks;
    }
    for (var d = 1; d < n; d *= 10) {
      [1, 2, 5].forEach(function (s) { if (d * s < n) { ks.push(d * s); } });
    }
    ks.push(n);
    return ks;
  }

  // What the run's workers wait for (the store or a database that is out), one line each, as the page renders it.
  function showWaits(waits) {
    var box = document.getElementById("waiting");
    if (!box) { return; }
    while (box.firstChild) { box.removeChild(box.firstChild); }
    waits.forEach(function (w) {
      var p = document.createElement("p");
      p.className = "alert waiting";
      p.setAttribute("data-for", w["for"]);
      p.textContent = "waiting for the " + w["for"] + " since " + w.since + " (" + w.target + ", " + w.workers +
        " worker" + (w.workers === 1 ? "" : "s") + "): " + w.error +
        ". Its chunks keep their attempts and carry on once it answers.";
      box.appendChild(p);
    });
  }

  function follow() {
    refresh().then(function (s) {
      drawThroughput();
      var wasPaused = document.getElementById("run-status").getAttribute("data-status") === "paused";
      if (["settled", "failed", "cancelled"].indexOf(s.status) >= 0 || (s.status === "paused") !== wasPaused) {
        // Finished, paused or resumed elsewhere: show the recorded gate table and verdict, or the right actions.
        window.location.reload();
        return;
      }
      window.setTimeout(follow, 2000);
    }).catch(function (err) {
      text("live-note", "live updates paused: " + err.message);
      window.setTimeout(follow, 10000);
    });
  }

  drawThroughput().catch(function (err) { text("throughput-empty", "throughput unavailable: " + err.message); });
  if (live) { window.setTimeout(follow, 2000); }
})();
