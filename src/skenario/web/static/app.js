// The dashboard's pages: each view fetches its data from /api and draws it. Text from runs and scenarios
// is always set as text (never as HTML); charts are the report's plotly figures, drawn as they come.
"use strict";

const main = document.getElementById("app");
const params = main.dataset;

// ---- small helpers -------------------------------------------------------------------------------------

function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "class") node.className = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

async function api(path, options = {}) {
  const response = await fetch(path, options);
  const body = await response.json().catch(() => null);
  if (!response.ok) {
    const detail = body && body.detail !== undefined ? body.detail : response.statusText;
    throw new Error(typeof detail === "string" ? detail : JSON.stringify(detail));
  }
  return body;
}

// Replace a node's children, leaving out the parts a page does not have (null).
function fill(node, ...children) {
  node.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined));
}

function fail(error) {
  fill(main, el("h1", {}, "Something went wrong"), el("p", { class: "error" }, error.message));
  main.dataset.ready = "true";  // drawn: what went wrong is the page
}

function number(value, digits = 3) {
  if (value === null || value === undefined) return "-";
  if (typeof value !== "number") return String(value);
  if (Number.isInteger(value)) return value.toLocaleString("en");
  if (Math.abs(value) >= 1000) return value.toLocaleString("en", { maximumFractionDigits: 1 });  // a time in s, say
  return Number(value.toPrecision(digits)).toLocaleString("en", { maximumFractionDigits: 6 });
}

function percent(value) {
  return value === null || value === undefined ? "-" : `${(value * 100).toFixed(2)}%`;
}

function clock(seconds) {
  if (seconds === null || seconds === undefined) return "-";
  const s = Math.round(seconds);
  const pad = (n) => String(n).padStart(2, "0");
  return `${pad(Math.floor(s / 3600))}:${pad(Math.floor((s % 3600) / 60))}:${pad(s % 60)}`;
}

function rowsTable(rows, css = "figures") {
  return el("table", { class: css }, rows.map((r) => el("tr", {}, el("th", {}, r.label), el("td", {}, r.value))));
}

// A table of records: columns as [heading, value(record), css]; rows clickable when `onclick` is given.
function recordsTable(records, columns, { onclick = null, id = null, limit = null } = {}) {
  const shown = limit === null ? records : records.slice(0, limit);
  const head = el("tr", {}, columns.map(([heading]) => el("th", {}, heading)));
  const body = shown.map((record) =>
    el(
      "tr",
      { class: onclick ? "clickable" : null, onclick: onclick ? () => onclick(record) : null },
      columns.map(([, value, css]) => el("td", { class: css || null }, value(record))),
    ),
  );
  const table = el("table", { class: "records", id }, el("thead", {}, head), el("tbody", {}, body));
  if (limit !== null && records.length > limit) {
    return el("div", {}, table, el("p", { class: "note" }, `${limit} of ${records.length.toLocaleString("en")} shown`));
  }
  return table;
}

function chartBox(id) {
  return el("div", { class: "chart", id });
}

// Draw plotly figures into their boxes (made here if absent): those on screen now, one frame after another so the
// page stays live, and each of the others as it scrolls into view. A box drawn says so (data-drawn="true").
async function drawCharts(figures, into) {
  const boxes = figures.map(({ id, figure }) => {
    let box = document.getElementById(id);
    if (!box) {
      box = chartBox(id);
      into.append(box);
    }
    return [box, figure];
  });
  const draw = async (box, figure) => {
    if (box.dataset.drawn) return;
    box.dataset.drawn = "drawing";
    await Plotly.newPlot(box, figure.data, figure.layout, { responsive: true, displaylogo: false });
    box.dataset.drawn = "true";
  };
  const later = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      if (!entry.isIntersecting) continue;
      later.unobserve(entry.target);
      const found = boxes.find(([box]) => box === entry.target);
      draw(...found);
    }
  }, { rootMargin: "400px" });
  for (const [box, figure] of boxes) {
    if (box.getBoundingClientRect().top < window.innerHeight + 400) {
      await new Promise((resolve) => requestAnimationFrame(resolve));
      await draw(box, figure);
    } else {
      later.observe(box);
    }
  }
}

