"""Hugging Face encoder-decoders as a family of checkpoint folders: how an imported folder opens
(``HF``, registered as the built-in family "hf") and how a ``save_pretrained`` folder is imported
once (``import_hf``)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from model.checkpoints.families import Family, refuse_to_overwrite, register_family
from model.checkpoints.folder import CONFIG, write_folder
from model.foreign.hf.seq2seq import FAMILY as HF_FAMILY
from model.foreign.hf.seq2seq import HF_DIR, describe_raw, load_hf, read_hf_dir, write_hf_files
from model.foreign.hf.seq2seq import import_card as hf_import_card


def describe(folder: Path, raw: dict):
    return describe_raw(raw, folder / CONFIG)


def import_hf(hf_dir: str | Path, out: str | Path, langs: Optional[tuple[str, str]] = None) -> Path:
    """Convert a Hugging Face encoder-decoder folder (``save_pretrained``'s) into a checkpoint
    folder (model/foreign/hf/seq2seq.py): its own files under hf/, the weights as safetensors,
    the checked settings in config.json, and a card. Everything is read and checked before
    anything is written."""
    out, source = Path(out), Path(hf_dir)
    refuse_to_overwrite(out)
    found = read_hf_dir(source, langs)
    out.mkdir(parents=True, exist_ok=True)
    write_hf_files(found, source, out / HF_DIR)
    config = {"family": HF_FAMILY, "train": None, "transformers_version": found.version, "hf": found.settings.as_dict()}
    return write_folder(out, config, hf_import_card(out.name, found.settings, found, source))


HF = register_family(HF_FAMILY, Family(load_hf, describe), built_in=True)
