// Six kinds of chart (points, matrix, bars, stacks, lines, tree), each a layout, a paint function and
// a hit test (the tree also a pick: a click on a node sends its id to the page); one mount for all.
// A paint function draws onto a "painter": the canvas on screen, a larger canvas for a PNG, or
// SVG text; so the download shows what the page shows.
//
// Loaded by viz/pages/parts/canvas_charts.py as a Streamlit component (its default export mounts a
// chart); the named exports are the drawing arithmetic, tested without a browser in
// tests/viz/web/ (node --test). Each kind reads the fields of one figure class of viz/figures/
// (canvas_charts.py · KINDS): tests/viz/test_web.py paints every kind from what Python sends.

function niceTicks(lo, hi) {
  const raw = (hi - lo) / 5, p = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw);
  const ticks = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) ticks.push(+t.toFixed(12));
  return ticks;
}

// points: a scatter of layers (the Sentence space page's map); zoom by dragging a box
const PAD = { left: 56, right: 12, top: 34, bottom: 74 };

function extent(layers) {
  let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
  for (const l of layers) for (let i = 0; i < l.x.length; i++) {
    x0 = Math.min(x0, l.x[i]); x1 = Math.max(x1, l.x[i]); y0 = Math.min(y0, l.y[i]); y1 = Math.max(y1, l.y[i]);
  }
  if (!(x1 >= x0)) { x0 = -1; x1 = 1; y0 = -1; y1 = 1; }
  const px = (x1 - x0) * 0.05 || 1, py = (y1 - y0) * 0.05 || 1;
  return { x0: x0 - px, x1: x1 + px, y0: y0 - py, y1: y1 + py };
}

function scales(view, w, h) {
  const sx = (x) => PAD.left + (x - view.x0) / (view.x1 - view.x0) * (w - PAD.left - PAD.right);
  const sy = (y) => PAD.top + (view.y1 - y) / (view.y1 - view.y0) * (h - PAD.top - PAD.bottom);
  return { sx, sy };
}

const POINTS = {
  start(data) { const full = extent(data.layers); return { full, view: { ...full } }; },
  layout(data) { return { h: data.height }; },
  paint(p, data, state, w, h) {
    const view = state.view, { sx, sy } = scales(view, w, h);
    const right = w - PAD.right, bottom = h - PAD.bottom;
    p.rect(0, 0, w, h, "#ffffff");
    for (const t of niceTicks(view.x0, view.x1)) {
      p.line(sx(t), PAD.top, sx(t), bottom, "#ebebeb", 1);
      p.text(String(t), sx(t), bottom + 16, 11, "#555", "center", 0, LTR);
    }
    for (const t of niceTicks(view.y0, view.y1)) {
      p.line(PAD.left, sy(t), right, sy(t), "#ebebeb", 1);
      p.text(String(t), PAD.left - 6, sy(t) + 4, 11, "#555", "right", 0, LTR);
    }
    p.text(data.title, w / 2, 20, 15, "#222", "center");
    p.text(data.x_title, (PAD.left + right) / 2, bottom + 34, 12, "#444", "center");
    p.text(data.y_title, 14, (PAD.top + bottom) / 2, 12, "#444", "center", -90);
    p.clip(PAD.left, PAD.top, right - PAD.left, bottom - PAD.top, () => {
      for (const l of data.layers) {
        for (let i = 0; i < l.x.length; i++) {
          const x = sx(l.x[i]), y = sy(l.y[i]);
          if (l.symbol === "x") p.cross(x, y, l.size / 2, l.color); else p.circle(x, y, l.size / 2, l.color);
        }
      }
    });
    p.line(PAD.left, bottom, right, bottom, "#999", 1);
    p.line(PAD.left, PAD.top, PAD.left, bottom, "#999", 1);
    legend(p, data.layers.map((l) => [l.name, l.symbol === "x" ? "cross" : "dot", l.color]), PAD.left, h - 10);
  },
  hit(data, state, mx, my, w, h) {  // the point under the pointer, topmost layer first
    const { sx, sy } = scales(state.view, w, h);
    for (let k = data.layers.length - 1; k >= 0; k--) {
      const l = data.layers[k];
      let best = -1, bestD = Math.max(6, l.size / 2 + 2) ** 2;
      for (let i = 0; i < l.x.length; i++) {
        const d = (sx(l.x[i]) - mx) ** 2 + (sy(l.y[i]) - my) ** 2;
        if (d <= bestD) { best = i; bestD = d; }
      }
      if (best >= 0) return [l.texts[best], sx(l.x[best]), sy(l.y[best])];
    }
    return null;
  },
  zoom(state, box, w, h) {  // box: pixels; null: back to everything
    if (!box) { state.view = { ...state.full }; return; }
    const v = state.view, { sx, sy } = scales(v, w, h);
    const toX = (px) => v.x0 + (px - PAD.left) / (sx(v.x1) - PAD.left) * (v.x1 - v.x0);
    const toY = (py) => v.y1 - (py - PAD.top) / (sy(v.y0) - PAD.top) * (v.y1 - v.y0);
    state.view = { x0: toX(box.x0), x1: toX(box.x1), y0: toY(box.y1), y1: toY(box.y0) };
  },
  marks(data, state, w, h) {  // each layer's first point on screen, for the browser tests
    const { sx, sy } = scales(state.view, w, h);
    return { first: JSON.stringify(data.layers.map((l) => l.x.length ? [sx(l.x[0]), sy(l.y[0])] : null)) };
  },
};

