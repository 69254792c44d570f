/* tracescore dashboard: Sessions (#/sessions, #/sessions/<session_id>) and the monitor panel.
 *
 * The list reads the sessions view (one row per conversation) with, per session, the average of
 * each session scorer and of each per-trace scorer over the session's traces. The session view
 * shows the turns as one chat, newest first (GET api/sessions/<id>/turns: a page of turns per
 * request, each with its input, answer and scores, and how many there are), each turn's trace
 * linked and its scores beside it; pages load one after another up to AUTO_TURNS turns, then a
 * button loads more. TS.monitorsPanel (GET api/live/monitors) is shown on the Overview and
 * Scorers pages.
 */
(function () {
  "use strict";
  const TS = window.TS;
  const h = TS.h;
  const PAGE = 50;
  const TURN_PAGE = 500; // the API's largest page
  const AUTO_TURNS = 2000; // turns loaded without a click

  function traceAnchor(traceId) {
    return h("a", { href: TS.traceLink(traceId), class: "mono", title: traceId }, "trace " + TS.shortId(traceId));
  }

  function placeholders(n) {
    return new Array(n).fill("?").join(", ");
  }

  function scoreChips(list) {
    if (!list || !list.length) return h("span", { class: "muted" }, "—");
    return h("span", { class: "score-chips" }, list.map((s) =>
      h("span", { class: "score-chip", title: s.kind === "session" ? "session scorer" : "per-trace scorer, averaged" },
        s.scorer_id + (s.kind === "session" ? " (session)" : "") + " ", TS.scoreBadge(s.avg_score))));
  }

  /** session id → [{scorer_id, kind: session|trace, avg_score}] for these sessions. */
  async function sessionScores(ids) {
    if (!ids.length) return new Map();
    const rows = await TS.api.rows(
      "SELECT session_id, scorer_id, 'session' AS kind, avg(score) FILTER (WHERE status = 'success') AS avg_score " +
      "FROM scores WHERE session_id IN (" + placeholders(ids.length) + ") GROUP BY 1, 2 " +
      "UNION ALL SELECT t.session_id, s.scorer_id, 'trace' AS kind, avg(s.score) FILTER (WHERE s.status = 'success') " +
      "FROM scores s JOIN traces t ON s.trace_id = t.trace_id WHERE s.session_id IS NULL AND t.session_id IN (" +
      placeholders(ids.length) + ") GROUP BY 1, 2 ORDER BY 1, 3, 2", ids.concat(ids));
    const out = new Map();
    for (const r of rows) {
      if (!out.has(r.session_id)) out.set(r.session_id, []);
      out.get(r.session_id).push(r);
    }
    return out;
  }

  async function list(root, route) {
    root.appendChild(h("h1", {}, "Sessions"));
    root.appendChild(h("p", { class: "muted" }, "Conversations: the traces that carry one session id " +
      "(session.id, gen_ai.conversation.id, a thread id, …), newest first."));
    const offset = Number(route.query.get("offset") || 0);
    const params = [TS.sinceParam()];
    const where = "last_trace_at >= CAST(? AS TIMESTAMP)" + TS.projectClause("project", params);
    const rows = await TS.api.rows(
      "SELECT session_id, project, user_id, trace_count, turn_count, total_tokens, cost_usd, error_count, " +
      "epoch_ms(CAST(first_trace_at AS TIMESTAMP)) AS first_ms, epoch_ms(CAST(last_trace_at AS TIMESTAMP)) AS last_ms " +
      "FROM sessions WHERE " + where + " ORDER BY last_trace_at DESC, session_id LIMIT " + (PAGE + 1) +
      " OFFSET " + offset, params);
    const page = rows.slice(0, PAGE);
    if (!page.length) {
      root.appendChild(h("div", { class: "empty-state" }, h("h3", {}, "No sessions in this range"),
        h("p", {}, "A trace joins a session when it carries a session id (docs/traces.md, Sessions and users) " +
          "and its totals have been computed; widen the range at the top.")));
      return;
    }
    const scores = await sessionScores(page.map((r) => r.session_id));
    root.appendChild(TS.table([
      { label: "session", value: (r) => h("a", { href: TS.link("sessions/" + encodeURIComponent(r.session_id)) }, r.session_id) },
      { label: "user", value: (r) => r.user_id || "—" },
      { label: "turns", class: "num", value: (r) => TS.fmtNum(r.turn_count) },
      { label: "traces", class: "num", value: (r) => TS.fmtNum(r.trace_count) },
      { label: "tokens", class: "num", value: (r) => TS.fmtNum(r.total_tokens || 0) },
      { label: "cost", class: "num", value: (r) => TS.fmtCost(r.cost_usd) },
      { label: "errors", class: "num", value: (r) => TS.fmtNum(r.error_count || 0) },
      { label: "last turn", value: (r) => TS.fmtTime(r.last_ms) },
      { label: "scores", value: (r) => scoreChips(scores.get(r.session_id)) },
    ], page, { onRowClick: (r) => { window.location.hash = TS.link("sessions/" + encodeURIComponent(r.session_id)); } }));
    const pager = h("div", { class: "pager" });
    if (offset > 0) pager.appendChild(h("button", { type: "button", onclick: () => route.setQuery({ offset: Math.max(0, offset - PAGE) }) }, "Newer"));
    if (rows.length > PAGE) pager.appendChild(h("button", { type: "button", onclick: () => route.setQuery({ offset: offset + PAGE }) }, "Older"));
    root.appendChild(pager);
  }

  function turnView(turn) {
    const messages = (turn.input || []).concat(turn.output || []);
    const scores = turn.scores || [];
    return h("div", { class: "turn" },
      h("div", { class: "turn-head" }, h("h3", {}, "Turn " + turn.turn), " ",
        traceAnchor(turn.trace_id), " ", h("span", { class: "muted" }, TS.fmtTime(turn.start_time))),
      h("div", { class: "turn-body" },
        h("div", { class: "turn-chat" }, turn.error ? h("p", { class: "error" }, turn.error) :
          messages.length ? TS.messagesView(messages) : h("p", { class: "muted" }, "no agent messages in this trace")),
        h("div", { class: "turn-scores" }, scores.length ? scores.map((sc) =>
          h("div", { class: "turn-score" }, sc.scorer_id + " ", TS.scoreBadge(sc.score, sc.status))) : h("span", { class: "muted" }, "no scores"))));
  }

  /** The conversation panel: pages of turns (newest first) until AUTO_TURNS, then on a click. */
  async function conversation(panelBody, sessionId) {
    const status = h("p", { class: "muted turn-count" }, "loading turns…");
    const chat = h("div", { class: "session-chat" });
    const more = h("div", { class: "pager" });
    panelBody.append(status, chat, more);
    let offset = 0;
    let total = null;
    async function page() {
      const answer = await TS.api.get("api/sessions/" + encodeURIComponent(sessionId) + "/turns?limit=" +
        TURN_PAGE + "&offset=" + offset);
      total = answer.total;
      const frag = document.createDocumentFragment();
      for (const turn of answer.turns) frag.appendChild(turnView(turn));
      chat.appendChild(frag);
      offset += answer.turns.length;
      status.textContent = TS.fmtNum(total) + " turns, newest first" +
        (offset < total ? "; showing the newest " + TS.fmtNum(offset) : "");
      return answer.turns.length;
    }
    try {
      while ((total === null || offset < total) && offset < AUTO_TURNS) {
        if (!(await page())) break;
      }
    } catch (err) {
      panelBody.appendChild(TS.errorBox(err));
      return;
    }
    function button() {
      more.replaceChildren();
      if (offset >= total) return;
      more.appendChild(h("button", { type: "button", onclick: async () => {
        more.replaceChildren(h("span", { class: "muted" }, "loading…"));
        try {
          await page();
        } catch (err) {
          more.replaceChildren(TS.errorBox(err));
          return;
        }
        button();
      } }, "Older turns"));
    }
    button();
  }

  async function detail(root, sessionId) {
    root.appendChild(h("div", { class: "crumbs" }, h("a", { href: "#/sessions" }, "Sessions"), " / ", sessionId));
    root.appendChild(h("h1", {}, sessionId));
    const [summary, whole] = await Promise.all([
      TS.api.rows("SELECT * EXCLUDE (first_trace_at, last_trace_at, last_received_at), " +
        "epoch_ms(CAST(first_trace_at AS TIMESTAMP)) AS first_ms, epoch_ms(CAST(last_trace_at AS TIMESTAMP)) AS last_ms " +
        "FROM sessions WHERE session_id = ?", [sessionId]),
      TS.api.rows("SELECT trace_id, session_id, scorer_id, score, status, reason FROM scores " +
        "WHERE session_id = ? ORDER BY created_at LIMIT 2000", [sessionId]),
    ]);
    const s = summary[0];
    if (!s) {
      root.appendChild(h("div", { class: "empty-state" }, h("h3", {}, "No such session"),
        h("p", {}, "No trace carries this session id (yet).")));
      return;
    }
    root.appendChild(h("div", { class: "stats" },
      TS.stat("turns", TS.fmtNum(s.turn_count)), TS.stat("traces", TS.fmtNum(s.trace_count)),
      TS.stat("tokens", TS.fmtNum(s.total_tokens || 0)), TS.stat("cost", TS.fmtCost(s.cost_usd)),
      TS.stat("errors", TS.fmtNum(s.error_count || 0)), TS.stat("user", s.user_id || "—")));
    root.appendChild(TS.panel("Session scores", whole.length ? TS.table([
      { label: "scorer", value: (r) => h("a", { href: TS.link("scorers/" + encodeURIComponent(r.scorer_id)) }, r.scorer_id) },
      { label: "score", value: (r) => TS.scoreBadge(r.score, r.status) },
      { label: "after turn", value: (r) => traceAnchor(r.trace_id) },
      { label: "reason", value: (r) => r.reason || "" },
    ], whole, { compact: true }) : h("p", { class: "muted" }, "No session scorer has scored this conversation " +
      "(target = \"session\" scorers run once it has been quiet for session_settle_seconds).")));
    const body = h("div", {});
    root.appendChild(TS.panel("Conversation", body));
    await conversation(body, sessionId);
  }

  TS.pages.sessions = function sessions(root, route) {
    return route.path.length > 1 ? detail(root, route.path[1]) : list(root, route);
  };

  /** Monitor states (GET api/live/monitors) as a panel; only monitors of scorerId when given.
   * Resolves to null (no panel) when no monitor is configured. */
  TS.monitorsPanel = async function monitorsPanel(scorerId) {
    let monitors = [];
    try {
      monitors = (await TS.api.get("api/live/monitors")).monitors || [];
    } catch (err) {
      if (err && err.status === 404) return null;
      return TS.panel("Monitors", TS.errorBox(err));
    }
    if (scorerId) monitors = monitors.filter((m) => m.scorer === scorerId);
    if (!monitors.length) return null;
    return h("section", { class: "panel monitors" }, h("h2", {}, "Monitors"), TS.table([
      { label: "monitor", value: (m) => m.id },
      { label: "state", value: (m) => h("span", { class: "badge " + (m.state === "breached" ? "badge-bad" : "badge-good") }, m.state) },
      { label: "rule", value: (m) => m.aggregate + " of " + m.scorer + " over " + m.window + " " + m.op + " " + m.threshold },
      { label: "value", class: "num", value: (m) => (m.value === null || m.value === undefined ? "—" : TS.fmtScore(m.value)) },
      { label: "samples", class: "num", value: (m) => TS.fmtNum(m.samples || 0) },
      { label: "last event", value: (m) => (m.last_event ? m.last_event.state + " " + TS.fmtTime(m.last_event.at) : "—") },
    ], monitors, { compact: true }));
  };
})();
