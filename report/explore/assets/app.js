// beluga explore: a view of the JSON that package report/explore builds
// (View, CaseSet, Page). It never computes a score: every number shown is
// read from that JSON. In a report file the JSON is embedded gzip+base64
// and decoded on demand; under `beluga serve` it is fetched from api/.
"use strict";
(function () {
  const PAGE = 50;
  // FOLD_ABOVE is metrics.FoldAbove: a case of more inputs shows its
  // original and the inputs that break it until unfolded.
  const FOLD_ABOVE = 6;
  const mode = JSON.parse(document.getElementById("beluga-mode").textContent).mode;
  const app = document.getElementById("app");
  const tip = document.getElementById("tip");
  let view = null;
  const caseSets = new Map();

  // ---- data sources ----
  async function gunzipB64(id) {
    const el = document.getElementById(id);
    if (!el) throw new Error("missing data block " + id);
    const bin = atob(el.textContent.trim());
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return await new Response(stream).json();
  }
  async function getJSON(url) {
    const r = await fetch(url);
    if (!r.ok) throw new Error(url + ": " + r.status + " " + (await r.text()));
    return r.json();
  }
  const source = mode === "serve" ? {
    view: () => getJSON("api/view"),
    page: (f, q) => {
      const p = new URLSearchParams({ func: f, runs: q.runs.join(","), focus: q.focus, verdict: q.verdict, split: q.split,
        meta: q.meta ? q.meta.join("=") : "", q: q.search, flips: q.flips ? "1" : "", offset: q.offset, limit: PAGE });
      return getJSON("api/cases?" + p);
    },
  } : {
    view: () => gunzipB64("beluga-view"),
    page: async (f, q) => {
      if (!caseSets.has(f)) caseSets.set(f, await gunzipB64("beluga-cases-" + f));
      return select(caseSets.get(f), q);
    },
  };

  // select mirrors CaseSet.Select in cases.go: filter, failing first, page.
  function select(cs, q) {
    const focus = q.focus || q.runs[q.runs.length - 1];
    const s = (q.search || "").toLowerCase();
    const hits = [];
    const splits = new Set(), meta = {};
    cs.cases.forEach((c, i) => {
      facets(c, splits, meta);
      if (q.verdict && !(cs.runs[focus] && cs.runs[focus].v[i] === q.verdict)) return;
      if (q.split && c.split !== q.split) return;
      if (q.meta && q.meta[0] && metaValue(c.meta, q.meta[0]) !== q.meta[1]) return;
      if (s && !(c.inputs || []).some(inp => inp.text.toLowerCase().includes(s) || (inp.pair || "").toLowerCase().includes(s))) return;
      let fails = cs.runs[focus] && cs.runs[focus].v[i] === "F" ? q.runs.length + 1 : 0;
      for (const r of q.runs) if (cs.runs[r] && cs.runs[r].v[i] === "F") fails++;
      const worst = cs.runs[focus] && cs.runs[focus].worst ? cs.runs[focus].worst[i] : 0;
      const vs = q.runs.filter(r => cs.runs[r]).map(r => cs.runs[r].v[i]);
      const flip = q.flips && vs.includes("P") && vs.includes("F") ? 1 : 0;
      hits.push([i, fails, worst, flip]);
    });
    hits.sort((a, b) => b[3] - a[3] || b[1] - a[1] || b[2] - a[2]);
    const rows = hits.slice(q.offset, q.offset + PAGE).map(([i]) => ({
      case: cs.cases[i],
      runs: q.runs.map(r => {
        const rc = cs.runs[r];
        if (!rc) return { v: "?" };
        return { v: rc.v[i], pred: rc.pred ? rc.pred[i] : null, probs: rc.probs ? rc.probs[i] : null,
          in: rc.in ? rc.in[i] : "", viol: rc.viol ? rc.viol[i] : null, worst: rc.worst ? rc.worst[i] : 0 };
      }),
    }));
    return { func: cs.func, expect: cs.expect, labels: cs.labels, total: hits.length, rows, runs: q.runs, splits: [...splits].sort(), meta: sortFacets(meta) };
  }
  function facets(c, splits, meta) {
    if (c.split) splits.add(c.split);
    if (c.meta && typeof c.meta === "object" && !Array.isArray(c.meta)) {
      for (const [k, v] of Object.entries(c.meta)) {
        if (v === null || typeof v === "object") continue;
        (meta[k] = meta[k] || new Set()).add(String(v));
      }
    }
  }
  function sortFacets(meta) {
    const out = {};
    for (const k of Object.keys(meta).sort()) out[k] = [...meta[k]].sort();
    return out;
  }
  function metaValue(m, k) {
    if (!m || typeof m !== "object" || Array.isArray(m) || m[k] === undefined || m[k] === null) return "";
    return String(m[k]);
  }

  // ---- helpers ----
  const esc = s => String(s).replace(/[&<>"']/g, c => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
  const num = (v, d = 2) => (v === null || v === undefined) ? "–" : Number(v).toFixed(d);
  // A prediction's probabilities, each named by its class when the suite's
  // labels are known and match: "negative 0.04 · neutral 0.00 · positive 0.96".
  const probs = (ps, labels) => labels && labels.length === ps.length
    ? ps.map((x, k) => esc(labels[k]) + " " + num(x, 2)).join(" · ")
    : ps.map(x => num(x, 2)).join(" / ");
  const runById = id => view.runs.find(r => r.id === id);
  const scoreOrder = ["iid", "seen", "func", "class", "type"];
  function runLabel(r) {
    return esc(r.configuration + " " + r.method + " " + r.score + (r.fold ? " −" + r.fold : "") + " seed " + r.seed);
  }
  function parseHash() {
    const h = decodeURIComponent(location.hash.slice(1));
    const [path, qs] = h.split("?");
    return { parts: path.split("/"), q: new URLSearchParams(qs || "") };
  }

  // ---- a test report (beluga test): its sections instead of Table 3 ----
  // The sections follow report/testreport.go's; a further section is one
  // function (report → HTML, "" when it has nothing) appended here.
  const testSections = [testSummary, testMatrix, testTable, testCalibration];
  const pct = v => v === null || v === undefined ? "–" : num(v, 1) + "%";
  const modelName = i => view.test.models.length > 1 ? "ABCDEFGH"[i] : "";
  // failColour is CheckList's grid colour: white to red by the cube root
  // of the fail rate (grey: no case scored).
  function failColour(v) {
    if (v === null || v === undefined) return "#eee";
    const t = Math.cbrt(Math.max(0, Math.min(100, v)) / 100);
    const c = (a, b) => Math.round(a + (b - a) * t);
    return "rgb(" + c(255, 198) + "," + c(255, 40) + "," + c(255, 40) + ")";
  }
  const ink = v => v !== null && v !== undefined && Math.cbrt(v / 100) > 0.6 ? "#fff" : "#111";
  function funcIdByName(name) { return view.funcs.findIndex(f => f.name === name); }
  function renderTest() {
    app.innerHTML = testSections.map(sec => sec(view.test)).join("");
    const tbl = document.getElementById("tests");
    if (tbl) wireSort(tbl);
  }
  function testSummary(r) {
    let h = "<section id='test-summary'><dl class='kv'>";
    r.models.forEach((m, i) => {
      const n = modelName(i);
      h += "<dt>Model" + (n ? " " + n : "") + "</dt><dd>" + esc(m) + "</dd><dt>Classes matched" + (n ? " (" + n + ")" : "") + "</dt><dd>" + esc(r.label_match[i]) + "</dd>";
    });
    h += "<dt>Suite</dt><dd>" + esc(r.suite) + " (" + esc(r.task) + "), " + r.tests.length + " tests</dd><dt>Cases scored</dt><dd id='test-sampling'>" + esc(r.sampling) + "</dd>";
    r.scores.forEach((s, i) => {
      const n = modelName(i);
      h += "<dt>Suite score" + (n ? " " + n : "") + "</dt><dd class='score'><strong>" + pct(s) + "</strong> <span class='muted' id='score-note'>" + esc(r.score_note) + "</span></dd>";
    });
    h += "</dl>";
    for (const f of r.flags || []) h += "<p class='warn'>" + esc(f) + "</p>";
    return h + "</section>";
  }
  function testMatrix(r) {
    const m = r.matrix;
    let h = "<section id='test-matrix-section'><h2>Fail rates by capability and test type</h2><p class='muted'>Each cell: the worst fail rate among its tests (the number of tests), as CheckList's visual summary" +
      (r.models.length > 1 ? "; A / B" : "") + ". A cell opens its worst test.</p><table class='matrix' id='test-matrix'><thead><tr><th scope='col'>Capability</th>";
    for (const t of m.types) h += "<th scope='col' class='num t-" + esc(t) + "'>" + esc(t) + "</th>";
    h += "</tr></thead><tbody>";
    m.capabilities.forEach((c, i) => {
      h += "<tr><th scope='row'>" + esc(c) + "</th>";
      m.cells[i].forEach(cell => {
        if (!cell.tests) { h += "<td class='num empty'></td>"; return; }
        const w = cell.worst[0];
        const fid = funcIdByName(cell.worst_test);
        const txt = cell.worst.map(pct).join(" / ") + " <span class='n'>(" + cell.tests + ")</span>";
        h += "<td class='num cell' style='background:" + failColour(w) + ";color:" + ink(w) + "' title='" + esc(cell.worst_test ? "worst: " + cell.worst_test : "") + "'>" +
          (fid >= 0 ? "<a href='#func/" + fid + "'>" + txt + "</a>" : txt) + "</td>";
      });
      h += "</tr>";
    });
    return h + "</tbody></table></section>";
  }
  function testTable(r) {
    const two = r.models.length > 1;
    const cols = [["test", "Test", 0], ["capability", "Capability", 0], ["type", "Type", 0], ["description", "Description", 0], ["n", "n", 1]];
    if (two) cols.push(["fa", "Fails A", 1], ["fb", "Fails B", 1], ["ra", "Fail rate A", 1], ["rb", "Fail rate B", 1], ["d", "B − A", 1], ["p", "p", 1], ["q", "q", 1], ["flips", "Flips", 1]);
    else cols.push(["filtered", "Filtered", 1], ["fails", "Fails", 1], ["rate", "Fail rate", 1]);
    let h = "<section id='test-table-section'><h2>Tests</h2><p class='muted'>Click a column to sort; a test's name opens its failing cases, worst first." +
      (two ? " Fail rates: each model's over the cases it did not filter; p: McNemar's exact test over the cases both models scored; q: Benjamini–Hochberg over the tests." : "") + "</p><table id='tests'><thead><tr>";
    for (const [k, label, isNum] of cols) h += "<th scope='col' data-key='" + k + "' data-num='" + isNum + "'" + (isNum ? " class='num'" : "") + " aria-sort='none'><button type='button'>" + esc(label) + "</button></th>";
    h += "</tr></thead><tbody>";
    r.tests.forEach((t, i) => {
      const a = t.stats[0], b = t.stats[1];
      const cell = (k, v, shown, attrs) => "<td data-k='" + k + "' data-v='" + esc(v === null || v === undefined ? "" : v) + "'" + (attrs || "") + ">" + shown + "</td>";
      h += "<tr data-test='" + esc(t.name) + "'>";
      h += cell("test", t.name, "<a href='#func/" + i + "'>" + esc(t.name) + "</a>" + (t.excluded ? " <span class='muted' title='left out of the suite score'>(not in the score)</span>" : ""));
      h += cell("capability", t.capability, esc(t.capability)) + cell("type", t.type, "<span class='t-" + esc(t.type) + "'>" + esc(t.type) + "</span>");
      h += cell("description", t.description || "", "<span class='desc'>" + esc(t.description || "") + "</span>") + cell("n", a.n, a.n, " class='num'");
      const rate = (k, s) => cell(k, s.fail_rate, "<span class='bar' style='--w:" + (s.fail_rate || 0).toFixed(1) + "%'></span>" + pct(s.fail_rate), " class='num rate'");
      if (two) {
        h += cell("fa", a.fails, a.fails, " class='num'") + cell("fb", b.fails, b.fails, " class='num'") + rate("ra", a) + rate("rb", b);
        h += cell("d", t.diff, t.diff === null || t.diff === undefined ? "–" : (t.diff > 0 ? "+" : "") + num(t.diff, 1), " class='num'");
        const pv = v => v === null || v === undefined ? "–" : Number(v).toPrecision(3);
        h += cell("p", t.p, pv(t.p), " class='num'") + cell("q", t.q, pv(t.q), " class='num" + (t.q !== null && t.q !== undefined && t.q < view.significance ? " best" : "") + "'") + cell("flips", t.flips || 0, t.flips || 0, " class='num'");
      } else {
        h += cell("filtered", a.filtered, a.filtered, " class='num'") + cell("fails", a.fails, a.fails, " class='num'") + rate("rate", a);
      }
      h += "</tr>";
    });
    return h + "</tbody></table></section>";
  }
  // testCalibration is report/testcalibration.go's section: per model the
  // figure (an image, so that nothing in it runs), the user's labelled
  // data, the calibration per test (worst first) and the worst test.
  function testCalibration(r) {
    if (!r.calibration || !r.calibration.length) return "";
    const two = r.models.length > 1;
    let h = "<section id='test-calibration'>";
    for (const c of r.calibration) {
      h += "<h2>Calibration" + (two ? ": " + esc(c.model) : "") + "</h2><p class='muted'>Whether the model's confidence matches its accuracy: expected calibration error (ECE, 10 equal-width bins of the predicted class's probability; 0 is calibrated) and the multi-class Brier score (0 best, 2 worst).</p>";
      if (c.svg) h += "<img class='calibration-figure' alt='Reliability diagram and confidence histogram of passing and failing cases' src='data:image/svg+xml;charset=utf-8," + encodeURIComponent(c.svg) + "'>";
      const d = c.data;
      if (d) {
        const k = d.classification;
        h += "<h3>Your data: " + esc(d.name) + "</h3><p>" + k.n + " labelled examples: accuracy <strong>" + pct(100 * k.accuracy) + "</strong>, macro-F1 <strong>" + pct(100 * k.macro_f1) +
          "</strong>; ECE " + num(d.calibration_width.ece, 3) + " (equal-mass bins " + num(d.calibration_mass.ece, 3) + "), Brier " + num(d.calibration_width.brier, 3) + ".</p>";
        h += "<table class='data-classes'><thead><tr><th scope='col'>Class</th><th scope='col' class='num'>Precision</th><th scope='col' class='num'>Recall</th><th scope='col' class='num'>F1</th><th scope='col' class='num'>Gold</th><th scope='col' class='num'>Predicted</th></tr></thead><tbody>";
        k.classes.forEach((x, i) => { h += "<tr><th scope='row'>" + esc(d.labels[i]) + "</th><td class='num'>" + pct(100 * x.precision) + "</td><td class='num'>" + pct(100 * x.recall) + "</td><td class='num'>" + pct(100 * x.f1) + "</td><td class='num'>" + x.support + "</td><td class='num'>" + x.predicted + "</td></tr>"; });
        h += "</tbody></table><table class='confusion'><caption>Confusion matrix: rows gold, columns predicted</caption><thead><tr><th></th>";
        for (const l of d.labels) h += "<th scope='col' class='num'>" + esc(l) + "</th>";
        h += "</tr></thead><tbody>";
        k.confusion.forEach((row, g) => { h += "<tr><th scope='row'>" + esc(d.labels[g]) + "</th>" + row.map((n, p) => "<td class='num" + (p === g ? " best" : "") + "'>" + n + "</td>").join("") + "</tr>"; });
        h += "</tbody></table>";
      }
      if (c.tests && c.tests.length) {
        const rows = [c.tests[0]].concat(c.tests.slice(1).sort((a, b) => (b.calibration.ece || 0) - (a.calibration.ece || 0)));
        h += "<h3>Calibration per test (labelled inputs)</h3><table class='calibration-tests'><thead><tr><th scope='col'>Test</th><th scope='col'>Capability</th><th scope='col' class='num'>n</th><th scope='col' class='num'>Accuracy</th><th scope='col' class='num'>Confidence</th><th scope='col' class='num'>ECE</th><th scope='col' class='num'>Brier</th></tr></thead><tbody>";
        for (const t of rows) {
          const k = t.calibration;
          h += "<tr><td>" + esc(t.functionality) + "</td><td>" + esc(t.class || "") + "</td><td class='num'>" + k.n + "</td><td class='num'>" + pct(100 * k.accuracy) + "</td><td class='num'>" + pct(100 * k.confidence) + "</td><td class='num'>" + num(k.ece, 3) + "</td><td class='num'>" + num(k.brier, 3) + "</td></tr>";
        }
        h += "</tbody></table><p class='muted'>INV and DIR tests have no labels: their fail rates measure them.</p>";
      }
      const w = c.worst;
      if (w && w.scored) h += "<p id='worst-test'>Worst test: <strong>" + esc(w.name) + "</strong>, pass rate " + pct(w.pass_rate) + " (" + w.passed + " of " + w.scored + " cases; 95% Wilson interval [" + num(w.lo, 1) + ", " + num(w.hi, 1) + "]).</p>";
    }
    return h + "</section>";
  }
  // wireSort sorts a table's rows by a clicked column (again: reversed);
  // empty values sort last.
  function wireSort(tbl) {
    tbl.querySelector("thead").addEventListener("click", e => {
      const th = e.target.closest("th");
      if (!th) return;
      const k = th.dataset.key, isNum = th.dataset.num === "1";
      const dir = th.getAttribute("aria-sort") === "descending" ? 1 : -1;
      for (const o of tbl.querySelectorAll("thead th")) o.setAttribute("aria-sort", "none");
      th.setAttribute("aria-sort", dir < 0 ? "descending" : "ascending");
      const body = tbl.querySelector("tbody");
      const rows = [...body.rows];
      const val = r => r.querySelector("td[data-k='" + k + "']").dataset.v;
      rows.sort((x, y) => {
        const a = val(x), b = val(y);
        if (a === "" || b === "") return (a === "") - (b === "");
        const c = isNum ? Number(a) - Number(b) : a.localeCompare(b);
        return dir * -c;
      });
      for (const r of rows) body.appendChild(r);
    });
  }
  // violationText mirrors metrics.ViolationText.
  function violationText(type, v) {
    if (type === "INV") return "probability of the original's class changed by " + num(v, 3);
    if (type === "DIR") return "moved " + num(v, 3) + " the wrong way";
    return "1 − p(expected) = " + num(v, 3);
  }

  // ---- overview: Table 3 and the heatmap ----
  function renderOverview() {
    if (view.test) return renderTest();
    const t = view.table;
    const reps = view.replicates.length > 1;
    const against = view.baseline >= 0 ? "↑ / ↓: significantly at or above / below the baseline row, " + esc(view.baseline_label) + " (p &lt; " + view.significance + "); "
      : "no baseline row: nothing is tested; ";
    let h = "<h2 id='table3'>Table 3</h2><p class='muted'>Best value per column in bold (never a flagged value, nor one not above a constant predictor on the same cases, marked §); " + against +
      (reps ? "Mean ± standard error over " + view.replicates.length + " replicates (each one's value on hover). " : "") +
      (view.ci ? view.ci + "% bootstrap intervals in brackets. " : "") + "A value links to the runs it comes from.</p>";
    if (view.partial && view.partial.length) h += "<div id='partial' class='warn'><p><strong>Partial report</strong> (beluga report --partial): the runs below are not done; the table leaves them out and marks the cells they leave incomplete " + esc(view.partial_mark) + ".</p><pre>" + esc(view.partial.join("\n")) + "</pre></div>";
    h += "<table id='table3-grid'><thead><tr><th scope='col'>Config</th><th scope='col'>Method</th>";
    for (const c of t.columns) h += "<th scope='col' class='num'>" + esc(c.header) + "</th>";
    h += "</tr></thead><tbody>";
    view.rows.forEach((row, i) => {
      h += "<tr" + (row.reference ? " class='muted'" : "") + "><th scope='row'>" + esc(row.configuration) + "</th><td>" + esc(row.label.split(": ").slice(1).join(": ")) + "</td>";
      t.cells[i].forEach((c, j) => {
        if (c.v === null) { h += "<td class='num muted'>–" + (c.flag_marks ? "<sup class='flag' title='" + esc((c.flags || []).join("\n")) + "'>" + esc(c.flag_marks) + "</sup>" : "") + "</td>"; return; }
        let s = num(c.v);
        if (reps) s += " ± " + num(c.se);
        if (view.ci) s += " [" + num(c.lo) + ", " + num(c.hi) + "]";
        const cls = ["num"];
        if (c.best) cls.push("best");
        if (c.mark > 0) cls.push("up");
        if (c.mark < 0) cls.push("down");
        const arrow = c.mark > 0 ? " ↑" : c.mark < 0 ? " ↓" : "";
        const title = "p = " + num(c.p, 4) + (c.ps !== null ? ", paired t over seeds p = " + num(c.ps, 4) : "") +
          (c.reps ? "\n" + view.replicates.filter(r => r in c.reps).map(r => r + ": " + num(c.reps[r])).join("\n") : "") +
          (c.flags ? "\n" + c.flags.join("\n") : "");
        const link = c.runs && c.runs.length ? "#runs/" + c.runs.join(",") : null;
        const body = link ? "<a href='" + link + "'>" + s + "</a>" : s;
        const flag = c.flag_marks ? "<sup class='flag'>" + esc(c.flag_marks) + "</sup>" : "";
        h += "<td class='" + cls.join(" ") + "' title='" + esc(title) + "' data-col='" + esc(t.columns[j].header) + "'>" + body + arrow + flag + "</td>";
      });
      h += "</tr>";
    });
    h += "</tbody></table>";
    if (view.footnotes && view.footnotes.length) h += "<div id='footnotes'>" + view.footnotes.map(f => "<p class='warn'>" + esc(f) + "</p>").join("") + "</div>";
    if (view.warnings && view.warnings.length) h += view.warnings.map(w => "<p class='warn'>" + esc(w) + "</p>").join("");
    h += groupTables();
    for (const [ti, task] of view.tasks.entries()) {
      h += "<h2 id='heat-" + ti + "'>Pass rates: " + esc(task.name) + "</h2>";
      h += "<p class='legend'>Column numbers are coloured by test type: <span class='t-MFT'>MFT</span><span class='t-INV'>INV</span><span class='t-DIR'>DIR</span>Colour: pass rate 0 (dark) to 100 (light); grey: no case ran. Click a cell to open its functionality.</p>";
      h += "<table class='heat' data-task='" + ti + "'><thead><tr><th></th><th></th><th class='col'>Avg</th>";
      task.funcs.forEach((f, k) => {
        const fv = view.funcs[f];
        h += "<th class='col t-" + esc(fv.type) + "' title='" + esc(fv.name) + "'><a href='#func/" + f + "' class='t-" + esc(fv.type) + "'>" + (k + 1) + "</a></th>";
      });
      h += "</tr></thead><tbody>";
      task.heatmap.forEach((line, li) => {
        const row = view.rows[line.row];
        const first = li === 0 || task.heatmap[li - 1].row !== line.row;
        h += "<tr><th scope='row'>" + esc(row.label) + "</th><th>" + esc(first && row.configuration === "IID" ? "" : line.label) + "</th>";
        h += "<td class='suite'>" + num(line.suite, 1) + "</td>";
        line.cells.forEach((c, k) => {
          const f = task.funcs[k];
          h += "<td><button type='button' data-line='" + li + "' data-k='" + k + "' style='background:" + c.c + "' aria-label='" +
            esc(view.funcs[f].name + ", " + row.label + " " + line.score + ": " + (c.rate === null ? "no case" : num(c.rate, 1) + "%")) + "'></button></td>";
        });
        h += "</tr>";
      });
      h += "</tbody></table><ol class='muted'>";
      task.funcs.forEach(f => { const fv = view.funcs[f]; h += "<li><a href='#func/" + f + "'>" + esc(fv.name) + "</a> <span class='t-" + esc(fv.type) + "'>" + esc(fv.type) + "</span> · " + esc(fv.class) + "</li>"; });
      h += "</ol>";
    }
    app.innerHTML = h;
    for (const tbl of app.querySelectorAll("table.heat")) {
      const task = view.tasks[+tbl.dataset.task];
      tbl.addEventListener("mouseover", e => {
        const b = e.target.closest("button");
        if (!b) return hideTip();
        const line = task.heatmap[+b.dataset.line], c = line.cells[+b.dataset.k], fv = view.funcs[task.funcs[+b.dataset.k]];
        showTip(e, "<b>" + esc(fv.name) + "</b><br>" + esc(fv.type) + " · " + esc(fv.class) + "<br>" + esc(view.rows[line.row].label) + " · " + esc(line.label) +
          "<br>pass rate " + (c.rate === null ? "–" : num(c.rate, 1) + "%") + " over " + c.n + " cases<br>run " + esc((c.runs || []).join(", ") || "–"));
      });
      tbl.addEventListener("mousemove", e => { if (tip.style.display === "block") moveTip(e); });
      tbl.addEventListener("mouseleave", hideTip);
      tbl.addEventListener("click", e => {
        const b = e.target.closest("button");
        if (!b) return;
        const line = task.heatmap[+b.dataset.line];
        hideTip();
        location.hash = "#func/" + task.funcs[+b.dataset.k] + "?row=" + line.row + "&score=" + line.score;
      });
    }
  }
  // groupTables draws report's per-group tables: per held-out group, the
  // baseline, the best constant predictor, the seen run and the held-out
  // fold on the group's cases, and the gap.
  function groupTables() {
    if (!view.groups || !view.groups.length) return "";
    let h = "<h2 id='groups'>Held-out groups</h2>";
    view.groups.forEach((g, gi) => {
      h += "<h3>" + esc(g.title) + "</h3><p class='muted'>" + esc(g.note) + "</p>";
      h += "<table class='groups' id='groups-" + gi + "'><thead><tr><th scope='col'>Row</th><th scope='col'>Group</th><th scope='col' class='num'>Cases</th><th scope='col' class='num'>Baseline</th>" +
        "<th scope='col' class='num'>Constant</th><th scope='col' class='num'>Seen</th><th scope='col' class='num'>Held out</th><th scope='col' class='num'>Gap</th><th scope='col' class='num'>p</th>" +
        (view.ci ? "<th scope='col'>" + view.ci + "% CI (gap)</th>" : "") + "</tr></thead><tbody>";
      for (const l of g.lines) {
        const mark = m => m ? "<sup class='flag'>" + esc(m) + "</sup>" : "";
        const gap = l.gap === null ? "–" : (l.gap > 0 ? "+" : "") + num(l.gap);
        h += "<tr" + (l.group === "" ? " class='total'" : "") + "><th scope='row'>" + esc(view.rows[l.row].label) + "</th><td>" + esc(l.group === "" ? "(all folds)" : l.group) + "</td>" +
          "<td class='num'>" + l.cases + mark(l.cases_marks) + "</td><td class='num'>" + num(l.baseline) + "</td><td class='num' title='" + esc(l.constant_by || "") + "'>" + num(l.constant) + "</td>" +
          "<td class='num'>" + num(l.seen) + mark(l.seen_marks) + "</td><td class='num'>" + num(l.held) + mark(l.held_marks) + (view.ci && l.held_lo !== null ? " [" + num(l.held_lo) + ", " + num(l.held_hi) + "]" : "") + "</td>" +
          "<td class='num'>" + gap + "</td><td class='num'>" + (l.gap_p === null ? "–" : Number(l.gap_p).toPrecision(3)) + "</td>" +
          (view.ci ? "<td>" + (l.gap_lo === null ? "–" : "[" + num(l.gap_lo) + ", " + num(l.gap_hi) + "]") + "</td>" : "") + "</tr>";
      }
      h += "</tbody></table>";
    });
    if (view.group_footnotes && view.group_footnotes.length) h += "<div id='group-footnotes'>" + view.group_footnotes.map(f => "<p class='warn'>" + esc(f) + "</p>").join("") + "</div>";
    return h;
  }
  function showTip(e, html) { tip.innerHTML = html; tip.style.display = "block"; moveTip(e); }
  function moveTip(e) { tip.style.left = (e.clientX + 14) + "px"; tip.style.top = (e.clientY + 14) + "px"; }
  function hideTip() { tip.style.display = "none"; }

  // ---- one functionality and its cases ----
  // The IID baseline's row, whose run is every case table's first column;
  // -1 when the table has none (configuration T alone).
  function baselineRow() {
    const b = view.baseline;
    return b >= 0 && view.rows[b].configuration === "IID" ? b : -1;
  }
  // columnsFor picks the runs shown side by side: the baseline, then the
  // row's runs scored on the functionality (seen, then held-out folds).
  function columnsFor(fid, row, rep) {
    // A test report shows every model side by side.
    if (view.test) return view.runs.map((r, i) => ({ role: (view.runs.length > 1 ? r.id + ": " : "") + view.rows[r.row].label, run: r }));
    const scored = view.runs.filter(r => r.funcs.includes(fid) && r.replicate === rep);
    const cols = [];
    const b = baselineRow();
    const base = b >= 0 ? scored.find(r => r.row === b) : null;
    if (base) cols.push({ role: "Baseline", run: base });
    // A page of one tested model (beluga test) has no baseline and no folds:
    // its run is named by its row.
    scored.filter(r => r.row === row && r.row !== b).sort((a, b) => scoreRank(a.score) - scoreRank(b.score))
      .forEach(r => cols.push({ role: r.score === "seen" ? "Saw it (seen)" : r.score === "iid" ? "IID run (this row)" : r.fold ? "Held out (" + r.score + ": " + r.fold + ")" : view.rows[row].label, run: r }));
    return cols;
  }
  const scoreRank = s => scoreOrder.includes(s) ? scoreOrder.indexOf(s) : scoreOrder.length;
  const state = { offset: 0, verdict: "", split: "", meta: null, search: "" };
  async function renderFunc(fid, q) {
    const fv = view.funcs[fid];
    if (!fv) { app.innerHTML = "<p>No functionality " + esc(fid) + ".</p>"; return; }
    const rowsWith = [...new Set(view.runs.filter(r => r.funcs.includes(fid)).map(r => r.row))].sort((a, b) => a - b);
    // A row's runs beside the baseline's: any row but the IID baseline's,
    // unless it is the only one (a sweep of baselines).
    const b = baselineRow();
    const others = rowsWith.filter(r => r !== b);
    let row = q.has("row") ? +q.get("row") : (others[0] ?? rowsWith[0]);
    if (row === b && others.length) row = others[0];
    const reps = [...new Set(view.runs.map(r => r.replicate))];
    const rep = q.get("rep") || reps[0];
    const cols = columnsFor(fid, row, rep);
    // The verdict filter reads the column of the score the page was opened
    // from (a heatmap cell), else the last: the run that saw it least.
    const fc = cols.find(c => c.run.score === q.get("score")) || cols[cols.length - 1];
    state.focus = fc ? fc.run.id : "";
    const back = view.test ? "← Test report" : "← Table and heatmap";
    const tr = view.test ? view.test.tests[fid] : null;
    let h = "<p><a href='#'>" + back + "</a></p><h2 id='func-title'>" + esc(fv.name) + "</h2><dl class='kv'>" +
      (tr ? tr.stats.map((s, i) => "<dt>Fail rate" + (modelName(i) ? " " + modelName(i) : "") + "</dt><dd class='func-rate'><strong>" + pct(s.fail_rate) + "</strong> <span class='muted'>(" + s.fails + " of " + (s.n - s.filtered) + " cases not filtered; " + s.n + " run, " + s.filtered + " filtered)</span></dd>").join("") : "") +
      "<dt>Task</dt><dd>" + esc(fv.task) +
      "</dd><dt>Type</dt><dd class='t-" + esc(fv.type) + "'>" + esc(fv.type) + "</dd><dt>" + (view.test ? "Capability" : "Class") + "</dt><dd>" + esc(fv.class) + "</dd>" +
      (fv.description ? "<dt>Description</dt><dd>" + esc(fv.description) + "</dd>" : "") +
      "<dt>Expected</dt><dd id='func-expect'>–</dd></dl>";
    h += "<form class='controls' id='case-controls' onsubmit='return false'>";
    h += "<label" + (view.test ? " hidden" : "") + ">Configuration × method<select id='f-row'>" + (others.length ? others : rowsWith).map(r => "<option value='" + r + "'" + (r === row ? " selected" : "") + ">" + esc(view.rows[r].label) + "</option>").join("") + "</select></label>";
    if (reps.length > 1) h += "<label>Replicate<select id='f-rep'>" + reps.map(r => "<option" + (r === rep ? " selected" : "") + ">" + esc(r) + "</option>").join("") + "</select></label>";
    h += "<label>Verdict of " + esc(fc ? fc.role : "–") + "<select id='f-verdict'><option value=''>all</option><option value='F'>fail</option><option value='P'>pass</option><option value='-'>filtered</option></select></label>";
    h += "<label>Split<select id='f-split'><option value=''>all</option></select></label>";
    h += "<label>Metadata<select id='f-meta'><option value=''>all</option></select></label>";
    h += "<label>Search<input id='f-search' type='search' placeholder='text contains…' value='" + esc(state.search) + "'></label></form>";
    h += "<div id='case-status' class='muted' aria-live='polite'></div><div id='case-table'></div>";
    app.innerHTML = h;
    document.getElementById("f-verdict").value = state.verdict;
    const go = (k, v) => { const p = new URLSearchParams(q); p.set(k, v); location.hash = "#func/" + fid + "?" + p; };
    document.getElementById("f-row").onchange = e => go("row", e.target.value);
    const repSel = document.getElementById("f-rep");
    if (repSel) repSel.onchange = e => go("rep", e.target.value);
    const refresh = () => { state.offset = 0; loadCases(fid, cols); };
    document.getElementById("f-verdict").onchange = e => { state.verdict = e.target.value; refresh(); };
    document.getElementById("f-split").onchange = e => { state.split = e.target.value; refresh(); };
    document.getElementById("f-meta").onchange = e => { state.meta = e.target.value ? e.target.value.split("\u0000") : null; refresh(); };
    let timer = 0;
    document.getElementById("f-search").oninput = e => { clearTimeout(timer); timer = setTimeout(() => { state.search = e.target.value; refresh(); }, 150); };
    await loadCases(fid, cols);
  }
  // loadSeq numbers the case requests: under serve they are fetches that
  // may come back out of order, and only the latest one is drawn.
  let loadSeq = 0;
  async function loadCases(fid, cols) {
    const seq = ++loadSeq;
    const status = document.getElementById("case-status");
    status.textContent = "Loading cases…";
    const q = { runs: cols.map(c => c.run.id), focus: state.focus, verdict: state.verdict, split: state.split, meta: state.meta, search: state.search, offset: state.offset,
      flips: !!view.test && cols.length > 1 };
    const page = await source.page(fid, q);
    if (seq !== loadSeq || !document.body.contains(status)) return;
    fillFacets(page);
    if (page.expect) document.getElementById("func-expect").textContent = page.expect;
    status.textContent = page.total + " cases" + (page.total > PAGE ? ", showing " + (state.offset + 1) + "–" + Math.min(state.offset + PAGE, page.total) : "") + "; " + (q.flips ? "cases the models disagree on (flips) first, then " : "") + "cases failed by " + (cols.find(c => c.run.id === state.focus) || { role: "–" }).role + " first, then by how many columns fail, then worst first (largest violation).";
    let h = "<table id='cases'><thead><tr><th scope='col'>Case</th><th scope='col'>Input (expected)</th>";
    for (const c of cols) h += "<th scope='col'" + (c.run.id === state.focus ? " class='focus'" : "") + ">" + esc(c.role) + (view.test ? "" : "<br><a class='muted' href='#run/" + c.run.id + "'>" + esc(c.run.id) + "</a>") + "</th>";
    h += "</tr></thead><tbody>";
    const type = view.funcs[fid].type;
    for (const r of page.rows) {
      const c = r.case;
      // An input breaks the case for a run when that run's per-input
      // verdict is F; a long case folds the inputs no run breaks.
      const breaks = i => r.runs.some(o => o.in && o.in[i] === "F");
      const n = (c.inputs || []).length;
      const fold = n > FOLD_ABOVE;
      const kept = i => fold && i > 0 && !breaks(i);
      const nKept = fold ? c.inputs.filter((_, i) => kept(i)).length : 0;
      h += "<tr data-case='" + c.id + "'" + (nKept ? " class='fold'" : "") + "><td class='num'>" + c.id + (c.split ? "<br><span class='muted'>" + esc(c.split) + "</span>" : "") + "</td><td>";
      if (n) {
        c.inputs.forEach((inp, i) => {
          h += "<div class='inp" + (breaks(i) ? " breaks" : "") + (kept(i) ? " kept" : "") + "'>" + (breaks(i) ? "<span class='x' title='breaks the expectation'>✗</span> " : "") +
            esc(inp.text) + (inp.pair ? " <span class='pair'>‖ " + esc(inp.pair) + "</span>" : "") + (inp.label ? " <span class='muted'>(" + esc(inp.label) + ")</span>" : "") + "</div>";
        });
        if (nKept) h += "<button type='button' class='unfold'>show the " + nKept + " inputs that keep the expectation</button>";
      } else h += "<span class='muted'>text not recorded</span>";
      if (c.meta) h += "<div class='muted'>" + esc(JSON.stringify(c.meta)) + "</div>";
      h += "</td>";
      for (const [j, o] of r.runs.entries()) {
        h += "<td" + (cols[j].run.id === state.focus ? " class='focus'" : "") + "><span class='v v-" + esc(o.v) + "'>" + ({ P: "pass", F: "fail", "-": "filtered", "?": "–" }[o.v] || esc(o.v)) + "</span>";
        if (o.v === "F" && o.worst) h += " <span class='muted worst'>" + esc(violationText(type, o.worst)) + "</span>";
        if (o.pred) o.pred.forEach((p, i) => {
          const b = o.in && o.in[i] === "F";
          h += "<div class='pred" + (b ? " breaks" : "") + (kept(i) ? " kept" : "") + "'>" + (b ? "✗ " : "") + esc(p) + (o.probs && o.probs[i] && o.probs[i].length ? " <span class='probs'>" + probs(o.probs[i], page.labels) + "</span>" : "") +
            (b && o.viol && o.viol[i] ? " <span class='viol'>" + esc(violationText(type, o.viol[i])) + "</span>" : "") + "</div>";
        });
        h += "</td>";
      }
      h += "</tr>";
    }
    h += "</tbody></table>";
    if (page.total > PAGE) h += "<div class='pager'><button type='button' id='prev'" + (state.offset === 0 ? " disabled" : "") + ">Previous</button><button type='button' id='next'" + (state.offset + PAGE >= page.total ? " disabled" : "") + ">Next</button></div>";
    document.getElementById("case-table").innerHTML = h;
    for (const b of document.querySelectorAll("#cases button.unfold")) b.onclick = () => { b.closest("tr").classList.remove("fold"); b.remove(); };
    const prev = document.getElementById("prev"), next = document.getElementById("next");
    if (prev) prev.onclick = () => { state.offset = Math.max(0, state.offset - PAGE); loadCases(fid, cols); };
    if (next) next.onclick = () => { state.offset += PAGE; loadCases(fid, cols); };
  }
  function fillFacets(page) {
    const split = document.getElementById("f-split"), meta = document.getElementById("f-meta");
    if (split.options.length === 1) {
      for (const s of page.splits || []) split.add(new Option(s, s, false, s === state.split));
      split.parentElement.hidden = !(page.splits && page.splits.length);
    }
    if (meta.options.length === 1) {
      for (const [k, vs] of Object.entries(page.meta || {})) for (const v of vs) {
        const val = k + "\u0000" + v;
        meta.add(new Option(k + " = " + v, val, false, !!state.meta && state.meta.join("\u0000") === val));
      }
      meta.parentElement.hidden = meta.options.length === 1;
    }
  }

  // ---- runs ----
  function renderRuns(ids) {
    let h = "<p><a href='#'>← Table and heatmap</a></p><h2>Runs of the cell</h2><ul>";
    for (const id of ids) { const r = runById(id); if (r) h += "<li><a href='#run/" + id + "'>" + esc(id) + "</a> " + runLabel(r) + "</li>"; }
    app.innerHTML = h + "</ul>";
  }
  function renderRun(id) {
    const r = runById(id);
    if (!r) { app.innerHTML = "<p>No run " + esc(id) + ".</p>"; return; }
    let h = "<p><a href='#'>← Table and heatmap</a></p><h2 id='run-title'>Run " + esc(r.id) + "</h2><dl class='kv'>";
    const kv = (k, v) => { h += "<dt>" + esc(k) + "</dt><dd>" + v + "</dd>"; };
    kv("Task", esc(r.task)); kv("Configuration", esc(r.configuration)); kv("Method", esc(r.method)); kv("Score", esc(r.score));
    if (r.fold) kv("Held-out fold", esc(r.fold));
    kv("Seed", esc(r.seed)); kv("Replicate", esc(r.replicate));
    if (r.seconds !== null) kv("Time", num(r.seconds, 1) + " s" + (r.start ? " from " + esc(r.start) : "") + (r.host ? " on " + esc(r.host) : ""));
    for (const [k, v] of Object.entries(r.iid_metrics || {})) kv("i.i.d. " + k, num(100 * v, 2));
    h += "</dl>";
    if (r.warnings && r.warnings.length) h += "<h3>Warnings</h3><div id='run-warnings'>" + r.warnings.map(w => "<p class='warn'>" + esc(w) + "</p>").join("") + "</div>";
    if (r.coverage && r.coverage.length) h += "<h3>Input coverage</h3><ul id='run-coverage'>" + r.coverage.map(c => "<li>" + esc(c) + "</li>").join("") + "</ul>";
    h += "<h3>Training curve</h3>" + curveSVG(r.curve || []);
    if (r.hyper) h += "<h3>Spec hyper-parameters</h3><pre>" + esc(JSON.stringify(r.hyper, null, 2)) + "</pre>";
    if (r.used) h += "<h3>Hyper-parameters used (train spec)</h3><pre>" + esc(JSON.stringify(r.used, null, 2)) + "</pre>";
    h += "<h3>Functionalities scored</h3><ul>" + r.funcs.map(f => "<li><a href='#func/" + f + "?row=" + r.row + "&rep=" + encodeURIComponent(r.replicate) + "'>" + esc(view.funcs[f].name) + "</a></li>").join("") + "</ul>";
    app.innerHTML = h;
  }
  function curveSVG(pts) {
    if (!pts.length) return "<p class='muted'>No curve stored.</p>";
    const W = 640, H = 240, L = 44, B = 24, T = 10, R = 10;
    const ok = pts.filter(p => p.l !== null);
    if (!ok.length) return "<p class='muted'>No finite loss stored.</p>";
    const xmax = Math.max(...pts.map(p => p.s), 1), ymax = Math.max(...ok.map(p => p.l)) || 1;
    const x = s => L + (W - L - R) * s / xmax, y = l => T + (H - T - B) * (1 - l / ymax);
    const kinds = [...new Set(ok.map(p => p.k))];
    const colours = ["#0b57d0", "#c62828", "#1a7f37", "#e65100", "#6a1b9a", "#00838f"];
    let s = "<svg class='curve' role='img' aria-label='training loss by step' width='" + W + "' height='" + H + "' viewBox='0 0 " + W + " " + H + "'>";
    s += "<line x1='" + L + "' y1='" + (H - B) + "' x2='" + (W - R) + "' y2='" + (H - B) + "' stroke='#888'/><line x1='" + L + "' y1='" + T + "' x2='" + L + "' y2='" + (H - B) + "' stroke='#888'/>";
    s += "<text x='" + (L - 4) + "' y='" + (T + 8) + "' font-size='10' text-anchor='end'>" + ymax.toFixed(2) + "</text><text x='" + (L - 4) + "' y='" + (H - B) + "' font-size='10' text-anchor='end'>0</text>";
    s += "<text x='" + (W - R) + "' y='" + (H - 6) + "' font-size='10' text-anchor='end'>step " + xmax + "</text>";
    kinds.forEach((k, i) => {
      const d = ok.filter(p => p.k === k).map(p => x(p.s).toFixed(1) + "," + y(p.l).toFixed(1)).join(" ");
      s += "<polyline fill='none' stroke='" + colours[i % colours.length] + "' stroke-width='1.3' points='" + d + "'/>";
      s += "<text x='" + (L + 8 + 70 * i) + "' y='" + (H - 6) + "' font-size='11' fill='" + colours[i % colours.length] + "'>" + esc(k) + "</text>";
    });
    return s + "</svg>";
  }

  // ---- routing ----
  let lastFunc = null;
  async function route() {
    const { parts, q } = parseHash();
    try {
      if (parts[0] === "func") {
        const fid = +parts[1];
        if (lastFunc !== fid) {
          // A test report opens a test on its failing cases, as CheckList's
          // summary lists them.
          const t = view.test && view.test.tests[fid];
          const failing = t && t.stats.length === 1 && t.stats[0].fails > 0 ? "F" : "";
          Object.assign(state, { offset: 0, verdict: failing, split: "", meta: null, search: "" }); lastFunc = fid;
        }
        await renderFunc(fid, q);
      } else if (parts[0] === "run") renderRun(parts[1]);
      else if (parts[0] === "runs") renderRuns(parts[1].split(","));
      else renderOverview();
      document.body.dataset.route = parts[0] || "overview";
    } catch (err) {
      app.innerHTML = "<p class='warn'>" + esc(err.message || err) + "</p>";
    }
    window.scrollTo(0, 0);
  }
  window.addEventListener("hashchange", route);
  (async () => {
    try {
      view = await source.view();
      document.getElementById("title").textContent = view.title;
      if (view.test) document.querySelector("header nav a").textContent = "Test report";
      document.title = view.title + " · beluga";
      await route();
      window.belugaReady = performance.now();
      document.body.dataset.ready = "1";
    } catch (err) {
      app.innerHTML = "<p class='warn'>Could not read the report's data: " + esc(err.message || err) + "</p>";
      document.body.dataset.ready = "error";
    }
  })();
})();