// matrix: an alignment heatmap, rows the output tokens, columns the source tokens
const PALETTES = {  // light to dark: darker is more
  greys: ["#ffffff", "#000000"],
  blues: ["#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#08519c", "#08306b"],
};

function shade(stops, t) {
  t = Math.min(1, Math.max(0, t)) * (stops.length - 1);
  const i = Math.min(stops.length - 2, Math.floor(t)), f = t - i;
  const rgb = (s) => [1, 3, 5].map((k) => parseInt(s.slice(k, k + 2), 16));
  const a = rgb(stops[i]), b = rgb(stops[i + 1]);
  return "#" + a.map((v, k) => Math.round(v + (b[k] - v) * f).toString(16).padStart(2, "0")).join("");
}

const MATRIX = {
  start(data) {
    const top = Math.max(0, ...data.z.flat());
    return { zmax: data.zmax == null ? (top || 1) : data.zmax };
  },
  layout(data, w, measure) {
    const cols = data.x_labels.length, rows = data.y_labels.length, n = Math.max(cols, rows);
    const f = n <= 25 ? 13 : n <= 45 ? 10 : 8;
    const xw = Math.max(0, ...data.x_labels.map((s) => measure(s, f)));
    const yw = Math.max(0, ...data.y_labels.map((s) => measure(s, f)));
    const top = 50 + xw * Math.sin(Math.PI / 3) + 6, left = 24 + yw + 8, right = 80;
    const cw = Math.max(4, (w - left - right) / Math.max(1, cols)), ch = 22;
    const bh = Math.max(60, Math.min(ch * rows, 240));  // the colour bar's height: whole even under one row
    return { f, top, left, cw, ch, bh, h: Math.round(top + Math.max(ch * rows, bh + 6) + (data.links.length ? 34 : 10)) };
  },
  paint(p, data, state, w, h, box) {
    const { f, top, left, cw, ch } = box, stops = PALETTES[data.palette] || PALETTES.blues;
    const rows = data.y_labels.length, cols = data.x_labels.length, bottom = top + rows * ch;
    p.rect(0, 0, w, h, "#ffffff");
    p.text(data.title, w / 2, 20, 15, "#222", "center");
    p.text(data.x_title, left + cols * cw / 2, 40, 12, "#444", "center");
    p.text(data.y_title, 12, (top + bottom) / 2, 12, "#444", "center", -90);
    data.z.forEach((row, r) => row.forEach((v, c) => {
      p.rect(left + c * cw, top + r * ch, cw + 0.5, ch + 0.5, shade(stops, v / state.zmax));
    }));
    data.x_labels.forEach((s, c) => p.text(s, left + (c + 0.5) * cw + f / 3, top - 4, f, "#333", "left", -60, LTR));
    data.y_labels.forEach((s, r) => p.text(s, left - 6, top + (r + 0.5) * ch + f / 3, f, "#333", "right", 0, LTR));
    const bar = { x: left + cols * cw + 16, w: 14 };  // the colour bar, top is the largest value
    const steps = 48, bh = box.bh;
    for (let i = 0; i < steps; i++) p.rect(bar.x, top + i * bh / steps, bar.w, bh / steps + 0.5, shade(stops, 1 - i / steps));
    for (const t of [0, 0.5, 1]) {
      p.text(fmt(state.zmax * t), bar.x + bar.w + 4, top + (1 - t) * bh + 4, 10, "#555", "left", 0, LTR);
    }
    p.text(data.value_name, bar.x, top - 6, 11, "#444", "left");
    const r = Math.min(cw, ch) * 0.38;
    for (const links of data.links) {
      for (const [c, row] of links.cells) mark(p, links.shape, left + (c + 0.5) * cw, top + (row + 0.5) * ch, r, links.color);
    }
    if (data.links.length) legend(p, data.links.map((l) => [l.name, l.shape, l.color]), left, h - 10);
  },
  hit(data, state, mx, my, w, h, box) {
    const c = Math.floor((mx - box.left) / box.cw), r = Math.floor((my - box.top) / box.ch);
    if (c < 0 || r < 0 || c >= data.x_labels.length || r >= data.y_labels.length) return null;
    return [`${data.hover.x}: ${data.x_labels[c]}\n${data.hover.y}: ${data.y_labels[r]}\n` +
            `${data.value_name}: ${data.z[r][c].toFixed(3)}`, box.left + (c + 0.5) * box.cw, box.top + (r + 1) * box.ch];
  },
  marks(data, state, w, h, box) {  // the labels and where the first cell is, for the browser tests and benches
    return { columns: JSON.stringify(data.x_labels), rows: JSON.stringify(data.y_labels),
             first: JSON.stringify([box.left + box.cw / 2, box.top + box.ch / 2]),
             links: JSON.stringify(data.links.map((l) => [l.name, l.cells.length])) };
  },
};

