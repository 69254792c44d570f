/* tracescore dashboard: Experiments (#/experiments?dataset=) — runs per dataset and each scorer's
 * average over time — and the compare view (#/experiments/compare?baseline=&candidate=&threshold=):
 * averages with deltas, items sorted by largest drop with both outputs and reasons.
 */
(function () {
  "use strict";
  const TS = window.TS;
  const h = TS.h;

  function fmtDelta(value, lowerIsBetter) {
    if (value === null || value === undefined) return h("span", { class: "muted" }, "–");
    const worse = lowerIsBetter ? value > 0 : value < 0;
    const text = (value > 0 ? "+" : "") + value.toFixed(3);
    return h("span", { class: value === 0 ? "" : worse ? "delta-worse" : "delta-better" }, text);
  }

  function avg(v) {
    return v === null || v === undefined ? "–" : Number(v).toFixed(3);
  }

  function pct(v) {
    return v === null || v === undefined ? "–" : Math.round(v * 100) + "%";
  }

  async function listPage(root, route) {
    const dataset = route.query.get("dataset") || "";
    const [body, datasets] = await Promise.all([
      TS.api.get("api/experiments" + (dataset ? "?dataset=" + encodeURIComponent(dataset) : "")),
      TS.api.get("api/datasets"),
    ]);
    root.appendChild(h("h1", {}, "Experiments"));
    const pick = h("select", { id: "experiment-dataset", onchange: () => route.setQuery({ dataset: pick.value }) },
      h("option", { value: "" }, "all datasets"), datasets.datasets.map((d) => h("option", { value: d.name }, d.name)));
    pick.value = dataset;
    root.appendChild(h("div", { class: "meta" }, h("label", {}, "Dataset ", pick)));
    const runs = body.experiments;
    if (!runs.length) {
      root.appendChild(h("div", { class: "empty-state" }, h("h3", {}, "No experiments yet"),
        h("p", {}, "Run run_evals(agent, \"dataset-name\", scorers=..., store=..., experiment=\"v1\") to record one.")));
      return;
    }
    const ids = runs.map((r) => r.experiment_id);
    const avgs = await TS.api.rows("SELECT experiment_id, scorer_id, avg(score) AS avg_score FROM experiment_results " +
      "WHERE list_contains(?, experiment_id) GROUP BY 1, 2 ORDER BY 2 LIMIT 5000", [ids]);
    const byRun = new Map();
    const scorers = [];
    for (const a of avgs) {
      if (!byRun.has(a.experiment_id)) byRun.set(a.experiment_id, {});
      byRun.get(a.experiment_id)[a.scorer_id] = a.avg_score;
      if (!scorers.includes(a.scorer_id)) scorers.push(a.scorer_id);
    }
    const chart = h("div", { id: "experiments-chart" });
    root.appendChild(TS.panel("Average score per scorer, run by run", chart));
    // a run stored without a start time (older servers took one) has no place on the time axis
    const ordered = runs.filter((r) => TS.toDate(r.created_at))
      .sort((a, b) => String(a.created_at).localeCompare(String(b.created_at)));
    TS.chart.timeseries(chart, {
      series: scorers.map((s) => ({ name: s, points: ordered.filter((r) => byRun.get(r.experiment_id) && byRun.get(r.experiment_id)[s] !== undefined)
        .map((r) => [TS.toDate(r.created_at).getTime(), Number(byRun.get(r.experiment_id)[s])]) })),
      yFormat: (v) => v.toFixed(2),
    });
    const baseline = h("select", { id: "compare-baseline" }, runs.map((r) => h("option", { value: r.experiment_id }, r.name + " · " + TS.shortId(r.experiment_id))));
    const candidate = h("select", { id: "compare-candidate" }, runs.map((r) => h("option", { value: r.experiment_id }, r.name + " · " + TS.shortId(r.experiment_id))));
    if (runs.length > 1) baseline.value = runs[1].experiment_id;
    root.appendChild(TS.panel("Compare two runs", h("form", { id: "compare-form", onsubmit: (ev) => {
      ev.preventDefault();
      window.location.hash = TS.link("experiments/compare", { baseline: baseline.value, candidate: candidate.value });
    } }, h("label", {}, "Baseline ", baseline), " ", h("label", {}, "Candidate ", candidate), " ", h("button", { type: "submit" }, "Compare"))));
    root.appendChild(TS.panel(TS.plural(runs.length, "run"), h("div", { id: "experiment-list" }, TS.table([
      { label: "name", value: (r) => r.name },
      { label: "id", value: (r) => h("span", { class: "mono small" }, TS.shortId(r.experiment_id)) },
      { label: "started", value: (r) => TS.fmtTime(r.created_at) },
      { label: "status", value: (r) => r.status || "" },
      { label: "items", class: "num", value: (r) => TS.fmtNum(r.item_count) },
      { label: "errors", class: "num", value: (r) => TS.fmtNum(r.error_count) },
      ...scorers.map((s) => ({ label: s, class: "num", value: (r) => TS.fmtScore((byRun.get(r.experiment_id) || {})[s]) })),
      { label: "commit", value: (r) => h("span", { class: "mono small" }, String((r.metadata || {}).git_commit || "").slice(0, 8)) },
    ], runs))));
  }

  function output(value) {
    return h("div", { class: "compare-output" }, TS.preview(value, 400));
  }

  async function comparePage(root, route) {
    const q = route.query;
    const params = new URLSearchParams({ baseline: q.get("baseline") || "", candidate: q.get("candidate") || "", threshold: q.get("threshold") || "0.05" });
    const c = await TS.api.get("api/experiments/compare?" + params.toString());
    root.appendChild(h("div", { class: "crumbs" }, h("a", { href: "#/experiments" }, "Experiments"), " / compare"));
    root.appendChild(h("h1", { id: "compare-title" }, c.candidate.name + " vs " + c.baseline.name));
    root.appendChild(h("div", { id: "compare-verdict", class: c.regressed ? "error-box" : "ok-box" },
      c.regressed ? "Regressed: " + c.regressed_scorers.join(", ") : "No regression (threshold " + c.threshold + ")"));
    const rows = Object.values(c.scorers);
    root.appendChild(TS.panel("Scorers", h("div", { id: "compare-scorers" }, TS.table([
      { label: "scorer", value: (s) => s.scorer_id + (s.lower_is_better ? " (lower is better)" : "") },
      { label: c.baseline.name, class: "num", value: (s) => avg(s.baseline_avg) },
      { label: c.candidate.name, class: "num", value: (s) => avg(s.candidate_avg) },
      { label: "delta", class: "num", value: (s) => fmtDelta(s.delta, s.lower_is_better) },
      { label: "pass rate", class: "num", value: (s) => pct(s.baseline_pass_rate) + " → " + pct(s.candidate_pass_rate) },
      { label: "errors", class: "num", value: (s) => s.baseline_errors + " → " + s.candidate_errors },
      { label: "", value: (s) => (s.regressed ? h("span", { class: "badge badge-failed" }, "regressed") : "") },
    ], rows))));
    if (!c.items.length) {
      root.appendChild(h("p", { class: "muted" }, "No item got worse by more than " + c.threshold + "."));
      return;
    }
    root.appendChild(TS.panel("Items that got worse (largest drop first)", h("div", { id: "compare-items" },
      c.items.map((item) => h("div", { class: "compare-item" },
        h("h3", {}, "Item ", h("span", { class: "mono" }, TS.shortId(item.item_id))),
        item.drops.map((d) => h("div", { class: "compare-drop" },
          h("strong", {}, d.scorer_id), ": ", avg(d.baseline_score), " → ",
          d.candidate_score === null ? h("span", { class: "delta-worse" }, "error") : avg(d.candidate_score),
          d.candidate_error ? h("div", { class: "muted small" }, d.candidate_error) : null,
          h("div", { class: "compare-reasons" },
            h("div", {}, h("span", { class: "muted" }, "baseline reason: "), d.baseline_reason || "–"),
            h("div", {}, h("span", { class: "muted" }, "candidate reason: "), d.candidate_reason || "–")))),
        h("div", { class: "compare-sides" },
          h("div", {}, h("div", { class: "muted" }, c.baseline.name), output(item.baseline_output)),
          h("div", {}, h("div", { class: "muted" }, c.candidate.name), output(item.candidate_output))))))));
  }

  TS.pages.experiments = function experiments(root, route) {
    return route.path[1] === "compare" ? comparePage(root, route) : listPage(root, route);
  };
})();
