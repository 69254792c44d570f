/* tracescore dashboard: Datasets (#/datasets, #/datasets/<name>?version=N) and the trace page's
 * "Add to dataset" action (TS.addToDataset). Reads GET api/datasets[/<name>]; writes go through
 * POST api/datasets and POST api/datasets/<name>/items with from_trace_ids.
 */
(function () {
  "use strict";
  const TS = window.TS;
  const h = TS.h;

  function preview(value, limit) {
    let text = value;
    if (Array.isArray(value)) {
      // a conversation: the new turn matters most; say how much history comes before it
      const one = (m) => (m && typeof m === "object" ? (m.role ? m.role + ": " : "") + (m.content || "") : String(m));
      text = value.length > 1 ? "(" + (value.length - 1) + " earlier) " + one(value[value.length - 1])
        : value.map(one).join("");
    } else if (value !== null && typeof value === "object") {
      text = JSON.stringify(value);
    }
    text = text === null || text === undefined ? "" : String(text);
    limit = limit || 120;
    return text.length > limit ? text.slice(0, limit - 1) + "…" : text;
  }
  TS.preview = preview;

  function datasetLink(name, version) {
    return TS.link("datasets/" + encodeURIComponent(name), version ? { version: version } : undefined);
  }

  async function listPage(root) {
    const body = await TS.api.get("api/datasets");
    root.appendChild(h("h1", {}, "Datasets"));
    if (!body.datasets.length) {
      root.appendChild(h("div", { class: "empty-state" }, h("h3", {}, "No datasets yet"),
        h("p", {}, "Open a trace and use “Add to dataset”, or run `tracescore datasets create NAME --from-jsonl items.jsonl`.")));
      return;
    }
    root.appendChild(TS.panel(null, h("div", { id: "dataset-list" }, TS.table([
      { label: "name", value: (d) => h("a", { href: datasetLink(d.name) }, d.name) },
      { label: "version", class: "num", value: (d) => String(d.current_version) },
      { label: "items", class: "num", value: (d) => TS.fmtNum(d.item_count) },
      { label: "description", value: (d) => d.description || "" },
      { label: "created", value: (d) => TS.fmtTime(d.created_at) },
      { label: "", value: (d) => h("a", { href: TS.link("experiments", { dataset: d.name }) }, "experiments") },
    ], body.datasets))));
  }

  async function datasetPage(root, route) {
    const name = route.path[1];
    const version = route.query.get("version");
    const ds = await TS.api.get("api/datasets/" + encodeURIComponent(name) + (version ? "?version=" + encodeURIComponent(version) : ""));
    root.appendChild(h("div", { class: "crumbs" }, h("a", { href: "#/datasets" }, "Datasets"), " / ", ds.name));
    root.appendChild(h("h1", { id: "dataset-title" }, ds.name + " @ " + ds.version));
    const versions = [];
    for (let v = ds.current_version; v >= 1; v -= 1) versions.push(v);
    const select = h("select", { id: "version-select", onchange: () => route.setQuery({ version: select.value }) },
      versions.map((v) => h("option", { value: String(v) }, "version " + v + (v === ds.current_version ? " (newest)" : ""))));
    select.value = String(ds.version);
    root.appendChild(h("div", { class: "meta" }, ds.description || "", " ", h("label", {}, "Version ", select), " ",
      h("a", { href: TS.link("experiments", { dataset: ds.name }) }, "Experiments on this dataset")));
    if (!ds.items.length) {
      root.appendChild(h("p", { class: "muted" }, "Version " + ds.version + " holds no items."));
      return;
    }
    root.appendChild(TS.panel(ds.items.length + (ds.items.length === 1 ? " item" : " items"), h("div", { id: "dataset-items" }, TS.table([
      { label: "item", value: (i) => h("span", { class: "mono small" }, TS.shortId(i.item_id)) },
      { label: "added in", class: "num", value: (i) => "v" + i.version_added },
      { label: "input", value: (i) => preview(i.input) },
      { label: "expected output", value: (i) => preview(i.ground_truth) },
      { label: "source trace", value: (i) => (i.source_trace_id ? h("a", { class: "mono", href: TS.traceLink(i.source_trace_id) }, TS.shortId(i.source_trace_id)) : "") },
    ], ds.items, { compact: true }))));
  }

  TS.pages.datasets = function datasets(root, route) {
    return route.path.length > 1 ? datasetPage(root, route) : listPage(root);
  };

  /** The trace page's "Add to dataset" button: pick or create a dataset, edit the expected output. */
  TS.addToDataset = function addToDataset(traceId) {
    const holder = h("div", { class: "add-to-dataset" });
    const button = h("button", { type: "button", id: "add-to-dataset", onclick: () => open() }, "Add to dataset");
    holder.appendChild(button);
    async function open() {
      button.disabled = true;
      const form = h("form", { id: "add-to-dataset-form", class: "panel" }, h("p", { class: "muted" }, "Loading…"));
      holder.appendChild(form);
      try {
        const [list, made] = await Promise.all([
          TS.api.get("api/datasets"),
          TS.api.request("api/datasets/items-from-traces", { method: "POST", headers: { "Content-Type": "application/json" },
            body: JSON.stringify({ trace_ids: [traceId] }) }),
        ]);
        const item = made.items[0] || {};
        const pick = h("select", { id: "dataset-pick" },
          list.datasets.map((d) => h("option", { value: d.name }, d.name + " (v" + d.current_version + ")")),
          h("option", { value: "" }, "＋ new dataset…"));
        const newName = h("input", { id: "dataset-new-name", placeholder: "new dataset name", hidden: list.datasets.length > 0 });
        pick.addEventListener("change", () => { newName.hidden = pick.value !== ""; });
        if (!list.datasets.length) pick.value = "";
        const expected = h("textarea", { id: "dataset-expected", rows: 3, cols: 80 });
        expected.value = typeof item.ground_truth === "string" ? item.ground_truth : JSON.stringify(item.ground_truth || "");
        const status = h("div", { id: "add-to-dataset-status" });
        TS.clear(form);
        TS.append(form, [
          h("label", {}, "Dataset ", pick, " ", newName),
          h("div", { class: "muted small" }, "Input: " + preview(item.input, 200)),
          h("label", {}, "Expected output (edit it when the agent's answer was wrong)", h("br"), expected),
          h("div", {}, h("button", { type: "submit", id: "dataset-save" }, "Add"), " ",
            h("button", { type: "button", onclick: () => { form.remove(); button.disabled = false; } }, "Cancel")),
          status,
        ]);
        form.addEventListener("submit", async (ev) => {
          ev.preventDefault();
          const name = pick.value || newName.value.trim();
          if (!name) { TS.clear(status).appendChild(TS.errorBox(new Error("Give the new dataset a name."), { quiet: true })); return; }
          try {
            if (!pick.value) {
              await TS.api.request("api/datasets", { method: "POST", headers: { "Content-Type": "application/json" },
                body: JSON.stringify({ name: name }) });
            }
            const gt = {};
            gt[traceId] = expected.value;
            const ds = await TS.api.request("api/datasets/" + encodeURIComponent(name) + "/items", { method: "POST",
              headers: { "Content-Type": "application/json" }, body: JSON.stringify({ from_trace_ids: [traceId], ground_truth: gt }) });
            TS.clear(form).appendChild(h("p", { id: "add-to-dataset-done" }, "Added to ",
              h("a", { href: datasetLink(ds.name, ds.version) }, ds.name + " version " + ds.version), "."));
            button.disabled = false;
          } catch (err) {
            TS.clear(status).appendChild(TS.errorBox(err, { quiet: true }));
          }
        });
      } catch (err) {
        TS.clear(form).appendChild(TS.errorBox(err));
      }
    }
    return holder;
  };
})();
