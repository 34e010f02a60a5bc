"""Models trained elsewhere, converted once into checkpoint folders that every page and command
opens (model/checkpoints/families.py): Joey NMT 2.x recurrent models (model/foreign/joey.py)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from safetensors.torch import save_file

from model.checkpoints.folder import CARD, CONFIG, FORMAT, FORMAT_VERSION, WEIGHTS
from model.core.errors import CheckpointError
from model.foreign.joey import FAMILY as JOEY_FAMILY
from model.foreign.joey import read_joey_dir


def import_joey(joey_dir: str | Path, out: str | Path, ckpt: str = "") -> Path:
    """Convert a Joey NMT 2.x recurrent model folder into a checkpoint folder (model/foreign/joey.py):
    Joey's parameters as safetensors, its settings in config.json, its token lists and
    tokenizer files, and a card saying where it came from."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise CheckpointError(f"{out}: exists and is not an empty folder; choose a new one")
    found = read_joey_dir(joey_dir, ckpt, name=out.name)
    out.mkdir(parents=True, exist_ok=True)
    save_file({k: v.detach().float().clone().contiguous() for k, v in found.state.items()},  # clone: tied weights
              str(out / (WEIGHTS + ".tmp")))
    (out / (WEIGHTS + ".tmp")).replace(out / WEIGHTS)
    for side in ("src", "trg"):
        (out / found.data[side]["voc_file"]).write_text("\n".join(found.tokens[side]) + "\n", encoding="utf-8")
    for name, source in found.files.items():
        shutil.copyfile(source, out / name)
    config = {"format": FORMAT, "format_version": FORMAT_VERSION, "family": JOEY_FAMILY,
              "joeynmt_version": found.version, "train": None,
              "joey": {"model": found.settings.model, "data": found.data,
                       "special_symbols": found.settings.special_symbols, "testing": found.settings.testing}}
    (out / CONFIG).write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    (out / CARD).write_text(json.dumps(found.card, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return out

