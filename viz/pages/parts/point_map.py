"""A map of a few thousand points (``viz/figures/sentence_space.py`` · ``SentenceMap``) drawn on a
canvas by a few lines of JavaScript in the page (a Streamlit component, no iframe).

Why not plotly: plotly's code is the largest the page loads, about 1.5 s of a 2-core browser's
main thread, and a visitor who opens the Sentence space page comes for its maps. Drawn here, a
new visitor's first map comes with the page's text (docs/performance.md has the figures).

What it does: the points with their legend and axes; hovering over a point shows its sentence;
dragging a box zooms in, a double-click zooms out; a button downloads the map as the chosen
chart format (PNG or SVG, drawn by the same code). The page's text reaches the browser as data,
never as markup: the script writes it with ``textContent`` (hover, legend) or escapes it (SVG).
"""
from __future__ import annotations

import dataclasses
import threading

import streamlit as st

from viz.figures.download_config import PARAM, PNG_SCALE, file_stem, parse_format
from viz.figures.sentence_space import SentenceMap
from viz.i18n import _

NAME = "inside_attention_point_map"

_HTML = "<div class='point-map'></div>"

_CSS = """
.point-map { position: relative; }
.point-map canvas { display: block; width: 100%; cursor: crosshair; }
.point-map .tip { position: absolute; max-width: 60%; padding: 2px 6px; background: #fff; color: #222;
  border: 1px solid #999; border-radius: 3px; font-size: 12px; pointer-events: none; unicode-bidi: plaintext; }
.point-map .save { position: absolute; top: 4px; inset-inline-end: 4px; opacity: 0; font-size: 12px;
  padding: 2px 8px; background: #fff; border: 1px solid #bbb; border-radius: 3px; cursor: pointer; }
.point-map:hover .save, .point-map .save:focus { opacity: 1; }
.point-map .hint { font-size: 12px; color: #777; }
"""

