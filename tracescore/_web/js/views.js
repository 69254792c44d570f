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

  function toolInvocation(t) {
    const state = t.state || (t.result !== undefined && t.result !== null ? "result" : "call");
    return h("div", { class: "tool-inv" + (state === "output-error" ? " tool-error" : "") },
      h("div", { class: "tool-head" }, h("span", { class: "kind kind-tool_call" }, "tool"),
        h("strong", {}, t.tool_name || t.toolName || "?"), h("span", { class: "muted" }, " " + state),
        t.tool_call_id ? h("span", { class: "muted mono" }, " " + t.tool_call_id) : null),
      h("div", { class: "tool-io" },
        h("div", {}, h("div", { class: "label" }, "args"), TS.jsonView(t.args)),
        h("div", {}, h("div", { class: "label" }, "result"), TS.jsonView(t.result === undefined ? null : t.result))));
  }

  /** Messages (tracescore.model.Message or loose {role, content}) as a conversation. */
  TS.messagesView = function messagesView(messages) {
    const list = Array.isArray(messages) ? messages : messages ? [messages] : [];
    if (!list.length) return h("p", { class: "muted" }, "none");
    return h("div", { class: "messages" }, list.map((m) => {
      const role = (m && m.role) || "message";
      let tools = (m && (m.tool_invocations || m.toolInvocations)) || [];
      if (!tools.length && m && Array.isArray(m.parts)) {
        // Step-tree messages: tool calls and results are typed parts.
        tools = m.parts.filter((p) => p && (p.type === "tool_call" || p.type === "tool_result")).map((p) => ({
          tool_call_id: p.id, tool_name: p.name, args: p.args, result: p.result,
          state: p.type === "tool_call" ? "call" : p.is_error ? "output-error" : "result" }));
      }
      const text = messageText(m);
      return h("div", { class: "message role-" + role },
        h("div", { class: "role" }, role),
        text ? h("div", { class: "message-text" }, text) : null,
        tools.map(toolInvocation));
    }));
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
