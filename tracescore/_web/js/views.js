/* tracescore dashboard: view pieces shared by the pages (panels, tables, badges, JSON, messages,
 * empty states). Everything builds DOM nodes; trace content is inserted as text only.
 */
(function () {
  "use strict";
  const TS = window.TS;
  const h = TS.h;

  TS.panel = function panel(title, ...children) {
    return h("section", { class: "panel" }, title ? h("h2", {}, title) : null, children);
  };

  TS.stat = function stat(label, value, hint) {
    return h("div", { class: "stat" }, h("div", { class: "stat-value" }, value),
      h("div", { class: "stat-label" }, label), hint ? h("div", { class: "stat-hint" }, hint) : null);
  };

  /** A failed call shown in place. It is logged as a console error (a page that cannot load its
   * data is broken), except for user input errors (quiet) and the API-key prompt (401). */
  TS.errorBox = function errorBox(err, opts) {
    if (!(opts && opts.quiet) && !(err && err.status === 401)) {
      console.error("tracescore dashboard:", err && err.message ? err.message : String(err));
    }
    return h("div", { class: "error-box", role: "alert" }, err && err.message ? err.message : String(err));
  };

  /** A score's error column ({name, message, ...} JSON or text) as one readable line. */
  TS.errorText = function errorText(value) {
    const err = TS.parseJSON(value);
    if (err && typeof err === "object" && err.message) return (err.name ? err.name + ": " : "") + err.message;
    return typeof err === "string" ? err : JSON.stringify(err);
  };

  /** Run an async builder into a placeholder; a failure shows a sentence in place. */
  TS.fill = function fill(el, promiseFn) {
    TS.clear(el).appendChild(h("p", { class: "muted" }, "Loading…"));
    return Promise.resolve()
      .then(promiseFn)
      .then((node) => {
        TS.clear(el);
        if (node) TS.append(el, [node]);
      })
      .catch((err) => {
        TS.clear(el).appendChild(TS.errorBox(err));
      });
  };

  /** columns: [{label, value: row => node|text, class?}] */
  TS.table = function table(columns, rows, opts) {
    opts = opts || {};
    return h("div", { class: "table-wrap" },
      h("table", { class: "table" + (opts.compact ? " compact" : "") },
        h("thead", {}, h("tr", {}, columns.map((c) => h("th", { class: c.class || null }, c.label)))),
        h("tbody", {}, rows.map((row) => h("tr", { onclick: opts.onRowClick ? () => opts.onRowClick(row) : null,
          class: opts.onRowClick ? "clickable" : null },
          columns.map((c) => h("td", { class: c.class || null }, c.value(row))))))));
  };

  TS.scoreBadge = function scoreBadge(score, status) {
    if (status && status !== "success") {
      return h("span", { class: "badge badge-" + status.replace("_", "-") }, status.replace("_", " "));
    }
    const n = Number(score);
    const cls = score === null || score === undefined ? "badge" : n >= 0.8 ? "badge badge-good" : n >= 0.5 ? "badge badge-mid" : "badge badge-bad";
    return h("span", { class: cls }, TS.fmtScore(score));
  };

  TS.statusBadge = function statusBadge(code) {
    const c = code || "UNSET";
    return h("span", { class: "badge " + (c === "ERROR" ? "badge-bad" : c === "OK" ? "badge-good" : "badge-muted") }, c);
  };

  TS.kindBadge = function kindBadge(kind) {
    return h("span", { class: "kind kind-" + String(kind || "generic").replace(/[^a-z_]/gi, "") }, kind || "generic");
  };

  /** A JSON value (or text) in a scrollable <pre>. */
  TS.jsonView = function jsonView(value, opts) {
    opts = opts || {};
    const v = TS.parseJSON(value);
    const text = typeof v === "string" ? v : JSON.stringify(v, null, 2);
    return h("pre", { class: "json" + (opts.tall ? " tall" : "") }, text === undefined ? "null" : text);
  };

  /** A collapsible block: <details><summary>title</summary>body</details>. */
  TS.details = function details(title, body, open) {
    return h("details", { class: "details", open: !!open }, h("summary", {}, title), body);
  };

  function messageText(m) {
    if (m === null || m === undefined) return "";
    if (typeof m === "string") return m;
    if (typeof m.content === "string") return m.content;
    if (Array.isArray(m.parts)) {
      return m.parts.filter((p) => typeof p === "string" || (p && (p.type === "text" || typeof p.text === "string")))
        .map((p) => (typeof p === "string" ? p : p.text || p.content || "")).join("\n");
    }
    if (m.content !== undefined) return JSON.stringify(m.content, null, 2);
    return JSON.stringify(m, null, 2);
  }

  /** One tool call or result. `ctx` knows the names of calls by id and which ids have a result
   * elsewhere in the conversation, so a result part names its tool and a call whose result
   * comes in a later message says so instead of showing "null". */
  function toolInvocation(t, ctx) {
    const state = t.state || (t.result !== undefined && t.result !== null ? "result" : "call");
    const id = t.tool_call_id || t.toolCallId;
    // Mastra's exporter sends "[tool-result: NAME]" in place of a result it did not record.
    const placeholder = typeof t.result === "string" ? /^\[tool-result: ([^\]]+)\]$/.exec(t.result.trim()) : null;
    const name = t.tool_name || t.toolName || (id && ctx.names.get(id)) || (placeholder && placeholder[1]) || null;
    const isResult = state === "result" || state === "output-error";
    const hasArgs = t.args !== undefined && t.args !== null;
    const hasResult = t.result !== undefined && t.result !== null && !placeholder;
    let result;
    if (placeholder) result = h("p", { class: "muted small no-result" }, "not recorded in this span (the exporter sent a placeholder)");
    else if (hasResult) result = TS.jsonView(t.result);
    else if (id && ctx.resultIds.has(id) && !isResult) result = h("p", { class: "muted small" }, "in a later message");
    else result = h("p", { class: "muted small no-result" }, "no result recorded");
    return h("div", { class: "tool-inv" + (state === "output-error" ? " tool-error" : "") },
      h("div", { class: "tool-head" }, h("span", { class: "kind kind-tool_call" }, isResult && !hasArgs ? "tool result" : "tool"),
        h("strong", {}, name || (id ? "call " + id : "(tool not named in the trace)")), h("span", { class: "muted" }, " " + state),
        id ? h("span", { class: "muted mono" }, " " + id) : null),
      h("div", { class: "tool-io" },
        isResult && !hasArgs ? null : h("div", {}, h("div", { class: "label" }, "args"), hasArgs ? TS.jsonView(t.args) : h("p", { class: "muted small" }, "none recorded")),
        h("div", {}, h("div", { class: "label" }, "result"), result)));
  }

  function toolParts(m) {
    let tools = (m && (m.tool_invocations || m.toolInvocations)) || [];
    if (!tools.length && m && Array.isArray(m.parts)) {
      // Step-tree and OTel GenAI messages: tool calls and results are typed parts.
      tools = m.parts.filter((p) => p && ["tool_call", "tool_result", "tool_call_response"].includes(p.type)).map((p) => ({
        tool_call_id: p.id, tool_name: p.name, args: p.args !== undefined ? p.args : p.arguments,
        result: p.result !== undefined ? p.result : p.response,
        state: p.type === "tool_call" ? "call" : p.is_error ? "output-error" : "result" }));
    }
    return tools;
  }

  /** Messages (tracescore.model.Message or loose {role, content}) as a conversation. */
  TS.messagesView = function messagesView(messages) {
    const list = Array.isArray(messages) ? messages : messages ? [messages] : [];
    if (!list.length) return h("p", { class: "muted" }, "none");
    const ctx = { names: new Map(), resultIds: new Set() };
    for (const m of list) {
      for (const t of toolParts(m)) {
        const id = t.tool_call_id || t.toolCallId;
        if (!id) continue;
        if (t.tool_name || t.toolName) ctx.names.set(id, t.tool_name || t.toolName);
        if (t.state !== "call" && t.result !== undefined && t.result !== null) ctx.resultIds.add(id);
      }
    }
    return h("div", { class: "messages" }, list.map((m) => {
      const role = (m && m.role) || "message";
      const text = messageText(m);
      return h("div", { class: "message role-" + role },
        h("div", { class: "role" }, role),
        text ? h("div", { class: "message-text" }, text) : null,
        toolParts(m).map((t) => toolInvocation(t, ctx)));
    }));
  };

  /** A judge version's agreement with people (the `agreement` object of GET
   * api/traces/{id}/scores, api/live/scorers and the review queue items), or that it is unknown. */
  TS.agreementLine = function agreementLine(agreement) {
    if (!agreement) {
      return h("div", { class: "agreement-line muted small" }, "agreement with people: unknown (no labels check this judge version)");
    }
    return h("div", { class: "agreement-line small", title: "Cohen's κ between this judge version's verdicts and people's labels of " +
      agreement.schema_name + " (bootstrap 95% interval); TPR " + TS.fmtScore(agreement.tpr) + ", TNR " + TS.fmtScore(agreement.tnr) },
    "this judge " + agreement.text);
  };

  // ---- empty states ------------------------------------------------------------------------
  /** The server's listeners (GET api/dashboard/info); {} when it cannot be read. */
  TS.serverInfo = function serverInfo() {
    return TS.api.get("api/dashboard/info").catch(() => ({}));
  };

  /** How to send traces here; `info` (TS.serverInfo()) gives the real gRPC port. */
  TS.exporterHelp = function exporterHelp(info) {
    const origin = window.location.origin;
    const grpcPort = info && info.grpc_port;
    const grpc = grpcPort ? origin.replace(/^https?:/, "http:").replace(/:\d+$/, "") + ":" + grpcPort : null;
    const code = [
      "export OTEL_EXPORTER_OTLP_ENDPOINT=" + origin,
      "export OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
      "export OTEL_SERVICE_NAME=my-agent",
      "# optional: put the traces in a project",
      "export OTEL_EXPORTER_OTLP_HEADERS=x-tracescore-project=my-project",
      "# if the server was started with --api-key KEY:",
      "# export OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer%20KEY",
    ].join("\n");
    return h("div", { class: "empty-state" },
      h("h3", {}, "No traces yet"),
      h("p", {}, "Point your agent's OpenTelemetry exporter at this server and run it once. Any OTel SDK reads these variables:"),
      h("pre", { class: "code" }, code),
      h("p", {}, "OTLP/HTTP goes to ", h("code", {}, origin + "/v1/traces"), " (protobuf or JSON)",
        grpc ? ["; OTLP/gRPC to ", h("code", { class: "grpc-endpoint" }, grpc), " (",
          h("code", {}, "OTEL_EXPORTER_OTLP_PROTOCOL=grpc"), ")."]
          : ". This server does not serve OTLP/gRPC (started with --no-grpc)."),
      h("p", {}, "Or send a few sample agent traces now: ", h("code", {}, "tracescore demo --url " + origin),
        ". Instrumentation recipes (OpenInference, OpenAI, Mastra, Vercel AI SDK) are in ",
        h("code", {}, "collectors/README.md"), "."),
      h("p", { class: "muted" }, "Traces show up here as soon as their spans are stored; scores follow once a trace has been quiet for the settle time (10 s by default)."));
  };

  TS.scorersHelp = function scorersHelp() {
    const code = [
      "[[scorers]]",
      'id = "no-tool-errors"',
      'use = "tracescore.scorers.checks:no_tool_errors"',
      'target = "trace"',
      "sample_rate = 1.0",
    ].join("\n");
    return h("div", { class: "empty-state" },
      h("h3", {}, "No scores yet"),
      h("p", {}, "Scorers run on every trace that has settled (its root span ended and no span arrived for 10 s). The embedded default config registers code scorers that need no model; set ",
        h("code", {}, "TRACESCORE_JUDGE_MODEL"), " (for example ", h("code", {}, "openai/gpt-4o-mini"),
        ") to add LLM-judge scorers. Your own scorers go in the config file:"),
      h("pre", { class: "code" }, code),
      h("p", {}, "Start the server with ", h("code", {}, "tracescore serve --config tracescore.toml"),
        "; score older traces with ", h("code", {}, "tracescore backfill --scorer ID --since 24h"), "."));
  };

  /** Tabs: [{id, label, render(el)}]; the active id lives in the hash query (?tab=). */
  TS.tabs = function tabs(items, activeId, onSelect) {
    const active = items.find((t) => t.id === activeId) || items[0];
    const body = h("div", { class: "tab-body" });
    const bar = h("div", { class: "tabs", role: "tablist" }, items.map((t) =>
      h("button", { type: "button", role: "tab", class: "tab" + (t === active ? " active" : ""),
        "aria-selected": t === active ? "true" : "false", dataset: { tab: t.id },
        onclick: () => onSelect(t.id) }, t.label)));
    active.render(body);
    return h("div", {}, bar, body);
  };
})();