// plotly.js (4.8 MB) loads apart from this script (`async`): a page asks the server for its data at once, and
// draws its charts when both are in.
function whenPlotly() {
  return new Promise((resolve, reject) => {
    if (window.Plotly) return resolve();
    const script = document.getElementById("plotly");
    script.addEventListener("load", () => resolve());
    script.addEventListener("error", () => reject(new Error("plotly.js did not load")));
  });
}

// ---- Runs ----------------------------------------------------------------------------------------------

async function runsView() {
  const runs = await api("/api/runs");
  const selected = new Set();
  let sortKey = "run";
  let ascending = false;
  const filter = el("input", { type: "search", id: "filter", placeholder: "filter: name, scenario, tag, phase" });
  const phase = el("select", { id: "phase" }, ["", "Completed", "Failed", "Running"].map((p) => el("option", { value: p }, p || "any phase")));
  const tagsInput = el("input", { type: "text", id: "tags-input", placeholder: "tags, comma separated" });
  const status = el("p", { class: "status", id: "runs-status" });
  const holder = el("div", {});
  const compareButton = el("button", { id: "compare", onclick: () => {
    if (selected.size < 2) return say("pick two runs or more to compare");
    location.href = "/compare?" + [...selected].map((r) => `runs=${r}`).join("&");
  } }, "Compare selected");
  const tagButton = el("button", { id: "set-tags", onclick: async () => {
    if (!selected.size) return say("pick the runs to tag");
    const tags = tagsInput.value.split(",").map((t) => t.trim()).filter((t) => t);
    try {
      for (const run of selected) {
        const done = await api(`/api/runs/${run}/tags`, { method: "PUT", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ tags }) });
        runs.find((r) => r.run === run).tags = done.tags;
      }
      say(`tags set on ${selected.size} run(s)`);
      draw();
    } catch (error) { say(error.message, true); }
  } }, "Set tags");
  const deleteButton = el("button", { id: "delete", class: "danger", onclick: async () => {
    if (!selected.size) return say("pick the runs to delete");
    if (deleteButton.dataset.armed !== "true") {
      deleteButton.dataset.armed = "true";
      deleteButton.textContent = `Really delete ${selected.size} run(s)?`;
      return;
    }
    try {
      for (const run of [...selected]) {
        await api(`/api/runs/${run}`, { method: "DELETE" });
        runs.splice(runs.findIndex((r) => r.run === run), 1);
        selected.delete(run);
      }
      say("deleted");
    } catch (error) { say(error.message, true); }
    deleteButton.dataset.armed = "false";
    deleteButton.textContent = "Delete selected";
    draw();
  } }, "Delete selected");

  function say(text, error = false) {
    status.textContent = text;
    status.className = error ? "status error" : "status";
  }

  const columns = [
    ["", (r) => el("input", { type: "checkbox", class: "pick", "data-run": r.run, checked: selected.has(r.run), onclick: (event) => {
      event.stopPropagation();
      if (event.target.checked) selected.add(r.run); else selected.delete(r.run);
    } })],
    ["run", (r) => el("a", { href: `/runs/${r.run}` }, r.run), "number"],
    ["name", (r) => r.name || ""],
    ["scenario", (r) => r.scenario],
    ["tags", (r) => (r.tags || []).join(", ")],
    ["phase", (r) => el("span", { class: `phase ${r.phase}` }, r.phase)],
    ["simulated", (r) => r.simulated, "number"],
    ["requests", (r) => number(r.requests), "number"],
    ["error rate", (r) => percent(r.error_rate), "number"],
    ["p99 (ms)", (r) => number(r.p99_ms), "number"],
    ["started", (r) => (r.started_at || "").replace("T", " ").slice(0, 19)],
  ];
  const sortable = { run: "run", name: "name", scenario: "scenario", phase: "phase", simulated: "simulated_s", requests: "requests", "error rate": "error_rate", "p99 (ms)": "p99_ms", started: "started_at" };

  function draw() {
    const text = filter.value.toLowerCase();
    const shown = runs.filter((r) =>
      (!phase.value || r.phase === phase.value) &&
      (!text || [r.name, r.scenario, r.phase, ...(r.tags || [])].some((v) => v && String(v).toLowerCase().includes(text))),
    );
    shown.sort((a, b) => {
      const x = a[sortKey], y = b[sortKey];
      const order = x === y ? 0 : x === null || x === undefined ? 1 : y === null || y === undefined ? -1 : x < y ? -1 : 1;
      return ascending ? order : -order;
    });
    const table = recordsTable(shown, columns, { id: "runs" });
    table.querySelectorAll("th").forEach((th) => {
      const key = sortable[th.textContent];
      if (!key) return;
      th.classList.add("sortable");
      if (key === sortKey) th.textContent += ascending ? " ▲" : " ▼";
      th.addEventListener("click", () => {
        ascending = key === sortKey ? !ascending : true;
        sortKey = key;
        draw();
      });
    });
    fill(holder, shown.length ? table : el("p", { class: "note" }, runs.length ? "No run matches." : "No runs yet: run a scenario in the Editor, or `skenario run FILE`."));
  }
  filter.addEventListener("input", draw);
  phase.addEventListener("change", draw);
  fill(main,
    el("h1", {}, "Runs"),
    el("div", { class: "toolbar" }, filter, phase, compareButton, tagsInput, tagButton, deleteButton),
    status,
    holder,
  );
  draw();
}

