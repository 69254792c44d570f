/* tracescore dashboard: the Traces list (search by text, service, scorer, score range, status,
 * cost above), sortable by time, duration, spans, tokens and cost.
 * One page of 50 traces is selected in SQL from the maintained `traces` table (its span counts and
 * the agent's totals: models, tokens, cost), then scores are fetched for just those 50 trace ids.
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

  const SORTS = {
    started: "start_time", duration: "duration_ms", spans: "span_count",
    tokens: "total_tokens", cost: "cost_usd",
  };

  function buildQuery(q, offset) {
    const params = [TS.sinceParam()];
    let where = "t.start_time >= CAST(? AS TIMESTAMP)";
    where += TS.projectClause("t.project", params);
    if (q.get("service")) {
      where += " AND t.service_name = ?";
      params.push(q.get("service"));
    }
    const text = (q.get("q") || "").trim();
    if (text) {
      where += " AND (t.trace_id = lower(?) OR t.root_span_name ILIKE ?)";
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
      where += " AND t.trace_id IN (" + sub + ")";
    }
    const status = q.get("status");
    if (status === "error") where += " AND t.error_count > 0";
    if (status === "ok") where += " AND t.error_count = 0";
    const minCost = q.get("mincost");
    if (minCost) {
      where += " AND t.cost_usd > ?";
      params.push(Number(minCost));
    }
    const sort = SORTS[q.get("sort")] || "start_time";
    const dir = q.get("dir") === "asc" ? "ASC" : "DESC";
    const sql =
      "SELECT t.trace_id, t.root_span_name AS name, t.service_name, t.project, t.duration_ms, " +
      "t.span_count AS spans, t.error_count AS errors, t.models, t.input_tokens, t.output_tokens, " +
      "t.total_tokens, t.cost_usd, t.unpriced_call_count, t.model_call_count, " +
      "epoch_ms(CAST(t.start_time AS TIMESTAMP)) AS start_ms FROM traces AS t WHERE " + where +
      " ORDER BY t." + sort + " " + dir + " NULLS LAST, t.trace_id LIMIT " + (PAGE + 1) +
      " OFFSET " + Number(offset);
    return { sql: sql, params: params };
  }

  async function enrich(traces) {
    if (!traces.length) return { scores: new Map() };
    const ids = traces.map((t) => t.trace_id);
    const scores = await TS.api.rows("SELECT trace_id, scorer_id, score, status FROM scores WHERE trace_id IN (" +
      placeholders(ids.length) + ") ORDER BY scorer_id, created_at LIMIT 2000", ids);
    const scoreMap = new Map();
    for (const s of scores) {
      if (!scoreMap.has(s.trace_id)) scoreMap.set(s.trace_id, []);
      scoreMap.get(s.trace_id).push(s);
    }
    return { scores: scoreMap };
  }

  /** A column header that sorts the list by `key` (a second click flips the direction). */
  function sortHeader(label, key, q, route) {
    const active = (q.get("sort") || "started") === key;
    const dir = active && q.get("dir") !== "asc" ? "asc" : "desc";
    const arrow = active ? (q.get("dir") === "asc" ? " ▲" : " ▼") : "";
    return h("a", { href: "#", class: "sort" + (active ? " active" : ""), "data-sort": key,
      onclick: (ev) => { ev.preventDefault(); route.setQuery({ sort: key, dir: dir, page: null }); } },
    label + arrow);
  }

  function tokensCell(r) {
    if (r.total_tokens === null || r.total_tokens === undefined) {
      return h("span", { class: "muted", title: "no model call reports tokens (or totals pending)" }, "—");
    }
    return h("span", { title: TS.fmtNum(r.input_tokens) + " in → " + TS.fmtNum(r.output_tokens) + " out" },
      TS.fmtNum(r.total_tokens));
  }

  function costCell(r) {
    if (r.cost_usd === null || r.cost_usd === undefined) {
      const why = Number(r.model_call_count) ? "model unknown to the price map" : "no priced model call";
      return h("span", { class: "muted", title: why }, "—");
    }
    const unpriced = Number(r.unpriced_call_count || 0);
    return h("span", { class: "cost", title: unpriced ? unpriced + " call(s) unpriced" : "" },
      TS.fmtCost(r.cost_usd) + (unpriced ? "+" : ""));
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
      h("label", {}, "Cost above $", input("mincost", { type: "number", step: "any", min: "0", size: 7, class: "narrow" })),
      h("button", { type: "submit" }, "Search"),
      h("a", { href: "#/traces", class: "button-link" }, "Clear"));
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const data = new FormData(form);
      const updates = { page: null };
      for (const key of ["q", "service", "scorer", "min", "max", "status", "mincost"]) updates[key] = data.get(key);
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
      options("SELECT DISTINCT service_name AS v FROM traces WHERE start_time >= CAST(? AS TIMESTAMP)" +
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
      { label: sortHeader("started", "started", q, route), class: "nowrap", value: (r) => TS.fmtTime(Number(r.start_ms)) },
      { label: "name", value: (r) => h("a", { href: TS.traceLink(r.trace_id), class: "trace-name" }, r.name || "(no root span yet)") },
      { label: "service", value: (r) => r.service_name || "—" },
      { label: "project", value: (r) => r.project || "—" },
      { label: sortHeader("duration", "duration", q, route), class: "num", value: (r) => TS.fmtDuration(r.duration_ms) },
      { label: sortHeader("spans", "spans", q, route), class: "num", value: (r) => TS.fmtNum(r.spans) },
      { label: "errors", class: "num", value: (r) => {
        const n = Number(r.errors || 0);
        return n ? h("span", { class: "badge badge-bad" }, String(n)) : "0";
      } },
      { label: "models", class: "models", value: (r) => (r.models && r.models.length)
        ? h("span", { class: "mono" }, r.models.join(", ")) : h("span", { class: "muted" }, "—") },
      { label: sortHeader("tokens", "tokens", q, route), class: "num tokens", value: tokensCell },
      { label: sortHeader("cost", "cost", q, route), class: "num cost", value: costCell },
      { label: "scores", value: (r) => scoreChips(extra.scores.get(r.trace_id)) },
      { label: "trace id", value: (r) => h("span", { class: "mono muted", title: r.trace_id }, TS.shortId(r.trace_id)) },
    ], shown, { onRowClick: (r) => (window.location.hash = TS.traceLink(r.trace_id)) }));
    listEl.appendChild(h("div", { class: "pager" },
      page > 0 ? h("button", { type: "button", onclick: () => route.setQuery({ page: page - 1 || null }) }, "← Newer") : null,
      h("span", { class: "muted" }, "Traces " + (page * PAGE + 1) + "–" + (page * PAGE + shown.length)),
      more ? h("button", { type: "button", onclick: () => route.setQuery({ page: page + 1 }) }, "Older →") : null));
  };
})();
