"""Which heads matter, recorded in a Transformer's card (read back as
``model.cards.schema.HeadImportanceRecord``): what ``python -m model.heads --card`` writes."""
from __future__ import annotations

import json
from pathlib import Path

from model.checkpoints.folder import CARD, read_json
from model.core.errors import CheckpointError


def record_in_card(folder: Path, report: dict, command: str) -> None:
    """``report`` (``HeadImportance.to_json`` with the AER grids ``python -m model.heads`` adds)
    into ``folder``'s card under ``head_importance``, with the command that measured it."""
    if not (folder / CARD).is_file():
        raise CheckpointError("{folder}: no {card} to record in (write the model's card first)", folder=str(folder),
                              card=CARD)
    card = read_json(folder / CARD)
    card["head_importance"] = {**report, "command": command}
    (folder / CARD).write_text(json.dumps(card, indent=2, ensure_ascii=False) + "\n")
