"""``python -m viz.commands.cards`` (``nmt-cards``): renders ``checkpoints/README.md`` and ``docs/results.md``
from the model cards (viz/cards_markdown.py).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from model.core.errors import CheckpointError
from viz import cards_markdown
from viz.cards_markdown import HEADER, card_section, comparison_table, read_cards, results_text


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m viz.commands.cards", description=cards_markdown.__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", nargs="?", default="checkpoints",
                        help="folder of checkpoint folders; README.md is written there (default: checkpoints)")
    parser.add_argument("--results", metavar="FILE",
                        help="write the results page (e.g. docs/results.md) instead of the folder's README.md")
    args = parser.parse_args(argv)
    folder = Path(args.folder)
    try:
        if not folder.is_dir():
            raise CheckpointError(f"{folder}: not a folder")
        cards = read_cards(folder)
        if not cards:  # an empty README over a real one would lose every card
            raise CheckpointError(f"{folder}: no */card.json with test scores; nothing to render")
        if args.results:
            text = results_text(folder, cards)
    except CheckpointError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.results:
        Path(args.results).parent.mkdir(parents=True, exist_ok=True)
        Path(args.results).write_text(text)
        print(f"wrote {args.results} ({len(cards)} cards)")
        return 0
    text = HEADER + "## Comparison\n\n" + comparison_table(cards) + "\n" + "\n".join(card_section(c, folder) for c in cards)
    (folder / "README.md").write_text(text)
    print(f"wrote {folder / 'README.md'} ({len(cards)} cards)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
