/* tracescore dashboard: the Traces list (search by text, service, scorer, score range, status).
 * One page of 50 root spans is selected in SQL (ORDER BY start_time DESC LIMIT), then span counts
 * and scores are fetched for just those 50 trace ids.
 */
(function () {
  "use strict";
  const TS = window.TS;
  const h = TS.h;
  const PAGE = 50;

  function placeholders(n) {
    return new Array(n).fill("?").join(", ");
  }

  async function options(sql, params) {
    try {
      return (await TS.api.rows(sql, params)).map((r) => r.v);
    } catch (err) {
      console.warn("tracescore dashboard:", err.message);
      return [];
    }
  }

  function buildQuery(q, offset) {
    const params = [TS.sinceParam()];
    let where = "r.parent_span_id IS NULL AND r.start_time >= CAST(? AS TIMESTAMP)";
    where += TS.projectClause("r.project", params);
    if (q.get("service")) {
      where += " AND r.service_name = ?";
      params.push(q.get("service"));
    }
    const text = (q.get("q") || "").trim();
    if (text) {
      where += " AND (r.trace_id = lower(?) OR r.name ILIKE ?)";
      params.push(text, "%" + text + "%");
    }
    const scorer = q.get("scorer");
    const min = q.get("min");
    const max = q.get("max");
    if (scorer || min || max) {
      let sub = "SELECT trace_id FROM scores WHERE created_at >= CAST(? AS TIMESTAMP)";
      params.push(TS.sinceParam());
      if (scorer) {
        sub += " AND scorer_id = ?";
        params.push(scorer);
      }
      if (min) {
        sub += " AND score >= ?";
        params.push(Number(min));
      }
      if (max) {
        sub += " AND score <= ?";
        params.push(Number(max));
      }
      where += " AND r.trace_id IN (" + sub + ")";
    }
    const status = q.get("status");
    if (status === "error" || status === "ok") {
      where += " AND r.trace_id " + (status === "ok" ? "NOT " : "") +
        "IN (SELECT trace_id FROM spans WHERE status_code = 'ERROR' AND start_time >= CAST(? AS TIMESTAMP))";
      params.push(TS.sinceParam());
    }
    const sql =
      "SELECT r.trace_id, r.name, r.service_name, r.project, r.duration_ms, r.status_code, " +
      "epoch_ms(CAST(r.start_time AS TIMESTAMP)) AS start_ms FROM spans AS r WHERE " + where +
      " ORDER BY r.start_time DESC LIMIT " + (PAGE + 1) + " OFFSET " + Number(offset);
    return { sql: sql, params: params };
  }

  async function enrich(traces) {
    if (!traces.length) return { counts: new Map(), scores: new Map() };
    const ids = traces.map((t) => t.trace_id);
    const [counts, scores] = await Promise.all([
      TS.api.rows("SELECT trace_id, count(*) AS spans, count(*) FILTER (WHERE status_code = 'ERROR') AS errors " +
        "FROM spans WHERE trace_id IN (" + placeholders(ids.length) + ") GROUP BY 1", ids),
      TS.api.rows("SELECT trace_id, scorer_id, score, status FROM scores WHERE trace_id IN (" +
        placeholders(ids.length) + ") ORDER BY scorer_id, created_at LIMIT 2000", ids),
    ]);
    const countMap = new Map(counts.map((r) => [r.trace_id, r]));
    const scoreMap = new Map();
    for (const s of scores) {
      if (!scoreMap.has(s.trace_id)) scoreMap.set(s.trace_id, []);
      scoreMap.get(s.trace_id).push(s);
    }
    return { counts: countMap, scores: scoreMap };
  }

  function filterForm(q, route, services, scorers) {
    const input = (name, attrs) => h("input", Object.assign({ name: name, value: q.get(name) || "" }, attrs));
    const select = (name, values, allLabel) => h("select", { name: name },
      h("option", { value: "" }, allLabel),
      values.map((v) => h("option", { value: v, selected: q.get(name) === v }, v)));
    const form = h("form", { class: "filters", id: "trace-filters" },
      h("label", {}, "Search", input("q", { placeholder: "trace id or root span name", size: 28 })),
      h("label", {}, "Service", select("service", services, "all services")),
      h("label", {}, "Scorer", select("scorer", scorers, "any scorer")),
      h("label", {}, "Score ≥", input("min", { type: "number", step: "any", size: 5, class: "narrow" })),
      h("label", {}, "Score ≤", input("max", { type: "number", step: "any", size: 5, class: "narrow" })),
      h("label", {}, "Status", select("status", ["ok", "error"], "any status")),
      h("button", { type: "submit" }, "Search"),
      h("a", { href: "#/traces", class: "button-link" }, "Clear"));
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const data = new FormData(form);
      const updates = { page: null };
      for (const key of ["q", "service", "scorer", "min", "max", "status"]) updates[key] = data.get(key);
      route.setQuery(updates);
    });
    return form;
  }

  function scoreChips(list) {
    if (!list || !list.length) return h("span", { class: "muted" }, "—");
    return h("span", { class: "chips" }, list.slice(0, 6).map((s) =>
      h("span", { class: "chip", title: s.scorer_id + ": " + (s.status === "success" ? TS.fmtScore(s.score) : s.status) },
        h("span", { class: "chip-name" }, s.scorer_id), TS.scoreBadge(s.score, s.status))),
      list.length > 6 ? h("span", { class: "muted" }, " +" + (list.length - 6)) : null);
  }

  TS.pages.traces = async function traces(root, route) {
    if (route.path.length > 1) return TS.pages.trace(root, route);
    const q = route.query;
    const page = Math.max(0, Number(q.get("page") || 0));
    root.appendChild(h("h1", {}, "Traces"));
    const sinceParams = [TS.sinceParam()];
    const projectWhere = TS.projectClause("project", sinceParams);
    const [services, scorers] = await Promise.all([
      options("SELECT DISTINCT service_name AS v FROM spans WHERE parent_span_id IS NULL AND start_time >= CAST(? AS TIMESTAMP)" +
        projectWhere + " AND service_name IS NOT NULL ORDER BY 1 LIMIT 200", sinceParams),
      options("SELECT DISTINCT scorer_id AS v FROM scores ORDER BY 1 LIMIT 200", []),
    ]);
    root.appendChild(filterForm(q, route, services, scorers));
    const listEl = h("div", { id: "trace-list" });
    root.appendChild(listEl);
    const query = buildQuery(q, page * PAGE);
    const rows = await TS.api.rows(query.sql, query.params);
    const more = rows.length > PAGE;
    const shown = rows.slice(0, PAGE);
    if (!shown.length) {
      const any = await TS.api.rows("SELECT count(*) AS n FROM (SELECT 1 FROM spans LIMIT 1) AS t");
      listEl.appendChild(Number(any[0].n) ? h("div", { class: "empty-state" },
        h("h3", {}, "No traces match"),
        h("p", {}, "Nothing in the selected time range and project matches these filters. Widen the range at the top or clear the filters."))
        : TS.exporterHelp(await TS.serverInfo()));
      return;
    }
    const extra = await enrich(shown);
    listEl.appendChild(TS.table([
      { label: "started", class: "nowrap", value: (r) => TS.fmtTime(Number(r.start_ms)) },
      { label: "name", value: (r) => h("a", { href: TS.traceLink(r.trace_id), class: "trace-name" }, r.name || "(unnamed)") },
      { label: "service", value: (r) => r.service_name || "—" },
      { label: "project", value: (r) => r.project || "—" },
      { label: "duration", class: "num", value: (r) => TS.fmtDuration(r.duration_ms) },
      { label: "spans", class: "num", value: (r) => TS.fmtNum((extra.counts.get(r.trace_id) || {}).spans) },
      { label: "errors", class: "num", value: (r) => {
        const n = Number((extra.counts.get(r.trace_id) || {}).errors || 0);
        return n ? h("span", { class: "badge badge-bad" }, String(n)) : "0";
      } },
      { label: "scores", value: (r) => scoreChips(extra.scores.get(r.trace_id)) },
      { label: "trace id", value: (r) => h("span", { class: "mono muted", title: r.trace_id }, TS.shortId(r.trace_id)) },
    ], shown, { onRowClick: (r) => (window.location.hash = TS.traceLink(r.trace_id)) }));
    listEl.appendChild(h("div", { class: "pager" },
      page > 0 ? h("button", { type: "button", onclick: () => route.setQuery({ page: page - 1 || null }) }, "← Newer") : null,
      h("span", { class: "muted" }, "Traces " + (page * PAGE + 1) + "–" + (page * PAGE + shown.length)),
      more ? h("button", { type: "button", onclick: () => route.setQuery({ page: page + 1 }) }, "Older →") : null));
  };
})();