// ---- A run ---------------------------------------------------------------------------------------------

async function runView() {
  const ref = encodeURIComponent(params.run);
  // Asked for at once: the server reads the run once and makes each part while the page draws the first.
  const asked = { charts: api(`/api/runs/${ref}/charts`), decisions: api(`/api/runs/${ref}/decisions`) };
  const run = await api(`/api/runs/${ref}`);
  const links = [
    run.has_cluster ? el("a", { href: `/runs/${run.run}/scheduler`, id: "to-scheduler" }, "Scheduler") : null,
    run.has_jobs ? el("a", { href: `/runs/${run.run}/queues`, id: "to-queues" }, "Queues and jobs") : null,
    run.has_replay ? el("a", { href: `/runs/${run.run}/cluster`, id: "to-cluster" }, "Real cluster") : null,
    el("a", { href: `/editor?from=${run.run}` }, "Edit and run again"),
  ].filter((x) => x);
  const facts = `run ${run.run} · seed ${run.seed} · ${run.simulated} simulated · ${run.phase}${run.message ? ": " + run.message : ""}`;
  const verdict = run.verdict ? el("p", { class: `verdict ${run.verdict}`, id: "verdict" }, `objectives ${run.verdict}`) : null;
  const charts = el("section", { id: "charts" });
  const decisions = el("section", { id: "decisions" });
  fill(main,
    el("h1", {}, run.name),
    el("p", { class: "facts" }, facts),
    el("p", { class: "links" }, links.flatMap((a, i) => (i ? [" · ", a] : [a]))),
    verdict,
    charts,
    decisions,
    el("div", { class: "tables" }, run.sections.map((s) => el("div", {}, el("h2", {}, s.title), rowsTable(s.rows)))),
    run.events && run.events.length ? el("div", {}, el("h2", {}, "Scenario events"), recordsTable(run.events, [
      ["time", (e) => e.clock, "number"], ["id", (e) => e.id], ["operation", (e) => e.operation],
      ["target", (e) => e.target || ""], ["what happened", (e) => e.message || ""],
    ])) : null,
    el("details", {}, el("summary", {}, "Scenario"), el("pre", {}, run.scenario)),
  );
  const [figures] = await Promise.all([asked.charts, whenPlotly()]);
  await drawCharts(figures, charts);
  const found = await asked.decisions;
  if (run.kind === "scenario") decisionsSection(run, decisions, found);
  main.dataset.ready = "true";
}

