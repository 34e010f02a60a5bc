"""Alignment scores recorded in a model's card, by gold set (read back as
``model.cards.schema.AlignmentResult``): what ``python -m model.align --card`` writes."""
from __future__ import annotations

import json
from pathlib import Path

from model.checkpoints.folder import CARD, read_json
from model.scoring.attention_alignment import PAIRED, AlignmentReport


def record_in_card(folder: Path, report: AlignmentReport, command: str, digest: str = "") -> None:
    """The rows of ``folder``'s model, of its pairings with a model of the other direction ("A + B")
    and of the baselines, into its card under ``alignment[gold set]`` (read back as
    model.cards.schema.AlignmentResult), with the gold set's ``gold_digest``."""
    card = read_json(folder / CARD) if (folder / CARD).is_file() else {}
    rows = [r.to_json() for r in report.rows if r.model is None or folder.name in r.model.split(PAIRED)]
    card.setdefault("alignment", {})[report.gold] = {"rows": rows, "command": command, "sentences": report.sentences,
                                                     "gold_digest": digest}
    (folder / CARD).write_text(json.dumps(card, indent=2, ensure_ascii=False) + "\n")
