/* tracescore dashboard: a small hand-written SVG chart helper (no library, works offline).
 *
 * TS.chart.timeseries(container, {series: [{name, points: [[ms, value], ...]}], kind, yFormat})
 *   kind "line" (default) or "bars"; a hover line shows every series' value at that time.
 * TS.chart.bars(container, {bars: [{label, value, title?}], yFormat})  category bars.
 */
(function () {
  "use strict";
  const TS = window.TS;
  const NS = "http://www.w3.org/2000/svg";
  const PALETTE = ["#2563eb", "#16a34a", "#dc2626", "#9333ea", "#ea580c", "#0891b2", "#ca8a04",
    "#db2777", "#4b5563", "#65a30d"];
  const W = 640;
  const H = 220;
  const M = { top: 12, right: 16, bottom: 26, left: 52 };

  function s(tag, attrs, ...children) {
    const el = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
    for (const c of children.flat()) {
      if (c === null || c === undefined) continue;
      el.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return el;
  }

  /** About `count` round ticks covering [lo, hi]; whole-number steps when `integer` (counts). */
  function niceTicks(lo, hi, count, integer) {
    if (!(hi > lo)) {
      hi = lo + 1;
    }
    const raw = (hi - lo) / count;
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    let step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((x) => raw <= x) || 10 * mag;
    if (integer) step = Math.max(1, Math.round(step));
    const ticks = [];
    const first = Math.floor(lo / step + 1e-9) * step;
    for (let v = first; v < hi + step - step * 1e-9; v += step) ticks.push(Number(v.toPrecision(12)));
    return ticks;
  }

  function timeLabel(ms, spanMs) {
    const d = TS.zoned(ms);
    const p = (n) => String(n).padStart(2, "0");
    if (spanMs <= 2 * 86400e3) return p(d.hours) + ":" + p(d.minutes);
    return p(d.month) + "-" + p(d.day) + (spanMs <= 10 * 86400e3 ? " " + p(d.hours) + "h" : "");
  }

  /** Tick labels that differ from each other: when the formatter rounds two ticks to the same
   * text (0.25% and 0.5% as "0%"), the ticks are printed with as many digits as they need. */
  function tickLabels(ticks, fmt) {
    const labels = ticks.map(fmt);
    if (new Set(labels).size === labels.length) return labels;
    return ticks.map((t) => String(Number(t.toPrecision(4))));
  }

  function empty(container, text) {
    TS.clear(container);
    container.appendChild(TS.h("div", { class: "chart-empty" }, text || "No data in this range."));
  }

  function legend(series) {
    if (series.length < 2 && !(series[0] && series[0].name)) return null;
    return TS.h("div", { class: "legend" },
      series.map((sr, i) => TS.h("span", { class: "legend-item" },
        TS.h("span", { class: "swatch", style: { background: sr.color || PALETTE[i % PALETTE.length] } }),
        sr.name)));
  }

  function timeseries(container, opts) {
    const series = (opts.series || []).filter((sr) => sr.points && sr.points.length);
    if (!series.length) return empty(container, opts.emptyText);
    const fmt = opts.yFormat || TS.fmtNum;
    const bars = opts.kind === "bars";
    const xs = series.flatMap((sr) => sr.points.map((p) => p[0]));
    const ys = series.flatMap((sr) => sr.points.map((p) => p[1])).filter((v) => v !== null && isFinite(v));
    const barMs = opts.bucketMs || 0;
    let x0 = opts.xMin !== undefined ? Math.min(opts.xMin, ...xs) : Math.min(...xs);
    let x1 = opts.xMax !== undefined ? Math.max(opts.xMax, ...xs.map((x) => x + (bars ? barMs : 0))) : Math.max(...xs);
    if (opts.xMax === undefined && bars) x1 += barMs;
    if (x1 <= x0) {
      x0 -= barMs || 1;
      x1 += barMs || 1;
    }
    const yLo = opts.yMin !== undefined ? opts.yMin : Math.min(0, ...ys);
    let yHi = opts.yMax !== undefined ? opts.yMax : Math.max(...ys, 0);
    if (yHi <= yLo) yHi = yLo + 1;
    // Counts (whole numbers with the default formatter) get whole-number ticks.
    const integer = opts.integer !== undefined ? opts.integer : !opts.yFormat && ys.every(Number.isInteger);
    const yTicks = niceTicks(yLo, yHi, 4, integer);
    yHi = Math.max(yHi, yTicks[yTicks.length - 1]);
    const pw = W - M.left - M.right;
    const ph = H - M.top - M.bottom;
    const X = (v) => M.left + ((v - x0) / (x1 - x0)) * pw;
    const Y = (v) => M.top + ph - ((v - yLo) / (yHi - yLo)) * ph;

    const svg = s("svg", { viewBox: "0 0 " + W + " " + H, class: "chart", role: "img" });
    const yLabels = tickLabels(yTicks, fmt);
    yTicks.forEach((t, i) => {
      svg.appendChild(s("line", { x1: M.left, x2: W - M.right, y1: Y(t), y2: Y(t), class: "grid" }));
      svg.appendChild(s("text", { x: M.left - 6, y: Y(t) + 4, class: "tick y-tick", "text-anchor": "end" }, yLabels[i]));
    });
    const days = bars && barMs >= 86400e3;
    if (days) {
      // Day bars: one date label under each bar (UTC days, as bucketed), thinned when crowded.
      const slots = Math.round((x1 - x0) / barMs);
      const every = Math.max(1, Math.ceil(slots / 10));
      for (let k = 0; k < slots; k += every) {
        const v = x0 + k * barMs;
        const d = new Date(v);
        const label = String(d.getUTCMonth() + 1).padStart(2, "0") + "-" + String(d.getUTCDate()).padStart(2, "0");
        svg.appendChild(s("text", { x: X(v + barMs / 2), y: H - 8, class: "tick x-tick", "text-anchor": "middle" }, label));
      }
    } else {
      const xTickCount = 5;
      for (let i = 0; i <= xTickCount; i++) {
        const v = x0 + ((x1 - x0) * i) / xTickCount;
        const anchor = i === 0 ? "start" : i === xTickCount ? "end" : "middle";
        svg.appendChild(s("text", { x: X(v), y: H - 8, class: "tick x-tick", "text-anchor": anchor }, timeLabel(v, x1 - x0)));
      }
    }
    svg.appendChild(s("text", { x: W - M.right, y: M.top - 2, class: "tick zone", "text-anchor": "end" },
      days ? "days in UTC" : TS.zoneName()));
    const n = series.length;
    series.forEach((sr, i) => {
      const color = sr.color || PALETTE[i % PALETTE.length];
      const pts = sr.points.filter((p) => p[1] !== null && isFinite(p[1])).sort((a, b) => a[0] - b[0]);
      const mid = bars ? 0 : barMs / 2;
      // Earlier series are drawn wider, so points and lines at the same value stay visible as
      // rings and outlines under the later ones.
      const under = Math.min(n - 1 - i, 4);
      if (bars) {
        const slot = Math.max(1, (barMs / (x1 - x0)) * pw);
        const bw = Math.max(1, (slot * 0.8) / series.length);
        for (const p of pts) {
          const x = X(p[0]) + slot * 0.1 + i * bw;
          const y = Y(Math.max(p[1], 0));
          svg.appendChild(s("rect", { x: x, y: y, width: bw, height: Math.max(0, Y(0) - y), fill: color },
            s("title", {}, (sr.name ? sr.name + ": " : "") + fmt(p[1]) + " at " + TS.fmtTime(p[0]))));
        }
      } else {
        const d = pts.map((p, j) => (j ? "L" : "M") + X(p[0] + mid).toFixed(1) + "," + Y(p[1]).toFixed(1)).join("");
        svg.appendChild(s("path", { d: d, class: "line", stroke: color, "stroke-width": 1.5 + 1.5 * under }));
        if (pts.length < 60) {
          for (const p of pts) {
            svg.appendChild(s("circle", { cx: X(p[0] + mid), cy: Y(p[1]), r: 2.5 + 1.8 * under, fill: color },
              s("title", {}, (sr.name ? sr.name + ": " : "") + fmt(p[1]) + " at " + TS.fmtTime(p[0]))));
          }
        }
      }
    });

    // Hover: a vertical rule and a tooltip with every series' value at the nearest time.
    const rule = s("line", { y1: M.top, y2: M.top + ph, class: "hover-rule", visibility: "hidden" });
    svg.appendChild(rule);
    const tip = TS.h("div", { class: "chart-tip", hidden: true });
    const allTimes = Array.from(new Set(xs)).sort((a, b) => a - b);
    svg.addEventListener("mousemove", (ev) => {
      const box = svg.getBoundingClientRect();
      const vx = ((ev.clientX - box.left) / box.width) * W;
      const t = x0 + ((vx - M.left) / pw) * (x1 - x0);
      let best = allTimes[0];
      for (const v of allTimes) if (Math.abs(v - t) < Math.abs(best - t)) best = v;
      const cx = X(best + barMs / 2);
      rule.setAttribute("x1", cx);
      rule.setAttribute("x2", cx);
      rule.setAttribute("visibility", "visible");
      TS.clear(tip);
      tip.appendChild(TS.h("div", { class: "tip-time" }, TS.fmtTime(best)));
      series.forEach((sr, i) => {
        const p = sr.points.find((q) => q[0] === best);
        if (p) {
          tip.appendChild(TS.h("div", {},
            TS.h("span", { class: "swatch", style: { background: sr.color || PALETTE[i % PALETTE.length] } }),
            (sr.name ? sr.name + ": " : "") + fmt(p[1])));
        }
      });
      tip.hidden = false;
      tip.style.left = Math.min(box.width - 160, (cx / W) * box.width + 12) + "px";
    });
    svg.addEventListener("mouseleave", () => {
      rule.setAttribute("visibility", "hidden");
      tip.hidden = true;
    });

    TS.clear(container);
    container.appendChild(TS.h("div", { class: "chart-wrap" }, svg, tip));
    const lg = legend(series);
    if (lg) container.appendChild(lg);
  }

  function bars(container, opts) {
    const items = opts.bars || [];
    if (!items.length || items.every((b) => !b.value)) return empty(container, opts.emptyText);
    const fmt = opts.yFormat || TS.fmtNum;
    const yHiRaw = Math.max(...items.map((b) => Number(b.value) || 0), 1e-9);
    const integer = opts.integer !== undefined ? opts.integer
      : !opts.yFormat && items.every((b) => Number.isInteger(Number(b.value) || 0));
    const yTicks = niceTicks(0, yHiRaw, 4, integer);
    const yHi = Math.max(yHiRaw, yTicks[yTicks.length - 1]);
    const pw = W - M.left - M.right;
    const ph = H - M.top - M.bottom;
    const Y = (v) => M.top + ph - (v / yHi) * ph;
    const slot = pw / items.length;
    const svg = s("svg", { viewBox: "0 0 " + W + " " + H, class: "chart", role: "img" });
    const yLabels = tickLabels(yTicks, fmt);
    yTicks.forEach((t, i) => {
      svg.appendChild(s("line", { x1: M.left, x2: W - M.right, y1: Y(t), y2: Y(t), class: "grid" }));
      svg.appendChild(s("text", { x: M.left - 6, y: Y(t) + 4, class: "tick y-tick", "text-anchor": "end" }, yLabels[i]));
    });
    items.forEach((b, i) => {
      const x = M.left + i * slot + slot * 0.1;
      const y = Y(Number(b.value) || 0);
      svg.appendChild(s("rect", { x: x, y: y, width: slot * 0.8, height: Math.max(0, Y(0) - y),
        fill: b.color || opts.color || PALETTE[0] }, s("title", {}, b.title || b.label + ": " + fmt(b.value))));
      if (items.length <= 16) {
        svg.appendChild(s("text", { x: x + slot * 0.4, y: H - 8, class: "tick x-tick", "text-anchor": "middle" }, b.label));
      }
    });
    TS.clear(container);
    container.appendChild(TS.h("div", { class: "chart-wrap" }, svg));
  }

  TS.chart = { timeseries: timeseries, bars: bars, PALETTE: PALETTE, empty: empty, niceTicks: niceTicks };
})();