function decisionsSection(run, into, data) {
  if (!data.decisions.length) return;
  const explained = el("div", { id: "explained" });
  const onlyChanges = el("input", { type: "checkbox", id: "only-changes", checked: true });
  const list = el("div", {});
  function changes() {
    const last = {};
    return data.decisions.filter((d) => {
      const changed = last[d.autoscaler] === undefined || last[d.autoscaler] !== d.desired;
      last[d.autoscaler] = d.desired;
      return changed;
    });
  }
  function drawList() {
    const shown = onlyChanges.checked ? changes() : data.decisions;
    fill(list, recordsTable(shown, [
      ["time", (d) => d.clock, "number"], ["autoscaler", (d) => d.autoscaler],
      ["desired", (d) => number(d.desired), "number"], ["decision", (d) => d.message],
    ], { onclick: (d) => explainAt(d.time_s, d.autoscaler), id: "decision-list", limit: 500 }));
  }
  async function explainAt(time, autoscaler) {
    const query = time === null ? "" : `?at=${time}&autoscaler=${encodeURIComponent(autoscaler)}`;
    const found = await api(`/api/runs/${run.run}/decisions${query}`);
    fill(explained, ...found.explained.map((e) => el("div", { class: "explanation" },
      el("h3", {}, `${e.autoscaler} (${e.kind}) as of ${e.at}`),
      e.sections.map((s) => el("div", {}, el("h4", {}, s.title), el("table", { class: "records" },
        el("thead", {}, el("tr", {}, s.columns.map((c) => el("th", {}, c)))),
        el("tbody", {}, s.rows.map((r) => el("tr", {}, r.map((cell) => el("td", {}, cell)))))))),
    )));
  }
  onlyChanges.addEventListener("change", drawList);
  fill(into, 
    el("h2", {}, "Decisions"),
    el("p", { class: "note" }, "Click a decision to see its inputs and the rule that set its result (as `skenario explain --at` shows them)."),
    el("label", {}, onlyChanges, " only the decisions that changed what the autoscaler asked for"),
    el("div", { class: "split" }, list, explained),
  );
  drawList();
  fill(explained, ...data.explained.map((e) => el("div", { class: "explanation" },
    el("h3", {}, `${e.autoscaler} (${e.kind}) at the end, ${e.at}`),
    e.sections.map((s) => el("div", {}, el("h4", {}, s.title), el("table", { class: "records" },
      el("thead", {}, el("tr", {}, s.columns.map((c) => el("th", {}, c)))),
      el("tbody", {}, s.rows.map((r) => el("tr", {}, r.map((cell) => el("td", {}, cell)))))))),
  )));
}

// ---- Scheduler -----------------------------------------------------------------------------------------

async function schedulerView() {
  const ref = encodeURIComponent(params.run);
  const [run, data] = await Promise.all([api(`/api/runs/${ref}`), api(`/api/runs/${ref}/scheduler`)]);
  const verdicts = el("section", { id: "verdicts" });
  const charts = el("section", {});
  const pendingOnly = el("input", { type: "checkbox", id: "pending-only" });
  const podList = el("div", {});
  function drawPods() {
    const pods = pendingOnly.checked ? data.pods.filter((p) => p.node === null || p.node === undefined) : data.pods;
    fill(podList, recordsTable(pods, [
      ["pod", (p) => p.pod], ["created", (p) => number(p.created_s), "number"], ["bound", (p) => number(p.bound_s), "number"],
      ["node", (p) => p.node || "(pending)"], ["wait (s)", (p) => number(p.wait_s), "number"],
      ["attempts", (p) => number(p.attempts), "number"], ["end", (p) => p.end || ""],
    ], { onclick: data.has_verdicts ? (p) => showPod(p.pod) : null, id: "pods", limit: 1000 }));
  }
  async function showPod(pod) {
    try {
      const result = await api(`/api/runs/${ref}/pods/${encodeURIComponent(pod)}`);
      fill(verdicts, el("h2", {}, `Pod ${result.pod}`), podAttempts(result));
      verdicts.scrollIntoView();
    } catch (error) {
      fill(verdicts, el("p", { class: "error" }, error.message));
    }
  }
  pendingOnly.addEventListener("change", drawPods);
  fill(main,
    el("h1", {}, `${run.name}: the scheduler's view`),
    el("p", { class: "links" }, el("a", { href: `/runs/${run.run}` }, `back to run ${run.run}`)),
    el("div", { class: "tables" }, el("div", {}, el("h2", {}, "Scheduling"), rowsTable(data.summary))),
    charts,
    el("h2", {}, "Pods"),
    el("p", { class: "note" }, data.has_verdicts ? "Click a pod to see each scheduling attempt with every plugin's filter and score result (KEP-140)." : "This run kept no per-plugin results."),
    el("label", {}, pendingOnly, " only pods never bound"),
    el("div", { class: "split" }, podList, verdicts),
    el("h2", {}, "Nodes"),
    recordsTable(data.nodes, [
      ["node", (n) => n.node], ["group", (n) => n.group || ""], ["added (s)", (n) => number(n.added_s), "number"],
      ["removed (s)", (n) => number(n.removed_s), "number"], ["CPU (m)", (n) => number(n.cpu_millicores), "number"],
      ["CPU used of allocatable", (n) => percent(n.cpu_utilisation), "number"],
    ], { id: "nodes" }),
  );
  drawPods();
  const [figures] = await Promise.all([api(`/api/runs/${ref}/charts`), whenPlotly()]);
  const shown = ["chart-pods", "chart-allocation", "chart-cluster"];
  await drawCharts(figures.filter((f) => shown.includes(f.id)), charts);
  main.dataset.ready = "true";
}