// bars: one per label, upright along the source or lying down a list (horizontal)
function barSpan(data) {
  if (data.value_range) return data.value_range;
  const lo = Math.min(0, ...data.values), hi = Math.max(0, ...data.values), pad = (hi - lo) * 0.05 || 1;
  return [lo < 0 ? lo - pad : 0, hi > 0 ? hi + pad : 0];
}

const BARS = {
  start(data) { return { span: barSpan(data) }; },
  layout(data, w, measure) {
    const n = Math.max(data.labels.length, 1), f = n <= 25 ? 12 : n <= 45 ? 10 : 8;
    const lw = Math.max(0, ...data.labels.map((s) => measure(s, f)));
    if (data.horizontal) {
      const top = 34, bottom = 44, left = lw + 14, right = 16;
      return { f, top, left, right, bottom, h: top + 28 * n + bottom };
    }
    const top = 34, left = 52, right = 12, bottom = Math.round(lw * Math.sin(Math.PI / 3) + 16);
    return { f, top, left, right, bottom, h: top + 170 + bottom };
  },
  paint(p, data, state, w, h, box) {
    const { f, top, left, right, bottom } = box, [lo, hi] = state.span, n = data.labels.length;
    const x0 = left, x1 = w - right, y0 = top, y1 = h - bottom;
    p.rect(0, 0, w, h, "#ffffff");
    p.text(data.title, w / 2, 20, 15, "#222", "center");
    if (data.horizontal) {
      const sx = (v) => x0 + (v - lo) / (hi - lo) * (x1 - x0), slot = (y1 - y0) / Math.max(n, 1);
      for (const t of niceTicks(lo, hi)) {
        p.line(sx(t), y0, sx(t), y1, "#ebebeb", 1);
        p.text(String(t), sx(t), y1 + 14, 11, "#555", "center", 0, LTR);
      }
      data.values.forEach((v, i) => {
        p.rect(Math.min(sx(0), sx(v)), y0 + i * slot + slot * 0.15, Math.abs(sx(v) - sx(0)), slot * 0.7, data.colors[i]);
        p.text(data.labels[i], x0 - 6, y0 + (i + 0.5) * slot + f / 3, f, "#333", "right", 0, LTR);
      });
      p.text(data.value_title, (x0 + x1) / 2, h - 8, 12, "#444", "center");
    } else {
      const sy = (v) => y1 - (v - lo) / (hi - lo) * (y1 - y0), slot = (x1 - x0) / Math.max(n, 1);
      for (const t of niceTicks(lo, hi)) {
        p.line(x0, sy(t), x1, sy(t), "#ebebeb", 1);
        p.text(String(t), x0 - 6, sy(t) + 4, 11, "#555", "right", 0, LTR);
      }
      data.values.forEach((v, i) => {
        p.rect(x0 + i * slot + slot * 0.1, Math.min(sy(0), sy(v)), slot * 0.8, Math.abs(sy(v) - sy(0)), data.colors[i]);
        p.text(data.labels[i], x0 + (i + 0.5) * slot + f / 3, y1 + 8, f, "#333", "right", -60, LTR);
      });
      p.line(x0, sy(0), x1, sy(0), "#999", 1);
    }
  },
  hit(data, state, mx, my, w, h, box) {
    const n = data.labels.length, x0 = box.left, x1 = w - box.right, y0 = box.top, y1 = h - box.bottom;
    const i = data.horizontal ? Math.floor((my - y0) / ((y1 - y0) / Math.max(n, 1)))
                              : Math.floor((mx - x0) / ((x1 - x0) / Math.max(n, 1)));
    if (i < 0 || i >= n || mx < x0 || mx > x1 || my < y0 || my > y1) return null;
    const value = (data.value_name ? `${data.value_name}=` : "") + data.values[i].toFixed(3);
    return [`${data.labels[i]}: ${value}`, mx, my];
  },
  marks(data) { return { bars: JSON.stringify(data.labels) }; },
};

