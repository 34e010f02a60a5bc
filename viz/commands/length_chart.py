"""``python -m viz.commands.length_chart`` (``nmt-length-chart``): interactive BLEU-by-length charts (HTML)
beside a ``model.evaluate`` report (viz/figures/length_chart.py).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from viz.figures import length_chart
from viz.figures.length_chart import write_report_charts


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m viz.commands.length_chart", description=length_chart.__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("report_dir", help="folder written by python -m model.evaluate --out")
    args = parser.parse_args(argv)
    written = write_report_charts(Path(args.report_dir))
    if not written:
        print(f"error: {args.report_dir} holds no scores.json or stress.json from python -m model.evaluate",
              file=sys.stderr)
        return 2
    for path in written:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
