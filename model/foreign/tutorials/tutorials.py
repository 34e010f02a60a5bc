"""The three tutorials' models in one table: what a student saves, how it is read and checked,
and how the model is rebuilt (model/foreign/tutorials/pytorch_tutorial.py, bentrevett.py, d2l.py).

    python -m model.checkpoint import-tutorial KIND WEIGHTS VOCAB OUT_DIR

``KIND`` is ``pytorch``, ``bentrevett`` or ``d2l``. The weights file is read with PyTorch's
restricted loader (``weights_only=True``: tensors and plain containers only; a pickled whole
model is refused, unrun); the vocabulary file is the JSON the contract in docs/own-model.md
writes. Everything is checked before anything is written: the tensors a kind's model has, their
shapes against each other and against the vocabularies' sizes, finite values, sizes within this
project's limits. The folder written (model/foreign/tutorials/family.py) holds the tensors as
safetensors under the tutorial's own names, the vocabularies as ``vocab.json``, and a
``config.json`` saying ``"family": "tutorial"`` and the kind and sizes; it then opens like any
other checkpoint.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

import torch
from torch import nn

from model.core.config import MAX_PARAMETERS, MAX_UNITS, MAX_VOCAB
from model.core.decodable import Decodable, ModelDescription
from model.foreign.json_files import read_json_object
from model.core.errors import CheckpointError
from model.foreign.tutorials import bentrevett, d2l, pytorch_tutorial
from model.foreign.restricted_load import load_restricted
from model.foreign.tutorials.tutorial_vocab import TutorialVocab, token_list

FAMILY = "tutorial"
VOCAB_FILE = "vocab.json"
MAX_WEIGHTS_BYTES = 2 * 2**30
MAX_VOCAB_JSON_BYTES = 50 * 2**20
MAX_STEPS = 1000  # num_steps or max_length beyond this is refused (search runs that many steps at most)


@dataclass(frozen=True)
class Kind:
    """One tutorial: its module, what its weights file holds, and how its model is built."""

    module: ModuleType
    saved_as: str  # the save command, for error messages
    names: Callable[[dict], set]  # sizes -> the parameter names its model has
    build: Callable[[dict, tuple[TutorialVocab, TutorialVocab]], nn.Module]  # (sizes, vocabularies) -> model
    vocabularies: Callable[[list, list, str, dict], tuple[TutorialVocab, TutorialVocab]]  # + sizes (num_steps)
    steps_key: str = ""  # vocab.json's key for the decoding length ("num_steps"), if the kind has one


def _gru_names(prefix: str, layers: int = 1, bidirectional: bool = False) -> set:
    kinds = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
    return {f"{prefix}.{k}_l{n}{suffix}" for k in kinds for n in range(layers)
            for suffix in (("", "_reverse") if bidirectional else ("",))}


KINDS: dict[str, Kind] = {
    "pytorch": Kind(
        pytorch_tutorial, 'torch.save({"encoder": encoder.state_dict(), "decoder": decoder.state_dict()}, "model.pt")',
        lambda s: {"encoder.embedding.weight", *_gru_names("encoder.gru"), "decoder.embedding.weight",
                   *{f"decoder.attention.{m}.{p}" for m in ("Wa", "Ua", "Va") for p in ("weight", "bias")},
                   *_gru_names("decoder.gru"), "decoder.out.weight", "decoder.out.bias"},
        lambda s, v: pytorch_tutorial.PytorchTutorialModel(s["src_vocab"], s["tgt_vocab"], s["hidden"], v,
                                                           s.get("max_length", pytorch_tutorial.MAX_LENGTH)),
        lambda src, tgt, where, s: pytorch_tutorial.vocabularies(src, tgt, where),
        "max_length"),
    "bentrevett": Kind(
        bentrevett, 'torch.save(model.state_dict(), "tut3-model.pt")',
        lambda s: {"encoder.embedding.weight", *_gru_names("encoder.rnn", bidirectional=True), "encoder.fc.weight",
                   "encoder.fc.bias", "decoder.attention.attn_fc.weight", "decoder.attention.attn_fc.bias",
                   "decoder.attention.v_fc.weight", "decoder.embedding.weight", *_gru_names("decoder.rnn"),
                   "decoder.fc_out.weight", "decoder.fc_out.bias"},
        lambda s, v: bentrevett.BentrevettModel(s["src_vocab"], s["tgt_vocab"], s["embedding"], s["encoder_hidden"],
                                                s["decoder_hidden"], v, s["tgt_embedding"]),
        lambda src, tgt, where, s: bentrevett.vocabularies(src, tgt, where)),
    "d2l": Kind(
        d2l, 'torch.save(model.state_dict(), "model.pt")',
        lambda s: {"encoder.embedding.weight", *_gru_names("encoder.rnn.rnn", s["layers"]),
                   "decoder.attention.W_k.weight", "decoder.attention.W_q.weight", "decoder.attention.w_v.weight",
                   "decoder.embedding.weight", *_gru_names("decoder.rnn", s["layers"]), "decoder.dense.weight",
                   "decoder.dense.bias"},
        lambda s, v: d2l.D2lModel(s["src_vocab"], s["tgt_vocab"], s["embedding"], s["hidden"], s["layers"], s["align"],
                                  s["num_steps"], v, s["tgt_embedding"]),
        lambda src, tgt, where, s: d2l.vocabularies(src, tgt, where, s["num_steps"]),
        "num_steps"),
}


def kind_of(name: Any, where: str = "") -> Kind:
    if not isinstance(name, str) or name not in KINDS:
        shown = repr(name)[:40]
        raise CheckpointError(f"{where + ': ' if where else ''}unknown tutorial {shown}; choose from {', '.join(KINDS)}")
    return KINDS[name]


# ---------------------------------------------------------------- reading what a student saved


def read_weights(path: Path, kind: str) -> dict[str, torch.Tensor]:
    """The tensors of a tutorial's weights file, by their names in the tutorial's model (the
    PyTorch tutorial's two state dicts under ``encoder.`` and ``decoder.``), read with PyTorch's
    restricted loader: a pickled whole model, or anything but tensors, is refused unrun."""
    spec = kind_of(kind)
    saved = load_restricted(path, MAX_WEIGHTS_BYTES, f"the weights file: {spec.saved_as}",
                            f"; save the state_dict, not the model: {spec.saved_as}")
    if kind == "pytorch":
        if not isinstance(saved, dict) or set(saved) != {"encoder", "decoder"} or \
                not all(isinstance(v, dict) for v in saved.values()):
            raise CheckpointError(f"{path}: expected a dictionary with the encoder's and the decoder's state_dict "
                                  f"({spec.saved_as})")
        saved = {f"{part}.{name}": tensor for part in ("encoder", "decoder") for name, tensor in saved[part].items()}
    if not isinstance(saved, dict) or not saved or not all(isinstance(k, str) and isinstance(v, torch.Tensor)
                                                           for k, v in saved.items()):
        raise CheckpointError(f"{path}: not a state_dict of tensors ({spec.saved_as})")
    return saved


def read_vocab_json(path: Path) -> dict:
    """vocab.json as written by the contract: {"source": words, "target": words, ...}."""
    data = read_json_object(path, MAX_VOCAB_JSON_BYTES, 'vocabulary file: expected a JSON object with "source" and '
                            '"target"', missing="docs/own-model.md says how to write it")
    missing = [key for key in ("source", "target") if key not in data]
    if missing:
        raise CheckpointError(f"{path}: no {' or '.join(repr(m) for m in missing)} list")
    return data


@dataclass(frozen=True)
class TutorialImport:
    """A tutorial's model read and checked, ready to be written as a checkpoint folder."""

    kind: str
    state: dict  # tensor name -> tensor, the tutorial's names
    vocab: dict  # {"source": [...], "target": [...], and the kind's decoding length}
    sizes: dict  # the model's sizes, from the tensors (and the decoding length)


def read_tutorial(kind: str, weights: Path, vocab_path: Path) -> TutorialImport:
    """Read and check a student's weights and vocabulary files (``KINDS``)."""
    return checked(kind, read_weights(Path(weights), kind), read_vocab_json(Path(vocab_path)), str(weights),
                   str(vocab_path))


def checked(kind: str, state: dict, raw: dict, where: str, vocab_where: str) -> TutorialImport:
    """A tutorial model from its tensors ``state`` (the tutorial's names) and vocabularies ``raw``
    (as vocab.json holds them), checked: CheckpointError naming ``where`` (the weights) or
    ``vocab_where`` and what does not fit otherwise."""
    spec = kind_of(kind)
    vocab = {side: token_list(raw[side], vocab_where, side) for side in ("source", "target")}
    if spec.steps_key:
        default = pytorch_tutorial.MAX_LENGTH if kind == "pytorch" else None
        steps = raw.get(spec.steps_key, default)
        if isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= MAX_STEPS:
            raise CheckpointError(f"{vocab_where}: {spec.steps_key!r} must be a whole number 1..{MAX_STEPS}"
                                  f"{'' if default else ' (data.num_steps)'}, got {repr(steps)[:40]}")
        vocab[spec.steps_key] = steps
    sizes = check(kind, state, vocab, where)
    spec.vocabularies(vocab["source"], vocab["target"], vocab_where, sizes)  # each side has the tutorial's specials
    return TutorialImport(kind, state, vocab, sizes)


def from_live_objects(kind: str, *objects) -> TutorialImport:
    """What the contract saves, taken from the tutorial's own objects in a running notebook:
    ``("pytorch", encoder, decoder, input_lang, output_lang)``, ``("bentrevett", model, de_vocab,
    en_vocab)`` or ``("d2l", model, data)``; checked as files are."""
    kind_of(kind)
    expected = {"pytorch": "encoder, decoder, input_lang, output_lang", "bentrevett": "model, de_vocab, en_vocab",
                "d2l": "model, data"}[kind]
    if len(objects) != len(expected.split(", ")):
        raise CheckpointError(f"the {kind} tutorial's objects are {expected}; got {len(objects)} object(s)")
    try:
        if kind == "pytorch":
            encoder, decoder, source, target = objects
            state = {f"{part}.{k}": v for part, module in (("encoder", encoder), ("decoder", decoder))
                     for k, v in module.state_dict().items()}
            raw = {"source": dict(source.index2word), "target": dict(target.index2word)}
        elif kind == "bentrevett":
            model, source, target = objects
            state, raw = dict(model.state_dict()), {"source": list(source.get_itos()), "target": list(target.get_itos())}
        else:
            model, data = objects
            state = dict(model.state_dict())
            raw = {"source": list(data.src_vocab.idx_to_token), "target": list(data.tgt_vocab.idx_to_token),
                   "num_steps": data.num_steps}
    except AttributeError as exc:
        raise CheckpointError(f"not the {kind} tutorial's objects ({expected}): {exc}") from None
    state = {k: v.detach().float().cpu().clone() for k, v in state.items() if isinstance(v, torch.Tensor)}
    return checked(kind, state, raw, f"the {kind} tutorial's model", f"the {kind} tutorial's vocabularies")


def live_model(found: TutorialImport) -> tuple[Decodable, TutorialVocab, TutorialVocab]:
    """The checked model with its weights, and its vocabularies, ready to decode (eval mode)."""
    model, src_vocab, tgt_vocab = build(found.kind, found.sizes, found.vocab, f"the {found.kind} tutorial's model")
    model.load_state_dict({k: found.state[k].float() for k in model.state_dict()})
    return model.eval(), src_vocab, tgt_vocab


def check(kind: str, state: dict, vocab: dict, where: str) -> dict:
    """The sizes of a tutorial model whose tensors ``state`` and vocabularies ``vocab`` agree;
    CheckpointError naming ``where`` and what does not fit otherwise."""
    spec = kind_of(kind, where)
    try:
        sizes = spec.module.sizes_of(state)
    except (KeyError, IndexError):
        raise CheckpointError(f"{where}: not the {kind} tutorial's model (tensor names: "
                              f"{', '.join(sorted(state)[:4])}{', ...' if len(state) > 4 else ''}); saved as "
                              f"{spec.saved_as}?") from None
    sizes = dict(sizes, **{k: vocab[k] for k in ("max_length", "num_steps") if k in vocab})
    names = spec.names(sizes)
    missing, unexpected = sorted(names - set(state)), sorted(set(state) - names)
    if missing or unexpected:
        raise CheckpointError(f"{where}: not the {kind} tutorial's model (missing {missing[:3]}, unexpected "
                              f"{unexpected[:3]})")
    for side, key in (("source", "src_vocab"), ("target", "tgt_vocab")):
        if len(vocab[side]) != sizes[key]:
            raise CheckpointError(f"{where}: the {side} vocabulary has {len(vocab[side]):,} words but the model's "
                                  f"embedding has {sizes[key]:,} rows; are these the files of one training run?")
    if any(not 1 <= v <= MAX_VOCAB for k, v in sizes.items() if k.endswith("vocab")) or \
            any(not 1 <= v <= MAX_UNITS for k, v in sizes.items() if not k.endswith("vocab") and k not in
                ("max_length", "num_steps")):
        raise CheckpointError(f"{where}: sizes {sizes} are outside this project's limits "
                              f"({MAX_VOCAB:,} words, {MAX_UNITS:,} units)")
    if sum(t.numel() for t in state.values()) > MAX_PARAMETERS:
        raise CheckpointError(f"{where}: more than the {MAX_PARAMETERS:,} parameters this loader allows")
    expected = {k: tuple(v.shape) for k, v in structure(kind, sizes).state_dict().items()}
    for name, shape in expected.items():
        tensor = state[name]
        if tuple(tensor.shape) != shape:
            raise CheckpointError(f"{where}: tensor {name} has shape {tuple(tensor.shape)}, the other tensors "
                                  f"imply {shape}")
        if not tensor.is_floating_point() or not torch.isfinite(tensor).all():
            raise CheckpointError(f"{where}: tensor {name} is not finite floating point (NaN or infinite values?)")
    return sizes


def structure(kind: str, sizes: dict) -> nn.Module:
    """The kind's model for ``sizes`` with stand-in vocabularies of the right sizes, to compare
    shapes with (built on the CPU, within MAX_PARAMETERS: on the meta device its initialisation
    would import torch._dynamo, a second and a half)."""
    spec = kind_of(kind)
    stand_in = tuple(TutorialVocab([f"w{i}" for i in range(sizes[key])], {"pad": None, "unk": None, "bos": 0, "eos": 0},
                                   str.split) for key in ("src_vocab", "tgt_vocab"))
    return spec.build(sizes, stand_in)


# ---------------------------------------------------------------- opening an imported folder


def build(kind: str, sizes: dict, vocab: dict, where: str) -> tuple[Decodable, TutorialVocab, TutorialVocab]:
    """The model (weights not yet loaded) and vocabularies of an imported folder."""
    spec = kind_of(kind, where)
    vocabs = spec.vocabularies(vocab["source"], vocab["target"], where, sizes)
    if (len(vocab["source"]), len(vocab["target"])) != (sizes.get("src_vocab"), sizes.get("tgt_vocab")):
        raise CheckpointError(f"{where}: the vocabularies' sizes differ from config.json's")
    return spec.build(sizes, vocabs), *vocabs


def describe(kind: str, sizes: dict) -> ModelDescription:
    module = kind_of(kind).module
    if kind == "pytorch":
        return module.describe(sizes.get("max_length", pytorch_tutorial.MAX_LENGTH))
    if kind == "d2l":
        return module.describe(sizes.get("layers", 2), sizes.get("num_steps", 9))
    return module.describe()


def import_card(name: str, kind: str, source: str, sizes: dict) -> dict:
    """The card of an imported tutorial model: where it came from (``source``: the files, or a
    running notebook), under which licence, how it differs from the paper's RNNsearch (no scores:
    run ``python -m model.evaluate`` on it)."""
    module, description = kind_of(kind).module, describe(kind, sizes)
    return {"name": name, "arch": description.arch, "origin": description.origin, "summary": description.summary,
            "trained_on": f"a model trained in the {module.TITLE}, imported from {source}",
            "deviations": list(description.differences), "imported_from": source,
            "tutorial": {"kind": kind, "title": module.TITLE, "licence": module.LICENCE},
            "how_trained": f"Trained by a student with the tutorial's own code ({module.TITLE}, licence "
                           f"{module.LICENCE}); imported from {source} (python -m model.checkpoint import-tutorial "
                           f"{kind}, or viz.notebook.from_tutorial)."}
