/* tracescore dashboard: the agent's own spend on the Overview (from `model_calls` and `traces`):
 * agent cost per day by model, agent tokens per day, and the most expensive traces.
 * Each is one aggregate query with a LIMIT, grouped in DuckDB.
 */
(function () {
  "use strict";
  const TS = window.TS;
  const h = TS.h;

  async function perDay(costEl, tokensEl) {
    const params = [TS.sinceParam()];
    const where = "started_at >= CAST(? AS TIMESTAMP)" + TS.projectClause("project", params);
    const rows = await TS.api.rows(
      "SELECT epoch_ms(date_trunc('day', CAST(started_at AS TIMESTAMP))) AS t, coalesce(model, '(unknown)') AS model, " +
      "sum(cost_usd) AS cost, sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens " +
      "FROM model_calls WHERE " + where + " GROUP BY 1, 2 ORDER BY 1 DESC, 2 LIMIT 4000", params);
    const msg = "No agent model calls in this range (totals appear once a trace settles).";
    const byModel = new Map();
    const tokens = new Map();
    for (const r of rows) {
      if (r.cost !== null) {
        if (!byModel.has(r.model)) byModel.set(r.model, []);
        byModel.get(r.model).push([Number(r.t), Number(r.cost)]);
      }
      const day = tokens.get(Number(r.t)) || { input: 0, output: 0 };
      day.input += Number(r.input_tokens || 0);
      day.output += Number(r.output_tokens || 0);
      tokens.set(Number(r.t), day);
    }
    TS.chart.timeseries(costEl, TS.dayOpts({ emptyText: msg, yFormat: TS.fmtCost,
      series: [...byModel.entries()].map(([name, points]) => ({ name: name, points: points })) }));
    const days = [...tokens.entries()].filter(([, d]) => d.input || d.output);
    TS.chart.timeseries(tokensEl, TS.dayOpts({ emptyText: msg, series: days.length ? [
      { name: "input", points: days.map(([t, d]) => [t, d.input]) },
      { name: "output", points: days.map(([t, d]) => [t, d.output]), color: "#9333ea" },
    ] : [] }));
  }

  async function mostExpensive(el) {
    const params = [TS.sinceParam()];
    const where = "start_time >= CAST(? AS TIMESTAMP) AND cost_usd IS NOT NULL" + TS.projectClause("project", params);
    const rows = await TS.api.rows(
      "SELECT trace_id, root_span_name, service_name, model_call_count, total_tokens, cost_usd, models " +
      "FROM traces WHERE " + where + " ORDER BY cost_usd DESC, trace_id LIMIT 10", params);
    if (!rows.length) {
      TS.clear(el).appendChild(h("p", { class: "muted" }, "No priced traces in this range."));
      return;
    }
    TS.clear(el).appendChild(TS.table([
      { label: "trace", value: (r) => h("a", { href: TS.traceLink(r.trace_id), class: "trace-name" }, r.root_span_name || TS.shortId(r.trace_id)) },
      { label: "service", value: (r) => r.service_name || "—" },
      { label: "models", value: (r) => (r.models || []).join(", ") || "—" },
      { label: "calls", class: "num", value: (r) => TS.fmtNum(r.model_call_count) },
      { label: "tokens", class: "num", value: (r) => TS.fmtNum(r.total_tokens) },
      { label: "cost", class: "num", value: (r) => TS.fmtCost(r.cost_usd) },
    ], rows, { compact: true }));
  }

  /** Fill the three agent-spend panels of the Overview. */
  TS.agentSpend = async function agentSpend(costEl, tokensEl, topEl) {
    await Promise.all([
      perDay(costEl, tokensEl).catch((e) => TS.clear(costEl).appendChild(TS.errorBox(e))),
      mostExpensive(topEl).catch((e) => TS.clear(topEl).appendChild(TS.errorBox(e))),
    ]);
  };
})();