// stacks: one bar per label, its series' segments stacked from 0 (an explanation's source and prefix shares)
const STACKS = {
  start() { return {}; },
  layout(data, w, measure) {
    const n = Math.max(data.labels.length, 1), f = n <= 25 ? 12 : n <= 45 ? 10 : 8;
    const lw = Math.max(0, ...data.labels.map((s) => measure(s, f)));
    const top = 34, left = 52, right = 12, bottom = Math.round(lw * Math.sin(Math.PI / 3) + 16) + 24;
    return { f, top, left, right, bottom, h: top + 160 + bottom };
  },
  paint(p, data, state, w, h, box) {
    const { f, top, left, right, bottom } = box, n = data.labels.length;
    const x0 = left, x1 = w - right, y0 = top, y1 = h - bottom, slot = (x1 - x0) / Math.max(n, 1);
    const hi = Math.max(1, ...data.labels.map((_, i) => data.values.reduce((a, v) => a + v[i], 0)));
    const sy = (v) => y1 - v / hi * (y1 - y0);
    p.rect(0, 0, w, h, "#ffffff");
    p.text(data.title, w / 2, 20, 15, "#222", "center");
    for (const t of niceTicks(0, hi)) {
      p.line(x0, sy(t), x1, sy(t), "#ebebeb", 1);
      p.text(String(t), x0 - 6, sy(t) + 4, 11, "#555", "right", 0, LTR);
    }
    p.text(data.value_title, 14, (y0 + y1) / 2, 12, "#444", "center", -90);
    data.labels.forEach((label, i) => {
      let below = 0;
      data.values.forEach((series, k) => {
        p.rect(x0 + i * slot + slot * 0.1, sy(below + series[i]), slot * 0.8, sy(below) - sy(below + series[i]), data.colors[k]);
        below += series[i];
      });
      p.text(label, x0 + (i + 0.5) * slot + f / 3, y1 + 8, f, "#333", "right", -60, LTR);
    });
    p.line(x0, y1, x1, y1, "#999", 1);
    legend(p, data.names.map((name, k) => [name, "square-fill", data.colors[k]]), x0, h - 8);
  },
  hit(data, state, mx, my, w, h, box) {
    const n = data.labels.length, x0 = box.left, x1 = w - box.right, i = Math.floor((mx - x0) / ((x1 - x0) / Math.max(n, 1)));
    if (i < 0 || i >= n || mx > x1 || my < box.top || my > h - box.bottom) return null;
    return [[data.labels[i], ...data.names.map((name, k) => `${name}: ${data.values[k][i].toFixed(3)}`)].join("\n"), mx, my];
  },
  marks(data) { return { bars: JSON.stringify(data.labels) }; },
};

// lines: curves with a dot at each point, perhaps a shaded band around them; x a share (0 to 100%) or numbers
function lineSpans(data) {
  const ys = data.lines.flatMap((l) => [...l.y, ...l.band.flat()]), xs = data.lines.flatMap((l) => l.x);
  let lo = Math.min(...ys), hi = Math.max(...ys);
  const pad = (hi - lo) * 0.06 || 0.5;
  [lo, hi] = ys.length ? [data.from_zero ? Math.min(0, lo) : lo - pad, hi + pad] : [0, 1];
  if (data.share) return { x: [0, 1], y: [lo, hi] };
  const ticks = data.x_ticks.map(([v]) => v), x0 = Math.min(...xs, ...ticks), x1 = Math.max(...xs, ...ticks);
  const xpad = (x1 - x0) * 0.05 || 1;
  return { x: xs.length ? [x0 - xpad, x1 + xpad] : [0, 1], y: [lo, hi] };
}

function xTicks(data, span) {  // [value, label] pairs along the x axis
  if (data.share) return [0, 0.2, 0.4, 0.6, 0.8, 1].map((t) => [t, `${Math.round(t * 100)}%`]);
  return data.x_ticks.length ? data.x_ticks : niceTicks(...span).map((t) => [t, String(t)]);
}

