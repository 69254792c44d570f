/* tracescore dashboard: shared helpers (DOM builder, API client, formatting, global filters).
 *
 * Every page reads data through the server's JSON API: POST api/sql for aggregates (always with a
 * LIMIT, so a database with 100,000 traces never ships everything to the browser), and the
 * api/traces routes for one trace. Text from traces is always inserted as text, never as HTML.
 */
(function () {
  "use strict";
  const TS = (window.TS = window.TS || {});
  TS.pages = {};

  // ---- DOM ---------------------------------------------------------------------------------
  /** h("div", {class: "x", onclick: fn}, "text", child, [more]) → an element. */
  TS.h = function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    if (attrs) {
      for (const [key, value] of Object.entries(attrs)) {
        if (value === null || value === undefined || value === false) continue;
        if (key.startsWith("on") && typeof value === "function") {
          el.addEventListener(key.slice(2), value);
        } else if (key === "class") {
          el.className = value;
        } else if (key === "dataset") {
          Object.assign(el.dataset, value);
        } else if (key === "style" && typeof value === "object") {
          Object.assign(el.style, value);
        } else if (key === "value") {
          el.value = value;
        } else {
          el.setAttribute(key, value === true ? "" : String(value));
        }
      }
    }
    TS.append(el, children);
    return el;
  };

  TS.append = function append(el, children) {
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      el.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return el;
  };

  TS.clear = function clear(el) {
    while (el.firstChild) el.removeChild(el.firstChild);
    return el;
  };

  // ---- API ---------------------------------------------------------------------------------
  const KEY_STORAGE = "tracescore.apiKey";

  class ApiError extends Error {
    constructor(message, status) {
      super(message);
      this.name = "ApiError";
      this.status = status;
    }
  }
  TS.ApiError = ApiError;

  function errorMessage(body, status) {
    if (body && typeof body === "object") {
      const err = body.error;
      if (err && typeof err === "object" && err.message) return err.message;
      if (typeof err === "string") return err;
      if (typeof body.message === "string") return body.message;
      if (typeof body.detail === "string") return body.detail;
      if (Array.isArray(body.detail)) return body.detail.map((d) => d.msg || String(d)).join("; ");
    }
    return "The server answered HTTP " + status + ".";
  }

  TS.api = {
    key() {
      return localStorage.getItem(KEY_STORAGE) || "";
    },
    setKey(key) {
      if (key) localStorage.setItem(KEY_STORAGE, key);
      else localStorage.removeItem(KEY_STORAGE);
    },
    async request(path, options) {
      const opts = Object.assign({ headers: {} }, options || {});
      const key = TS.api.key();
      if (key) opts.headers.Authorization = "Bearer " + key;
      const response = await fetch(path, opts);
      if (response.status === 401) {
        TS.showAuthBar();
        throw new ApiError("This server needs an API key: enter it in the bar at the top.", 401);
      }
      const type = response.headers.get("content-type") || "";
      const body = type.includes("json") ? await response.json() : await response.text();
      if (!response.ok) throw new ApiError(errorMessage(body, response.status), response.status);
      return body;
    },
    get(path) {
      return TS.api.request(path);
    },
    /** POST api/sql → {columns, rows, truncated}. */
    sql(sql, params) {
      return TS.api.request("api/sql", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ sql: sql, params: params || [] }),
      });
    },
    /** The same, as a list of objects keyed by column name. */
    async rows(sql, params) {
      const result = await TS.api.sql(sql, params);
      return result.rows.map((row) => {
        const obj = {};
        result.columns.forEach((col, i) => (obj[col] = row[i]));
        return obj;
      });
    },
    /** GET /metrics, parsed to {name: value} for samples without labels (gauges). */
    async metrics() {
      const text = await TS.api.request("metrics");
      const out = {};
      for (const line of String(text).split("\n")) {
        const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)\s+([-+0-9.eEInfa]+)\s*$/.exec(line);
        if (m) out[m[1]] = Number(m[2]);
      }
      return out;
    },
  };

  TS.showAuthBar = function showAuthBar() {
    document.getElementById("auth-bar").hidden = false;
  };

  // ---- global filters ----------------------------------------------------------------------
  const RANGES = {
    "1h": { ms: 3600e3, bucket: "1 minute", bucketMs: 60e3 },
    "24h": { ms: 86400e3, bucket: "1 hour", bucketMs: 3600e3 },
    "7d": { ms: 7 * 86400e3, bucket: "6 hours", bucketMs: 6 * 3600e3 },
    "30d": { ms: 30 * 86400e3, bucket: "1 day", bucketMs: 86400e3 },
    all: { ms: null, bucket: "1 day", bucketMs: 86400e3 },
  };
  TS.RANGES = RANGES;

  TS.state = {
    project: localStorage.getItem("tracescore.project") || "",
    range: RANGES[localStorage.getItem("tracescore.range")] ? localStorage.getItem("tracescore.range") : "24h",
    // Times are shown in UTC (as the CLI and SQL show them) or in the browser's zone.
    tz: localStorage.getItem("tracescore.tz") === "local" ? "local" : "utc",
  };

  TS.setFilter = function setFilter(name, value) {
    TS.state[name] = value;
    localStorage.setItem("tracescore." + name, value);
  };

  /** The lower time bound of the selected range, as a naive UTC timestamp string for SQL. */
  TS.sinceParam = function sinceParam() {
    const range = RANGES[TS.state.range];
    const ms = range.ms === null ? 0 : Date.now() - range.ms;
    return new Date(ms).toISOString().replace("Z", "").replace("T", " ");
  };

  const BUCKETS = [["1 minute", 60e3], ["5 minutes", 300e3], ["15 minutes", 900e3], ["1 hour", 3600e3],
    ["6 hours", 6 * 3600e3], ["1 day", 86400e3], ["7 days", 7 * 86400e3]];

  /** The charts' time window {start, end, bucket, bucketMs} for the selected range, fitted to
   * the data in it (first and last span or score), with at most ~60 buckets: fresh data in the
   * 24-hour range fills the chart in minute buckets instead of one bar at the right edge. A
   * fixed range never grows past its own span or its default bucket. */
  TS.resolveWindow = async function resolveWindow() {
    const range = RANGES[TS.state.range];
    const since = TS.sinceParam();
    const rows = await TS.api.rows(
      "SELECT least(s.lo, c.lo) AS lo, greatest(s.hi, c.hi) AS hi FROM " +
      "(SELECT epoch_ms(CAST(min(start_time) AS TIMESTAMP)) AS lo, epoch_ms(CAST(max(start_time) AS TIMESTAMP)) AS hi " +
      "FROM spans WHERE start_time >= CAST(? AS TIMESTAMP)) AS s, " +
      "(SELECT epoch_ms(min(created_at)) AS lo, epoch_ms(max(created_at)) AS hi FROM scores " +
      "WHERE created_at >= CAST(? AS TIMESTAMP)) AS c", [since, since]);
    const found = rows.length && rows[0].lo !== null;
    const now = Date.now();
    if (range.ms !== null) {
      const rangeStart = now - range.ms;
      const lo = found ? Math.max(Number(rows[0].lo), rangeStart) : rangeStart;
      const pick = BUCKETS.find(([, ms]) => ms <= range.bucketMs && (now - lo) / ms <= 60) ||
        [range.bucket, range.bucketMs];
      const start = Math.max(rangeStart, Math.floor(lo / pick[1]) * pick[1]);
      TS.window = { start: start, end: now, bucket: pick[0], bucketMs: pick[1] };
      return TS.window;
    }
    const lo = found ? Number(rows[0].lo) : now - 86400e3;
    const hi = found && rows[0].hi !== null ? Number(rows[0].hi) : now;
    const pick = BUCKETS.find(([, ms]) => (hi - lo) / ms <= 60) || BUCKETS[BUCKETS.length - 1];
    const start = Math.floor(lo / pick[1]) * pick[1];
    TS.window = { start: start, end: Math.floor(hi / pick[1]) * pick[1] + pick[1], bucket: pick[0], bucketMs: pick[1] };
    return TS.window;
  };

  /** The time-bucket width (a fixed SQL interval literal) of the current window. */
  TS.bucket = function bucket() {
    return (TS.window || RANGES[TS.state.range]).bucket;
  };

  /** Chart options for per-day bars over the current window. */
  TS.dayOpts = function dayOpts(extra) {
    const day = 86400e3;
    const w = TS.window || { start: Date.now() - day, end: Date.now() };
    return Object.assign({ kind: "bars", xMin: Math.floor(w.start / day) * day, xMax: Math.floor((w.end - 1) / day) * day + day,
      bucketMs: day }, extra || {});
  };

  /** Chart options placing a time series on the current window's x axis. */
  TS.windowOpts = function windowOpts(extra) {
    const w = TS.window || { start: undefined, end: undefined, bucketMs: RANGES[TS.state.range].bucketMs };
    return Object.assign({ xMin: w.start, xMax: w.end, bucketMs: w.bucketMs }, extra || {});
  };

  /** " AND <col> = ?" plus its parameter when a project is selected. */
  TS.projectClause = function projectClause(column, params) {
    if (!TS.state.project) return "";
    params.push(TS.state.project);
    return " AND " + column + " = ?";
  };

  // ---- formatting --------------------------------------------------------------------------
  const pad = (n) => String(n).padStart(2, "0");

  /** Milliseconds since the epoch (number), an ISO string or a Date → a Date, or null. */
  TS.toDate = function toDate(value) {
    if (value === null || value === undefined || value === "") return null;
    if (value instanceof Date) return value;
    if (typeof value === "number") return new Date(value);
    let text = String(value);
    if (/^\d{4}-\d\d-\d\d[ T]\d\d:\d\d/.test(text) && !/[zZ]|[+-]\d\d:?\d\d$/.test(text)) {
      text = text.replace(" ", "T") + "Z"; // naive timestamps from the store are UTC
    }
    const d = new Date(text);
    return isNaN(d.getTime()) ? null : d;
  };

  /** The parts of a time (ms since the epoch) in the chosen zone (UTC or the browser's). */
  TS.zoned = function zoned(ms) {
    const d = new Date(ms);
    if (TS.state.tz === "local") {
      return { year: d.getFullYear(), month: d.getMonth() + 1, day: d.getDate(), hours: d.getHours(),
        minutes: d.getMinutes(), seconds: d.getSeconds() };
    }
    return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hours: d.getUTCHours(),
      minutes: d.getUTCMinutes(), seconds: d.getUTCSeconds() };
  };

  /** The chosen zone's label: "UTC", or the browser's zone ("local (Europe/Paris)"). */
  TS.zoneName = function zoneName() {
    if (TS.state.tz !== "local") return "UTC";
    let name = "";
    try {
      name = Intl.DateTimeFormat().resolvedOptions().timeZone || "";
    } catch (e) {
      name = "";
    }
    return name ? "local (" + name + ")" : "local";
  };

  /** A time as "2026-12-01 09:30:00 UTC" (or the local zone's time, marked "local"). */
  TS.fmtTime = function fmtTime(value) {
    const d = TS.toDate(value);
    if (!d) return "—";
    const z = TS.zoned(d.getTime());
    return (
      z.year + "-" + pad(z.month) + "-" + pad(z.day) + " " +
      pad(z.hours) + ":" + pad(z.minutes) + ":" + pad(z.seconds) + (TS.state.tz === "local" ? " local" : " UTC")
    );
  };

  TS.fmtDuration = function fmtDuration(ms) {
    if (ms === null || ms === undefined || isNaN(ms)) return "—";
    ms = Number(ms);
    if (ms === 0) return "0";
    if (ms < 1) return ms.toFixed(2) + " ms";
    if (ms < 1000) return Math.round(ms) + " ms";
    if (ms < 60e3) return (ms / 1000).toFixed(2) + " s";
    if (ms < 3600e3) return (ms / 60e3).toFixed(1) + " min";
    return (ms / 3600e3).toFixed(1) + " h";
  };

  TS.fmtNum = function fmtNum(value) {
    if (value === null || value === undefined || value === "") return "—";
    const n = Number(value);
    if (!isFinite(n)) return String(value);
    if (Math.abs(n) >= 1e9) return (n / 1e9).toFixed(1) + "B";
    if (Math.abs(n) >= 1e6) return (n / 1e6).toFixed(1) + "M";
    if (Math.abs(n) >= 1e4) return (n / 1e3).toFixed(1) + "k";
    return Number.isInteger(n) ? String(n) : n.toFixed(2);
  };

  /** "1 error", "2 errors": a count and its noun, singular for one. */
  TS.plural = function plural(count, noun) {
    return count + " " + noun + (Number(count) === 1 ? "" : "s");
  };

  TS.fmtCost = function fmtCost(value) {
    if (value === null || value === undefined) return "—";
    const n = Number(value);
    if (n === 0) return "$0";
    if (Math.abs(n) < 0.01) return "$" + Number(n.toPrecision(2));
    if (Math.abs(n) < 1) return "$" + Number(n.toFixed(4));
    return "$" + n.toFixed(2);
  };

  TS.fmtScore = function fmtScore(value) {
    if (value === null || value === undefined) return "—";
    const n = Number(value);
    return Number.isInteger(n) ? String(n) : n.toFixed(3);
  };

  TS.fmtPct = function fmtPct(part, total) {
    if (!total) return "—";
    return ((100 * Number(part)) / Number(total)).toFixed(1) + "%";
  };

  /** A JSON column value (string or already parsed) → a JS value; text that is not JSON stays text. */
  TS.parseJSON = function parseJSON(value) {
    if (typeof value !== "string") return value;
    const t = value.trim();
    if (!(t.startsWith("{") || t.startsWith("[") || t.startsWith('"'))) return value;
    try {
      return JSON.parse(t);
    } catch (e) {
      return value;
    }
  };

  TS.shortId = function shortId(id) {
    return id ? String(id).slice(0, 8) : "—";
  };

  /** Build a hash link: TS.link("traces", {service: "x"}) → "#/traces?service=x". */
  TS.link = function link(path, query) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query || {})) {
      if (v !== null && v !== undefined && v !== "") q.set(k, v);
    }
    const qs = q.toString();
    return "#/" + path + (qs ? "?" + qs : "");
  };

  TS.traceLink = function traceLink(traceId, query) {
    return TS.link("traces/" + encodeURIComponent(traceId), query);
  };
})();
