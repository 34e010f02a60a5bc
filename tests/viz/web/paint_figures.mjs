// Paints every chart of a JSON file (a list of what viz/pages/parts/canvas_charts.py · chart_data
// sends the browser) with a recording painter, as the page would at two widths; prints, per chart,
// its kind, the texts it wrote and how many numbers it drew. Exits 1 when a chart draws a number
// that is not finite (a field the script reads that Python no longer sends) or throws.
// Run by tests/viz/test_web.py: node paint_figures.mjs charts.json
import { readFileSync } from "node:fs";
import { KINDS } from "../../../viz/web/canvas_chart.js";
import { measure, numbersOf, recordingPainter, textsOf } from "./recording_painter.mjs";

const charts = JSON.parse(readFileSync(process.argv[2], "utf8"));
const found = [];
let failed = false;
for (const data of charts) {
  const kind = KINDS[data.kind];
  for (const width of [420, 900]) {
    try {
      const state = kind.start(data), box = kind.layout(data, width, measure), p = recordingPainter();
      kind.paint(p, data, state, width, box.h, box);
      const numbers = numbersOf(p.calls), bad = numbers.filter((v) => !Number.isFinite(v));
      const marks = kind.marks(data, state, width, box.h, box);
      if (bad.length || !Number.isFinite(box.h)) {
        failed = true;
        console.error(`${data.kind} at ${width}px drew ${bad.length} numbers that are not finite (height ${box.h})`);
      }
      if (width === 900) found.push({ kind: data.kind, texts: textsOf(p.calls), numbers: numbers.length, marks });
    } catch (error) {
      failed = true;
      console.error(`${data.kind} at ${width}px: ${error.stack}`);
    }
  }
}
console.log(JSON.stringify(found));
process.exit(failed ? 1 : 0);