const LINES = {
  start(data) { return { span: lineSpans(data) }; },
  layout(data, w, measure) {
    const rows = legendRows(data.lines.map((l) => [l.name, "dot", l.color]), 56, w - 14, measure);
    const tickLines = Math.max(1, ...data.x_ticks.map(([, label]) => label.split("\n").length));
    const bottom = 38 + 14 * tickLines + 18 * rows.length;
    return { top: data.subtitle ? 52 : 34, left: 56, right: 14, bottom, tickLines, legend: rows, h: 230 + bottom };
  },
  scale(state, w, h, box) {
    const { x: [x0, x1], y: [lo, hi] } = state.span;
    return { sx: (x) => box.left + (x - x0) / (x1 - x0) * (w - box.left - box.right),
             sy: (y) => h - box.bottom - (y - lo) / (hi - lo) * (h - box.top - box.bottom) };
  },
  paint(p, data, state, w, h, box) {
    const { sx, sy } = LINES.scale(state, w, h, box), bottom = h - box.bottom;
    p.rect(0, 0, w, h, "#ffffff");
    p.text(data.title, w / 2, 20, 15, "#222", "center");
    if (data.subtitle) p.text(data.subtitle, w / 2, 40, 12, "#444", "center");
    for (const [t, label] of xTicks(data, state.span.x)) {
      p.line(sx(t), box.top, sx(t), bottom, "#ebebeb", 1);
      label.split("\n").forEach((part, k) => p.text(part, sx(t), bottom + 14 + 13 * k, 11, "#555", "center", 0, LTR));
    }
    for (const t of niceTicks(...state.span.y)) {
      p.line(box.left, sy(t), w - box.right, sy(t), "#ebebeb", 1);
      p.text(String(t), box.left - 6, sy(t) + 4, 11, "#555", "right", 0, LTR);
    }
    const below = bottom + 14 * box.tickLines;
    p.text(data.x_title, (box.left + w - box.right) / 2, below + 16, 12, "#444", "center");
    p.text(data.y_title, 14, (box.top + bottom) / 2, 12, "#444", "center", -90);
    for (const l of data.lines) {
      if (l.band.length) {  // lower along, then upper back
        const [lower, upper] = l.band;
        p.polygon([...l.x.map((x, i) => [sx(x), sy(lower[i])]), ...l.x.map((x, i) => [sx(x), sy(upper[i])]).reverse()],
                  l.color, 0.15);
      }
      p.path(l.x.map((x, i) => [sx(x), sy(l.y[i])]), l.color, 2, l.dashed);
      l.x.forEach((x, i) => p.circle(sx(x), sy(l.y[i]), 3, l.color));
    }
    box.legend.forEach((row, r) => legend(p, row, box.left, below + 36 + 18 * r));
  },
  hit(data, state, mx, my, w, h, box) {  // the nearest point within reach
    const { sx, sy } = LINES.scale(state, w, h, box);
    let found = null, best = 64;
    for (const l of data.lines) l.x.forEach((x, i) => {
      const d = (sx(x) - mx) ** 2 + (sy(l.y[i]) - my) ** 2;
      const text = l.hovers.length ? l.hovers[i] : `${l.name}\n${data.share ? `${Math.round(x * 100)}%` : fmt(x)}: ${l.y[i].toFixed(3)}`;
      if (d <= best) { best = d; found = [text, sx(x), sy(l.y[i])]; }
    });
    return found;
  },
  marks(data, state, w, h, box) {  // each line's name, points, and where its first point is
    const { sx, sy } = LINES.scale(state, w, h, box);
    return { lines: JSON.stringify(data.lines.map((l) => [l.name, l.x.length])),
             first: JSON.stringify(data.lines.map((l) => (l.x.length ? [sx(l.x[0]), sy(l.y[0])] : null))) };
  },
};

// tree: the beam search, left to right; a click on a node picks it; zoom by dragging a box
const TREE = {
  start(data) {
    const full = { x0: -0.5, x1: Math.max(0, ...data.steps) + 1.2, y0: -0.5, y1: Math.max(0, ...data.rows) + 0.5 };
    return { full, view: { ...full },
             styles: Object.fromEntries(data.styles.map(([s, color, size, name]) => [s, { color, size, name }])) };
  },
  layout(data) {
    const rows = Math.max(0, ...data.rows) + 1;
    return { top: 40, left: 16, right: 70, bottom: 62, h: Math.max(350, 14 * rows + 120) };
  },
  scale(state, w, h, box) {
    const v = state.view;
    return { sx: (x) => box.left + (x - v.x0) / (v.x1 - v.x0) * (w - box.left - box.right),
             sy: (r) => box.top + (r - v.y0) / (v.y1 - v.y0) * (h - box.top - box.bottom) };
  },
  paint(p, data, state, w, h, box) {
    const { sx, sy } = TREE.scale(state, w, h, box), n = data.ids.length, bottom = h - box.bottom, v = state.view;
    p.rect(0, 0, w, h, "#ffffff");
    p.text(data.title, w / 2, 20, 15, "#222", "center");
    const first = Math.max(0, Math.ceil(v.x0)), last = Math.min(Math.max(0, ...data.steps), Math.floor(v.x1));
    const every = Math.max(1, Math.ceil((last - first + 1) / 30));
    for (let t = first; t <= last; t += every) p.text(String(t), sx(t), bottom + 16, 11, "#555", "center", 0, LTR);
    p.text(data.x_title, (box.left + w - box.right) / 2, bottom + 34, 12, "#444", "center");
    p.clip(0, box.top - 8, w, bottom - box.top + 16, () => {
      for (const best of [false, true]) {  // the grey edges first, the best path's red ones over them
        for (let k = 0; k < n; k++) {
          const q = data.parents[k];
          if (q < 0 || (data.statuses[k] === "best") !== best) continue;
          p.line(sx(data.steps[q]), sy(data.rows[q]), sx(data.steps[k]), sy(data.rows[k]), best ? "#d62728" : "#dddddd", best ? 3 : 1);
        }
      }
      for (const [status] of data.styles) {  // pruned first, the best path last (on top)
        const style = state.styles[status];
        for (let k = 0; k < n; k++) {
          if (data.statuses[k] !== status) continue;
          const x = sx(data.steps[k]), y = sy(data.rows[k]);
          p.circle(x, y, style.size / 2 + 1, "#ffffff");
          p.circle(x, y, style.size / 2, style.color);
          p.text(data.labels[k], x + style.size / 2 + 3, y + 4, 10, status === "best" ? style.color : "#444", "left", 0, LTR);
        }
      }
    });
    legend(p, data.styles.map(([s]) => [state.styles[s].name, "dot", state.styles[s].color]), box.left, h - 10);
  },
  nearest(data, state, mx, my, w, h, box) {  // the node under the pointer (index), or -1
    const { sx, sy } = TREE.scale(state, w, h, box);
    let found = -1, best = 64;
    for (let k = 0; k < data.ids.length; k++) {
      const d = (sx(data.steps[k]) - mx) ** 2 + (sy(data.rows[k]) - my) ** 2;
      if (d <= best) { best = d; found = k; }
    }
    return found;
  },
  hit(data, state, mx, my, w, h, box) {
    const k = TREE.nearest(data, state, mx, my, w, h, box), { sx, sy } = TREE.scale(state, w, h, box);
    return k < 0 ? null : [data.hovers[k], sx(data.steps[k]), sy(data.rows[k])];
  },
  pick(data, state, mx, my, w, h, box) {
    const k = TREE.nearest(data, state, mx, my, w, h, box);
    return k < 0 ? null : data.ids[k];
  },
  zoom(state, pixels, w, h, box) {  // pixels: the dragged box; null: back to the whole tree
    if (!pixels) { state.view = { ...state.full }; return; }
    const v = state.view, fx = (w - box.left - box.right) / (v.x1 - v.x0), fy = (h - box.top - box.bottom) / (v.y1 - v.y0);
    state.view = { x0: v.x0 + (pixels.x0 - box.left) / fx, x1: v.x0 + (pixels.x1 - box.left) / fx,
                   y0: v.y0 + (pixels.y0 - box.top) / fy, y1: v.y0 + (pixels.y1 - box.top) / fy };
  },
  marks(data, state, w, h, box) {  // where each node is (id, x, y), for the browser tests
    const { sx, sy } = TREE.scale(state, w, h, box);
    return { nodes: JSON.stringify(data.ids.map((id, k) => [id, +sx(data.steps[k]).toFixed(1), +sy(data.rows[k]).toFixed(1)])) };
  },
};

