// The charts' drawing arithmetic (viz/web/canvas_chart.js) without a browser: scales, colour maps,
// label sizes, layout, legends, hit tests, zoom and the SVG escaper. node --test tests/viz/web/
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
  KINDS, PALETTES, barSpan, extent, fmt, legendRows, lineSpans, niceTicks, shade, svgPainter, xTicks,
} from "../../../viz/web/canvas_chart.js";
import { measure, numbersOf, recordingPainter, textsOf } from "./recording_painter.mjs";

const close = (a, b, eps = 1e-9) => assert.ok(Math.abs(a - b) <= eps, `${a} is not ${b}`);

describe("niceTicks", () => {
  for (const [lo, hi, want] of [
    [0, 1, [0, 0.2, 0.4, 0.6, 0.8, 1]],
    [0, 37, [0, 10, 20, 30]],
    [-3, 7, [-2, 0, 2, 4, 6]],
    [0.5, 0.55, [0.5, 0.52, 0.54]],  // a step of 0.01 is just under a fifth of 0.05 in floating point
  ]) {
    test(`${lo} to ${hi}`, () => assert.deepEqual(niceTicks(lo, hi), want));
  }
  test("every tick lies in the range, evenly spaced, at most eleven", () => {
    for (const [lo, hi] of [[0, 3], [-5, 5], [1e-4, 7e-4], [12, 977], [-0.3, 0.7]]) {
      const ticks = niceTicks(lo, hi);
      assert.ok(ticks.length >= 2 && ticks.length <= 11, `${ticks.length} ticks for ${lo}-${hi}`);
      assert.ok(ticks.every((t) => t >= lo - 1e-9 && t <= hi + 1e-9));
      const steps = ticks.slice(1).map((t, i) => t - ticks[i]);
      steps.forEach((s) => close(s, steps[0], 1e-9 * Math.max(1, Math.abs(hi))));
    }
  });
});

describe("shade", () => {
  test("ends and middle of a two-stop map", () => {
    assert.equal(shade(PALETTES.greys, 0), "#ffffff");
    assert.equal(shade(PALETTES.greys, 1), "#000000");
    assert.equal(shade(PALETTES.greys, 0.5), "#808080");
  });
  test("values outside 0..1 are clamped", () => {
    assert.equal(shade(PALETTES.blues, -3), PALETTES.blues[0]);
    assert.equal(shade(PALETTES.blues, 7), PALETTES.blues[PALETTES.blues.length - 1]);
  });
  test("each stop is reached exactly, and the blues darken", () => {
    const stops = PALETTES.blues, n = stops.length - 1;
    stops.forEach((s, i) => assert.equal(shade(stops, i / n), s));
    const light = (hex) => [1, 3, 5].reduce((a, k) => a + parseInt(hex.slice(k, k + 2), 16), 0);
    const seen = [0, 0.2, 0.4, 0.6, 0.8, 1].map((t) => light(shade(stops, t)));
    assert.deepEqual(seen, [...seen].sort((a, b) => b - a));
  });
});

test("fmt keeps three decimals below 100 and none above", () => {
  assert.equal(fmt(0.12345), "0.123");
  assert.equal(fmt(5), "5");
  assert.equal(fmt(123.456), "123");
});

