// A painter that draws nothing and keeps every call, for tests of the charts' paint functions
// (viz/web/canvas_chart.js): the same methods as the canvas and SVG painters.
export function recordingPainter(measure = (s, size) => String(s).length * size * 0.6) {
  const calls = [];
  const keep = (name) => (...args) => { calls.push([name, args]); };
  return {
    calls,
    rect: keep("rect"), line: keep("line"), circle: keep("circle"), polygon: keep("polygon"), path: keep("path"),
    ring: keep("ring"), square: keep("square"), cross: keep("cross"),
    text(s, x, y, size, ...rest) { calls.push(["text", [s, x, y, size, ...rest]]); return x + measure(s, size); },
    clip(x, y, w, h, draw) { calls.push(["clip", [x, y, w, h]]); draw(); },
  };
}

export const measure = (s, size) => String(s).length * size * 0.6;

// Every number a call was given (points of polygons and paths too), flattened.
export function numbersOf(calls) {
  const out = [];
  const walk = (v) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (typeof v === "number" || v === undefined || v === null) out.push(v);
  };
  for (const [name, args] of calls) walk(name === "text" ? args.slice(1, 4) : args.filter((a) => typeof a !== "string"));
  return out;
}

export function textsOf(calls) {
  return calls.filter(([name]) => name === "text").map(([, args]) => args[0]);
}
