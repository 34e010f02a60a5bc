"""The one capped reader of the JSON files other tools write (a Hugging Face config, a tutorial's
vocab.json): a JSON object, or one CheckpointError line saying what is wrong with the file."""
from __future__ import annotations

import json
from pathlib import Path

from model.core.errors import CheckpointError


def read_json_object(path: Path, max_bytes: int, what: str, missing: str = "") -> dict:
    """The JSON object in ``path`` (``what`` it should be, for the messages; ``missing``: what to
    add when the file is not there)."""
    if not path.is_file():
        raise CheckpointError(f"{path}: missing ({what}{'; ' + missing if missing else ''})")
    if path.stat().st_size > max_bytes:
        raise CheckpointError(f"{path}: larger than {max_bytes // 2**20} MiB; not a {what}")
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise CheckpointError(f"{path}: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except (json.JSONDecodeError, RecursionError) as exc:
        raise CheckpointError(f"{path}: not valid JSON ({str(exc)[:100]})") from None
    if not isinstance(data, dict):
        raise CheckpointError(f"{path}: not a JSON object ({what})")
    return data
