/* tracescore dashboard: one trace (#/traces/<id>): waterfall with span attributes, scores with
 * reasons and judge executions, scorer decisions, what a scorer saw, and the normalized step tree.
 */
(function () {
  "use strict";
  const TS = window.TS;
  const h = TS.h;
  const MAX_ROWS = 3000;

  // ---- spans -------------------------------------------------------------------------------
  function timeMs(span, which) {
    const ns = span[which + "_time_ns"] !== undefined ? span[which + "_time_ns"] : span[which + "_time_unix_nano"];
    if (ns !== undefined && ns !== null && ns !== "") return Number(ns) / 1e6;
    const d = TS.toDate(span[which + "_time"]);
    return d ? d.getTime() : null;
  }

  /** Any shape of GET api/traces/{id} (tree or flat list) → spans in tree order with depth. */
  TS.normalizeSpans = function normalizeSpans(resp) {
    const flat = [];
    const seen = new Set();
    const walk = (nodes) => {
      for (const n of nodes || []) {
        if (!n || typeof n !== "object") continue;
        if (n.span_id && !seen.has(n.span_id)) {
          seen.add(n.span_id);
          flat.push(n);
        }
        walk(n.children);
      }
    };
    const roots = Array.isArray(resp) ? resp
      : resp.spans || resp.roots || resp.tree || resp.children || (resp.root ? [resp.root] : []);
    walk(Array.isArray(roots) ? roots : [roots]);
    const spans = flat.map((n) => {
      const start = timeMs(n, "start");
      let end = timeMs(n, "end");
      let dur = n.duration_ms === undefined || n.duration_ms === null ? null : Number(n.duration_ms);
      if (dur === null && end !== null && start !== null) dur = end - start;
      if (end === null && start !== null) end = start + (dur || 0);
      return {
        raw: n, span_id: n.span_id, parent_span_id: n.parent_span_id || null, name: n.name,
        kind: n.kind, service_name: n.service_name, status_code: n.status_code,
        status_message: n.status_message, start: start, end: end, duration_ms: dur,
        attributes: TS.parseJSON(n.attributes) || {}, resource_attributes: TS.parseJSON(n.resource_attributes) || {},
        events: TS.parseJSON(n.events) || [], links: TS.parseJSON(n.links) || [],
        scope_name: n.scope_name, children: [],
      };
    });
    const byId = new Map(spans.map((s) => [s.span_id, s]));
    const roots2 = [];
    for (const s of spans) {
      const parent = s.parent_span_id && byId.get(s.parent_span_id);
      if (parent && parent !== s) parent.children.push(s);
      else roots2.push(s);
    }
    const byStart = (a, b) => (a.start || 0) - (b.start || 0);
    const ordered = [];
    const visit = (list, depth) => {
      list.sort(byStart);
      for (const s of list) {
        s.depth = depth;
        ordered.push(s);
        visit(s.children, depth + 1);
      }
    };
    visit(roots2, 0);
    return ordered;
  };

  /** span id → the model-generation step of the step tree on it ({model, usage}). */
  function modelSteps(stepRoots) {
    const out = new Map();
    const walk = (nodes) => {
      for (const n of nodes || []) {
        if (n && n.span_id && (n.is_model_call || n.kind === "model_generation") && (n.model || n.usage) && !out.has(n.span_id)) {
          out.set(n.span_id, n);
        }
        if (n) walk(n.children);
      }
    };
    walk(stepRoots);
    return out;
  }

  /** Model, token and cost badges of a waterfall row (what the step tree knows about the span,
   * and its `model_calls` row: the cost). */
  function modelBadges(step, spanName, call) {
    if (!step && !call) return null;
    step = step || { model: call.model, usage: { input_tokens: call.input_tokens, output_tokens: call.output_tokens } };
    const u = step.usage || {};
    const input = u.input_tokens;
    const output = u.output_tokens;
    const tokens = input !== undefined && input !== null
      ? TS.fmtNum(input) + "→" + TS.fmtNum(output || 0) + " tok" : u.total_tokens ? TS.fmtNum(u.total_tokens) + " tok" : null;
    const model = step.model || step.response_model;
    const named = model && spanName && String(spanName).includes(model);
    return [tokens ? h("span", { class: "wf-badge wf-tokens", title: "input → output tokens" }, tokens) : null,
      model ? h("span", { class: "wf-badge wf-model" + (named ? " wf-model-named" : ""),
        title: "model " + model + (step.response_model && step.response_model !== model ? " (answered by " + step.response_model + ")" : "") },
      model) : null,
      call && call.cost_usd !== null && call.cost_usd !== undefined
        ? h("span", { class: "wf-badge wf-cost", title: "cost (" + (call.cost_source || "?") + ")" }, TS.fmtCost(call.cost_usd))
        : null];
  }

  /** The trace header's totals line: model calls, tool calls, tokens, cost (from `traces`). */
  function totalsLine(summary) {
    if (!summary || summary.totals_received_at === null || summary.totals_received_at === undefined) {
      return h("div", { class: "meta totals muted", id: "trace-totals" }, "agent totals: computed once the trace settles");
    }
    const parts = [
      TS.fmtNum(summary.model_call_count) + " model calls",
      TS.fmtNum(summary.tool_call_count) + " tool calls",
      summary.total_tokens !== null ? TS.fmtNum(summary.input_tokens) + " in / " + TS.fmtNum(summary.output_tokens) + " out tokens" : "no token counts",
      summary.cost_usd !== null ? TS.fmtCost(summary.cost_usd) + (Number(summary.unpriced_call_count) ? " (+" + summary.unpriced_call_count + " unpriced)" : "") : "cost unknown",
      summary.models && summary.models.length ? summary.models.join(", ") : null,
      summary.session_id ? "session " + summary.session_id : null,
    ];
    return h("div", { class: "meta totals", id: "trace-totals" }, parts.filter(Boolean).join(" · "));
  }

  function waterfall(spans, selectedId, onSelect, steps, calls) {
    const t0 = Math.min(...spans.map((s) => s.start || Infinity));
    const t1 = Math.max(...spans.map((s) => s.end || s.start || 0));
    const total = Math.max(t1 - t0, 0.001);
    const models = steps || new Map();
    const costs = calls || new Map();
    const rows = spans.slice(0, MAX_ROWS).map((s) => {
      const left = (((s.start || t0) - t0) / total) * 100;
      const width = Math.max(((s.duration_ms || 0) / total) * 100, 0.3);
      const err = s.status_code === "ERROR";
      // The duration label sits inside a wide bar, after a short one, or before a short one that
      // ends near the right edge (so it never covers its bar).
      let label;
      if (width > 20) label = h("span", { class: "wf-dur inside", style: { left: left + "%" } }, TS.fmtDuration(s.duration_ms));
      else if (left + width <= 85) label = h("span", { class: "wf-dur after", style: { left: left + width + "%" } }, TS.fmtDuration(s.duration_ms));
      else label = h("span", { class: "wf-dur before", style: { right: 100 - left + "%" } }, TS.fmtDuration(s.duration_ms));
      return h("div", { class: "wf-row" + (s.span_id === selectedId ? " selected" : "") + (err ? " wf-error" : ""),
        dataset: { spanId: s.span_id }, onclick: () => onSelect(s.span_id), title: s.name },
        h("div", { class: "wf-name", style: { paddingLeft: 6 + s.depth * 14 + "px" } },
          err ? h("span", { class: "err-dot" }, "●") : null, h("span", { class: "wf-label" }, s.name || "(unnamed)"),
          modelBadges(models.get(s.span_id), s.name, costs.get(s.span_id))),
        h("div", { class: "wf-track" },
          h("div", { class: "wf-bar" + (err ? " error" : ""), style: { left: Math.min(left, 99.7) + "%", width: Math.min(width, 100 - left) + "%" } }),
          label));
    });
    return h("div", { class: "waterfall" },
      h("div", { class: "wf-row wf-head" }, h("div", { class: "wf-name" }, "span"),
        h("div", { class: "wf-track" }, h("span", { class: "muted" }, "0"), h("span", { class: "muted wf-total" }, TS.fmtDuration(total)))),
      rows,
      spans.length > MAX_ROWS ? h("p", { class: "muted" }, "Showing the first " + MAX_ROWS + " of " + spans.length + " spans.") : null);
  }

  const FOLD_CHARS = 300;

  /** One attribute value: a message list as a chat, a long string folded, JSON as JSON. */
  function attributeValue(raw) {
    const v = TS.parseJSON(raw);
    if (looksLikeMessages(v)) return h("div", { class: "attr-chat" }, TS.messagesView(v));
    if (typeof v === "string" && v.length > FOLD_CHARS) {
      return h("details", { class: "fold" }, h("summary", {}, v.slice(0, 160) + "… (" + v.length + " characters)"),
        h("div", { class: "fold-body" }, v));
    }
    if (typeof v === "object" && v !== null) {
      const text = JSON.stringify(v, null, 2);
      return text.length > FOLD_CHARS * 4
        ? h("details", { class: "fold" }, h("summary", {}, "JSON, " + text.length + " characters"), TS.jsonView(v))
        : TS.jsonView(v);
    }
    return String(v);
  }

  function kvTable(obj) {
    const keys = Object.keys(obj || {}).sort();
    if (!keys.length) return h("p", { class: "muted" }, "none");
    return h("table", { class: "kv" }, h("tbody", {}, keys.map((k) => h("tr", {}, h("th", {}, k), h("td", {}, attributeValue(obj[k]))))));
  }

  function spanDetails(span, showInput) {
    if (!span) return h("p", { class: "muted" }, "Select a span.");
    return h("div", { class: "span-details", id: "span-details" },
      h("h3", {}, span.name || "(unnamed)"),
      h("div", { class: "meta" },
        TS.statusBadge(span.status_code), " ", span.kind ? h("span", { class: "badge badge-muted" }, span.kind) : null,
        h("span", { class: "mono muted" }, " span " + span.span_id)),
      span.status_message ? h("div", { class: "error-box" }, span.status_message) : null,
      h("table", { class: "kv" }, h("tbody", {},
        h("tr", {}, h("th", {}, "service"), h("td", {}, span.service_name || "—")),
        h("tr", {}, h("th", {}, "started"), h("td", {}, TS.fmtTime(span.start))),
        h("tr", {}, h("th", {}, "duration"), h("td", {}, TS.fmtDuration(span.duration_ms))),
        h("tr", {}, h("th", {}, "parent"), h("td", { class: "mono" }, span.parent_span_id || "— (root)")),
        span.scope_name ? h("tr", {}, h("th", {}, "scope"), h("td", {}, span.scope_name)) : null)),
      h("button", { type: "button", onclick: () => showInput(span.span_id) }, "Scorer input for this span"),
      h("h4", {}, "Attributes"), kvTable(span.attributes),
      span.events && span.events.length ? h("div", {}, h("h4", {}, "Events (" + span.events.length + ")"),
        span.events.map((e) => TS.details(e.name || "event", kvTable(e.attributes)))) : null,
      TS.details("Resource attributes", kvTable(span.resource_attributes)),
      span.links && span.links.length ? TS.details("Links (" + span.links.length + ")", TS.jsonView(span.links)) : null);
  }

  // ---- scores ------------------------------------------------------------------------------
  function execution(x, seenPrompts) {
    const summary = h("span", {},
      h("strong", {}, x.step || "step"), " ",
      h("span", { class: "badge " + (x.status === "success" ? "badge-good" : "badge-bad") }, x.status || "?"), " ",
      h("span", { class: "muted" }, [x.judge_model_id, "attempts " + (x.attempt_count ?? "—"),
        "calls " + (x.model_call_count ?? "—"), TS.fmtDuration(x.duration_ms),
        TS.fmtNum(x.input_tokens) + " in / " + TS.fmtNum(x.output_tokens) + " out tokens",
        x.cost_amount === null || x.cost_amount === undefined ? "cost —" : TS.fmtCost(x.cost_amount) + (x.cost_source ? " (" + x.cost_source + ")" : "")]
        .filter(Boolean).join(" · ")));
    return TS.details(summary, h("div", { class: "execution" },
      x.error_message ? h("div", { class: "error-box" }, (x.error_name ? x.error_name + ": " : "") + x.error_message) : null,
      h("div", { class: "label" }, "prompt"), promptOnce(x.prompt, seenPrompts),
      h("div", { class: "label" }, "output"), TS.jsonView(x.output),
      x.raw_output ? TS.details("raw output", TS.jsonView(x.raw_output)) : null,
      h("div", { class: "muted" }, [
        x.finish_reason ? "finish reason " + x.finish_reason : null,
        x.reasoning_tokens ? x.reasoning_tokens + " reasoning tokens" : null,
        x.cached_input_tokens ? x.cached_input_tokens + " cached input tokens" : null,
        x.judge_provider ? "provider " + x.judge_provider : null].filter(Boolean).join(" · "))));
  }

  /** A prompt shown in full the first time it appears in a score card, then as a back-reference. */
  function promptOnce(prompt, seen) {
    const text = typeof prompt === "string" ? prompt : JSON.stringify(prompt);
    if (seen && text && seen.has(text)) return h("p", { class: "muted small same-prompt" }, "the same prompt as " + seen.get(text));
    if (seen && text) seen.set(text, "above");
    return TS.jsonView(prompt, { tall: true });
  }

  function scoreCard(s, executions, selectSpan, agreement) {
    const prompts = ["preprocess_prompt", "analyze_prompt", "generate_score_prompt", "generate_reason_prompt"]
      .filter((k) => s[k]);
    const seenPrompts = new Map();
    const judged = executions.length || Number(s.judge_input_tokens || 0) || Number(s.judge_output_tokens || 0) || Number(s.judge_cost || 0);
    const steps = ["preprocess_step_result", "analyze_step_result"].filter((k) => s[k] !== null && s[k] !== undefined);
    return h("div", { class: "score-card", dataset: { scorer: s.scorer_id } },
      h("div", { class: "score-head" },
        TS.scoreBadge(s.score, s.status), " ",
        h("a", { href: TS.link("scorers/" + encodeURIComponent(s.scorer_id)), class: "scorer-name" }, s.scorer_id),
        s.scorer_name && s.scorer_name !== s.scorer_id ? h("span", { class: "muted" }, " (" + s.scorer_name + ")") : null,
        h("span", { class: "muted" }, " · " + [s.source, s.scorer_version ? "v " + s.scorer_version : null,
          TS.fmtTime(Number(s.created_ms)), TS.fmtDuration(s.duration_ms)].filter(Boolean).join(" · ")),
        s.span_id ? h("a", { href: "#", class: "mono small", onclick: (ev) => { ev.preventDefault(); selectSpan(s.span_id); } }, " span " + TS.shortId(s.span_id)) : null),
      s.reason ? h("div", { class: "reason" }, s.reason) : s.error ? null : h("div", { class: "muted" }, "No reason recorded."),
      s.error ? h("div", { class: "error-box" }, TS.errorText(s.error)) : null,
      judged ? TS.agreementLine(agreement) : null,
      judged ? h("div", { class: "muted small judge-line" }, "judge: " + TS.fmtNum(s.judge_input_tokens || 0) + " in / " +
        TS.fmtNum(s.judge_output_tokens || 0) + " out tokens · " + TS.fmtCost(s.judge_cost || 0)) : null,
      steps.length ? TS.details("Step results", steps.map((k) => h("div", {}, h("div", { class: "label" }, k.replace("_step_result", "")), TS.jsonView(s[k])))) : null,
      prompts.length ? TS.details("Prompts", prompts.map((k) => h("div", {}, h("div", { class: "label" }, k.replace("_prompt", "")),
        promptOnce(s[k], seenPrompts)))) : null,
      executions.length ? h("div", { class: "executions" }, h("h4", {}, "Judge executions (" + executions.length + ")"),
        executions.map((x) => execution(x, seenPrompts))) : null);
  }

  // ---- scorer input and steps ----------------------------------------------------------------
  function trajectoryView(steps, nested) {
    if (!steps || !steps.length) return h("p", { class: "muted" }, "no steps");
    return h("ul", { class: "tree" + (nested ? "" : " tree-root") }, steps.map((st) => {
      const facts = [st.model_id, st.agent_id, st.workflow_id].filter((x) => x !== st.name).concat([st.status, TS.fmtDuration(st.duration_ms),
        st.prompt_tokens !== undefined && st.prompt_tokens !== null ? st.prompt_tokens + "/" + st.completion_tokens + " tokens" : null,
        st.success === false ? "failed" : null]).filter((x) => x && x !== "—");
      const head = h("span", { class: "tree-node" }, TS.kindBadge(st.step_type), " ", h("strong", { class: "step-name" }, st.name),
        facts.length ? h("span", { class: "muted" }, " · " + facts.join(" · ")) : null);
      const hasIo = (st.tool_args !== undefined && st.tool_args !== null) || (st.tool_result !== undefined && st.tool_result !== null);
      return h("li", { dataset: { stepType: st.step_type } },
        hasIo ? h("details", { class: "step" }, h("summary", {}, head), h("div", { class: "step-body tool-io" },
          h("div", {}, h("div", { class: "label" }, "tool args"), TS.jsonView(st.tool_args === undefined ? null : st.tool_args)),
          h("div", {}, h("div", { class: "label" }, "tool result"), TS.jsonView(st.tool_result === undefined ? null : st.tool_result))))
          : h("div", { class: "step" }, head),
        st.children && st.children.length ? trajectoryView(st.children, true) : null);
    }));
  }

  function looksLikeMessages(v) {
    return Array.isArray(v) && v.length > 0 && v.every((m) => m && typeof m === "object" && typeof m.role === "string");
  }

  function ioView(v) {
    return looksLikeMessages(v) ? TS.messagesView(v) : TS.jsonView(v === undefined ? null : v);
  }

  TS.scorerInputView = scorerInputView;

  function scorerInputView(data, spanId, clearTarget) {
    const input = data.input || {};
    const agent = data.kind === "agent";
    return h("div", { class: "scorer-input", id: "scorer-input" },
      h("p", {}, "What a scorer of kind ", h("strong", {}, data.kind || "?"), " receives for span ",
        h("span", { class: "mono" }, data.span_id || "—"), spanId ? " (the span you selected). " : " (the default target: the outermost agent or workflow run, else the root span). ",
        spanId ? h("a", { href: "#", onclick: (ev) => { ev.preventDefault(); clearTarget(); } }, "Back to the default target.") : null),
      agent ? h("div", { class: "io-grid" },
        h("div", {}, h("h4", {}, "Input messages"), TS.messagesView(input.input_messages),
          h("h4", {}, "System messages"), TS.messagesView(input.system_messages),
          h("h4", {}, "Remembered messages"), TS.messagesView(input.remembered_messages),
          input.tagged_system_messages && Object.keys(input.tagged_system_messages).length
            ? h("div", {}, h("h4", {}, "Tagged system messages"), TS.jsonView(input.tagged_system_messages)) : null),
        h("div", {}, h("h4", {}, "Output"), TS.messagesView(data.output)))
        : h("div", { class: "io-grid" }, h("div", {}, h("h4", {}, "Input"), ioView(data.input)),
          h("div", {}, h("h4", {}, "Output"), ioView(data.output))),
      h("h4", {}, "Trajectory"), trajectoryView(data.trajectory && data.trajectory.steps),
      TS.details("Raw JSON", TS.jsonView(data, { tall: true })));
  }

  const STEP_HEAD = new Set(["kind", "name", "children", "span_id", "model", "status", "error", "usage", "duration_ms",
    "tool_args", "tool_result", "input_messages", "output_messages", "input", "output"]);

  /** A tool step's result, or where it is: a child step's output (frameworks that put the
   * execution in a nested span), else a plain "no result recorded" instead of "null". */
  function toolResultView(n) {
    if (n.tool_result !== undefined && n.tool_result !== null) return TS.jsonView(n.tool_result);
    const found = [];
    const walk = (nodes) => {
      for (const c of nodes || []) {
        if (found.length) return;
        if (c.tool_result !== undefined && c.tool_result !== null) found.push(c.tool_result);
        else if (c.output !== undefined && c.output !== null) found.push(c.output);
        else walk(c.children);
      }
    };
    walk(n.children);
    if (found.length) return h("div", {}, h("p", { class: "muted small" }, "from a nested step:"), TS.jsonView(found[0]));
    return h("p", { class: "muted small no-result" }, "no result recorded on this span");
  }

  function stepTreeView(nodes, nested) {
    if (!nodes || !nodes.length) return h("p", { class: "muted" }, "no steps");
    return h("ul", { class: "tree" + (nested ? "" : " tree-root") }, nodes.map((n) => {
      const rest = {};
      for (const [k, v] of Object.entries(n)) if (!STEP_HEAD.has(k) && v !== null && v !== undefined) rest[k] = v;
      const usage = n.usage && typeof n.usage === "object"
        ? Object.entries(n.usage).filter(([, v]) => v).map(([k, v]) => v + " " + k.replace(/_tokens$/, "").replace("_", " ")).join(", ") : null;
      const facts = [n.model !== n.name ? n.model : null, usage ? usage + " tokens" : null, n.status && n.status !== "unset" ? n.status : null,
        n.duration_ms !== null && n.duration_ms !== undefined ? TS.fmtDuration(n.duration_ms) : null].filter(Boolean);
      const hasMessages = (n.input_messages && n.input_messages.length) || (n.output_messages && n.output_messages.length);
      const sections = [];
      if (n.tool_args !== undefined || n.tool_result !== undefined) {
        sections.push(h("div", { class: "tool-io" },
          h("div", {}, h("div", { class: "label" }, "tool args"),
            n.tool_args === undefined || n.tool_args === null ? h("p", { class: "muted small" }, "no arguments recorded") : TS.jsonView(n.tool_args)),
          h("div", {}, h("div", { class: "label" }, "tool result"), toolResultView(n))));
      }
      if (hasMessages) {
        sections.push(h("div", { class: "io-grid" },
          h("div", {}, h("div", { class: "label" }, "input messages"), TS.messagesView(n.input_messages)),
          h("div", {}, h("div", { class: "label" }, "output messages"), TS.messagesView(n.output_messages))));
      } else if (n.input !== undefined || n.output !== undefined) {
        sections.push(h("div", { class: "io-grid" },
          h("div", {}, h("div", { class: "label" }, "input"), ioView(n.input)),
          h("div", {}, h("div", { class: "label" }, "output"), ioView(n.output))));
      }
      if (Object.keys(rest).length) sections.push(h("div", {}, h("div", { class: "label" }, "other fields"), TS.jsonView(rest)));
      const head = h("span", { class: "tree-node" }, TS.kindBadge(n.kind || n.step_type), " ", h("strong", { class: "step-name" }, n.name || "(unnamed)"),
        facts.length ? h("span", { class: "muted" }, " · " + facts.join(" · ")) : null);
      return h("li", { dataset: { kind: n.kind || "" } },
        sections.length ? h("details", { class: "step" }, h("summary", {}, head), h("div", { class: "step-body" }, sections)) : h("div", { class: "step" }, head),
        n.error ? h("div", { class: "error-box" }, typeof n.error === "string" ? n.error : JSON.stringify(n.error)) : null,
        n.children && n.children.length ? stepTreeView(n.children, true) : null);
    }));
  }

  // ---- page --------------------------------------------------------------------------------
  TS.pages.trace = async function trace(root, route) {
    let traceId = route.path[1];
    const ui = { tab: route.query.get("tab") || "timeline", span: route.query.get("span") || null, inputSpan: route.query.get("input_span") || null };
    // A short id (a unique prefix, as the demo prints them): the API resolves it, and the SQL
    // below needs the full id, so resolve it first.
    const resolved = traceId.length < 32 ? await TS.api.get("api/traces/" + encodeURIComponent(traceId)) : null;
    if (resolved) traceId = resolved.trace_id;
    const enc = encodeURIComponent(traceId);
    const [tree, scores, executions, decisions, stepData, scoreDocs] = await Promise.all([
      resolved ? Promise.resolve(resolved) : TS.api.get("api/traces/" + enc),
      TS.api.rows("SELECT score_id, scorer_id, scorer_name, scorer_version, span_id, source, status, score, reason, " +
        "epoch_ms(created_at) AS created_ms, duration_ms, error, judge_input_tokens, judge_output_tokens, judge_cost, " +
        "preprocess_step_result, analyze_step_result, preprocess_prompt, analyze_prompt, generate_score_prompt, " +
        "generate_reason_prompt FROM scores WHERE trace_id = ? ORDER BY created_at LIMIT 500", [traceId]),
      TS.api.rows("SELECT score_id, step, status, prompt, judge_model_id, judge_provider, attempt_count, model_call_count, " +
        "duration_ms, output, raw_output, finish_reason, input_tokens, output_tokens, reasoning_tokens, cached_input_tokens, " +
        "cost_amount, cost_source, error_name, error_message FROM judge_executions WHERE trace_id = ? " +
        "ORDER BY score_id, list_position(['preprocess', 'analyze', 'generate_score', 'generate_reason'], step) NULLS LAST, " +
        "created_at LIMIT 2000", [traceId]),
      TS.api.rows("SELECT scorer_id, scorer_version, span_id, decision, attempts, last_error, epoch_ms(updated_at) AS updated_ms " +
        "FROM scoring_decisions WHERE trace_id = ? ORDER BY scorer_id LIMIT 1000", [traceId]),
      TS.api.get("api/traces/" + enc + "/steps").catch((err) => {
        console.warn("tracescore dashboard: no step tree for the waterfall badges:", err.message);
        return null;
      }),
      TS.api.get("api/traces/" + enc + "/scores").catch((err) => {
        console.warn("tracescore dashboard: no judge agreement for the scores:", err.message);
        return { scores: [] };
      }),
    ]);
    const agreementOf = new Map((scoreDocs.scores || []).map((d) => [d.score_id, d.agreement]));
    const stepRoots = stepData ? (Array.isArray(stepData) ? stepData : stepData.steps || []) : [];
    const models = modelSteps(stepRoots);
    const calls = new Map(((tree && tree.model_calls) || []).map((c) => [c.span_id, c]));
    const spans = TS.normalizeSpans(tree);
    if (!spans.length) {
      root.appendChild(h("div", { class: "empty-state" }, h("h3", {}, "Trace not found"), h("p", {}, "No spans stored for " + traceId + ".")));
      return;
    }
    const rootSpan = spans[0];
    const byId = new Map(spans.map((s) => [s.span_id, s]));
    const errors = spans.filter((s) => s.status_code === "ERROR").length;
    const t0 = Math.min(...spans.map((s) => s.start || Infinity));
    const t1 = Math.max(...spans.map((s) => s.end || 0));
    root.appendChild(h("div", { class: "trace-head" },
      h("div", { class: "crumbs" }, h("a", { href: "#/traces" }, "Traces"), " / ", h("span", { class: "mono" }, traceId)),
      h("h1", { id: "trace-title" }, rootSpan.name || "(unnamed)"),
      h("div", { class: "meta" }, [rootSpan.service_name, rootSpan.raw.project ? "project " + rootSpan.raw.project : null,
        TS.fmtTime(t0), TS.fmtDuration(t1 - t0), TS.plural(spans.length, "span"), errors ? TS.plural(errors, "error") : "no errors"].filter(Boolean).join(" · ")),
      totalsLine(tree && tree.trace),
      h("div", { class: "chips" }, scores.map((s) => h("span", { class: "chip" }, h("span", { class: "chip-name" }, s.scorer_id), TS.scoreBadge(s.score, s.status)))),
      TS.addToDataset ? TS.addToDataset(traceId) : null));

    const body = h("div");
    root.appendChild(body);
    const sync = () => {
      const q = new URLSearchParams();
      if (ui.tab !== "timeline") q.set("tab", ui.tab);
      if (ui.span) q.set("span", ui.span);
      if (ui.inputSpan) q.set("input_span", ui.inputSpan);
      const qs = q.toString();
      history.replaceState(null, "", "#/traces/" + enc + (qs ? "?" + qs : ""));
    };
    const show = () => {
      sync();
      TS.clear(body).appendChild(TS.tabs(tabs, ui.tab, (id) => { ui.tab = id; show(); }));
    };
    const selectSpan = (id) => { ui.span = id; ui.tab = "timeline"; show(); };
    const showInput = (id) => { ui.inputSpan = id; ui.tab = "input"; show(); };
    const execBy = new Map();
    for (const x of executions) {
      if (!execBy.has(x.score_id)) execBy.set(x.score_id, []);
      execBy.get(x.score_id).push(x);
    }
    const tabs = [
      { id: "timeline", label: "Timeline", render: (el) => {
        const selected = byId.get(ui.span) || rootSpan;
        el.appendChild(h("div", { class: "split" },
          waterfall(spans, selected.span_id, (id) => { ui.span = id; show(); }, models, calls),
          spanDetails(selected, showInput)));
      } },
      { id: "scores", label: "Scores (" + scores.length + ")", render: (el) => {
        if (!scores.length) {
          el.appendChild(h("div", { class: "empty-state" }, h("p", {}, "No scores on this trace yet."),
            decisions.length ? h("p", {}, "See the Decisions tab for why.") : h("p", { class: "muted" },
              "Live scoring picks a trace up once it has settled; check the Scorers page for registered scorers.")));
          return;
        }
        el.appendChild(h("div", { id: "score-list" }, scores.map((s) => scoreCard(s, execBy.get(s.score_id) || [], selectSpan, agreementOf.get(s.score_id)))));
      } },
      { id: "input", label: "Scorer input", render: (el) => {
        const qs = ui.inputSpan ? "?span_id=" + encodeURIComponent(ui.inputSpan) : "";
        TS.fill(el, async () => scorerInputView(await TS.api.get("api/traces/" + enc + "/scorer-input" + qs),
          ui.inputSpan, () => { ui.inputSpan = null; show(); }));
      } },
      { id: "steps", label: "Step tree", render: (el) => {
        TS.fill(el, async () => {
          const data = stepData || await TS.api.get("api/traces/" + enc + "/steps");
          const nodes = Array.isArray(data) ? data : data.steps || data.roots || (data.root ? [data.root] : []);
          return h("div", { id: "step-tree" }, h("p", { class: "muted" }, "The normalized steps every scorer input is built from (Mastra's span kinds)."), stepTreeView(nodes));
        });
      } },
      { id: "decisions", label: "Decisions (" + decisions.length + ")", render: (el) => {
        if (!decisions.length) { el.appendChild(h("p", { class: "muted" }, "No scoring decisions for this trace yet.")); return; }
        el.appendChild(TS.table([
          { label: "scorer", value: (d) => d.scorer_id },
          { label: "version", value: (d) => h("span", { class: "mono small" }, String(d.scorer_version || "").slice(0, 12)) },
          { label: "span", value: (d) => h("span", { class: "mono" }, TS.shortId(d.span_id)) },
          { label: "decision", value: (d) => h("span", { class: "badge badge-" + d.decision.replace("_", "-") }, d.decision) },
          { label: "attempts", class: "num", value: (d) => TS.fmtNum(d.attempts) },
          { label: "last error", value: (d) => d.last_error || "" },
          { label: "updated", value: (d) => TS.fmtTime(Number(d.updated_ms)) },
        ], decisions, { compact: true }));
      } },
    ];
    show();
  };
})();