function pluginTable(results, title) {
  if (!results.plugins.length) return null;
  return el("div", {}, el("h4", {}, title), el("table", { class: "records verdicts" },
    el("thead", {}, el("tr", {}, el("th", {}, "node"), results.plugins.map((p) => el("th", {}, p)))),
    el("tbody", {}, results.nodes.map((n) => el("tr", {}, el("th", {}, n.node), n.results.map((r) =>
      el("td", { class: r === "passed" ? "passed" : typeof r === "string" ? "failed" : "number" }, r === null || r === undefined ? "-" : String(r)))))),
  ));
}

function podAttempts(result) {
  return el("div", { class: "attempts" }, result.attempts.map((a, i) => el("div", { class: "attempt" },
    el("h3", {}, `attempt ${i + 1} at ${a.at}: ${a.selected ? "bound to " + a.selected : "unschedulable"}`),
    el("p", {}, `${number(a.candidates)} candidate node(s); feasible: ${(a.feasible || []).join(", ") || "none"}${a.message ? ". " + a.message : ""}`),
    a.kept ? [pluginTable(a.filter, "Filter"), pluginTable(a.score, "Score"), pluginTable(a.finalScore, "Final score")]
      : el("p", { class: "note" }, "this attempt's plugin results were not kept"),
  )));
}

// ---- Queues (YARN, Kueue) ------------------------------------------------------------------------------

async function queuesView() {
  const ref = encodeURIComponent(params.run);
  const [run, data] = await Promise.all([api(`/api/runs/${ref}`), api(`/api/runs/${ref}/jobs`)]);
  const why = el("section", { id: "why" });
  const charts = el("section", {});
  const key = data.jobs.length && "workload" in data.jobs[0] ? "workload" : "job";
  fill(main,
    el("h1", {}, `${run.name}: queues and jobs`),
    el("p", { class: "links" }, el("a", { href: `/runs/${run.run}` }, `back to run ${run.run}`)),
    charts,
    el("h2", {}, "Jobs"),
    el("p", { class: "note" }, "Click a job to see why it waited: its queue's allocation and pending work when it was submitted and when it started."),
    el("div", { class: "split" }, recordsTable(data.jobs, [
      [key, (j) => j[key]], ["queue", (j) => j.queue || j.clusterQueue], ["state", (j) => j.state || ""],
      ["wait (s)", (j) => number(j.wait_s), "number"], ["runtime (s)", (j) => number(j.runtime_s), "number"],
      ["why", (j) => j.why || ""],
    ], { onclick: (j) => showJob(j[key]), id: "jobs", limit: 1000 }), why),
  );
  async function showJob(job) {
    const found = await api(`/api/runs/${ref}/jobs/${encodeURIComponent(job)}`);
    fill(why, 
      el("h3", {}, `${job} in ${found.queue}`),
      el("p", { id: "why-text" }, (found.why_at ? `at ${found.why_at}, the instant before it started: ` : "") + (found.why || "")),
      rowsTable(Object.entries(found.job).map(([label, value]) => ({ label, value: number(value) }))),
      Object.entries(found.queue_state).map(([moment, state]) => el("div", {},
        el("h4", {}, `${found.queue} when it was ${moment} (recorded at ${clock(state.time_s)})`),
        rowsTable(Object.entries(state.figures).map(([label, value]) => ({ label, value: number(value) }))))),
    );
  }
  const [figures] = await Promise.all([api(`/api/runs/${ref}/charts`), whenPlotly()]);
  await drawCharts(figures, charts);
  main.dataset.ready = "true";
}

// ---- Real cluster (replays) ----------------------------------------------------------------------------

