"""A checkpoint's model card (``card.json``) as typed values, and its one validating reader.

``model/cards/builder.py`` writes cards; everything that reads one (the pages, the README generator,
the tests of shipped checkpoints) goes through ``read_model_card`` / ``parse_model_card``,
which check every field's type and raise ``CardError`` naming the field. Fields a card may
lack have defaults; a field present with the wrong type is an error, never silently skipped.
"""
from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

from model.checkpoints.folder import CARD, read_json
from model.decoding.search import SearchConfig
from model.core.errors import CardError, ReplayError
from model.training.replay import Snapshot, parse_snapshots


@dataclass(frozen=True)
class CorpusInfo:
    """One training corpus: what it is, its licence and attribution, how it was split."""

    name: str
    description: str = ""
    licence: str = "unknown"
    attribution: str = ""
    training_pairs: int = 0
    weight: float = 1.0
    pairs_per_split: dict[str, int] = field(default_factory=dict)
    splits: str = ""
    test_references_seen_in_training: str = ""


@dataclass(frozen=True)
class Host:
    """Where a model trained."""

    device: str = "cpu"
    gpu: Optional[str] = None
    cpu: str = "unknown"
    threads: int = 1
    processes: int = 1
    torch: str = ""


@dataclass(frozen=True)
class Training:
    """How long and how far a model trained."""

    updates: int = 0
    epochs: float = 0.0
    validations: int = 0
    best_step: int = 0
    best_val_bleu: float = 0.0
    wall_minutes: float = 0.0
    tokens_per_s: float = 0.0
    where: Optional[Host] = None


@dataclass(frozen=True)
class ValidationRecord:
    """One line of the training log: a validation round."""

    step: int
    epoch: float
    val_bleu: float
    train_loss: float = 0.0
    val_loss: float = 0.0
    elapsed_s: float = 0.0
    lr: float = 0.0
    tokens_per_s: float = 0.0
    val_bleu_by_corpus: dict[str, float] = field(default_factory=dict)
    val_example: str = ""


@dataclass(frozen=True)
class Selection:
    """Which weights were shipped, chosen on validation (greedy BLEU per candidate)."""

    chosen: str
    val_bleu_greedy: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class TunedDecoding:
    """One point of the decoding grid tried on validation."""

    beam: int
    length_norm: float
    val_bleu: float


@dataclass(frozen=True)
class Decoding:
    """The model's default decoding, as its card records it."""

    beam: int = 5
    length_norm: float = 1.0
    chosen_on: str = "default"
    grid: tuple[TunedDecoding, ...] = ()

    def search_config(self, trace: bool = True) -> SearchConfig:
        return SearchConfig(beam=self.beam, length_norm=self.length_norm, trace=trace)


@dataclass(frozen=True)
class TestScore:
    """Corpus scores on one test set, each with its sacreBLEU signature."""

    bleu: float
    decoding: str = ""
    sentences: int = 0
    bleu_lc: Optional[float] = None
    chrf: Optional[float] = None
    bleu_lc_moses: Optional[float] = None
    bleu_signature: str = ""
    bleu_lc_signature: str = ""
    chrf_signature: str = ""
    bleu_lc_moses_signature: str = ""


@dataclass(frozen=True)
class StressRow:
    """The length stress test at one k: test sentences joined k at a time."""

    k: int
    items: int
    source_words: float
    bleu: float
    length_ratio: float


@dataclass(frozen=True)
class Check:
    """A score the shipped-checkpoint tests decode again."""

    test_set: str
    first: int
    decoding: str
    bleu: float


@dataclass(frozen=True)
class ComparisonRow:
    """This model against the other of its pair on one test set (paired bootstrap)."""

    test_set: str
    ours: float
    theirs: float
    p_value: Optional[float]
    signature: str = ""

    @property
    def difference(self) -> float:
        return round(self.ours - self.theirs, 2)


@dataclass(frozen=True)
class Comparison:
    other: str  # the other model's name
    test: str
    rows: tuple[ComparisonRow, ...]