describe("spans", () => {
  test("bars start at zero and pad the far end", () => {
    assert.deepEqual(barSpan({ values: [1, 3, 2] }), [0, 3.15]);
    const [lo, hi] = barSpan({ values: [-2, 1] });
    close(lo, -2.15); close(hi, 1.15);
    assert.deepEqual(barSpan({ values: [5], value_range: [0, 10] }), [0, 10]);
  });
  test("a line's band widens its span; a share runs 0 to 1", () => {
    const line = { x: [1, 2, 3], y: [0.4, 0.5, 0.6], band: [[0.1, 0.2, 0.3], [0.7, 0.8, 0.9]] };
    const span = lineSpans({ lines: [line], share: false, from_zero: false, x_ticks: [] });
    assert.ok(span.y[0] < 0.1 && span.y[1] > 0.9 && span.x[0] < 1 && span.x[1] > 3);
    assert.deepEqual(lineSpans({ lines: [line], share: true, from_zero: false, x_ticks: [] }).x, [0, 1]);
    assert.deepEqual(xTicks({ share: true }, [0, 1]).map(([, label]) => label), ["0%", "20%", "40%", "60%", "80%", "100%"]);
    assert.deepEqual(xTicks({ share: false, x_ticks: [[3, "three"]] }, [0, 5]), [[3, "three"]]);
  });
  test("a map's extent holds every point with a margin, and an empty map a unit square", () => {
    const e = extent([{ x: [0, 10], y: [5, 7] }]);
    assert.ok(e.x0 < 0 && e.x1 > 10 && e.y0 < 5 && e.y1 > 7);
    assert.deepEqual(extent([{ x: [], y: [] }]), { x0: -1.1, x1: 1.1, y0: -1.1, y1: 1.1 });
  });
});

describe("legend rows", () => {
  const items = ["RNNsearch", "RNNencdec", "Transformer", "attention", "gradient x input"].map((n) => [n, "dot", "#000"]);
  test("the items stay in order and each row fits", () => {
    for (const width of [120, 300, 2000]) {
      const rows = legendRows(items, 0, width, measure);
      assert.deepEqual(rows.flat(), items);
      for (const row of rows) {
        const used = row.reduce((a, [name]) => a + 14 + measure(name, 12) + 18, 0);
        assert.ok(row.length === 1 || used <= width, `a row of ${used}px in ${width}px`);
      }
    }
    assert.equal(legendRows(items, 0, 2000, measure).length, 1);
  });
});

function matrix(cols, rows) {
  const x = Array.from({ length: cols }, (_, i) => `s${i}`), y = Array.from({ length: rows }, (_, i) => `t${i}`);
  return { kind: "matrix", title: "t", x_title: "source", y_title: "target", value_name: "weight", palette: "blues",
           zmax: 1, x_labels: x, y_labels: y, links: [], hover: { x: "source", y: "target" },
           z: y.map((_, r) => x.map((_, c) => ((r + c) % 5) / 5)) };
}

describe("matrix", () => {
  test("labels get smaller as the matrix grows", () => {
    const f = (n) => KINDS.matrix.layout(matrix(n, 3), 900, measure).f;
    assert.deepEqual([f(3), f(25), f(26), f(45), f(46)], [13, 13, 10, 10, 8]);
  });
  test("columns share the width left of the colour bar, at least 4px each", () => {
    const box = KINDS.matrix.layout(matrix(7, 5), 900, measure);
    close(box.cw * 7, 900 - box.left - 80);
    assert.equal(KINDS.matrix.layout(matrix(400, 5), 900, measure).cw, 4);
    assert.ok(box.h >= box.top + 5 * box.ch);
  });
  test("the cell under the pointer, and nothing off the matrix", () => {
    const data = matrix(7, 5), box = KINDS.matrix.layout(data, 900, measure), state = KINDS.matrix.start(data);
    for (const [c, r] of [[0, 0], [6, 4], [3, 2]]) {
      const [text] = KINDS.matrix.hit(data, state, box.left + (c + 0.5) * box.cw, box.top + (r + 0.5) * box.ch, 900, box.h, box);
      assert.equal(text, `source: s${c}\ntarget: t${r}\nweight: ${data.z[r][c].toFixed(3)}`);
    }
    assert.equal(KINDS.matrix.hit(data, state, box.left - 1, box.top + 1, 900, box.h, box), null);
    assert.equal(KINDS.matrix.hit(data, state, box.left + 1, box.top + 5 * box.ch + 1, 900, box.h, box), null);
  });
  test("one cell a value, every label written, the scale's top the largest value", () => {
    const data = { ...matrix(3, 5), zmax: null }, box = KINDS.matrix.layout(data, 600, measure), p = recordingPainter();
    const state = KINDS.matrix.start(data);
    assert.equal(state.zmax, 0.8);
    KINDS.matrix.paint(p, data, state, 600, box.h, box);
    const cells = p.calls.filter(([name, args]) => name === "rect" && args[2] === box.cw + 0.5);
    assert.equal(cells.length, 15);
    const texts = textsOf(p.calls);
    for (const label of [...data.x_labels, ...data.y_labels, "0.8"]) assert.ok(texts.includes(label), label);
  });
});

