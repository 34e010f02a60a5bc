"""``python -m viz.commands.report`` (``nmt-report``): one translation, by every model named, as a standalone
HTML file that opens offline (viz/html_report.py).
"""
from __future__ import annotations

import argparse
from typing import Sequence

from model.argtypes import run_command
from model.decoding.search import SearchConfig
from model.decoding.translator import Translator
from model.explaining.faithfulness import attention_check
from viz import html_report
from viz.html_report import report_html


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m viz.commands.report", description=html_report.__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", action="append", required=True, help="a model folder (repeatable)")
    parser.add_argument("--text", required=True)
    parser.add_argument("--beam", type=int, default=5)
    parser.add_argument("out")
    args = parser.parse_args(argv)

    def write() -> str:
        translators = [Translator.from_checkpoint(path) for path in args.checkpoint]
        traces = [(t.name, t.translate([args.text], SearchConfig(beam=args.beam))[0]) for t in translators]
        checks = {t.name: attention_check(t.model, trace) for t, (_, trace) in zip(translators, traces)}
        with open(args.out, "w", encoding="utf-8") as handle:
            handle.write(report_html(args.text, traces, checks))
        return f"wrote {args.out}"

    return run_command(write)


if __name__ == "__main__":
    raise SystemExit(main())
