/* tracescore dashboard: hash router and the global project / time-range selectors.
 *
 * Routes: #/overview, #/traces?…, #/traces/<trace_id>?tab=&span=, #/scorers, #/scorers/<id>, #/sql?q=
 */
(function () {
  "use strict";
  const TS = window.TS;

  function parseHash() {
    const raw = window.location.hash.replace(/^#\/?/, "");
    const [pathPart, queryPart] = raw.split("?");
    const path = pathPart.split("/").filter(Boolean).map(decodeURIComponent);
    return { path: path.length ? path : ["overview"], query: new URLSearchParams(queryPart || "") };
  }

  /** Replace the current route's query (keeps the path); pushes a history entry. */
  function navigateQuery(path, updates) {
    const current = parseHash();
    const q = current.query;
    for (const [k, v] of Object.entries(updates)) {
      if (v === null || v === undefined || v === "") q.delete(k);
      else q.set(k, v);
    }
    const qs = q.toString();
    window.location.hash = "#/" + path.map(encodeURIComponent).join("/") + (qs ? "?" + qs : "");
  }

  let renderCount = 0;

  function render() {
    const route = parseHash();
    const name = route.path[0];
    const page = TS.pages[name];
    const main = document.getElementById("main");
    renderCount += 1;
    document.querySelectorAll(".nav a").forEach((a) => {
      a.classList.toggle("active", a.dataset.page === name);
    });
    TS.clear(main);
    if (!page) {
      main.appendChild(TS.h("p", {}, "No such page. ", TS.h("a", { href: "#/overview" }, "Go to the overview.")));
      return;
    }
    route.setQuery = (updates) => navigateQuery(route.path, updates);
    route.renderId = renderCount;
    document.title = "tracescore · " + name;
    Promise.resolve()
      .then(() => page(main, route))
      .catch((err) => {
        TS.clear(main).appendChild(TS.errorBox(err));
      })
      .then(() => {
        main.dataset.rendered = String(route.renderId);
      });
  }
  TS.render = render;

  async function loadProjects() {
    const select = document.getElementById("project-select");
    try {
      const rows = await TS.api.rows("SELECT DISTINCT project FROM traces WHERE project IS NOT NULL ORDER BY 1 LIMIT 200");
      for (const r of rows) {
        select.appendChild(TS.h("option", { value: r.project }, r.project));
      }
    } catch (err) {
      console.warn("tracescore dashboard: could not list projects:", err.message);
    }
    if (TS.state.project && ![...select.options].some((o) => o.value === TS.state.project)) {
      select.appendChild(TS.h("option", { value: TS.state.project }, TS.state.project));
    }
    select.value = TS.state.project;
  }

  function boot() {
    const project = document.getElementById("project-select");
    const range = document.getElementById("range-select");
    range.value = TS.state.range;
    project.addEventListener("change", () => {
      TS.setFilter("project", project.value);
      render();
    });
    range.addEventListener("change", () => {
      TS.setFilter("range", range.value);
      render();
    });
    const tz = document.getElementById("tz-select");
    tz.value = TS.state.tz;
    tz.addEventListener("change", () => {
      TS.setFilter("tz", tz.value);
      render();
    });
    document.getElementById("refresh-button").addEventListener("click", render);
    document.getElementById("auth-bar").addEventListener("submit", (ev) => {
      ev.preventDefault();
      TS.api.setKey(document.getElementById("api-key-input").value.trim());
      document.getElementById("auth-bar").hidden = true;
      loadProjects();
      render();
    });
    window.addEventListener("hashchange", render);
    loadProjects();
    render();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", boot);
  else boot();
})();