describe("bars and stacks", () => {
  const bars = { kind: "bars", title: "b", labels: ["a", "bb", "ccc"], values: [0.5, -0.25, 1], colors: ["#1", "#2", "#3"],
                 horizontal: false, value_title: "v", value_name: "e", value_range: null };
  test("the bar under the pointer, upright and lying down", () => {
    for (const horizontal of [false, true]) {
      const data = { ...bars, horizontal }, w = 600, box = KINDS.bars.layout(data, w, measure), state = KINDS.bars.start(data);
      const x0 = box.left, x1 = w - box.right, y0 = box.top, y1 = box.h - box.bottom;
      data.labels.forEach((label, i) => {
        const mid = (a, b) => a + (i + 0.5) * (b - a) / 3;
        const [mx, my] = horizontal ? [(x0 + x1) / 2, mid(y0, y1)] : [mid(x0, x1), (y0 + y1) / 2];
        assert.equal(KINDS.bars.hit(data, state, mx, my, w, box.h, box)[0], `${label}: e=${data.values[i].toFixed(3)}`);
      });
      assert.equal(KINDS.bars.hit(data, state, x1 + 5, y0 + 1, w, box.h, box), null);
    }
  });
  test("a stack's segments sum to its bar", () => {
    const data = { kind: "stacks", title: "s", labels: ["x", "y"], names: ["source", "prefix"],
                   values: [[0.25, 0.5], [0.75, 0.5]], colors: ["#a", "#b"], value_title: "share" };
    const w = 500, box = KINDS.stacks.layout(data, w, measure), p = recordingPainter();
    KINDS.stacks.paint(p, data, KINDS.stacks.start(data), w, box.h, box);
    const slot = (w - box.left - box.right) / 2;  // the legend's squares are smaller than a bar
    const segments = p.calls.filter(([name, args]) => name === "rect" && args[2] === slot * 0.8);
    assert.equal(segments.length, 4);
    const full = box.h - box.bottom - box.top;  // the largest bar sums to 1: the whole height
    close(segments[0][1][3] + segments[1][1][3], full, 1e-6);
  });
});

describe("lines", () => {
  const data = { kind: "lines", title: "l", subtitle: "", x_title: "x", y_title: "y", share: false, from_zero: false,
                 x_ticks: [], lines: [{ name: "one", x: [1, 2, 3], y: [3, 5, 7], band: [], color: "#000", dashed: false, hovers: [] },
                                      { name: "two", x: [1, 2, 3], y: [1, 1, 1], band: [], color: "#f00", dashed: true, hovers: [] }] };
  test("the nearest point within reach, by its own line", () => {
    const w = 700, box = KINDS.lines.layout(data, w, measure), state = KINDS.lines.start(data);
    const { sx, sy } = KINDS.lines.scale(state, w, box.h, box);
    assert.equal(KINDS.lines.hit(data, state, sx(2) + 2, sy(5) - 2, w, box.h, box)[0], "one\n2: 5.000");
    assert.equal(KINDS.lines.hit(data, state, sx(3), sy(1), w, box.h, box)[0], "two\n3: 1.000");
    assert.equal(KINDS.lines.hit(data, state, sx(2), (sy(5) + sy(1)) / 2, w, box.h, box), null);
  });
  test("every point inside the plot", () => {
    const w = 700, box = KINDS.lines.layout(data, w, measure), state = KINDS.lines.start(data);
    const { sx, sy } = KINDS.lines.scale(state, w, box.h, box);
    for (const l of data.lines) l.x.forEach((x, i) => {
      assert.ok(sx(x) > box.left && sx(x) < w - box.right && sy(l.y[i]) > box.top && sy(l.y[i]) < box.h - box.bottom);
    });
  });
});

