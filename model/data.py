"""``python -m model.data`` (``nmt-data``): download the Multi30k and Tatoeba corpora
(model/corpus/parallel.py).
"""
from __future__ import annotations

import argparse
import sys
from typing import Sequence

from model.core.errors import DataError
from model.corpus import parallel
from model.corpus.parallel import TATOEBA_FILE, download_multi30k, download_tatoeba


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m model.data", description=parallel.__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    dl = sub.add_parser("download-multi30k", help="fetch Multi30k task 1 (raw) into DIR")
    dl.add_argument("dir")
    dl.add_argument("--langs", default="en,fr,de", help="comma-separated language suffixes")
    tat = sub.add_parser("download-tatoeba", help=f"fetch Tatoeba English-French into DIR/{TATOEBA_FILE}")
    tat.add_argument("dir")
    args = parser.parse_args(argv)
    try:
        if args.command == "download-tatoeba":
            download_tatoeba(args.dir)
        else:
            download_multi30k(args.dir, args.langs.split(","))
    except (OSError, DataError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