const KINDS = { points: POINTS, matrix: MATRIX, bars: BARS, stacks: STACKS, lines: LINES, tree: TREE };
const LTR = "ltr";  // numbers and tokens are written left to right, also on a right-to-left page

function fmt(v) { return Math.abs(v) >= 100 ? v.toFixed(0) : +v.toFixed(3) + ""; }

function mark(p, shape, x, y, r, color) {  // a marker: "dot", "ring", "square", "square-fill" or "cross"
  if (shape === "cross") p.cross(x, y, r * 0.8, color);
  else if (shape === "square-fill") p.rect(x - r, y - r, 2 * r, 2 * r, color);
  else if (shape === "ring") p.ring(x, y, r, color);
  else if (shape === "square") p.square(x, y, r, color);
  else p.circle(x, y, r, color);
}

function legend(p, items, x, y) {  // [name, marker, colour] in a row
  for (const [name, shape, color] of items) {
    mark(p, shape, x + 5, y - 4, shape === "dot" ? 4 : 5, color);
    x = p.text(name, x + 14, y, 12, "#333", "left") + 18;
  }
}

function legendRows(items, x0, x1, measure) {  // the items in rows that fit between x0 and x1
  const rows = [[]];
  let x = x0;
  for (const item of items) {
    const width = 14 + measure(item[0], 12) + 18;
    if (x + width > x1 && rows[rows.length - 1].length) { rows.push([]); x = x0; }
    rows[rows.length - 1].push(item); x += width;
  }
  return rows;
}

function canvasPainter(ctx, family) {
  const font = (size) => `${size}px ${family}`;
  return {
    rect(x, y, w, h, fill) { ctx.fillStyle = fill; ctx.fillRect(x, y, w, h); },
    line(x0, y0, x1, y1, color, width) {
      ctx.strokeStyle = color; ctx.lineWidth = width; ctx.beginPath(); ctx.moveTo(x0, y0); ctx.lineTo(x1, y1); ctx.stroke();
    },
    circle(x, y, r, color) { ctx.fillStyle = color; ctx.beginPath(); ctx.arc(x, y, r, 0, 2 * Math.PI); ctx.fill(); },
    polygon(points, fill, alpha) {  // a filled shape through [x, y] points, see-through by alpha
      ctx.save(); ctx.globalAlpha = alpha; ctx.fillStyle = fill; ctx.beginPath();
      points.forEach(([x, y], i) => (i ? ctx.lineTo(x, y) : ctx.moveTo(x, y))); ctx.closePath(); ctx.fill(); ctx.restore();
    },
    path(points, color, width, dashed) {  // a polyline through [x, y] points
      ctx.save(); ctx.strokeStyle = color; ctx.lineWidth = width; ctx.setLineDash(dashed ? [6, 4] : []); ctx.beginPath();
      points.forEach(([x, y], i) => (i ? ctx.lineTo(x, y) : ctx.moveTo(x, y))); ctx.stroke(); ctx.restore();
    },
    ring(x, y, r, color) {
      ctx.strokeStyle = color; ctx.lineWidth = 2; ctx.beginPath(); ctx.arc(x, y, r, 0, 2 * Math.PI); ctx.stroke();
    },
    square(x, y, r, color) { ctx.strokeStyle = color; ctx.lineWidth = 3; ctx.strokeRect(x - r, y - r, 2 * r, 2 * r); },
    cross(x, y, r, color) {
      ctx.strokeStyle = color; ctx.lineWidth = 3; ctx.beginPath();
      ctx.moveTo(x - r, y - r); ctx.lineTo(x + r, y + r); ctx.moveTo(x - r, y + r); ctx.lineTo(x + r, y - r); ctx.stroke();
    },
    text(s, x, y, size, color, align, rotate, dir) {  // returns where a left-aligned text ends (for the legend)
      ctx.save(); ctx.font = font(size); ctx.fillStyle = color; ctx.textAlign = align; ctx.direction = dir || "inherit";
      ctx.translate(x, y); if (rotate) ctx.rotate(rotate * Math.PI / 180); ctx.fillText(s, 0, 0); ctx.restore();
      ctx.font = font(size);
      return x + ctx.measureText(s).width;
    },
    clip(x, y, w, h, draw) { ctx.save(); ctx.beginPath(); ctx.rect(x, y, w, h); ctx.clip(); draw(); ctx.restore(); },
  };
}