@dataclass(frozen=True)
class Ablation:
    """The same recipe with one change, scored like the shipped model."""

    label: str
    command: str = ""
    training: Optional[Training] = None
    test_scores: dict[str, TestScore] = field(default_factory=dict)
    length_stress: dict[str, tuple[StressRow, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class AlignmentScore:
    """One source's alignment error rate on a gold set (python -m model.align --card)."""

    method: str  # "attention", "saliency", "eflomal", "diagonal", an explanation method or "heads"
    extraction: str  # how links were picked from the matrix
    aer: float
    precision: float
    recall: float
    sentences: int
    model: Optional[str] = None  # None for the baselines
    layer: Optional[int] = None  # method "heads": the 1-based decoder layer
    head: Optional[int] = None  # method "heads": the 1-based head; None for the layer's mean over heads
    shifted: bool = False  # method "heads": read at the step where the word is the decoder's input


@dataclass(frozen=True)
class AlignmentResult:
    """A gold set's scores for this model and the baselines beside it."""

    rows: tuple[AlignmentScore, ...]
    command: str = ""
    sentences: int = 0
    gold_digest: str = ""  # attention_alignment.gold_digest of the sentences scored; "" in older cards


@dataclass(frozen=True)
class HeadRecord:
    """One head switched off alone (model/explaining/head_importance.py)."""

    kind: str  # "encoder", "decoder_self" or "cross"
    layer: int  # 1-based
    head: int  # 1-based
    logprob_change: float  # mean log p per token of the model's own output, head off minus all on
    bleu: float  # greedy decode with the head off
    reference_change: Optional[float] = None  # the same on the references, when given


@dataclass(frozen=True)
class PruneRecord:
    heads_off: int
    bleu: float


@dataclass(frozen=True)
class HeadImportanceRecord:
    """Which heads matter, as ``python -m model.heads --card`` measured it."""

    heads: tuple[HeadRecord, ...]
    pruning: tuple[PruneRecord, ...] = ()
    sentences: int = 0
    bleu_against: str = ""  # "references" or "own output"
    base_logprob: float = 0.0
    base_bleu: float = 0.0
    command: str = ""
    cross_aer_output: tuple[tuple[float, ...], ...] = ()  # (layers, heads) AER read at the output step, if measured
    cross_aer_shifted: tuple[tuple[float, ...], ...] = ()  # ... and read where the word is the decoder's input
    aer_gold: str = ""  # the gold set those AER grids were measured on


@dataclass(frozen=True)
class Card:
    """Everything a shipped checkpoint says about itself."""

    name: str
    arch: str
    origin: str = ""  # who built and trained it when not this project, e.g. "Joey NMT 2.3.0 (imported)"
    licence: str = ""  # the licence an imported model's folder states (its README's front matter), if any
    pair: str = ""  # the models trained together for a fair comparison, e.g. "everyday"
    trained_on: str = ""  # what it learned from, in a few words (model pickers show it)
    parameters: int = 0
    data: tuple[CorpusInfo, ...] = ()
    preprocessing: str = ""
    command: str = ""  # a command a user can run to train it (data paths as the download commands write them)
    how_trained: str = ""  # how this copy was actually trained: phases, machine, what ran beside it
    selection: Optional[Selection] = None
    decoding: Decoding = Decoding()
    training: Optional[Training] = None
    log: tuple[ValidationRecord, ...] = ()
    scores_note: str = ""
    test_scores: dict[str, TestScore] = field(default_factory=dict)
    length_stress: dict[str, tuple[StressRow, ...]] = field(default_factory=dict)
    checks: tuple[Check, ...] = ()
    deviations: tuple[str, ...] = ()
    limitations: str = ""
    comparison: Optional[Comparison] = None
    ablations: tuple[Ablation, ...] = ()
    replay: tuple[Snapshot, ...] = ()  # probe sentences over training (model/training/replay.py)
    alignment: dict[str, AlignmentResult] = field(default_factory=dict)  # by gold set (model/scoring/attention_alignment.py)
    head_importance: Optional[HeadImportanceRecord] = None  # a Transformer's heads switched off in turn


def read_model_card(folder: str | Path) -> Optional[Card]:
    """The card of a checkpoint folder, None when it has no card.json; CardError (naming the
    field) for one that is malformed, CheckpointError for one that is not a JSON object."""
    path = Path(folder) / CARD
    if not path.is_file():
        return None
    data = read_json(path)
    if isinstance(data, dict) and "name" not in data:  # a training run's card: the folder names the model
        data = {**data, "name": Path(folder).resolve().name}
    return parse_model_card(data, str(path))


def parse_model_card(data: dict, where: str = CARD) -> Card:
    """A Card from the JSON object of a card.json."""
    data = dict(data)
    comparison = data.pop("comparison", None)
    replay = data.pop("replay", None)
    card = _build(Card, data, where)
    return dataclasses.replace(card, comparison=_comparison(comparison, card.name, f"{where}: comparison"),
                               replay=_replay(replay, f"{where}: replay"))


def _comparison(data, name: str, where: str) -> Optional[Comparison]:
    """Comparison rows key each score by model name; typed rows say ours and theirs."""
    if data is None:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("with"), str) or not isinstance(data.get("rows"), list):
        raise CardError("{where}: expected an object with 'with' and 'rows'", where=where)
    other, rows = data["with"], []
    for i, row in enumerate(data["rows"]):
        if not isinstance(row, dict) or name not in row or other not in row:
            raise CardError("{where}: row {row} lacks the scores of {name} and {other}", where=where, row=i + 1,
                            name=name, other=other)
        rows.append(_build(ComparisonRow, {"test_set": row.get("test_set"), "ours": row[name], "theirs": row[other],
                                           "p_value": row.get("p_value"), "signature": row.get("signature", "")},
                           f"{where}: row {i + 1}"))
    return Comparison(other, str(data.get("test", "")), tuple(rows))


def _replay(data, where: str) -> tuple[Snapshot, ...]:
    if data is None:
        return ()
    if not isinstance(data, dict):
        raise CardError("{where}: expected an object with 'snapshots'", where=where)
    try:
        return tuple(parse_snapshots(data.get("snapshots", []), where))
    except ReplayError as exc:  # a card's replay is part of the card: one error type for a bad card
        raise CardError(str(exc)) from None


def _build(kind, data, where: str):
    """Dataclass ``kind`` from a JSON object: unknown keys are ignored (newer cards stay
    readable), missing keys take their defaults, present ones must have the declared type."""
    if not isinstance(data, dict):
        raise CardError("{where}: expected a JSON object, got {found}", where=where, found=type(data).__name__)
    hints = typing.get_type_hints(kind)
    values = {}
    for f in dataclasses.fields(kind):
        if f.name in data:
            values[f.name] = _value(hints[f.name], data[f.name], f"{where}: {f.name}")
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise CardError("{where}: missing {field}", where=where, field=repr(f.name))
    return kind(**values)


def _value(kind, value, where: str) -> Any:
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin in (Union, types.UnionType):  # Optional[X]
        return None if value is None else _value(next(a for a in args if a is not type(None)), value, where)
    if origin is tuple:
        return tuple(_value(args[0], v, f"{where}[{i}]") for i, v in enumerate(_typed(value, list, where)))
    if origin is dict:
        return {str(k): _value(args[1], v, f"{where}.{k}") for k, v in _typed(value, dict, where).items()}
    if dataclasses.is_dataclass(kind):
        return _build(kind, value, where)
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return _typed(value, kind, where)


def _typed(value, kind, where: str):
    if not isinstance(value, kind) or (kind in (int, float) and isinstance(value, bool)):
        raise CardError("{where}: expected {kind}, got {found}", where=where, kind=kind.__name__,
                        found=type(value).__name__)
    return value
