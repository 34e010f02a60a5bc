"""Checkpoints: a folder that rebuilds its own model. No pickle anywhere.

    model.safetensors   weights (fp32, or fp16 for shipping)
    config.json         format version, ModelConfig, TrainConfig, vocabulary file names
    src.spm.model       source SentencePiece model
    tgt.spm.model       target SentencePiece model
    card.json           training summary and test scores (optional)

Loading validates everything before trusting it and raises CheckpointError naming the
file and the problem. A folder whose config.json names a ``"family"`` holds a model of another
kind, opened through model/checkpoints/families.py (``load_model``).
"""
from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Optional

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import save_file

from model.core.config import MAX_PARAMETERS, ModelConfig, TrainConfig, dataclass_from_dict
from model.corpus.vocab import Vocab
from model.core.errors import CheckpointError, ConfigError
from model.network.architectures import OwnModel, build_model

FORMAT = "bahdanau-nmt-checkpoint"
FORMAT_VERSION = 1
WEIGHTS, CONFIG, CARD = "model.safetensors", "config.json", "card.json"
SRC_VOCAB, TGT_VOCAB = "src.spm.model", "tgt.spm.model"
MAX_JSON_BYTES = 10 * 2**20
MAX_VOCAB_BYTES = 50 * 2**20  # a 200k-piece SentencePiece model is about 5 MB


def write_folder(path: str | Path, config: dict, card: Optional[dict] = None,
                 state: Optional[dict[str, torch.Tensor]] = None, dtype: torch.dtype = torch.float32) -> Path:
    """What every checkpoint folder has, written the one way (this project's models, the Lab's
    and every import): the weights ``state`` as safetensors in ``dtype`` (written aside, then
    moved into place), config.json (``config`` after the format's name and version) and, when
    given, card.json. Returns the folder."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    if state is not None:  # cloned: weights a model ties to each other are written apart
        tensors = {k: v.detach().to(dtype).clone().contiguous() for k, v in state.items()}
        save_file(tensors, str(path / (WEIGHTS + ".tmp")))
        (path / (WEIGHTS + ".tmp")).replace(path / WEIGHTS)
    config = {"format": FORMAT, "format_version": FORMAT_VERSION, **config}
    (path / CONFIG).write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if card is not None:
        (path / CARD).write_text(json.dumps(card, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def save_checkpoint(path: str | Path, model: OwnModel, src_vocab: Vocab, tgt_vocab: Vocab,
                    train: Optional[TrainConfig] = None, card: Optional[dict] = None,
                    dtype: torch.dtype = torch.float32) -> Path:
    """Write a complete checkpoint folder (atomically replaced files) and return its path."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    src_vocab.save(path / SRC_VOCAB)
    tgt_vocab.save(path / TGT_VOCAB)
    return write_folder(path, {"model": asdict(model.config), "train": asdict(train) if train else None,
                               "src_vocab": SRC_VOCAB, "tgt_vocab": TGT_VOCAB,
                               "dtype": str(dtype).replace("torch.", "")}, card, model.state_dict(), dtype)


def _present_and_small(path: Path, limit: int, too_large: CheckpointError) -> None:
    """Refuse a file that is missing, or larger than ``limit`` bytes (with ``too_large``), before reading it."""
    if not path.is_file():
        raise CheckpointError("{path}: missing", path=str(path))
    if path.stat().st_size > limit:
        raise too_large