function svgPainter(measure, family) {
  const parts = [];
  const esc = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
  const anchor = { left: "start", center: "middle", right: "end" };
  const n = (v) => +v.toFixed(2);
  let clipped = 0;
  return {
    parts,
    rect(x, y, w, h, fill) { parts.push(`<rect x="${n(x)}" y="${n(y)}" width="${n(w)}" height="${n(h)}" fill="${fill}"/>`); },
    line(x0, y0, x1, y1, color, width) {
      parts.push(`<line x1="${n(x0)}" y1="${n(y0)}" x2="${n(x1)}" y2="${n(y1)}" stroke="${color}" stroke-width="${width}"/>`);
    },
    circle(x, y, r, color) { parts.push(`<circle cx="${n(x)}" cy="${n(y)}" r="${n(r)}" fill="${color}"/>`); },
    polygon(points, fill, alpha) {
      parts.push(`<polygon points="${points.map(([x, y]) => `${n(x)},${n(y)}`).join(" ")}" fill="${fill}" fill-opacity="${alpha}"/>`);
    },
    path(points, color, width, dashed) {
      parts.push(`<polyline points="${points.map(([x, y]) => `${n(x)},${n(y)}`).join(" ")}" fill="none" ` +
                 `stroke="${color}" stroke-width="${width}"${dashed ? ' stroke-dasharray="6 4"' : ""}/>`);
    },
    ring(x, y, r, color) {
      parts.push(`<circle cx="${n(x)}" cy="${n(y)}" r="${n(r)}" fill="none" stroke="${color}" stroke-width="2"/>`);
    },
    square(x, y, r, color) {
      parts.push(`<rect x="${n(x - r)}" y="${n(y - r)}" width="${n(2 * r)}" height="${n(2 * r)}" fill="none" ` +
                 `stroke="${color}" stroke-width="3"/>`);
    },
    cross(x, y, r, color) {
      parts.push(`<path d="M${n(x - r)} ${n(y - r)}L${n(x + r)} ${n(y + r)}M${n(x - r)} ${n(y + r)}L${n(x + r)} ${n(y - r)}" ` +
                 `stroke="${color}" stroke-width="3"/>`);
    },
    text(s, x, y, size, color, align, rotate, dir) {
      const turn = rotate ? ` transform="rotate(${rotate} ${n(x)} ${n(y)})"` : "";
      parts.push(`<text x="${n(x)}" y="${n(y)}" font-family="${esc(family)}" font-size="${size}" fill="${color}" ` +
                 `text-anchor="${anchor[align]}"${dir ? ` direction="${dir}"` : ""}${turn}>${esc(s)}</text>`);
      return x + measure(s, size);
    },
    clip(x, y, w, h, draw) {
      const id = `clip${clipped++}`;
      parts.push(`<clipPath id="${id}"><rect x="${n(x)}" y="${n(y)}" width="${n(w)}" height="${n(h)}"/></clipPath>` +
                 `<g clip-path="url(#${id})">`);
      draw(); parts.push("</g>");
    },
  };
}

function save(draw, download, w, h, family) {  // draw(painter): the chart as on screen
  if (download.format === "svg") {
    const ctx = document.createElement("canvas").getContext("2d");
    const p = svgPainter((s, size) => { ctx.font = `${size}px ${family}`; return ctx.measureText(s).width; }, family);
    draw(p);
    finish(new Blob([`<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}">`,
                     ...p.parts, "</svg>"], { type: "image/svg+xml" }), `${download.filename}.svg`);
  } else {
    const big = document.createElement("canvas");
    big.width = w * download.scale; big.height = h * download.scale;
    const ctx = big.getContext("2d"); ctx.scale(download.scale, download.scale);
    draw(canvasPainter(ctx, family));
    big.toBlob((png) => finish(png, `${download.filename}.png`), "image/png");
  }
}