async function clusterView() {
  const ref = encodeURIComponent(params.run);
  const [run, replay] = await Promise.all([api(`/api/runs/${ref}`), api(`/api/runs/${ref}/replay`)]);
  const charts = el("section", {});
  const calibration = await fetch(`/api/runs/${ref}/calibration`).then((r) => (r.ok ? r.json() : null));
  fill(main,
    el("h1", {}, `${run.name} against the real cluster`),
    el("p", { class: "links" }, el("a", { href: `/runs/${run.run}` }, `back to run ${run.run}`)),
    el("p", {}, `Observed series: ${replay.observed.join(", ") || "none"}. Each is drawn dotted over its simulated counterpart.`),
    el("h2", {}, "How closely the run followed the cluster"),
    rowsTable(replay.rows),
    calibration ? el("section", { id: "calibration" },
      el("h2", {}, "Calibration"),
      el("p", {}, `${calibration.file} was calibrated by skenario calibrate, fitted on ${calibration.fitted_on.join(", ")}; held out: ${calibration.held_out.join(", ") || "none"}.`),
      rowsTable(Object.entries(calibration.values).map(([label, value]) => ({ label, value }))),
      el("h3", {}, "Replica-trajectory error with the fitted values, in-sample and held out"),
      recordsTable(calibration.replays, [
        ["run", (r) => el("a", { href: `/runs/${r.run}/cluster` }, r.run), "number"], ["scenario", (r) => r.scenario],
        ["set", (r) => r.set], ["replica MAE", (r) => number(r.replica_mae), "number"],
        ["replica-seconds error", (r) => (r.replica_seconds_error_pct === null ? "-" : `${r.replica_seconds_error_pct.toFixed(1)}%`), "number"],
        ["decisions matched", (r) => percent(r.decision_match), "number"],
      ], { id: "calibration-replays" }),
      el("p", { class: "note" }, "Replay the other calibrated scenarios (skenario replay NAME.calibrated.yaml) to see them here.")) : null,
    charts,
  );
  const [all] = await Promise.all([api(`/api/runs/${ref}/charts`), whenPlotly()]);
  const drawn = all.filter((f) => JSON.stringify(f.figure.data).includes("observed"));
  await drawCharts(drawn, charts);
  main.dataset.ready = "true";
}

// ---- Compare -------------------------------------------------------------------------------------------

async function compareView() {
  const runs = (params.runs || "").split(",").filter((r) => r);
  if (runs.length < 2) {
    fill(main, el("h1", {}, "Compare"), el("p", {}, "Pick two runs or more on the Runs page, then Compare."));
    return;
  }
  const query = runs.map((r) => `runs=${encodeURIComponent(r)}`).join("&");
  const baseline = el("select", { id: "baseline" }, runs.map((r) => el("option", { value: r }, `run ${r}`)));
  const table = el("div", {});
  const charts = el("section", { id: "charts" });
  async function drawTable() {
    const data = await api(`/api/compare?${query}&baseline=${encodeURIComponent(baseline.value)}`);
    const head = el("tr", {}, el("th", {}, ""), data.runs.map((r) => el("th", {}, el("a", { href: `/runs/${r.run}` }, `run ${r.run}`), el("br"), r.name)));
    const body = data.figures.map((f) => el("tr", {}, el("th", {}, f.label), f.values.map((v, i) => {
      const shown = f.unit === "share" ? percent(v) : number(v);
      const delta = f.deltas && i !== data.baseline && f.deltas[i] !== null ? ` (${f.deltas[i] >= 0 ? "+" : ""}${f.unit === "share" ? percent(f.deltas[i]) : number(f.deltas[i])})` : "";
      return el("td", { class: "number" }, shown + delta);
    })));
    fill(table, el("table", { class: "records", id: "compared" }, el("thead", {}, head), el("tbody", {}, body)));
  }
  baseline.addEventListener("change", drawTable);
  fill(main,
    el("h1", {}, `Runs ${runs.join(", ")} compared`),
    el("label", {}, "baseline: ", baseline),
    table,
    charts,
  );
  await drawTable();
  const [figures] = await Promise.all([api(`/api/compare/charts?${query}`), whenPlotly()]);
  await drawCharts(figures, charts);
  main.dataset.ready = "true";
}

// ---- Sweeps and tuning ---------------------------------------------------------------------------------

async function sweepsView() {
  const sweeps = await api("/api/sweeps");
  fill(main,
    el("h1", {}, "Sweeps and tuning"),
    sweeps.length ? recordsTable(sweeps, [
      ["sweep", (s) => el("a", { href: `/sweeps/${s.sweep}` }, s.sweep), "number"], ["kind", (s) => s.kind],
      ["name", (s) => s.name || ""], ["scenario", (s) => s.scenario], ["phase", (s) => s.phase],
      ["points", (s) => number(s.points), "number"], ["runs", (s) => number(s.runs), "number"],
      ["failed", (s) => number(s.failed), "number"], ["started", (s) => (s.started_at || "").slice(0, 19)],
    ], { id: "sweeps" }) : el("p", { class: "note" }, "No sweeps yet: `skenario sweep` or `skenario tune` make them."),
  );
  main.dataset.ready = "true";
}