describe("tree", () => {
  const data = { kind: "tree", title: "beam", ids: [0, 1, 2, 3], parents: [-1, 0, 0, 1], steps: [0, 1, 1, 2], rows: [1, 0, 2, 0],
                 labels: ["<s>", "a", "b", "c"], statuses: ["kept", "kept", "pruned", "best"], hovers: ["0", "1", "2", "3"],
                 styles: [["kept", "#000", 8, "kept"], ["pruned", "#999", 6, "pruned"], ["best", "#0a0", 10, "best"]] };
  test("a click on a node picks its id; between nodes, none", () => {
    const w = 800, box = KINDS.tree.layout(data, w, measure), state = KINDS.tree.start(data);
    const nodes = JSON.parse(KINDS.tree.marks(data, state, w, box.h, box).nodes);
    for (const [id, x, y] of nodes) assert.equal(KINDS.tree.pick(data, state, x, y, w, box.h, box), id);
    assert.equal(KINDS.tree.pick(data, state, 2, 2, w, box.h, box), null);
  });
  test("a zoom box and a double-click back", () => {
    const w = 800, box = KINDS.tree.layout(data, w, measure), state = KINDS.tree.start(data);
    KINDS.tree.zoom(state, { x0: box.left, x1: w / 2, y0: box.top, y1: box.h / 2 }, w, box.h, box);
    assert.ok(state.view.x1 - state.view.x0 < state.full.x1 - state.full.x0);
    KINDS.tree.zoom(state, null, w, box.h, box);
    assert.deepEqual(state.view, state.full);
  });
});

describe("points", () => {
  const data = { kind: "points", title: "map", x_title: "x", y_title: "y", height: 400,
                 layers: [{ name: "all", x: [0, 1, 2], y: [0, 1, 4], texts: ["a", "b", "c"], size: 6, color: "#000", symbol: "circle" },
                          { name: "yours", x: [1], y: [1], texts: ["mine"], size: 10, color: "#f00", symbol: "x" }] };
  test("the topmost layer's point wins the hover", () => {
    const w = 600, state = KINDS.points.start(data), first = JSON.parse(KINDS.points.marks(data, state, w, 400).first);
    const [x, y] = first[1];
    assert.equal(KINDS.points.hit(data, state, x, y, w, 400)[0], "mine");
    const [x0, y0] = first[0];
    assert.equal(KINDS.points.hit(data, state, x0, y0, w, 400)[0], "a");
  });
  test("zooming into a box keeps what is in it, and zooming out gives everything back", () => {
    const w = 600, state = KINDS.points.start(data);
    KINDS.points.zoom(state, { x0: 100, x1: 300, y0: 100, y1: 250 }, w, 400);
    assert.ok(state.view.x0 < state.view.x1 && state.view.y0 < state.view.y1);
    assert.ok(state.view.x1 - state.view.x0 < state.full.x1 - state.full.x0);
    KINDS.points.zoom(state, null, w, 400);
    assert.deepEqual(state.view, state.full);
  });
  test("every point drawn inside the plot, and nothing drawn is not a number", () => {
    const p = recordingPainter(), state = KINDS.points.start(data);
    KINDS.points.paint(p, data, state, 600, 400);
    assert.ok(numbersOf(p.calls).every(Number.isFinite));
    assert.equal(p.calls.filter(([name]) => name === "circle" || name === "cross").length, 4 + 2);  // 4 points, 2 legend marks
  });
});

test("the SVG painter escapes text and keeps it as text", () => {
  const p = svgPainter(measure, "serif");
  p.text('</text><script>alert(1)</script> & "x"', 5, 5, 12, "#000", "left", 0, "ltr");
  const svg = p.parts.join("");
  assert.ok(!svg.includes("<script>"));
  assert.ok(svg.includes("&lt;/text&gt;&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;x&quot;"));
});