function finish(blob, name) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob); a.download = name; a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

export { KINDS, PALETTES, barSpan, extent, fmt, legendRows, lineSpans, niceTicks, scales, shade, svgPainter, xTicks };

export default function ({ parentElement, data, setTriggerValue }) {
  const kind = KINDS[data.kind], root = parentElement.querySelector(".canvas-chart");
  const make = (tag, cls, text) => {
    const e = document.createElement(tag); if (cls) e.className = cls; if (text != null) e.textContent = text; return e;
  };
  const canvas = make("canvas"), tip = make("div", "tip"), button = make("button", "save", data.download.label);
  button.type = "button"; tip.hidden = true; tip.dir = "auto";
  canvas.setAttribute("role", "img"); canvas.setAttribute("aria-label", data.title);  // what a screen reader says
  root.replaceChildren(canvas, tip, button, ...(data.hint ? [make("div", "hint", data.hint)] : []));
  const family = getComputedStyle(root).fontFamily || "sans-serif";  // the page's own font
  const measuring = document.createElement("canvas").getContext("2d");
  const measure = (s, size) => { measuring.font = `${size}px ${family}`; return measuring.measureText(s).width; };
  const state = kind.start(data);
  let width = 0, box = null, drag = null, dragged = false;

  function draw() {
    width = canvas.clientWidth || 600;
    box = kind.layout(data, width, measure);
    const ratio = window.devicePixelRatio || 1;
    canvas.width = Math.round(width * ratio); canvas.height = Math.round(box.h * ratio);
    canvas.style.height = `${box.h}px`;
    const ctx = canvas.getContext("2d"); ctx.scale(ratio, ratio);
    kind.paint(canvasPainter(ctx, family), data, state, width, box.h, box);
    if (drag && drag.moved) {
      ctx.fillStyle = "rgba(31, 119, 180, 0.15)";
      ctx.fillRect(Math.min(drag.x, drag.x2), Math.min(drag.y, drag.y2), Math.abs(drag.x2 - drag.x), Math.abs(drag.y2 - drag.y));
    }
    Object.assign(root.dataset, kind.marks(data, state, width, box.h, box));
    root.dataset.drawn = "1";  // the browser tests and bench/page_speed.py wait for this
  }

  function pointer(event) { const r = canvas.getBoundingClientRect(); return [event.clientX - r.left, event.clientY - r.top]; }

  const handlers = {
    mousemove(event) {
      const [mx, my] = pointer(event);
      if (drag) { drag.x2 = mx; drag.y2 = my; drag.moved = Math.hypot(mx - drag.x, my - drag.y) > 4; draw(); return; }
      const found = kind.hit(data, state, mx, my, width, box.h, box);
      tip.hidden = !found;
      if (kind.pick) canvas.style.cursor = found ? "pointer" : "default";
      if (found) {
        tip.textContent = found[0];
        tip.style.left = `${Math.max(0, Math.min(found[1] + 10, width - tip.offsetWidth - 4))}px`;
        tip.style.top = `${found[2] + 12}px`;
      }
    },
    mouseleave() { tip.hidden = true; if (drag) { drag = null; draw(); } },
  };
  if (kind.zoom) {
    Object.assign(handlers, {
      mousedown(event) { const [mx, my] = pointer(event); drag = { x: mx, y: my, x2: mx, y2: my, moved: false }; },
      mouseup() {
        dragged = Boolean(drag && drag.moved);
        if (dragged) {
          kind.zoom(state, { x0: Math.min(drag.x, drag.x2), x1: Math.max(drag.x, drag.x2),
                             y0: Math.min(drag.y, drag.y2), y1: Math.max(drag.y, drag.y2) }, width, box.h, box);
        }
        drag = null; draw();
      },
      dblclick() { kind.zoom(state, null, width, box.h, box); draw(); },
    });
  }
  if (kind.pick) {
    handlers.click = (event) => {
      if (dragged) return;  // the end of a zoom, not a pick
      const [mx, my] = pointer(event), picked = kind.pick(data, state, mx, my, width, box.h, box);
      if (picked != null) setTriggerValue("picked", picked);  // the page reruns with it (chart_ui's return value)
    };
  }
  for (const [name, fn] of Object.entries(handlers)) canvas.addEventListener(name, fn);
  const onSave = () => save((p) => kind.paint(p, data, state, width, box.h, box), data.download, width, box.h, family);
  button.addEventListener("click", onSave);
  const resized = new ResizeObserver(() => { if (canvas.clientWidth && canvas.clientWidth !== width) draw(); });
  resized.observe(root);
  draw();
  return () => {
    resized.disconnect();
    for (const [name, fn] of Object.entries(handlers)) canvas.removeEventListener(name, fn);
    button.removeEventListener("click", onSave);
  };
}