async function sweepView() {
  const ref = encodeURIComponent(params.sweep);
  let data = await api(`/api/sweeps/${ref}`);
  const x = el("select", { id: "axis-x" }, data.metrics.map((m) => el("option", { value: m, selected: m === data.axes[0] }, m)));
  const y = el("select", { id: "axis-y" }, data.metrics.map((m) => el("option", { value: m, selected: m === data.axes[1] }, m)));
  const table = el("div", {});
  const plot = chartBox("chart-pareto");
  const paths = Object.keys(data.points.length ? data.points[0].settings : {});
  function interval(f) {
    if (!f || f.mean === null) return "-";
    return f.low === null ? number(f.mean) : `${number(f.mean)} [${number(f.low)}, ${number(f.high)}]`;
  }
  async function draw() {
    data = await api(`/api/sweeps/${ref}?x=${x.value}&y=${y.value}`);
    fill(table, recordsTable(data.points, [
      ["point", (p) => p.point, "number"], ...paths.map((path) => [path, (p) => String(p.settings[path])]),
      ["runs", (p) => p.runs_made.map((r, i) => [i ? " " : "", el("a", { href: `/runs/${r}` }, r)]).flat(), "number"],
      ...data.metrics.map((m) => [m, (p) => interval(p.figures[m]), "number"]),
      ["front", (p) => (p.front ? "●" : ""), "number"],
    ], { id: "points" }));
    const trace = (front) => {
      const points = data.points.filter((p) => p.front === front);
      return {
        x: points.map((p) => p.figures[data.axes[0]].mean), y: points.map((p) => p.figures[data.axes[1]].mean),
        error_x: { type: "data", symmetric: false, array: points.map((p) => (p.figures[data.axes[0]].high ?? p.figures[data.axes[0]].mean) - p.figures[data.axes[0]].mean), arrayminus: points.map((p) => p.figures[data.axes[0]].mean - (p.figures[data.axes[0]].low ?? p.figures[data.axes[0]].mean)) },
        error_y: { type: "data", symmetric: false, array: points.map((p) => (p.figures[data.axes[1]].high ?? p.figures[data.axes[1]].mean) - p.figures[data.axes[1]].mean), arrayminus: points.map((p) => p.figures[data.axes[1]].mean - (p.figures[data.axes[1]].low ?? p.figures[data.axes[1]].mean)) },
        customdata: points.map((p) => p.runs_made[0] ?? null),
        text: points.map((p) => `point ${p.point}<br>` + paths.map((path) => `${path}: ${p.settings[path]}`).join("<br>")),
        mode: "markers", name: front ? "Pareto front" : "other points",
        marker: { size: front ? 12 : 8, color: front ? "#d62728" : "#1f77b4" }, hoverinfo: "text+x+y",
      };
    };
    await whenPlotly();
    await Plotly.newPlot(plot, [trace(false), trace(true)], {
      title: { text: "Pareto front: click a point to open its run" }, template: "plotly_white",
      xaxis: { title: { text: data.axes[0] } }, yaxis: { title: { text: data.axes[1] } }, hovermode: "closest",
    }, { responsive: true, displaylogo: false });
    plot.dataset.drawn = "true";
    plot.on("plotly_click", (event) => {
      const run = event.points[0].customdata;
      if (run !== null && run !== undefined) location.href = `/runs/${run}`;
    });
    main.dataset.ready = "true";
  }
  x.addEventListener("change", draw);
  y.addEventListener("change", draw);
  fill(main,
    el("h1", {}, `${data.kind} ${data.sweep}: ${data.scenario}`),
    el("p", { class: "facts" }, `${data.phase}${data.message ? ": " + data.message : ""} · ${data.points.length} point(s) · ${Math.round(data.confidence * 100)}% intervals over each point's seeds`),
    el("div", { class: "toolbar" }, el("label", {}, "front over ", x), el("label", {}, " and ", y)),
    plot,
    table,
  );
  await draw();
}

// ---- Editor --------------------------------------------------------------------------------------------


