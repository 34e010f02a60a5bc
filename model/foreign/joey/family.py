"""Joey NMT as a family of checkpoint folders: how an imported folder opens (``JOEY``, registered
as the built-in family "joey") and how a Joey model folder is imported once (``import_joey``)."""
from __future__ import annotations

import shutil
from pathlib import Path

from model.checkpoints.families import Family, refuse_to_overwrite, register_family
from model.checkpoints.folder import CONFIG, load_weights, write_folder
from model.foreign.joey.joey import FAMILY as JOEY_FAMILY
from model.foreign.joey.joey import build_joey, describe_raw, read_joey_dir


def load(folder: Path, raw: dict):
    model, src_vocab, tgt_vocab = build_joey(folder, raw)
    load_weights(folder, model.joey)
    return model, src_vocab, tgt_vocab


def describe(folder: Path, raw: dict):
    return describe_raw(raw, folder / CONFIG)


def import_joey(joey_dir: str | Path, out: str | Path, ckpt: str = "") -> Path:
    """Convert a Joey NMT 2.x recurrent model folder into a checkpoint folder (model/foreign/joey/joey.py):
    Joey's parameters as safetensors, its settings in config.json, its token lists and
    tokenizer files, and a card saying where it came from."""
    out = Path(out)
    refuse_to_overwrite(out)
    found = read_joey_dir(joey_dir, ckpt, name=out.name)
    out.mkdir(parents=True, exist_ok=True)
    for side in ("src", "trg"):
        (out / found.data[side]["voc_file"]).write_text("\n".join(found.tokens[side]) + "\n", encoding="utf-8")
    for name, source in found.files.items():
        shutil.copyfile(source, out / name)
    config = {"family": JOEY_FAMILY, "joeynmt_version": found.version, "train": None,
              "joey": {"model": found.settings.model, "data": found.data,
                       "special_symbols": found.settings.special_symbols, "testing": found.settings.testing}}
    return write_folder(out, config, found.card, found.state)


JOEY = register_family(JOEY_FAMILY, Family(load, describe), built_in=True)