def read_json(path: Path) -> dict:
    """Parse a small JSON object file or raise CheckpointError."""
    _present_and_small(path, MAX_JSON_BYTES, CheckpointError("{path}: larger than {mib} MiB; not a config",
                                                             path=str(path), mib=MAX_JSON_BYTES // 2**20))
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CheckpointError("{path}: not valid JSON ({error})", path=str(path), error=str(exc)) from None
    if not isinstance(data, dict):
        raise CheckpointError("{path}: expected a JSON object", path=str(path))
    return data


OWN_FAMILY = "bahdanau"  # config.json without "family": a model of this project


def read_header(folder: Path) -> dict:
    """config.json of a checkpoint folder, with its format and version checked."""
    raw = read_json(folder / CONFIG)
    if raw.get("format") != FORMAT:
        raise CheckpointError("{path}: not a {format} config (format={found})", path=str(folder / CONFIG),
                              format=FORMAT, found=repr(raw.get("format"))[:40])
    if raw.get("format_version") != FORMAT_VERSION:
        raise CheckpointError("{path}: unknown format_version {found}; this code reads version {version}",
                              path=str(folder / CONFIG), found=repr(raw.get("format_version"))[:40],
                              version=FORMAT_VERSION)
    return raw


def is_imported(raw: dict) -> bool:
    """Whether config.json ``raw`` describes a model imported from another toolkit."""
    return raw.get("family", OWN_FAMILY) != OWN_FAMILY


def read_config(folder: Path) -> tuple[ModelConfig, Optional[TrainConfig], dict]:
    """The model and training configs of one of this project's checkpoints (CheckpointError
    for an imported model, which has neither)."""
    raw = read_header(folder)
    if is_imported(raw):
        raise CheckpointError("{path}: an imported {family} model, not one trained by this project", path=str(folder),
                              family=str(raw.get("family")))
    try:
        model_cfg = dataclass_from_dict(ModelConfig, raw.get("model"))
        model_cfg.validate()
        train_cfg = dataclass_from_dict(TrainConfig, raw["train"]) if raw.get("train") else None
    except ConfigError as exc:
        raise CheckpointError(f"{folder / CONFIG}: {exc}") from None
    return model_cfg, train_cfg, raw


def _meta_model(config: ModelConfig) -> OwnModel:
    """The model's structure on the meta device: no memory, and not initialised (the paper's
    N(0, 0.001^2) for the alignment model would run normal_ on meta, whose first call imports
    torch._dynamo: 1.4 s per process, a quarter of the app's cold start)."""
    with torch.device("meta"):
        return build_model(config, initialise=False)


def _checked_meta_model(config: ModelConfig, where: Path) -> OwnModel:
    """``_meta_model``, refused when the config asks for more than MAX_PARAMETERS."""
    model = _meta_model(config)
    if model.num_parameters() > MAX_PARAMETERS:
        raise CheckpointError("{path}: config asks for {n:,} parameters, more than the {limit:,} this loader allows",
                              path=str(where), n=model.num_parameters(), limit=MAX_PARAMETERS)
    return model


def read_weights(path: Path, expected: dict[str, tuple]) -> dict[str, torch.Tensor]:
    if not path.is_file():
        raise CheckpointError("{path}: missing", path=str(path))
    try:
        with safe_open(str(path), framework="pt") as handle:
            names = set(handle.keys())
            missing, unexpected = sorted(set(expected) - names), sorted(names - set(expected))
            if missing or unexpected:
                raise CheckpointError("{path}: tensor names do not match the config (missing {missing}, unexpected "
                                      "{unexpected})", path=str(path), missing=str(missing[:5]),
                                      unexpected=str(unexpected[:5]))
            for name in expected:
                shape = tuple(handle.get_slice(name).get_shape())
                if shape != expected[name]:
                    raise CheckpointError("{path}: tensor {name} has shape {shape}, config implies {expected}",
                                          path=str(path), name=name, shape=str(shape), expected=str(expected[name]))
            tensors = {name: handle.get_tensor(name) for name in expected}
    except (SafetensorError, OSError, RuntimeError, ValueError) as exc:
        if isinstance(exc, CheckpointError):
            raise
        raise CheckpointError("{path}: not a readable safetensors file ({error})", path=str(path),
                              error=str(exc)) from None
    for name, tensor in tensors.items():
        if not tensor.is_floating_point():
            raise CheckpointError("{path}: tensor {name} has dtype {dtype}, expected floating point", path=str(path),
                                  name=name, dtype=str(tensor.dtype))
        if not torch.isfinite(tensor).all():
            raise CheckpointError("{path}: tensor {name} contains NaN or infinite values", path=str(path), name=name)
    return tensors


def _read_vocab(path: Path, size: int, side: str) -> Vocab:
    _present_and_small(path, MAX_VOCAB_BYTES, CheckpointError(
        "{path}: larger than {mib} MiB; not a vocabulary of this project", path=str(path), mib=MAX_VOCAB_BYTES // 2**20))
    try:
        vocab = Vocab.load(path)
    except ValueError as exc:
        raise CheckpointError(f"{path}: {exc}") from None
    if len(vocab) != size:
        raise CheckpointError("{path}: has {n} pieces but config.json says {setting}={size}", path=str(path),
                              n=len(vocab), setting=f"{side}_vocab_size", size=size)
    return vocab





def load_checkpoint(path: str | Path) -> tuple[OwnModel, Vocab, Vocab, dict]:
    """Rebuild one of this project's models (in eval mode), its source and target vocabularies
    and config.json from a folder; ``load_model`` also opens imported ones."""
    folder = Path(path)
    if not folder.is_dir():
        raise CheckpointError("{path}: not a checkpoint folder (no such directory)", path=str(folder))
    model_cfg, _, raw = read_config(folder)
    model = _checked_meta_model(model_cfg, folder / CONFIG)  # no initialisation of weights about to be replaced
    src_vocab = _read_vocab(folder / SRC_VOCAB, model_cfg.src_vocab_size, "src")
    tgt_vocab = _read_vocab(folder / TGT_VOCAB, model_cfg.tgt_vocab_size, "tgt")
    load_weights(folder, model, assign=True)
    return model.eval(), src_vocab, tgt_vocab, raw


def load_weights(folder: Path, module: torch.nn.Module, assign: bool = False) -> None:
    """``folder``'s model.safetensors into ``module`` as fp32, every tensor checked against the
    module's own names and shapes first (``read_weights``): the one way every family's weights
    load (``assign``: take the tensors as they are, for a module built on the meta device)."""
    tensors = read_weights(folder / WEIGHTS, {k: tuple(v.shape) for k, v in module.state_dict().items()})
    module.load_state_dict({k: v.float() for k, v in tensors.items()}, assign=assign)


def read_card(path: str | Path) -> dict:
    """The card.json of a checkpoint folder as raw JSON, or {} when there is none (training
    continues a run from it; everything else reads cards with model.cards.schema)."""
    card = Path(path) / CARD
    return read_json(card) if card.is_file() else {}
