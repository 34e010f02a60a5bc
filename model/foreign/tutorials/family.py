"""The tutorials' models as a family of checkpoint folders: how an imported folder opens
(``TUTORIAL``, registered as the built-in family "tutorial") and how a student's saved model is
imported once (``import_tutorial``, or ``write_tutorial`` from a notebook's live objects)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

from model.checkpoints.families import Family, refuse_to_overwrite, register_family
from model.checkpoints.folder import CONFIG, load_weights, read_json, write_folder
from model.core.decodable import ModelDescription
from model.core.errors import CheckpointError
from model.foreign.tutorials.tutorial_vocab import token_list
from model.foreign.tutorials.tutorials import FAMILY as TUTORIAL_FAMILY
from model.foreign.tutorials.tutorials import VOCAB_FILE, TutorialImport, import_card, kind_of, read_tutorial
from model.foreign.tutorials.tutorials import build as build_tutorial
from model.foreign.tutorials.tutorials import describe as describe_tutorial


def _tutorial_settings(folder: Path, raw: dict) -> tuple[str, dict, str, str]:
    """(kind, sizes, source language, target language) of an imported tutorial folder's config.json."""
    where = str(folder / CONFIG)
    settings = raw.get("tutorial")
    if not isinstance(settings, dict) or not isinstance(settings.get("sizes"), dict):
        raise CheckpointError(f"{where}: no \"tutorial\" settings with the model's sizes")
    kind, sizes = settings.get("kind"), settings["sizes"]
    kind_of(kind, where)
    if not all(isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) for k, v in sizes.items()):
        raise CheckpointError(f"{where}: the tutorial model's sizes must be whole numbers")
    langs = (settings.get("src_lang"), settings.get("tgt_lang"))
    if not all(isinstance(lang, str) and 0 < len(lang) <= 10 for lang in langs):
        raise CheckpointError(f"{where}: src_lang and tgt_lang must be short language codes")
    return kind, sizes, *langs


def load(folder: Path, raw: dict):
    kind, sizes, _, _ = _tutorial_settings(folder, raw)
    vocab = read_json(folder / VOCAB_FILE)
    for side in ("source", "target"):
        vocab[side] = token_list(vocab.get(side), str(folder / VOCAB_FILE), side)
    model, src_vocab, tgt_vocab = build_tutorial(kind, sizes, vocab, str(folder / CONFIG))
    load_weights(folder, model)
    return model, src_vocab, tgt_vocab


def describe(folder: Path, raw: dict) -> tuple[ModelDescription, str, str]:
    kind, sizes, src, tgt = _tutorial_settings(folder, raw)
    return describe_tutorial(kind, sizes), src, tgt


def import_tutorial(kind: str, weights: str | Path, vocab: str | Path, out: str | Path,
                    langs: Optional[tuple[str, str]] = None) -> Path:
    """Convert a model a student trained in one of the tutorials (model/foreign/tutorials/tutorials.py:
    ``pytorch``, ``bentrevett``, ``d2l``) into a checkpoint folder (``write_tutorial``).
    Everything is read and checked before anything is written."""
    refuse_to_overwrite(Path(out))
    found = read_tutorial(kind, Path(weights), Path(vocab))
    return write_tutorial(found, out, langs, f"{Path(weights).name} and {Path(vocab).name}")


def write_tutorial(found: TutorialImport, out: str | Path, langs: Optional[tuple[str, str]] = None,
                   source: str = "a running notebook") -> Path:
    """A checked tutorial model (from files or a notebook's live objects) as a checkpoint folder:
    the tensors as safetensors under the tutorial's names, ``vocab.json``, ``config.json`` (family
    "tutorial", the kind, its sizes and languages: ``langs``, else the tutorial's own direction)
    and a card saying where it came from (``source``)."""
    out = Path(out)
    refuse_to_overwrite(out)
    src_lang, tgt_lang = langs or kind_of(found.kind).module.LANGS
    out.mkdir(parents=True, exist_ok=True)
    (out / VOCAB_FILE).write_text(json.dumps(found.vocab, ensure_ascii=False) + "\n", encoding="utf-8")
    config = {"family": TUTORIAL_FAMILY, "train": None,
              "tutorial": {"kind": found.kind, "sizes": found.sizes, "src_lang": src_lang, "tgt_lang": tgt_lang}}
    return write_folder(out, config, import_card(out.name, found.kind, source, found.sizes), found.state)


TUTORIAL = register_family(TUTORIAL_FAMILY, Family(load, describe), built_in=True)
