"""The family table: which code opens a checkpoint folder, by the ``"family"`` its config.json
names (this project's own models when it names none; Joey NMT imports; Hugging Face imports; the
tutorials' models; any family registered
with ``register_family``). ``load_model`` and ``describe_folder`` open any folder through it.
A config.json may only name a registered family, so no file can make the server import code."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from model.checkpoints.folder import (CONFIG, OWN_FAMILY, load_checkpoint, load_weights, read_config, read_header,
                                      read_json)
from model.core.config import TrainConfig
from model.core.decodable import Decodable, ModelDescription, Vocabulary
from model.core.errors import CheckpointError
from model.foreign.hf_seq2seq import FAMILY as HF_FAMILY
from model.foreign.hf_seq2seq import describe_raw as describe_hf_raw
from model.foreign.hf_seq2seq import load_hf
from model.foreign.joey import FAMILY as JOEY_FAMILY
from model.foreign.joey import build_joey, describe_raw
from model.foreign.tutorial_vocab import token_list
from model.foreign.tutorials import FAMILY as TUTORIAL_FAMILY
from model.foreign.tutorials import VOCAB_FILE as TUTORIAL_VOCAB
from model.foreign.tutorials import build as build_tutorial
from model.foreign.tutorials import describe as describe_tutorial
from model.foreign.tutorials import kind_of


@dataclass(frozen=True)
class FolderSummary:
    """What a checkpoint folder holds, from its config.json alone (no weights loaded)."""

    description: ModelDescription
    src_lang: str
    tgt_lang: str
    train: Optional[TrainConfig]  # this project's models: how they were trained; None for imports
    imported: bool  # config.json names another family than this project's


def read_family_header(folder: Path) -> dict:
    """config.json of a checkpoint folder (``read_header``), naming a registered family."""
    raw = read_header(folder)
    if not isinstance(raw.get("family", OWN_FAMILY), str) or raw.get("family", OWN_FAMILY) not in FAMILIES:
        raise CheckpointError("{path}: unknown model family {found} (known: {known})", path=str(folder / CONFIG),
                              found=repr(str(raw.get("family"))[:40]), known=", ".join(sorted(FAMILIES)))
    return raw


def describe_folder(folder: Path) -> FolderSummary:
    """The pickers, the alignment command and the results page read this for every folder."""
    raw = read_family_header(folder)
    family = raw.get("family", OWN_FAMILY)
    if family == OWN_FAMILY:
        model_cfg, train_cfg, _ = read_config(folder)
        langs = (train_cfg.src_lang, train_cfg.tgt_lang) if train_cfg else ("en", "fr")
        has_attention = model_cfg.arch != "rnnencdec"
        attention = "multi-head dot-product" if model_cfg.arch == "transformer" else model_cfg.attention
        description = ModelDescription(model_cfg.arch, has_attention, attention if has_attention else "")
        return FolderSummary(description, *langs, train_cfg, False)
    description, src, tgt = FAMILIES[family].describe(folder, raw)
    return FolderSummary(description, src, tgt, None, True)


def load_model(path: str | Path) -> tuple[Decodable, Vocabulary, Vocabulary, dict]:
    """Any checkpoint folder, this project's, imported or of a registered family: (model in
    eval mode, source vocabulary, target vocabulary, config.json dict)."""
    folder = Path(path)
    if not folder.is_dir():
        raise CheckpointError("{path}: not a checkpoint folder (no such directory)", path=str(folder))
    raw = read_family_header(folder)
    model, src_vocab, tgt_vocab = FAMILIES[raw.get("family", OWN_FAMILY)].load(folder, raw)
    return model.eval(), src_vocab, tgt_vocab, raw


@dataclass(frozen=True)
class Family:
    """How to open checkpoint folders whose config.json says ``"family": <name>``."""

    load: Callable[[Path, dict], tuple[Decodable, Vocabulary, Vocabulary]]  # (folder, config.json) -> model, vocabularies
    describe: Callable[[Path, dict], tuple[ModelDescription, str, str]]  # -> description, source and target language


def _load_own(folder: Path, raw: dict):
    return load_checkpoint(folder)[:3]


def _load_joey(folder: Path, raw: dict):
    model, src_vocab, tgt_vocab = build_joey(folder, raw)
    load_weights(folder, model.joey)
    return model, src_vocab, tgt_vocab


def _describe_own(folder: Path, raw: dict) -> tuple[ModelDescription, str, str]:
    summary = describe_folder(folder)
    return summary.description, summary.src_lang, summary.tgt_lang


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


def _load_tutorial(folder: Path, raw: dict):
    kind, sizes, _, _ = _tutorial_settings(folder, raw)
    vocab = read_json(folder / TUTORIAL_VOCAB)
    for side in ("source", "target"):
        vocab[side] = token_list(vocab.get(side), str(folder / TUTORIAL_VOCAB), side)
    model, src_vocab, tgt_vocab = build_tutorial(kind, sizes, vocab, str(folder / CONFIG))
    load_weights(folder, model)
    return model, src_vocab, tgt_vocab


def _describe_tutorial(folder: Path, raw: dict) -> tuple[ModelDescription, str, str]:
    kind, sizes, src, tgt = _tutorial_settings(folder, raw)
    return describe_tutorial(kind, sizes), src, tgt


def register_family(name: str, family: Family) -> None:
    """Open folders whose config.json says ``"family": name`` with ``family``: how a model of
    one's own reaches the app and Python code (``load_model``, ``Translator.from_checkpoint``;
    docs/own-model.md); the command lines know the built-in families. A config.json may only
    name a registered family, so no file can make the server import code."""
    if name in (OWN_FAMILY, JOEY_FAMILY, TUTORIAL_FAMILY, HF_FAMILY):
        raise ValueError(f"{name!r} is built in")
    FAMILIES[name] = family


FAMILIES: dict[str, Family] = {OWN_FAMILY: Family(_load_own, _describe_own),
                               JOEY_FAMILY: Family(_load_joey, lambda folder, raw: describe_raw(raw, folder / CONFIG)),
                               TUTORIAL_FAMILY: Family(_load_tutorial, _describe_tutorial),
                               HF_FAMILY: Family(load_hf, lambda folder, raw: describe_hf_raw(raw, folder / CONFIG))}
