"""The family table: which code opens a checkpoint folder, by the ``"family"`` its config.json
names (this project's own models when it names none; Joey NMT imports; Hugging Face imports; the
tutorials' models; any family registered
with ``register_family``). ``load_model`` and ``describe_folder`` open any folder through it.
A config.json may only name a registered family, so no file can make the server import code."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from model.checkpoints.folder import (CONFIG, OWN_FAMILY, load_checkpoint, read_config, read_header)
from model.core.config import TrainConfig
from model.core.decodable import Decodable, ModelDescription, Vocabulary
from model.core.errors import CheckpointError


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


def _describe_own(folder: Path, raw: dict) -> tuple[ModelDescription, str, str]:
    summary = describe_folder(folder)
    return summary.description, summary.src_lang, summary.tgt_lang


def register_family(name: str, family: Family, built_in: bool = False) -> Family:
    """Open folders whose config.json says ``"family": name`` with ``family``: how a model of
    one's own reaches the app and Python code (``load_model``, ``Translator.from_checkpoint``;
    docs/own-model.md). The imported families (model/foreign/: Joey NMT, Hugging Face, the
    tutorials) register themselves as ``built_in`` when model/foreign is imported; no other
    family takes their names. A config.json may only name a registered family, so no file can
    make the server import code. Returns ``family``."""
    if name in _BUILT_IN and FAMILIES.get(name) is not family:
        raise ValueError(f"{name!r} is built in")
    if built_in:
        _BUILT_IN.add(name)
    FAMILIES[name] = family
    return family


def refuse_to_overwrite(out: Path) -> None:
    """An import writes into a new or empty folder only."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise CheckpointError(f"{out}: exists and is not an empty folder; choose a new one")


FAMILIES: dict[str, Family] = {OWN_FAMILY: Family(_load_own, _describe_own)}  # the imported ones: model/foreign/
_BUILT_IN = {OWN_FAMILY}
