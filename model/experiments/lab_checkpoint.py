"""A Lab model as a checkpoint folder, so that every page opens it by name like a shipped model.

    save(trained, settings, folder)   # model.safetensors, config.json ("family": "lab"), card.json
    register()                        # load_model and the pages open such folders

The folder holds the network's weights, its ``ModelConfig``, the task's tokens on both sides and
the experiment's settings; its languages are the task's name on both sides (a Lab task has no
language), e.g. "reverse" → "reverse". Nothing in it is pickled.
"""
from __future__ import annotations

from dataclasses import asdict, fields
from pathlib import Path


from model.checkpoints.families import FAMILIES, Family, register_family
from model.checkpoints.folder import CONFIG, load_weights, write_folder
from model.core.config import ModelConfig, dataclass_from_dict
from model.core.decodable import ModelDescription
from model.core.errors import CheckpointError
from model.experiments.lab_run import ARCHS, LabSettings, TrainedModel
from model.experiments.tasks import TASKS
from model.experiments.token_vocab import SPECIALS, TokenVocab
from model.network.architectures import build_model

FAMILY = "lab"
MAX_TOKENS = 2_000  # a Lab task's vocabulary is small; a larger one is not a Lab folder


def save(trained: TrainedModel, settings: LabSettings, folder: Path) -> Path:
    """Write ``trained`` (one model of the experiment ``settings``) as a checkpoint folder."""
    translator = trained.translator
    src, tgt = translator.src_vocab, translator.tgt_vocab
    config = {"family": FAMILY, "train": None,
              "lab": {"arch": trained.arch, "model": asdict(translator.model.config), "chars": src.chars,
                      "source": list(src.symbols[len(SPECIALS):]), "target": list(tgt.symbols[len(SPECIALS):]),
                      "settings": asdict(settings)}}
    card = {"name": folder.name, "arch": trained.arch, "origin": "the Lab (trained in the app)",
            "trained_on": f"the Lab's {settings.task} task, lengths {settings.train_lengths}",
            "parameters": trained.parameters,
            "how_trained": f"Trained in the Lab for {trained.seconds:.0f} s ({trained.updates:,} updates), seed "
                           f"{settings.seed}, tested on lengths {settings.test_lengths}."}
    return write_folder(folder, config, card, translator.model.state_dict())


def _settings(raw: dict, where: Path) -> tuple[dict, ModelConfig, LabSettings]:
    lab = raw.get("lab")
    if not isinstance(lab, dict) or lab.get("arch") not in ARCHS:
        raise CheckpointError(f"{where}: no \"lab\" settings naming one of {', '.join(ARCHS)}")
    try:
        config = dataclass_from_dict(ModelConfig, lab["model"])
        known = {f.name for f in fields(LabSettings)}
        settings = LabSettings(**{k: (tuple(v) if k == "archs" else v) for k, v in lab["settings"].items() if k in known})
    except (KeyError, TypeError, ValueError) as exc:
        raise CheckpointError(f"{where}: malformed \"lab\" settings ({type(exc).__name__}: {str(exc)[:100]})") from None
    if settings.task not in TASKS or config.arch != lab["arch"]:
        raise CheckpointError(f"{where}: the \"lab\" settings do not describe a Lab model")
    for side in ("source", "target"):
        tokens = lab.get(side)
        if not isinstance(tokens, list) or not 0 < len(tokens) <= MAX_TOKENS or not all(isinstance(t, str) for t in tokens):
            raise CheckpointError(f"{where}: \"lab\".{side} must be the task's tokens")
    return lab, config, settings


def load(folder: Path, raw: dict):
    lab, config, _ = _settings(raw, folder / CONFIG)
    src, tgt = (TokenVocab(lab[side], chars=bool(lab.get("chars"))) for side in ("source", "target"))
    if (len(src), len(tgt)) != (config.src_vocab_size, config.tgt_vocab_size):
        raise CheckpointError(f"{folder / CONFIG}: the tokens do not match the model's vocabulary sizes")
    model = build_model(config)
    load_weights(folder, model)
    return model, src, tgt


def describe(folder: Path, raw: dict) -> tuple[ModelDescription, str, str]:
    lab, config, settings = _settings(raw, folder / CONFIG)
    arch = lab["arch"]
    attention = "" if arch == "rnnencdec" else "multi-head dot-product" if arch == "transformer" else config.attention
    description = ModelDescription(arch, arch != "rnnencdec", attention, origin="the Lab (trained in the app)",
                                   summary=f"{arch}, trained in the Lab on {settings.task} "
                                           f"(lengths {settings.train_lengths})")
    return description, settings.task, settings.task


def register() -> None:
    """Let load_model and the pages open Lab folders (once per process)."""
    if FAMILY not in FAMILIES:
        register_family(FAMILY, Family(load, describe))
