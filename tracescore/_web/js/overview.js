/* tracescore dashboard: the Overview page (traffic, scores, failure rates, judge spend, the
 * agent's own spend (agent.js), lag).
 * Every chart is one aggregate query bucketed in SQL; nothing per trace reaches the browser.
 * Traffic (traces, spans, traces with errors) is read from the maintained `traces` table (one
 * row per trace with its span and error counts, bucketed by the trace's start), never by
 * scanning `spans`: that keeps the page flat as the spans table grows to millions of rows.
 */
(function () {
  "use strict";
  const TS = window.TS;
  const h = TS.h;

  function bucketExpr(column) {
    return "epoch_ms(time_bucket(INTERVAL '" + TS.bucket() + "', CAST(" + column + " AS TIMESTAMP)))";
  }

  function bySeries(rows, nameKey, valueKey) {
    const map = new Map();
    for (const r of rows) {
      const name = r[nameKey];
      if (!map.has(name)) map.set(name, []);
      map.get(name).push([Number(r.t), r[valueKey] === null ? null : Number(r[valueKey])]);
    }
    return [...map.entries()].map(([name, points]) => ({ name: name, points: points }))
      .filter((sr) => sr.points.some((p) => p[1] !== null));
  }

  async function hasSpans() {
    const rows = await TS.api.rows("SELECT count(*) AS n FROM (SELECT 1 FROM spans LIMIT 1) AS t");
    return rows.length && Number(rows[0].n) > 0;
  }

  async function tiles() {
    const p1 = [TS.sinceParam()];
    const traceWhere = "start_time >= CAST(? AS TIMESTAMP)" + TS.projectClause("project", p1);
    const p2 = [TS.sinceParam()];
    const scoreWhere = "created_at >= CAST(? AS TIMESTAMP)" + TS.projectClause("project", p2);
    const [traffic, scores, metrics] = await Promise.all([
      TS.api.rows(
        "SELECT count(*) AS traces, coalesce(sum(span_count), 0) AS spans, " +
        "count(*) FILTER (WHERE error_count > 0) AS error_traces " +
        "FROM traces WHERE " + traceWhere, p1),
      TS.api.rows(
        "SELECT count(*) AS runs, avg(score) FILTER (WHERE status = 'success') AS avg_score, " +
        "count(*) FILTER (WHERE status = 'failed') AS failed, " +
        "sum(judge_total_tokens) AS tokens, sum(judge_cost) AS cost FROM scores WHERE " + scoreWhere, p2),
      TS.api.metrics().catch(() => ({})),
    ]);
    const t = traffic[0] || {};
    const s = scores[0] || {};
    const lag = metrics.tracescore_scoring_lag_seconds;
    const waiting = metrics.tracescore_traces_waiting;
    return h("div", { class: "stats" },
      TS.stat("traces", TS.fmtNum(t.traces)),
      TS.stat("spans", TS.fmtNum(t.spans)),
      TS.stat("traces with errors", TS.fmtNum(t.error_traces), TS.fmtPct(t.error_traces, t.traces)),
      TS.stat("scores", TS.fmtNum(s.runs), s.failed ? TS.fmtNum(s.failed) + " failed" : null),
      TS.stat("average score", TS.fmtScore(s.avg_score)),
      TS.stat("judge tokens", TS.fmtNum(s.tokens || 0)),
      TS.stat("judge cost", TS.fmtCost(s.cost || 0)),
      TS.stat("scoring lag", lag === undefined ? "—" : lag === 0 ? "0 s" : TS.fmtDuration(lag * 1000),
        waiting === undefined ? "oldest ready trace not yet scored" : TS.fmtNum(waiting) + " traces waiting"));
  }

  async function trafficCharts(tracesEl, spansEl) {
    const params = [TS.sinceParam()];
    const where = "start_time >= CAST(? AS TIMESTAMP)" + TS.projectClause("project", params);
    const rows = await TS.api.rows(
      "SELECT " + bucketExpr("start_time") + " AS t, count(*) AS traces, sum(span_count) AS spans " +
      "FROM traces WHERE " + where + " GROUP BY 1 ORDER BY 1 DESC LIMIT 1000", params);
    TS.chart.timeseries(tracesEl, TS.windowOpts({ kind: "bars",
      series: [{ name: "traces", points: rows.map((r) => [Number(r.t), Number(r.traces)]) }] }));
    TS.chart.timeseries(spansEl, TS.windowOpts({ kind: "bars",
      series: [{ name: "spans", points: rows.map((r) => [Number(r.t), Number(r.spans)]), color: "#0891b2" }] }));
  }

  async function scoreCharts(avgEl, ratesEl, tableEl) {
    const params = [TS.sinceParam()];
    const where = "created_at >= CAST(? AS TIMESTAMP)" + TS.projectClause("project", params);
    const [series, perScorer] = await Promise.all([
      TS.api.rows(
        "SELECT scorer_id, " + bucketExpr("created_at") + " AS t, " +
        "avg(score) FILTER (WHERE status = 'success') AS avg_score, count(*) AS runs, " +
        "count(*) FILTER (WHERE status = 'failed') AS failed, " +
        "count(*) FILTER (WHERE status = 'not_scorable') AS not_scorable " +
        "FROM scores WHERE " + where + " GROUP BY 1, 2 ORDER BY 2 DESC LIMIT 5000", params),
      TS.api.rows(
        "SELECT scorer_id, count(*) AS runs, avg(score) FILTER (WHERE status = 'success') AS avg_score, " +
        "count(*) FILTER (WHERE status = 'failed') AS failed, " +
        "count(*) FILTER (WHERE status = 'not_scorable') AS not_scorable, " +
        "sum(judge_cost) AS cost FROM scores WHERE " + where + " GROUP BY 1 ORDER BY 1 LIMIT 200", params),
    ]);
    if (!perScorer.length) {
      TS.clear(avgEl).appendChild(TS.scorersHelp());
      TS.chart.empty(ratesEl, "No scorer runs in this range.");
      TS.clear(tableEl);
      return;
    }
    const allScores = series.filter((r) => r.avg_score !== null).map((r) => Number(r.avg_score));
    const unit = allScores.every((v) => v >= 0 && v <= 1);
    TS.chart.timeseries(avgEl, TS.windowOpts({ series: bySeries(series, "scorer_id", "avg_score"),
      yMin: unit ? 0 : undefined, yMax: unit ? 1 : undefined, yFormat: TS.fmtScore }));
    const totals = new Map();
    for (const r of series) {
      const key = Number(r.t);
      const cur = totals.get(key) || { runs: 0, failed: 0, not_scorable: 0 };
      cur.runs += Number(r.runs);
      cur.failed += Number(r.failed);
      cur.not_scorable += Number(r.not_scorable);
      totals.set(key, cur);
    }
    const pts = [...totals.entries()];
    const pct = (v) => (Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(3)))) + "%";
    TS.chart.timeseries(ratesEl, TS.windowOpts({ yMin: 0, yFormat: pct, series: [
      { name: "failed", color: "#dc2626", points: pts.map(([t, c]) => [t, (100 * c.failed) / c.runs]) },
      { name: "not scorable", color: "#ca8a04", points: pts.map(([t, c]) => [t, (100 * c.not_scorable) / c.runs]) },
    ] }));
    TS.clear(tableEl).appendChild(TS.table([
      { label: "scorer", value: (r) => h("a", { href: TS.link("scorers/" + encodeURIComponent(r.scorer_id)) }, r.scorer_id) },
      { label: "runs", class: "num", value: (r) => TS.fmtNum(r.runs) },
      { label: "avg score", class: "num", value: (r) => TS.fmtScore(r.avg_score) },
      { label: "failed", class: "num", value: (r) => TS.fmtPct(r.failed, r.runs) },
      { label: "not scorable", class: "num", value: (r) => TS.fmtPct(r.not_scorable, r.runs) },
      { label: "judge cost", class: "num", value: (r) => TS.fmtCost(r.cost || 0) },
    ], perScorer, { compact: true }));
  }

  async function spendCharts(tokensEl, costEl) {
    const params = [TS.sinceParam()];
    const where = "created_at >= CAST(? AS TIMESTAMP)" + TS.projectClause("project", params);
    const rows = await TS.api.rows(
      "SELECT epoch_ms(date_trunc('day', created_at)) AS t, sum(judge_input_tokens) AS input_tokens, " +
      "sum(judge_output_tokens) AS output_tokens, sum(judge_cost) AS cost " +
      "FROM scores WHERE " + where + " GROUP BY 1 ORDER BY 1 DESC LIMIT 400", params);
    const used = rows.filter((r) => Number(r.input_tokens) || Number(r.output_tokens) || Number(r.cost));
    const msg = "No judge calls in this range (code scorers cost nothing).";
    TS.chart.timeseries(tokensEl, TS.dayOpts({ emptyText: msg, series: used.length ? [
      { name: "input", points: used.map((r) => [Number(r.t), Number(r.input_tokens || 0)]) },
      { name: "output", points: used.map((r) => [Number(r.t), Number(r.output_tokens || 0)]), color: "#9333ea" },
    ] : [] }));
    TS.chart.timeseries(costEl, TS.dayOpts({ emptyText: msg, yFormat: TS.fmtCost,
      series: used.length ? [{ name: "cost (USD)", color: "#16a34a", points: used.map((r) => [Number(r.t), Number(r.cost || 0)]) }] : [] }));
  }

  async function lagChart(el) {
    const params = [TS.sinceParam()];
    const where = "s.created_at >= CAST(? AS TIMESTAMP) AND s.source = 'live'" + TS.projectClause("s.project", params);
    const lag = "epoch(s.created_at) - epoch(CAST(t.end_time AS TIMESTAMP))";
    const rows = await TS.api.rows(
      "SELECT " + bucketExpr("s.created_at") + " AS t, avg(" + lag + ") AS avg_s, max(" + lag + ") AS max_s " +
      "FROM scores AS s JOIN traces AS t ON t.trace_id = s.trace_id " +
      "WHERE " + where + " GROUP BY 1 ORDER BY 1 DESC LIMIT 1000", params);
    const fmt = (v) => TS.fmtDuration(v * 1000);
    TS.chart.timeseries(el, TS.windowOpts({ yMin: 0, yFormat: fmt, emptyText: "No live scores in this range.", series: [
      { name: "average", points: rows.map((r) => [Number(r.t), Number(r.avg_s)]) },
      { name: "slowest", color: "#ea580c", points: rows.map((r) => [Number(r.t), Number(r.max_s)]) },
    ] }));
  }

  /** Judge scorers that do not run (paused: no credentials or an authentication error) and
   * why; nothing when every judge runs (or live scoring is off). */
  async function pausedJudges() {
    let live;
    try {
      live = await TS.api.get("api/live/scorers");
    } catch (err) {
      if (err.status === 401) throw err;
      return null;
    }
    const paused = (live.scorers || []).filter((r) => r.state === "paused");
    if (!paused.length) return null;
    return TS.panel("Paused judges", h("ul", { id: "paused-judges", class: "notes" },
      paused.map((r) => h("li", {}, h("a", { href: TS.link("scorers/" + encodeURIComponent(r.id)) }, r.id), ": " + (r.note || "paused")))),
      h("p", { class: "muted small" }, "These judge scorers score nothing until the cause is fixed (then restart, or POST api/live/scorers/<id>/resume)."));
  }

  TS.pages.overview = async function overview(root) {
    root.appendChild(h("h1", {}, "Overview"));
    const pausedEl = h("div");
    root.appendChild(pausedEl);
    const paused = TS.fill(pausedEl, pausedJudges);
    if (!(await hasSpans())) {
      await paused;
      root.appendChild(TS.panel(null, TS.exporterHelp(await TS.serverInfo())));
      return;
    }
    await TS.resolveWindow();
    const el = () => h("div", { class: "chart-slot" });
    const tileEl = h("div");
    const [tracesEl, spansEl, avgEl, ratesEl, tableEl, tokensEl, costEl, lagEl] =
      [el(), el(), el(), el(), h("div"), el(), el(), el()];
    const [agentCostEl, agentTokensEl, topEl] = [el(), el(), h("div", { id: "expensive-traces" })];
    root.appendChild(tileEl);
    const monitorsEl = h("div");
    root.appendChild(monitorsEl);
    root.appendChild(h("div", { class: "grid" },
      TS.panel("Traces received", tracesEl),
      TS.panel("Spans received", spansEl),
      TS.panel("Average score by scorer", avgEl),
      TS.panel("Failed and not-scorable runs (% of scorer runs)", ratesEl, tableEl),
      TS.panel("Judge tokens per day (UTC days)", tokensEl),
      TS.panel("Judge cost per day (UTC days)", costEl),
      TS.panel("Agent cost per day by model (UTC days)", agentCostEl),
      TS.panel("Agent tokens per day (UTC days)", agentTokensEl),
      TS.panel("Most expensive traces", topEl),
      TS.panel("Time to score (trace end → live score written)", lagEl)));
    await Promise.all([
      paused,
      TS.fill(tileEl, tiles),
      TS.fill(monitorsEl, () => TS.monitorsPanel()),
      trafficCharts(tracesEl, spansEl).catch((e) => TS.clear(tracesEl).appendChild(TS.errorBox(e))),
      scoreCharts(avgEl, ratesEl, tableEl).catch((e) => TS.clear(avgEl).appendChild(TS.errorBox(e))),
      spendCharts(tokensEl, costEl).catch((e) => TS.clear(tokensEl).appendChild(TS.errorBox(e))),
      lagChart(lagEl).catch((e) => TS.clear(lagEl).appendChild(TS.errorBox(e))),
      TS.agentSpend(agentCostEl, agentTokensEl, topEl),
    ]);
  };
})();
