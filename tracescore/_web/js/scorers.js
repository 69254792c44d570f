/* tracescore dashboard: Scorers (#/scorers, #/scorers/<id>): decision counts, score distribution
 * and trend, recent failures with their errors, judge spend. All aggregated in SQL.
 */
(function () {
  "use strict";
  const TS = window.TS;
  const h = TS.h;
  const DECISIONS = ["scored", "sampled_out", "filtered_out", "not_scorable", "failed", "pending", "retrying", "over_budget"];
  const DECISION_COLORS = { scored: "#16a34a", sampled_out: "#94a3b8", filtered_out: "#64748b", not_scorable: "#ca8a04",
    failed: "#dc2626", pending: "#2563eb", retrying: "#9333ea", over_budget: "#ea580c" };

  function decisionCounts(scorerId) {
    const params = [TS.sinceParam()];
    let sql = "SELECT scorer_id, " + DECISIONS.map((d) => "count(*) FILTER (WHERE decision = '" + d + "') AS " + d).join(", ") +
      " FROM scoring_decisions WHERE updated_at >= CAST(? AS TIMESTAMP)";
    if (scorerId) {
      sql += " AND scorer_id = ?";
      params.push(scorerId);
    }
    return TS.api.rows(sql + " GROUP BY 1 ORDER BY 1 LIMIT 200", params);
  }

  function scoreSummary(scorerId) {
    const params = [TS.sinceParam()];
    let where = "created_at >= CAST(? AS TIMESTAMP)" + TS.projectClause("project", params);
    if (scorerId) {
      where += " AND scorer_id = ?";
      params.push(scorerId);
    }
    return TS.api.rows(
      "SELECT scorer_id, any_value(scorer_name) AS scorer_name, count(*) AS runs, " +
      "avg(score) FILTER (WHERE status = 'success') AS avg_score, " +
      "count(*) FILTER (WHERE status = 'success') AS success, count(*) FILTER (WHERE status = 'failed') AS failed, " +
      "count(*) FILTER (WHERE status = 'not_scorable') AS not_scorable, sum(judge_total_tokens) AS tokens, " +
      "sum(judge_cost) AS cost, epoch_ms(max(created_at)) AS last_ms, " +
      "count(*) FILTER (WHERE source = 'eval') AS eval_runs, string_agg(DISTINCT source, ', ') AS sources " +
      "FROM scores WHERE " + where +
      " GROUP BY 1 ORDER BY 1 LIMIT 200", params);
  }

  /** Scores that only eval runs wrote (run_evals(store=...)): no live decisions exist for them. */
  function evalOnly(r, reg) {
    return !reg && Number(r.runs || 0) > 0 && Number(r.eval_runs || 0) === Number(r.runs || 0);
  }

  /** Decision columns; an eval scorer's come from its own score rows (scored, failed, not
   * scorable), since evals record no live decisions. */
  function decisionCells(d, reg) {
    const fromScores = { scored: "success", failed: "failed", not_scorable: "not_scorable" };
    return DECISIONS.map((name) => ({ label: name.replace("_", " "), class: "num",
      value: (r) => {
        if (evalOnly(r, reg.get(r.scorer_id))) return fromScores[name] ? TS.fmtNum(r[fromScores[name]] || 0) : "—";
        return TS.fmtNum((d.get(r.scorer_id) || {})[name] || 0);
      } }));
  }

  /** The live registry (GET api/live/scorers): {scorers: [{id, state, note, use, target, …}]}, or null. */
  async function registry() {
    try {
      return await TS.api.get("api/live/scorers");
    } catch (err) {
      if (err.status === 401) throw err;
      console.warn("tracescore dashboard: no live registry:", err.message);
      return null;
    }
  }

  /** Judge cost, or "unpriced" (never $0) when the judge's model has no known price. */
  function costText(cost, reg) {
    if (reg && reg.judge_unpriced) return Number(cost) ? TS.fmtCost(cost) + " + unpriced" : "unpriced";
    return TS.fmtCost(cost || 0);
  }

  function cacheText(reg) {
    if (!reg || !reg.uses_judge) return "—";
    const hits = Number(reg.judge_cache_hits || 0);
    return hits ? TS.fmtNum(hits) + " (saved " + TS.fmtCost(reg.judge_saved_usd || 0) + ")" : "0";
  }

  /** Judge requests in flight and the oldest one's age (a hung judge shows here). */
  function inFlightText(reg) {
    if (!reg || !reg.uses_judge) return "—";
    const n = Number(reg.judge_calls_in_flight || 0);
    if (!n) return "0";
    return n + " (oldest " + TS.fmtDuration(Number(reg.oldest_judge_call_seconds || 0) * 1000) + ")";
  }

  /** "Rescore failed pairs": POST api/live/rescore and say what came of it. */
  function rescoreAction(reg) {
    const status = h("span", { id: "rescore-status", class: "muted small" });
    const button = h("button", { type: "button", id: "rescore-failed", onclick: async () => {
      button.disabled = true;
      TS.clear(status).appendChild(document.createTextNode("rescoring…"));
      try {
        const report = await TS.api.request("api/live/rescore", { method: "POST", headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ scorer: reg.id, failed: true }) });
        const done = Object.entries(report.decisions || {}).map(([k, n]) => k.replace("_", " ") + " " + n).join(", ");
        TS.clear(status).appendChild(document.createTextNode(report.pairs + " failed pair" + (report.pairs === 1 ? "" : "s") +
          " rescored" + (done ? ": " + done : "")));
      } catch (err) {
        TS.clear(status).appendChild(TS.errorBox(err, { quiet: true }));
      } finally {
        button.disabled = false;
      }
    } }, "Rescore failed pairs");
    return h("div", { class: "rescore" }, button, " ", status);
  }

  function stateBadge(reg, row) {
    if (!reg && row && evalOnly(row, reg)) {
      return h("span", { class: "badge badge-eval", title: "scores written by run_evals (source eval), not by live scoring" }, "eval");
    }
    if (!reg) {
      const sources = row && row.sources ? " (sources: " + row.sources + ")" : "";
      return h("span", { class: "badge badge-muted", title: "not in the running config (scores from backfill or an older config)" + sources }, "not registered");
    }
    const cls = reg.state === "running" ? "badge-good" : reg.state === "paused" ? "badge-bad" : "badge-muted";
    return h("span", { class: "badge " + cls, title: reg.note || reg.state }, reg.state);
  }

  /** The running version's κ with people, its interval and n (from GET api/live/scorers). */
  function agreementCell(reg) {
    const a = reg && reg.agreement;
    if (!a) return h("span", { class: "muted", title: "no labels check this scorer version" }, "—");
    const interval = a.kappa_low !== null && a.kappa_high !== null ? " [" + a.kappa_low.toFixed(2) + "–" + a.kappa_high.toFixed(2) + "]" : "";
    return h("span", { class: "agreement-cell", title: a.text }, a.kappa === null ? "κ undefined" : "κ " + a.kappa.toFixed(2) + interval, h("span", { class: "muted" }, " n " + a.n));
  }

  async function list(root) {
    root.appendChild(h("h1", {}, "Scorers"));
    const monitorsEl = h("div");
    root.appendChild(monitorsEl);
    const [summary, decisions, live] = await Promise.all([scoreSummary(null), decisionCounts(null), registry(),
      TS.fill(monitorsEl, () => TS.monitorsPanel())]);
    const registered = live && Array.isArray(live.scorers) ? live.scorers : [];
    const reg = new Map(registered.map((r) => [r.id, r]));
    const ids = [...new Set([...registered.map((r) => r.id), ...summary.map((r) => r.scorer_id),
      ...decisions.map((r) => r.scorer_id)])];
    if (!ids.length) {
      root.appendChild(TS.panel(null, TS.scorersHelp()));
      return;
    }
    const s = new Map(summary.map((r) => [r.scorer_id, r]));
    const d = new Map(decisions.map((r) => [r.scorer_id, r]));
    const rows = ids.map((id) => Object.assign({ scorer_id: id }, s.get(id) || {}));
    const notes = registered.filter((r) => r.note);
    root.appendChild(TS.panel("Scorers in the selected range",
      TS.table([
        { label: "scorer", value: (r) => h("a", { href: TS.link("scorers/" + encodeURIComponent(r.scorer_id)), class: "scorer-name" }, r.scorer_id) },
        { label: "state", value: (r) => stateBadge(reg.get(r.scorer_id), r) },
        { label: "source", value: (r) => r.sources || "—" },
        { label: "avg score", class: "num", value: (r) => TS.fmtScore(r.avg_score) },
        { label: "runs", class: "num", value: (r) => TS.fmtNum(r.runs || 0) },
        ...decisionCells(d, reg),
        { label: "tokens", class: "num", value: (r) => TS.fmtNum(r.tokens || 0) },
        { label: "cost", class: "num", value: (r) => costText(r.cost, reg.get(r.scorer_id)) },
        { label: "cache hits", class: "num", value: (r) => cacheText(reg.get(r.scorer_id)) },
        { label: "judge calls", class: "num", value: (r) => inFlightText(reg.get(r.scorer_id)) },
        { label: "agreement", value: (r) => agreementCell(reg.get(r.scorer_id)) },
        { label: "last score", value: (r) => TS.fmtTime(r.last_ms === undefined ? null : Number(r.last_ms)) },
      ], rows, { onRowClick: (r) => (window.location.hash = TS.link("scorers/" + encodeURIComponent(r.scorer_id))) }),
      notes.length ? h("ul", { class: "notes" }, notes.map((r) => h("li", {}, h("strong", {}, r.id), ": " + r.note))) : null,
      h("p", { class: "muted small" }, "State comes from the running server's [[scorers]] config. Decision counts cover every project (decisions carry no project); runs, scores and spend follow the project selector.")));
    if (!summary.length) root.appendChild(TS.panel(null, TS.scorersHelp()));
  }

  async function histogram(el, scorerId) {
    const params = [scorerId, TS.sinceParam()];
    const pw = TS.projectClause("project", params);
    const rows = await TS.api.rows(
      "WITH s AS (SELECT score FROM scores WHERE scorer_id = ? AND status = 'success' AND score IS NOT NULL " +
      "AND created_at >= CAST(? AS TIMESTAMP)" + pw + "), " +
      "b AS (SELECT least(0.0, min(score)) AS lo, greatest(1.0, max(score)) AS hi FROM s) " +
      "SELECT least(9, CAST(floor((s.score - b.lo) / (b.hi - b.lo) * 10) AS INTEGER)) AS bin, count(*) AS n, " +
      "any_value(b.lo) AS lo, any_value(b.hi) AS hi FROM s, b GROUP BY 1 ORDER BY 1", params);
    if (!rows.length) return TS.chart.empty(el, "No successful scores in this range.");
    const lo = Number(rows[0].lo);
    const hi = Number(rows[0].hi);
    const counts = new Map(rows.map((r) => [Number(r.bin), Number(r.n)]));
    const bars = [];
    for (let i = 0; i < 10; i++) {
      const a = lo + ((hi - lo) * i) / 10;
      const b = lo + ((hi - lo) * (i + 1)) / 10;
      const fa = String(Number(a.toFixed(3)));
      const fb = String(Number(b.toFixed(3)));
      // Bins are [a, b), the last one closed on the right ([0.9, 1] holds the 1.0 scores).
      const last = i === 9;
      bars.push({ label: fa + "–" + fb, value: counts.get(i) || 0,
        title: fa + " ≤ score " + (last ? "≤ " : "< ") + fb + ": " + (counts.get(i) || 0) + " scores",
        color: i >= 8 ? "#16a34a" : i >= 5 ? "#ca8a04" : "#dc2626" });
    }
    TS.chart.bars(el, { bars: bars });
  }

  async function trend(el, scorerId) {
    const params = [scorerId, TS.sinceParam()];
    const pw = TS.projectClause("project", params);
    const rows = await TS.api.rows(
      "SELECT epoch_ms(time_bucket(INTERVAL '" + TS.bucket() + "', created_at)) AS t, " +
      "avg(score) FILTER (WHERE status = 'success') AS avg_score, count(*) AS runs, " +
      "count(*) FILTER (WHERE status = 'failed') AS failed FROM scores " +
      "WHERE scorer_id = ? AND created_at >= CAST(? AS TIMESTAMP)" + pw + " GROUP BY 1 ORDER BY 1 DESC LIMIT 1000", params);
    TS.chart.timeseries(el, TS.windowOpts({ yFormat: TS.fmtScore, series: [
      { name: "average score", points: rows.filter((r) => r.avg_score !== null).map((r) => [Number(r.t), Number(r.avg_score)]) }] }));
  }

  async function spend(el, scorerId) {
    const params = [scorerId, TS.sinceParam()];
    const pw = TS.projectClause("project", params);
    const rows = await TS.api.rows(
      "SELECT epoch_ms(date_trunc('day', created_at)) AS t, sum(judge_total_tokens) AS tokens, sum(judge_cost) AS cost " +
      "FROM scores WHERE scorer_id = ? AND created_at >= CAST(? AS TIMESTAMP)" + pw + " GROUP BY 1 ORDER BY 1 DESC LIMIT 400", params);
    const used = rows.filter((r) => Number(r.tokens) || Number(r.cost));
    TS.chart.timeseries(el, TS.dayOpts({ yFormat: TS.fmtCost,
      emptyText: "This scorer spent nothing on judges in this range.",
      series: used.length ? [{ name: "cost (USD)", color: "#16a34a", points: used.map((r) => [Number(r.t), Number(r.cost || 0)]) }] : [] }));
  }

  function recentTable(scorerId, where, empty) {
    return async () => {
      const params = [scorerId, TS.sinceParam()];
      const pw = TS.projectClause("project", params);
      const rows = await TS.api.rows(
        "SELECT trace_id, span_id, status, score, reason, error, epoch_ms(created_at) AS created_ms FROM scores " +
        "WHERE scorer_id = ? AND created_at >= CAST(? AS TIMESTAMP)" + pw + " AND " + where + " LIMIT 20", params);
      if (!rows.length) return h("p", { class: "muted" }, empty);
      return TS.table([
        { label: "when", value: (r) => TS.fmtTime(Number(r.created_ms)) },
        { label: "trace", value: (r) => h("a", { href: TS.traceLink(r.trace_id, { tab: "scores" }), class: "mono" }, TS.shortId(r.trace_id)) },
        { label: "score", value: (r) => TS.scoreBadge(r.score, r.status) },
        { label: "reason / error", value: (r) => {
          if (r.status === "success") return r.reason || "";
          return h("span", { class: "error-text" }, r.error ? TS.errorText(r.error) : r.reason || "");
        } },
      ], rows, { compact: true });
    };
  }

  async function detail(root, scorerId) {
    root.appendChild(h("div", { class: "crumbs" }, h("a", { href: "#/scorers" }, "Scorers"), " / ", scorerId));
    root.appendChild(h("h1", {}, scorerId));
    const [summary, decisions, live] = await Promise.all([scoreSummary(scorerId), decisionCounts(scorerId), registry()]);
    const s = summary[0] || {};
    const d = decisions[0] || {};
    const reg = live && Array.isArray(live.scorers) ? live.scorers.find((r) => r.id === scorerId) : null;
    if (reg) {
      root.appendChild(h("div", { class: "meta scorer-config" }, stateBadge(reg), " ",
        h("span", { class: "muted" }, [reg.use, "target " + reg.target, "sample rate " + reg.sample_rate,
          reg.filter ? "filter " + reg.filter : null, "version " + reg.version, reg.uses_judge ? "LLM judge" : "code scorer"]
          .filter(Boolean).join(" · ")),
        reg.uses_judge ? TS.agreementLine(reg.agreement) : null,
        reg.note ? h("div", { class: "error-box" }, reg.note) : null,
        reg.uses_judge ? h("div", { class: "muted small" }, "judge calls in flight: " + inFlightText(reg) +
          " · timeout " + reg.judge_timeout_seconds + " s · cache hits: " + cacheText(reg)) : null,
        rescoreAction(reg)));
    }
    if (!summary.length && !decisions.length) {
      root.appendChild(h("div", { class: "empty-state" }, h("h3", {}, "Nothing recorded for this scorer in the selected range"),
        h("p", {}, "Widen the range at the top, or check that the scorer is enabled in the config file.")));
      return;
    }
    root.appendChild(h("div", { class: "stats" },
      TS.stat("runs", TS.fmtNum(s.runs || 0)),
      TS.stat("average score", TS.fmtScore(s.avg_score)),
      TS.stat("failed", TS.fmtNum(s.failed || 0), TS.fmtPct(s.failed || 0, s.runs)),
      TS.stat("not scorable", TS.fmtNum(s.not_scorable || 0), TS.fmtPct(s.not_scorable || 0, s.runs)),
      TS.stat("judge tokens", TS.fmtNum(s.tokens || 0)),
      TS.stat("judge cost", costText(s.cost, reg))));
    await TS.resolveWindow();
    const slot = () => h("div", { class: "chart-slot" });
    const [decEl, histEl, trendEl, spendEl, failEl, lowEl] = [slot(), slot(), slot(), slot(), h("div"), h("div")];
    root.appendChild(h("div", { class: "grid" },
      TS.panel("Decisions", decEl),
      TS.panel("Score distribution", histEl),
      TS.panel("Average score over time", trendEl),
      TS.panel("Judge cost per day", spendEl)));
    const monitorsEl = h("div");
    root.appendChild(monitorsEl);
    root.appendChild(TS.panel("Recent failures", failEl));
    root.appendChild(TS.panel("Lowest scores", lowEl));
    TS.chart.bars(decEl, { emptyText: "No decisions in this range.",
      bars: DECISIONS.map((name) => ({ label: name.replace("_", " "), value: Number(d[name] || 0), color: DECISION_COLORS[name] })) });
    const guard = (el) => (e) => TS.clear(el).appendChild(TS.errorBox(e));
    await Promise.all([
      TS.fill(monitorsEl, () => TS.monitorsPanel(scorerId)),
      histogram(histEl, scorerId).catch(guard(histEl)),
      trend(trendEl, scorerId).catch(guard(trendEl)),
      spend(spendEl, scorerId).catch(guard(spendEl)),
      TS.fill(failEl, recentTable(scorerId, "status IN ('failed', 'not_scorable') ORDER BY created_at DESC", "No failures in this range.")),
      TS.fill(lowEl, recentTable(scorerId, "status = 'success' ORDER BY score ASC, created_at DESC", "No successful scores in this range.")),
    ]);
  }

  TS.pages.scorers = function scorers(root, route) {
    return route.path.length > 1 ? detail(root, route.path[1]) : list(root);
  };
})();
