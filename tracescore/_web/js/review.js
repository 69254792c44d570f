/* tracescore dashboard: review queues (#/review, #/review/<queue>): people label what the judge
 * scored, with the keyboard only, and see the judge's score and reason only after labelling
 * (no anchoring; the queue's hide_judge setting).
 *
 * Keys on a queue: 1–9 pick the active schema's value (the label is saved once every schema has
 * one), n / → / Enter the next item, p / ← the previous one (labels can be changed: the newest
 * label counts), s skip, c the comment box (Enter saves it, Esc leaves it), ? the key list.
 */
(function () {
  "use strict";
  const TS = window.TS;
  const h = TS.h;
  const ANNOTATOR = "tracescore.annotator";

  async function queues(root) {
    root.appendChild(h("h1", {}, "Review"));
    const data = await TS.api.get("api/queues");
    if (!data.queues.length) {
      root.appendChild(TS.panel(null, h("p", {}, "No review queues yet. Create one with ",
        h("code", {}, "tracescore queues create NAME --schema SCHEMA --selection \"...\""), " or POST /api/queues; see docs/labels.md.")));
      return;
    }
    root.appendChild(TS.panel("Queues", TS.table([
      { label: "queue", value: (q) => h("a", { href: "#/review/" + encodeURIComponent(q.name), class: "queue-link" }, q.name) },
      { label: "labels", value: (q) => q.schemas.join(", ") },
      { label: "target", value: (q) => q.target_type },
      { label: "done", class: "num", value: (q) => TS.fmtNum(q.done) + " / " + TS.fmtNum(q.needed) },
      { label: "skipped", class: "num", value: (q) => TS.fmtNum(q.skipped) },
      { label: "per item", class: "num", value: (q) => TS.fmtNum(q.annotators_per_item) },
    ], data.queues)));
  }

  function annotatorForm(root, done) {
    const input = h("input", { id: "annotator-input", placeholder: "your name", autocomplete: "off" });
    const form = h("form", { id: "annotator-form", class: "panel" },
      h("p", {}, "Who is labelling? Your name goes on every label you give (type it, then Enter)."), input);
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const name = input.value.trim();
      if (!name) return;
      localStorage.setItem(ANNOTATOR, name);
      done(name);
    });
    root.appendChild(form);
    input.focus();
  }

  async function targetView(item) {
    if (item.target_type === "trace") {
      const qs = item.span_id ? "?span_id=" + encodeURIComponent(item.span_id) : "";
      const data = await TS.api.get("api/traces/" + encodeURIComponent(item.trace_id) + "/scorer-input" + qs);
      return h("div", {}, h("div", { class: "muted small" }, "trace ",
        h("a", { href: TS.traceLink(item.trace_id), class: "mono", tabindex: "-1" }, TS.shortId(item.trace_id))),
      TS.scorerInputView(data, null, () => {}));
    }
    if (item.target_type === "session") {
      const turns = await TS.api.rows("SELECT trace_id, root_span_name, start_time FROM traces WHERE session_id = ? ORDER BY start_time LIMIT 200", [item.session_id]);
      return h("div", {}, h("p", {}, "session ", h("span", { class: "mono" }, item.session_id)),
        TS.table([{ label: "turn", value: (r) => h("a", { href: TS.traceLink(r.trace_id), tabindex: "-1" }, r.root_span_name || TS.shortId(r.trace_id)) }], turns));
    }
    const rows = await TS.api.rows("SELECT input, ground_truth, metadata FROM dataset_items WHERE item_id = ? LIMIT 1", [item.item_id]);
    const row = rows[0] || {};
    return h("div", { class: "io-grid" }, h("div", {}, h("h4", {}, "Input"), TS.jsonView(row.input)),
      h("div", {}, h("h4", {}, "Output"), TS.jsonView(row.ground_truth)));
  }

  function labelQueue(root, queueName, annotator) {
    const ui = { item: null, history: [], index: -1, values: {}, active: 0, comment: "", saved: false, help: false, progress: null };
    const head = h("div", { class: "review-head" });
    const body = h("div", { class: "review-body" });
    root.appendChild(head);
    root.appendChild(body);

    const schemaKey = (i) => (ui.item ? ui.item.schemas[i].name : null);

    function choicesOf(schema) {
      return schema.choices && schema.choices.length ? schema.choices : [];
    }

    function current() {
      return ui.item;
    }

    function drawHead() {
      const item = current();
      const p = item ? item.progress : ui.progress;
      TS.clear(head).appendChild(h("div", {},
        h("div", { class: "crumbs" }, h("a", { href: "#/review", tabindex: "-1" }, "Review"), " / ", queueName),
        h("h1", {}, "Label: " + queueName),
        h("div", { class: "meta", id: "review-progress" }, p ? TS.fmtNum(p.done) + " of " + TS.fmtNum(p.needed) + " labels done · yours: " +
          TS.fmtNum(p.mine) + " · annotator " + annotator : "annotator " + annotator),
        h("div", { class: "muted small keys" }, "keys: 1–9 pick · n/→/Enter next · p/← previous · s skip · c comment · ? help")));
    }

    function schemaPanel(schema, i) {
      const choices = choicesOf(schema);
      const picked = ui.values[schema.name];
      const active = i === ui.active && !ui.saved;
      return h("div", { class: "review-schema" + (active ? " active" : ""), dataset: { schema: schema.name } },
        h("div", {}, h("strong", {}, schema.name), h("span", { class: "muted" }, " · " + schema.kind)),
        schema.rubric ? h("div", { class: "rubric" }, schema.rubric) : null,
        choices.length ? h("div", { class: "choices" }, choices.map((c, j) => h("span", {
          class: "choice" + (picked !== undefined && String(picked) === String(c) ? " picked" : ""), dataset: { value: c } },
        h("kbd", {}, String(j + 1)), " " + c))) : h("input", { class: "numeric-value", type: "number", step: "any",
          placeholder: schema.min_value + "–" + schema.max_value + ", then Enter", value: picked === undefined ? "" : String(picked) }));
    }

    function judgePanel(item) {
      if (item.judge_hidden) {
        return h("div", { id: "review-judge", class: "review-judge hidden-judge" },
          h("p", { class: "muted" }, "The judge's score and reason stay hidden until you label (no anchoring)."));
      }
      if (!item.judge) return h("div", { id: "review-judge", class: "review-judge" }, h("p", { class: "muted" }, "No judge score on this item."));
      const j = item.judge;
      return h("div", { id: "review-judge", class: "review-judge" },
        h("div", {}, "judge ", h("strong", {}, j.scorer_id), " ", TS.scoreBadge(j.score, j.status)),
        j.reason ? h("div", { class: "reason" }, j.reason) : null,
        TS.agreementLine(j.agreement));
    }

    function drawBody(target) {
      const item = current();
      if (!item) {
        TS.clear(body).appendChild(h("div", { class: "empty-state", id: "review-done" }, h("h3", {}, "Nothing left to label in this queue"),
          h("p", {}, "Every item has its labels (or is held by someone else for now). Press p to go back.")));
        return;
      }
      const comment = h("textarea", { id: "review-comment", rows: "2", placeholder: "comment (c to write, Enter to save, Esc to leave)" });
      comment.value = ui.comment;
      comment.addEventListener("input", () => { ui.comment = comment.value; });
      comment.addEventListener("keydown", (ev) => {
        // The page's own keys stay out of the comment box.
        ev.stopPropagation();
        if (ev.key === "Escape") { ev.preventDefault(); comment.blur(); }
        if (ev.key === "Enter" && !ev.shiftKey) {
          ev.preventDefault();
          comment.blur();
          if (ui.saved) save().catch((err) => body.prepend(TS.errorBox(err)));
        }
      });
      const side = h("div", { class: "review-side" },
        h("div", { class: "muted small" }, "item " + (item.position + 1) + " · " + item.item_key),
        item.schemas.map(schemaPanel), comment,
        h("div", { id: "review-status", class: "small" + (ui.saved ? " saved" : " muted") }, ui.saved ? "saved" : "not labelled yet"),
        judgePanel(item),
        ui.help ? h("div", { class: "panel small" }, "1–9 pick the value of the highlighted question; the label is saved once every question has a value. " +
          "n, → or Enter: next item. p or ←: previous item. s: skip. c: comment. ?: this help.") : null);
      const main = target || h("div", { class: "review-target" }, h("p", { class: "muted" }, "Loading…"));
      TS.clear(body).appendChild(h("div", { class: "review-grid", id: "review-item", dataset: { key: item.item_key } }, main, side));
      if (!target) {
        targetView(item).then((node) => { TS.clear(main).appendChild(node); main.dataset.loaded = "1"; })
          .catch((err) => TS.clear(main).appendChild(TS.errorBox(err)));
      }
      const numeric = side.querySelector(".review-schema.active .numeric-value");
      if (numeric) {
        numeric.focus();
        numeric.addEventListener("keydown", (ev) => {
          ev.stopPropagation();
          if (ev.key === "Enter" && numeric.value !== "") { ev.preventDefault(); pick(Number(numeric.value)); }
          if (ev.key === "Escape") numeric.blur();
        });
      }
    }

    function show(item) {
      ui.item = item;
      ui.values = {};
      ui.comment = "";
      ui.saved = false;
      ui.active = 0;
      if (item) {
        for (const l of item.labels || []) {
          ui.values[l.schema] = l.value;
          if (l.comment) ui.comment = l.comment;
        }
        ui.saved = item.schemas.every((s) => ui.values[s.name] !== undefined);
      }
      drawHead();
      drawBody();
    }

    function refresh() {
      // Keep the loaded conversation; redraw only the side panel.
      const main = body.querySelector(".review-target");
      drawHead();
      drawBody(main);
    }

    async function next() {
      if (ui.index < ui.history.length - 1) {
        ui.index += 1;
        show(await TS.api.get("api/queues/" + encodeURIComponent(queueName) + "/item?key=" +
          encodeURIComponent(ui.history[ui.index]) + "&annotator=" + encodeURIComponent(annotator)));
        return;
      }
      const answer = await TS.api.request("api/queues/" + encodeURIComponent(queueName) + "/next", {
        method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ annotator: annotator }) });
      if (answer.item) {
        ui.history.push(answer.item.item_key);
        ui.index = ui.history.length - 1;
      } else {
        ui.index = ui.history.length;
        const q = await TS.api.get("api/queues/" + encodeURIComponent(queueName) + "?annotator=" + encodeURIComponent(annotator));
        ui.progress = { done: q.done, needed: q.needed, mine: q.mine };
      }
      show(answer.item);
    }

    async function previous() {
      if (ui.index <= 0) return;
      ui.index -= 1;
      show(await TS.api.get("api/queues/" + encodeURIComponent(queueName) + "/item?key=" +
        encodeURIComponent(ui.history[ui.index]) + "&annotator=" + encodeURIComponent(annotator)));
    }

    async function skip() {
      const item = current();
      if (!item) return;
      await TS.api.request("api/queues/" + encodeURIComponent(queueName) + "/skip", {
        method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ annotator: annotator, item_key: item.item_key }) });
      ui.history.splice(ui.index, 1);
      ui.index -= 1;
      await next();
    }

    async function save() {
      const item = current();
      const labels = item.schemas.map((s) => {
        const label = { schema: s.name, value: ui.values[s.name], annotator: annotator, queue: queueName, target_type: item.target_type };
        for (const k of ["trace_id", "span_id", "session_id", "item_id"]) if (item[k]) label[k] = item[k];
        if (ui.comment.trim()) label.comment = ui.comment.trim();
        return label;
      });
      await TS.api.request("api/labels", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(labels) });
      const fresh = await TS.api.get("api/queues/" + encodeURIComponent(queueName) + "/item?key=" +
        encodeURIComponent(item.item_key) + "&annotator=" + encodeURIComponent(annotator));
      ui.item = fresh;
      ui.saved = true;
      refresh();
    }

    function pick(value) {
      const item = current();
      if (!item) return;
      const name = schemaKey(ui.active);
      ui.values[name] = value;
      const missing = item.schemas.findIndex((s) => ui.values[s.name] === undefined);
      if (missing === -1) {
        save().catch((err) => body.prepend(TS.errorBox(err)));
      } else {
        ui.active = missing;
        refresh();
      }
    }

    function onKey(ev) {
      if (!root.isConnected) { document.removeEventListener("keydown", onKey); return; }
      const el = document.activeElement;
      if (el && (el.tagName === "TEXTAREA" || el.tagName === "INPUT" || el.tagName === "SELECT")) return;
      if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
      const item = current();
      const run = (promise) => { ev.preventDefault(); promise.catch((err) => body.prepend(TS.errorBox(err))); };
      if (/^[1-9]$/.test(ev.key) && item) {
        const schema = item.schemas[ui.active];
        const choices = choicesOf(schema);
        const index = Number(ev.key) - 1;
        if (index < choices.length) {
          ev.preventDefault();
          // A re-pick after saving starts the item's labels over from the first question.
          if (ui.saved) { ui.saved = false; ui.active = 0; ui.values = {}; }
          const choice = choices[index];
          pick(schema.kind === "numeric" ? Number(choice) : schema.kind === "boolean" ? choice === "true" : choice);
        }
      } else if (ev.key === "n" || ev.key === "ArrowRight" || ev.key === "Enter") {
        run(next());
      } else if (ev.key === "p" || ev.key === "ArrowLeft") {
        run(previous());
      } else if (ev.key === "s") {
        run(skip());
      } else if (ev.key === "c") {
        const box = document.getElementById("review-comment");
        if (box) { ev.preventDefault(); box.focus(); }
      } else if (ev.key === "?") {
        ui.help = !ui.help;
        refresh();
      }
    }

    document.addEventListener("keydown", onKey);
    return next();
  }

  TS.pages.review = async function review(root, route) {
    if (route.path.length < 2) return queues(root);
    const queueName = route.path[1];
    const annotator = localStorage.getItem(ANNOTATOR);
    if (annotator) return labelQueue(root, queueName, annotator);
    annotatorForm(root, (name) => { TS.clear(root); labelQueue(root, queueName, name).catch((err) => root.appendChild(TS.errorBox(err))); });
  };
})();