# One paint function draws the map onto a "painter": the canvas on screen, a larger canvas for a
# PNG, or SVG text. Layout in CSS pixels: title on top, plot, axis titles, legend below.
_JS = r"""
const PAD = { left: 56, right: 12, top: 34, bottom: 74 };

function niceTicks(lo, hi) {
  const raw = (hi - lo) / 5, p = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw);
  const ticks = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) ticks.push(+t.toFixed(12));
  return ticks;
}

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

function paint(p, data, view, w, h) {
  const { sx, sy } = scales(view, w, h);
  const right = w - PAD.right, bottom = h - PAD.bottom;
  p.rect(0, 0, w, h, "#ffffff");
  for (const t of niceTicks(view.x0, view.x1)) {
    p.line(sx(t), PAD.top, sx(t), bottom, "#ebebeb", 1);
    p.text(String(t), sx(t), bottom + 16, 11, "#555", "center");
  }
  for (const t of niceTicks(view.y0, view.y1)) {
    p.line(PAD.left, sy(t), right, sy(t), "#ebebeb", 1);
    p.text(String(t), PAD.left - 6, sy(t) + 4, 11, "#555", "right");
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
  let x = PAD.left;  // the legend, one row under the axis title
  for (const l of data.layers) {
    if (l.symbol === "x") p.cross(x + 5, h - 14, 5, l.color); else p.circle(x + 5, h - 14, 4, l.color);
    x = p.text(l.name, x + 14, h - 10, 12, "#333", "left") + 18;
  }
}

function canvasPainter(ctx, family) {
  return {
    rect(x, y, w, h, fill) { ctx.fillStyle = fill; ctx.fillRect(x, y, w, h); },
    line(x0, y0, x1, y1, color, width) {
      ctx.strokeStyle = color; ctx.lineWidth = width; ctx.beginPath(); ctx.moveTo(x0, y0); ctx.lineTo(x1, y1); ctx.stroke();
    },
    circle(x, y, r, color) { ctx.fillStyle = color; ctx.beginPath(); ctx.arc(x, y, r, 0, 2 * Math.PI); ctx.fill(); },
    cross(x, y, r, color) {
      ctx.strokeStyle = color; ctx.lineWidth = 3; ctx.beginPath();
      ctx.moveTo(x - r, y - r); ctx.lineTo(x + r, y + r); ctx.moveTo(x - r, y + r); ctx.lineTo(x + r, y - r); ctx.stroke();
    },
    text(s, x, y, size, color, align, rotate) {  // returns where the text ends (for the legend)
      ctx.save(); ctx.font = `${size}px ${family}`; ctx.fillStyle = color; ctx.textAlign = align;
      ctx.translate(x, y); if (rotate) ctx.rotate(rotate * Math.PI / 180); ctx.fillText(s, 0, 0); ctx.restore();
      ctx.font = `${size}px ${family}`;
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
    circle(x, y, r, color) { parts.push(`<circle cx="${n(x)}" cy="${n(y)}" r="${r}" fill="${color}"/>`); },
    cross(x, y, r, color) {
      parts.push(`<path d="M${n(x - r)} ${n(y - r)}L${n(x + r)} ${n(y + r)}M${n(x - r)} ${n(y + r)}L${n(x + r)} ${n(y - r)}" ` +
                 `stroke="${color}" stroke-width="3"/>`);
    },
    text(s, x, y, size, color, align, rotate) {
      const turn = rotate ? ` transform="rotate(${rotate} ${n(x)} ${n(y)})"` : "";
      parts.push(`<text x="${n(x)}" y="${n(y)}" font-family="${esc(family)}" font-size="${size}" fill="${color}" ` +
                 `text-anchor="${anchor[align]}"${turn}>${esc(s)}</text>`);
      return x + measure(s, size);
    },
    clip(x, y, w, h, draw) {
      const id = `clip${clipped++}`;
      parts.push(`<clipPath id="${id}"><rect x="${x}" y="${y}" width="${w}" height="${h}"/></clipPath><g clip-path="url(#${id})">`);
      draw(); parts.push("</g>");
    },
  };
}

function save(data, view, w, h, family) {
  const d = data.download;
  let blob;
  if (d.format === "svg") {
    const ctx = document.createElement("canvas").getContext("2d");
    const measure = (s, size) => { ctx.font = `${size}px ${family}`; return ctx.measureText(s).width; };
    const p = svgPainter(measure, family);
    paint(p, data, view, w, h);
    blob = new Blob([`<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}">`,
                     ...p.parts, "</svg>"], { type: "image/svg+xml" });
    finish(blob, `${d.filename}.svg`);
  } else {
    const big = document.createElement("canvas");
    big.width = w * d.scale; big.height = h * d.scale;
    const ctx = big.getContext("2d"); ctx.scale(d.scale, d.scale);
    paint(canvasPainter(ctx, family), data, view, w, h);
    big.toBlob((png) => finish(png, `${d.filename}.png`), "image/png");
  }
}

function finish(blob, name) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob); a.download = name; a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

export default function ({ parentElement, data }) {
  const root = parentElement.querySelector(".point-map");
  const make = (tag, cls, text) => {
    const e = document.createElement(tag); if (cls) e.className = cls; if (text != null) e.textContent = text; return e;
  };
  const canvas = make("canvas"), tip = make("div", "tip"), button = make("button", "save", data.download.label);
  button.type = "button"; tip.hidden = true; tip.dir = "auto";
  root.replaceChildren(canvas, tip, button, make("div", "hint", data.hint));
  const family = getComputedStyle(root).fontFamily || "sans-serif";  // the page's own font
  const full = extent(data.layers);
  let view = { ...full }, width = 0, drag = null;

  function draw() {
    width = canvas.clientWidth || 600;
    const ratio = window.devicePixelRatio || 1;
    canvas.width = Math.round(width * ratio); canvas.height = Math.round(data.height * ratio);
    canvas.style.height = `${data.height}px`;
    const ctx = canvas.getContext("2d"); ctx.scale(ratio, ratio);
    paint(canvasPainter(ctx, family), data, view, width, data.height);
    if (drag && drag.moved) {
      ctx.fillStyle = "rgba(31, 119, 180, 0.15)";
      ctx.fillRect(Math.min(drag.x, drag.x2), Math.min(drag.y, drag.y2), Math.abs(drag.x2 - drag.x), Math.abs(drag.y2 - drag.y));
    }
    const { sx, sy } = scales(view, width, data.height);  // where each layer's first point is: the browser tests
    root.dataset.first = JSON.stringify(data.layers.map((l) => l.x.length ? [sx(l.x[0]), sy(l.y[0])] : null));
    root.dataset.drawn = "1";  // the browser tests and bench/page_speed.py wait for this
  }

  function pointer(event) { const r = canvas.getBoundingClientRect(); return [event.clientX - r.left, event.clientY - r.top]; }

  function nearest(mx, my) {  // the point under the pointer, topmost layer first
    const { sx, sy } = scales(view, width, data.height);
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
  }

  const handlers = {
    mousemove(event) {
      const [mx, my] = pointer(event);
      if (drag) { drag.x2 = mx; drag.y2 = my; drag.moved = Math.hypot(mx - drag.x, my - drag.y) > 4; draw(); return; }
      const found = nearest(mx, my);
      tip.hidden = !found;
      if (found) {
        tip.textContent = found[0];
        tip.style.left = `${Math.min(found[1] + 10, width - tip.offsetWidth - 4)}px`;
        tip.style.top = `${found[2] + 12}px`;
      }
    },
    mousedown(event) { const [mx, my] = pointer(event); drag = { x: mx, y: my, x2: mx, y2: my, moved: false }; },
    mouseup() {
      if (drag && drag.moved) {
        const { sx, sy } = scales(view, width, data.height);
        const toX = (px) => view.x0 + (px - PAD.left) / (sx(view.x1) - PAD.left) * (view.x1 - view.x0);
        const toY = (py) => view.y1 - (py - PAD.top) / (sy(view.y0) - PAD.top) * (view.y1 - view.y0);
        view = { x0: toX(Math.min(drag.x, drag.x2)), x1: toX(Math.max(drag.x, drag.x2)),
                 y0: toY(Math.max(drag.y, drag.y2)), y1: toY(Math.min(drag.y, drag.y2)) };
      }
      drag = null; draw();
    },
    mouseleave() { tip.hidden = true; if (drag) { drag = null; draw(); } },
    dblclick() { view = { ...full }; draw(); },
  };
  for (const [name, fn] of Object.entries(handlers)) canvas.addEventListener(name, fn);
  const onSave = () => save(data, view, width, data.height, family);
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
"""

_component = None
_component_lock = threading.Lock()


def _point_map():
    """The component, registered once per process (a second registration would replace it with a warning)."""
    global _component
    with _component_lock:
        if _component is None:
            _component = st.components.v2.component(NAME, html=_HTML, css=_CSS, js=_JS)
        return _component


def map_data(figure: SentenceMap, name: str, fmt: str) -> dict:
    """What the page's script receives: the map, its hint and its download (``fmt`` "png" or
    "svg", a file named after ``name``)."""
    return {**dataclasses.asdict(figure),
            "hint": _("Hover over a dot to read its sentence; drag a box to zoom in, double-click to zoom out."),
            "download": {"format": fmt, "filename": file_stem(name), "scale": PNG_SCALE,
                         "label": _("Download {format}").format(format=fmt.upper())}}


def point_map_ui(figure: SentenceMap, key: str) -> None:
    """Draw ``figure``; its download takes the chart format the sidebar chose."""
    _point_map()(data=map_data(figure, key, parse_format(st.session_state.get(PARAM))), key=key)