async function editorView() {
  const text = el("textarea", { id: "scenario", spellcheck: "false", rows: 32 });
  const problems = el("div", { id: "problems", class: "problems" });
  const name = el("input", { type: "text", id: "run-name", placeholder: "run name (optional)" });
  const tags = el("input", { type: "text", id: "run-tags", placeholder: "tags, comma separated" });
  const upload = el("input", { type: "file", id: "upload", accept: ".yaml,.yml,.json" });
  const runButton = el("button", { id: "run", class: "primary" }, "Run");
  const cancelButton = el("button", { id: "cancel", disabled: true }, "Cancel");
  const bar = el("progress", { id: "progress", max: 1, value: 0 });
  const status = el("p", { id: "run-status", class: "status" });
  let timer = null;
  let job = null;

  async function check() {
    try {
      const found = await api("/api/validate", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ text: text.value }) });
      problems.dataset.valid = String(found.valid);
      fill(problems, found.valid
        ? el("p", { class: "valid" }, `valid: a ${found.kind} run`)
        : el("ul", {}, found.problems.map((p) => el("li", { class: "error" },
          [p.line ? `line ${p.line}` : null, p.field ? `field ${p.field}` : null].filter((x) => x).join(", ") + (p.line || p.field ? ": " : "") + p.message))));
    } catch (error) {
      problems.dataset.valid = "false";
      fill(problems, el("p", { class: "error" }, error.message));
    }
  }
  text.addEventListener("input", () => {
    problems.dataset.valid = "pending";
    clearTimeout(timer);
    timer = setTimeout(check, 400);
  });
  upload.addEventListener("change", async () => {
    const file = upload.files[0];
    if (!file) return;
    const limit = Number(params.limit);  // the server's own, MAX_SCENARIO_BYTES
    if (file.size > limit) {
      fill(problems, el("p", { class: "error" }, `${file.name} is larger than ${limit.toLocaleString("en")} bytes`));
      return;
    }
    text.value = await file.text();
    check();
  });
  runButton.addEventListener("click", async () => {
    status.className = "status";
    try {
      job = await api("/api/scenarios/run", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({
        text: text.value, name: name.value.trim() || null, tags: tags.value.split(",").map((t) => t.trim()).filter((t) => t),
      }) });
    } catch (error) {
      status.textContent = error.message;
      status.className = "status error";
      return;
    }
    runButton.disabled = true;
    cancelButton.disabled = false;
    status.textContent = "running…";
    const events = new EventSource(`/api/jobs/${job.job}/events`);
    const update = (message) => {
      const state = JSON.parse(message.data);
      if (state.progress !== null) bar.value = state.progress;
      return state;
    };
    events.addEventListener("progress", update);
    events.addEventListener("end", (message) => {
      const state = update(message);
      events.close();
      runButton.disabled = false;
      cancelButton.disabled = true;
      fill(status, `${state.state}${state.message ? ": " + state.message : ""}`,
        state.run !== null ? [" · ", el("a", { href: `/runs/${state.run}`, id: "run-link" }, `open run ${state.run}`)] : []);
      status.dataset.state = state.state;
      status.className = state.state === "done" ? "status" : "status error";
    });
  });
  cancelButton.addEventListener("click", async () => {
    if (job) await api(`/api/jobs/${job.job}/cancel`, { method: "POST" });
  });
  fill(main,
    el("h1", {}, "Scenario editor"),
    el("p", { class: "note" }, "Write or upload a scenario: it is checked as you type, as `skenario check` checks it (the schema, then every value and event). Runs land in the store; plugins never run from here."),
    el("div", { class: "toolbar" }, upload, name, tags, runButton, cancelButton, bar),
    status,
    el("div", { class: "editor" }, text, problems),
  );
  const source = params.run ? (await api(`/api/runs/${encodeURIComponent(params.run)}`)).scenario : (await api("/api/starter")).text;
  text.value = source;
  await check();
  main.dataset.ready = "true";
}

const VIEWS = {
  runs: runsView, run: runView, scheduler: schedulerView, queues: queuesView, cluster: clusterView,
  compare: compareView, sweeps: sweepsView, sweep: sweepView, editor: editorView,
};

VIEWS[params.view]().then(() => {
  main.dataset.ready = "true";
  window.skenarioReady = performance.now();  // ms from the navigation's start: benchmarks/dashboard.py reads it
}, fail);
