"""Models trained elsewhere, converted once into checkpoint folders that every page and command
opens (model/checkpoints/families.py): Joey NMT 2.x models (model/foreign/joey.py), Hugging Face
encoder-decoders (model/foreign/hf_seq2seq.py) and the models students train in the PyTorch,
bentrevett and d2l tutorials (model/foreign/tutorials.py)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Optional


from model.checkpoints.folder import write_folder
from model.core.errors import CheckpointError
from model.foreign.hf_seq2seq import FAMILY as HF_FAMILY
from model.foreign.hf_seq2seq import HF_DIR, import_card as hf_import_card, read_hf_dir, write_hf_files
from model.foreign.joey import FAMILY as JOEY_FAMILY
from model.foreign.joey import read_joey_dir
from model.foreign.tutorials import FAMILY as TUTORIAL_FAMILY
from model.foreign.tutorials import VOCAB_FILE, TutorialImport, import_card, kind_of, read_tutorial


def import_joey(joey_dir: str | Path, out: str | Path, ckpt: str = "") -> Path:
    """Convert a Joey NMT 2.x recurrent model folder into a checkpoint folder (model/foreign/joey.py):
    Joey's parameters as safetensors, its settings in config.json, its token lists and
    tokenizer files, and a card saying where it came from."""
    out = Path(out)
    _refuse_to_overwrite(out)
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


def import_hf(hf_dir: str | Path, out: str | Path, langs: Optional[tuple[str, str]] = None) -> Path:
    """Convert a Hugging Face encoder-decoder folder (``save_pretrained``'s) into a checkpoint
    folder (model/foreign/hf_seq2seq.py): its own files under hf/, the weights as safetensors,
    the checked settings in config.json, and a card. Everything is read and checked before
    anything is written."""
    out, source = Path(out), Path(hf_dir)
    _refuse_to_overwrite(out)
    found = read_hf_dir(source, langs)
    out.mkdir(parents=True, exist_ok=True)
    write_hf_files(found, source, out / HF_DIR)
    config = {"family": HF_FAMILY, "train": None, "transformers_version": found.version, "hf": found.settings.as_dict()}
    return write_folder(out, config, hf_import_card(out.name, found.settings, found, source))


def import_tutorial(kind: str, weights: str | Path, vocab: str | Path, out: str | Path,
                    langs: Optional[tuple[str, str]] = None) -> Path:
    """Convert a model a student trained in one of the tutorials (model/foreign/tutorials.py:
    ``pytorch``, ``bentrevett``, ``d2l``) into a checkpoint folder (``write_tutorial``).
    Everything is read and checked before anything is written."""
    _refuse_to_overwrite(Path(out))
    found = read_tutorial(kind, Path(weights), Path(vocab))
    return write_tutorial(found, out, langs, f"{Path(weights).name} and {Path(vocab).name}")


def write_tutorial(found: TutorialImport, out: str | Path, langs: Optional[tuple[str, str]] = None,
                   source: str = "a running notebook") -> Path:
    """A checked tutorial model (from files or a notebook's live objects) as a checkpoint folder:
    the tensors as safetensors under the tutorial's names, ``vocab.json``, ``config.json`` (family
    "tutorial", the kind, its sizes and languages: ``langs``, else the tutorial's own direction)
    and a card saying where it came from (``source``)."""
    out = Path(out)
    _refuse_to_overwrite(out)
    src_lang, tgt_lang = langs or kind_of(found.kind).module.LANGS
    out.mkdir(parents=True, exist_ok=True)
    (out / VOCAB_FILE).write_text(json.dumps(found.vocab, ensure_ascii=False) + "\n", encoding="utf-8")
    config = {"family": TUTORIAL_FAMILY, "train": None,
              "tutorial": {"kind": found.kind, "sizes": found.sizes, "src_lang": src_lang, "tgt_lang": tgt_lang}}
    return write_folder(out, config, import_card(out.name, found.kind, source, found.sizes), found.state)


def _refuse_to_overwrite(out: Path) -> None:
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise CheckpointError(f"{out}: exists and is not an empty folder; choose a new one")
