/* tracescore dashboard: the SQL page (#/sql?q=…): a read-only query box over POST api/sql with a
 * result table and CSV download. The server refuses anything but reads and caps the rows.
 * A query given in the link only fills the box: it runs on a click (Run, Ctrl+Enter), never on
 * page load, so a link cannot make someone's browser run a query with their stored key.
 */
(function () {
  "use strict";
  const TS = window.TS;
  const h = TS.h;

  const EXAMPLES = [
    ["Average score and judge cost per scorer",
      "SELECT scorer_id, count(*) AS runs, avg(score) AS avg_score, sum(judge_cost) AS judge_cost\nFROM scores\nGROUP BY 1\nORDER BY 1"],
    ["Slowest root spans today",
      "SELECT trace_id, name, service_name, duration_ms\nFROM spans\nWHERE parent_span_id IS NULL AND start_time >= current_date\nORDER BY duration_ms DESC\nLIMIT 20"],
    ["Lowest scores with their reasons",
      "SELECT trace_id, scorer_id, score, reason\nFROM scores\nWHERE status = 'success'\nORDER BY score\nLIMIT 20"],
    ["Token usage by model",
      "SELECT attributes->>'gen_ai.request.model' AS model,\n       sum(CAST(attributes->>'gen_ai.usage.input_tokens' AS BIGINT)) AS input_tokens,\n       sum(CAST(attributes->>'gen_ai.usage.output_tokens' AS BIGINT)) AS output_tokens\nFROM spans\nWHERE attributes->>'gen_ai.request.model' IS NOT NULL\nGROUP BY 1"],
    ["Why traces were not scored",
      "SELECT scorer_id, decision, count(*) AS n, any_value(last_error) AS example_error\nFROM scoring_decisions\nGROUP BY 1, 2\nORDER BY 1, 2"],
  ];

  function cellText(v) {
    if (v === null || v === undefined) return "";
    if (typeof v === "object") return JSON.stringify(v);
    return String(v);
  }

  /** A number as people read it: at most 6 significant digits for fractions
   * (0.004901999999999998 → 0.004902), thousands grouped for big integers; CSV keeps the raw
   * value. */
  TS.fmtCell = function fmtCell(v) {
    if (typeof v !== "number" || !isFinite(v)) return cellText(v);
    if (Number.isInteger(v)) return Math.abs(v) >= 1e4 ? v.toLocaleString("en-US") : String(v);
    const abs = Math.abs(v);
    if (abs !== 0 && (abs < 1e-6 || abs >= 1e15)) return v.toExponential(4);
    return String(Number(v.toPrecision(6)));
  };

  /** The schema panel: each table's columns with type and doc; a click puts the name in the box. */
  async function schemaPanel(box) {
    const schema = await TS.api.get("api/dashboard/schema");
    const insert = (text) => {
      const at = box.selectionStart === undefined ? box.value.length : box.selectionStart;
      box.value = box.value.slice(0, at) + text + box.value.slice(box.selectionEnd || at);
      box.focus();
      box.selectionStart = box.selectionEnd = at + text.length;
    };
    return h("div", { class: "schema-list" }, schema.tables.map((t) =>
      h("details", { class: "schema-table", dataset: { table: t.name } },
        h("summary", {}, h("span", { class: "mono" }, t.name), t.kind === "view" ? h("span", { class: "muted" }, " view") : null,
          h("span", { class: "muted" }, " · " + t.columns.length)),
        h("ul", { class: "schema-columns" }, t.columns.map((c) => h("li", {},
          h("button", { type: "button", class: "link mono col-name", title: "insert " + c.name, onclick: () => insert(c.name) }, c.name),
          " ", h("span", { class: "col-type" }, c.type),
          c.doc ? h("div", { class: "col-doc" }, c.doc) : null))))));
  }

  /** RFC 4180 CSV of a {columns, rows} result. */
  TS.toCSV = function toCSV(result) {
    const esc = (v) => {
      const t = cellText(v);
      return /[",\r\n]/.test(t) ? '"' + t.replace(/"/g, '""') + '"' : t;
    };
    return [result.columns.map(esc).join(",")].concat(result.rows.map((r) => r.map(esc).join(","))).join("\r\n") + "\r\n";
  };

  function resultView(result, ms) {
    const csv = () => {
      const blob = new Blob([TS.toCSV(result)], { type: "text/csv" });
      const a = h("a", { href: URL.createObjectURL(blob), download: "tracescore-query.csv" });
      document.body.appendChild(a);
      a.click();
      setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 0);
    };
    return h("div", { id: "sql-result" },
      h("div", { class: "result-bar" },
        h("span", {}, result.rows.length + " row" + (result.rows.length === 1 ? "" : "s") + " · " + Math.round(ms) + " ms"),
        result.truncated ? h("span", { class: "badge badge-mid" }, "truncated at the server's row limit") : null,
        h("button", { type: "button", id: "csv-download", onclick: csv, disabled: !result.columns.length }, "Download CSV")),
      h("div", { class: "table-wrap" }, h("table", { class: "table compact sql-table" },
        h("thead", {}, h("tr", {}, result.columns.map((c) => h("th", {}, c)))),
        h("tbody", {}, result.rows.map((row) => h("tr", {}, row.map((v) => {
          const t = TS.fmtCell(v);
          const raw = cellText(v);
          const title = t.length > 120 ? raw.slice(0, 2000) : raw !== t ? raw : null;
          return h("td", { title: title, class: typeof v === "number" ? "num" : null },
            t.length > 120 ? t.slice(0, 120) + "…" : t);
        })))))));
  }

  TS.pages.sql = function sqlPage(root, route) {
    const initial = route.query.get("q") || EXAMPLES[0][1];
    const box = h("textarea", { id: "sql-input", spellcheck: "false", rows: 8 }, initial);
    const out = h("div", { id: "sql-output" });
    const run = async () => {
      const sql = box.value.trim();
      if (!sql) return;
      if (route.query.get("q") !== sql) history.replaceState(null, "", TS.link("sql", { q: sql }));
      TS.clear(out).appendChild(h("p", { class: "muted" }, "Running…"));
      const t0 = performance.now();
      try {
        const result = await TS.api.sql(sql, []);
        TS.clear(out).appendChild(resultView(result, performance.now() - t0));
      } catch (err) {
        TS.clear(out).appendChild(TS.errorBox(err, { quiet: err.status === 400 }));
      }
    };
    box.addEventListener("keydown", (ev) => {
      if ((ev.ctrlKey || ev.metaKey) && ev.key === "Enter") {
        ev.preventDefault();
        run();
      }
    });
    const examples = h("select", { id: "sql-examples", onchange: (ev) => {
      if (ev.target.value !== "") box.value = EXAMPLES[Number(ev.target.value)][1];
      ev.target.value = "";
    } }, h("option", { value: "" }, "Examples…"), EXAMPLES.map(([label], i) => h("option", { value: String(i) }, label)));
    root.appendChild(h("h1", {}, "SQL"));
    const schemaEl = h("aside", { id: "sql-schema", class: "panel sql-schema" }, h("h2", {}, "Tables"));
    const body = h("div", { class: "sql-main" },
      h("p", { class: "muted" }, "Read-only DuckDB SQL over the tables spans, traces, logs, scores, judge_executions and scoring_decisions. Ctrl+Enter runs. Results are capped by the server's row limit; add LIMIT for big tables. Times are UTC."),
      box,
      h("div", { class: "sql-actions" }, h("button", { type: "button", id: "sql-run", class: "primary", onclick: run }, "Run"), examples),
      out);
    root.appendChild(h("div", { class: "sql-layout" }, body, schemaEl));
    const schemaBody = h("div");
    schemaEl.appendChild(schemaBody);
    const filled = TS.fill(schemaBody, () => schemaPanel(box));
    if (route.query.get("q")) {
      out.appendChild(h("p", { id: "sql-from-link", class: "muted" },
        "This link filled in the query above; read it, then press Run to execute it."));
    }
    return filled;
  };
})();
