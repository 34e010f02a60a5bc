"""How well does attention align? Score models and baselines against gold word alignments.

    python -m model.align --src gold.en --tgt gold.fr --gold gold.wa \\
        --checkpoint checkpoints/everyday-rnnsearch-en-fr --checkpoint checkpoints/everyday-rnnencdec-en-fr \\
        --json alignment.json

Sources, all on the same sentences:
- ``attention``: each model reads the gold source and is forced to output the gold target
  (teacher forcing, the same probabilities as its beam search with the target as a forced
  prefix); its attention, merged to words (model/scoring/word_alignment.py), gives the links.
- ``saliency``: gradient x input (model/explaining/saliency.py) of the same forced output; models
  without attention get this row too.
- ``eflomal``: a statistical aligner trained on the models' training corpora (or ``--corpus``)
  plus the gold sentences, symmetrised (model/scoring/statistical_aligner.py).
- ``attention_norm``, ``gradient_x_input``, ``integrated_gradients``, ``occlusion``, ``alti_plus``,
  ``value_zeroing``, ``rollout``: the explanation methods of the methods table
  (model/explaining/registry.py) on the same forced output, their source rows merged to words.
- ``diagonal``: each word linked by its relative position, the baseline that knows no words.
- ``heads``: for a model with several attentions (a Transformer), every decoder layer's
  cross-attention, each head and the layer's mean over heads, read at the step that outputs each
  word and (``shifted``) at the step where it is the decoder's input: the layer x head AER grid
  (``head_grid``). The ``attention`` row is the model's stated default among them.

Given models of both directions with attention that trained on the same corpora (en->fr and
fr->en, say), their attention is also combined as statistical aligners combine their two
directions (intersection and grow-diag-final-and): rows named "A + B", extraction ``both-*``.

Sentences a model cannot score (a word its vocabulary encodes to nothing, a source longer than
the model reads) are counted and named in the report, never dropped silently.
"""
from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from model.checkpoints.families import describe_folder
from model.corpus.corpora import corpus_specs
from model.decoding.translator import Translator
from model.explaining import registry
from model.core.errors import UserError
from model.scoring.forced_matrices import Unscored, WordMatrices, forced_matrices
from model.scoring.statistical_aligner import eflomal_gold_links, training_corpus
from model.scoring.word_alignment import (
    BOTH_DIRECTIONS,
    DEFAULT_EXTRACTION,
    Counts,
    GoldSet,
    both_directions,
    diagonal_matrix,
    extract,
    score,
)

EXPLAINED = tuple(m for m in registry.names() if m != "attention")  # the methods table, model/explaining/registry.py
METHODS = ("attention", "saliency", *EXPLAINED, "eflomal", "diagonal", "heads")
MODEL_METHODS = ("attention", "saliency", *EXPLAINED, "heads")  # what a model's matrices give
DEFAULT_METHODS = ("attention", "saliency", "eflomal", "diagonal", "heads")  # the explanation methods on request
SYMMETRISED = "grow-diag-final-and"
PAIRED = " + "  # joins the names of a model and its opposite direction's in a row of both


@dataclass(frozen=True)
class Row:
    """One source (a model's attention or saliency, or a baseline) with one link extraction."""

    model: Optional[str]  # None for the baselines
    method: str  # one of METHODS
    extraction: str  # one of EXTRACTIONS, SYMMETRISED for eflomal, or one of BOTH_DIRECTIONS
    counts: Counts  # over the scored sentences
    per_sentence: tuple[Optional[Counts], ...]  # None where the sentence was not scored
    layer: Optional[int] = None  # method "heads": the 1-based decoder layer
    head: Optional[int] = None  # method "heads": the 1-based head; None for the layer's mean over heads
    shifted: bool = False  # method "heads": read where the word is the decoder's input

    @property
    def sentences(self) -> int:
        return sum(c is not None for c in self.per_sentence)

    def to_json(self) -> dict:
        heads = {"layer": self.layer, "head": self.head, "shifted": self.shifted} if self.method == "heads" else {}
        return {"model": self.model, "method": self.method, "extraction": self.extraction,
                "aer": round(self.counts.aer, 4), "precision": round(self.counts.precision, 4),
                "recall": round(self.counts.recall, 4), "sentences": self.sentences, **heads}


@dataclass(frozen=True)
class AlignmentReport:
    gold: str
    sentences: int
    rows: tuple[Row, ...]
    unscored: tuple[Unscored, ...] = ()
    eflomal_corpus: str = ""  # what the statistical aligner learnt from
    seconds: dict = field(default_factory=dict)  # time per source

    def to_json(self) -> dict:
        return {"gold": self.gold, "sentences": self.sentences, "rows": [r.to_json() for r in self.rows],
                "unscored": [{"model": u.model, "sentence": u.sentence, "reason": u.reason} for u in self.unscored],
                "eflomal_corpus": self.eflomal_corpus, "seconds": self.seconds}


# ---------------------------------------------------------------- the report


def model_rows(name: str, matrices: Sequence[Optional[WordMatrices]], gold: GoldSet,
               extractions: Sequence[str]) -> list[Row]:
    rows = []
    for method in MODEL_METHODS:
        if method == "heads":
            rows += head_rows(name, matrices, gold, extractions)
            continue
        picked = [None if m is None else m.of(method) for m in matrices]
        if all(p is None for p in picked):
            continue
        for how in extractions:
            total, per = score([None if p is None else extract(p, how) for p in picked], gold)
            rows.append(Row(name, method, how, total, tuple(per)))
    return rows


def head_rows(name: str, matrices: Sequence[Optional[WordMatrices]], gold: GoldSet,
              extractions: Sequence[str]) -> list[Row]:
    """Method "heads": a row for every layer's every head and mean over heads, in both readings
    (none for a model with one attention)."""
    shape = next((m.heads.shape[:2] for m in matrices if m is not None and m.heads is not None), None)
    if shape is None:
        return []
    rows = []
    for shifted in (False, True):
        for layer in range(shape[0]):
            for head in (None, *range(shape[1])):
                picked = [None if m is None else m.head(layer, head, shifted) for m in matrices]
                for how in extractions:
                    total, per = score([None if p is None else extract(p, how) for p in picked], gold)
                    rows.append(Row(name, "heads", how, total, tuple(per), layer + 1,
                                    None if head is None else head + 1, shifted))
    return rows


def head_grid(rows: Sequence, model: str, extraction: str, shifted: bool) -> Optional[np.ndarray]:
    """(layers, heads + 1) AER of ``model``'s "heads" rows (``Row``s, or the cards' recorded rows
    with the same fields) of ``extraction`` in one reading: column h - 1 is head h, the last column
    the layer's mean over heads; None when there are none."""
    found = [r for r in rows if r.model == model and r.method == "heads" and r.extraction == extraction
             and r.shifted == shifted]
    if not found:
        return None
    layers, heads = max(r.layer for r in found), max(r.head or 0 for r in found)
    grid = np.full((layers, heads + 1), np.nan)
    for r in found:
        grid[r.layer - 1, heads if r.head is None else r.head - 1] = row_aer(r)
    return grid


def best_head(rows: Sequence, model: str, extraction: str) -> Optional[object]:
    """The "heads" row of ``model`` with the lowest AER (either reading, a head or a layer's mean)."""
    found = [r for r in rows if r.model == model and r.method == "heads" and r.extraction == extraction]
    return min(found, key=row_aer) if found else None


def row_aer(row) -> float:
    """The AER of a ``Row`` measured now, or of a row a card recorded (``AlignmentScore``)."""
    return row.counts.aer if hasattr(row, "counts") else row.aer


def both_directions_rows(forward_name: str, forward: Sequence[Optional[WordMatrices]], backward_name: str,
                         backward: Sequence[Optional[WordMatrices]], gold: GoldSet) -> list[Row]:
    """Rows of two models' attention combined (``BOTH_DIRECTIONS``): ``forward`` translates the
    gold's source language into its target, ``backward`` the other way (its matrices already
    transposed to (gold target, gold source)). A sentence either model could not score is not
    scored."""
    links: dict[str, list] = {how: [] for how in BOTH_DIRECTIONS}
    for ahead, back in zip(forward, backward):
        both = (None if ahead is None or back is None or ahead.attention is None or back.attention is None
                else both_directions(ahead.attention, back.attention))
        for how in BOTH_DIRECTIONS:
            links[how].append(None if both is None else both[how])
    rows = []
    for how in BOTH_DIRECTIONS:
        total, per = score(links[how], gold)
        rows.append(Row(f"{forward_name}{PAIRED}{backward_name}", "attention", how, total, tuple(per)))
    return rows


@dataclass(frozen=True)
class ScoredModel:
    """What pairing models of opposite directions needs to know of one scored model."""

    name: str
    forward: bool  # translates the gold's source language into its target language
    corpora: tuple[str, ...]  # the names of the corpora it trained on; empty when unknown
    matrices: tuple[Optional[WordMatrices], ...]

    @property
    def has_attention(self) -> bool:
        return any(m is not None and m.attention is not None for m in self.matrices)


def opposite_pairs(models: Sequence) -> list[tuple]:
    """(forward, backward) models with attention that trained on the same corpora, in order:
    ``models`` are ScoredModels, or anything with their ``name``, ``forward``, ``corpora`` and
    ``has_attention``."""
    return [(a, b) for a in models for b in models
            if a.forward and not b.forward and a.has_attention and b.has_attention
            and a.corpora and a.corpora == b.corpora]


def diagonal_rows(gold: GoldSet, extractions: Sequence[str]) -> list[Row]:
    links = [extract(diagonal_matrix(len(s.tgt), len(s.src)), extractions[0]) for s in gold.sentences]
    total, per = score(links, gold)
    return [Row(None, "diagonal", extractions[0], total, tuple(per))]


def eflomal_row(gold: GoldSet, links: Sequence[set]) -> Row:
    """The statistical aligner's row from its links for each gold sentence."""
    total, per = score(links, gold)
    return Row(None, "eflomal", SYMMETRISED, total, tuple(per))


def score_model(name: str, translator: Translator, direction: tuple[str, str], gold: GoldSet,
                methods: Sequence[str] = METHODS, extractions: Sequence[str] = (DEFAULT_EXTRACTION,),
                src_lang: str = "en", tgt_lang: str = "fr") -> tuple[list[Row], list[Unscored], list]:
    """One model's rows (attention and saliency, as asked and as it has them), the sentences it
    could not score, and its word matrices per sentence (None where unscored)."""
    if direction not in ((src_lang, tgt_lang), (tgt_lang, src_lang)):
        raise UserError(f"{name} translates {'-'.join(direction)}; the gold set is {src_lang}-{tgt_lang}")
    model = translator.model
    wanted = [m for m in MODEL_METHODS if m in methods and (
        registry.applies(model, m) if m in registry.names() else model.has_attention or m not in ("attention", "heads"))]
    if not wanted:
        return [], [], []
    matrices, missed = forced_matrices(translator, gold, "saliency" in methods,
                                       reverse=direction != (src_lang, tgt_lang), name=name,
                                       explained=[m for m in wanted if m in EXPLAINED])
    rows = [r for r in model_rows(name, matrices, gold, extractions) if r.method in methods]
    return rows, missed, matrices


def align_report(gold: GoldSet, checkpoints: Sequence[Path], methods: Sequence[str] = METHODS,
                 extractions: Sequence[str] = (DEFAULT_EXTRACTION,), corpus: Sequence[str] = (),
                 src_lang: str = "en", tgt_lang: str = "fr", log=print) -> AlignmentReport:
    rows, unscored, seconds, note, scored = [], [], {}, "", []
    for folder in checkpoints:
        start, name = time.perf_counter(), Path(folder).name
        summary = describe_folder(folder)
        direction = (summary.src_lang, summary.tgt_lang)
        found, missed, matrices = score_model(name, Translator.from_checkpoint(folder), direction, gold, methods,
                                              extractions, src_lang, tgt_lang)
        rows, unscored = rows + found, unscored + missed
        corpora = tuple(s.name for s in corpus_specs(summary.train)) if summary.train is not None else ()
        scored.append(ScoredModel(name, direction == (src_lang, tgt_lang), corpora, tuple(matrices)))
        seconds[name] = round(time.perf_counter() - start, 2)
        log(f"{name}: {seconds[name]} s")
    if "attention" in methods:
        for forward, backward in opposite_pairs(scored):
            rows += both_directions_rows(forward.name, forward.matrices, backward.name, backward.matrices, gold)
    if "eflomal" in methods:
        start = time.perf_counter()
        pairs, text = training_corpus(checkpoints, corpus, src_lang, tgt_lang)
        note = text.note
        rows.append(eflomal_row(gold, eflomal_gold_links(gold, pairs)))
        seconds["eflomal"] = round(time.perf_counter() - start, 2)
        log(f"eflomal on {note}: {seconds['eflomal']} s")
    if "diagonal" in methods:
        rows += diagonal_rows(gold, extractions)
    return AlignmentReport(gold.name, len(gold.sentences), tuple(rows), tuple(unscored), note, seconds)


def gold_digest(gold: GoldSet) -> str:
    """A fingerprint of what a gold set scores (every sentence's words and links, not its name),
    recorded with a card's results so that they are shown only for the same sentences."""
    text = json.dumps([[s.src, s.tgt, sorted(s.sure), sorted(s.possible)] for s in gold.sentences])
    return hashlib.sha256(text.encode()).hexdigest()


def grid_lines(rows: Sequence[Row]) -> list[str]:
    """The layer x head AER grids of every model with several attentions, as text."""
    lines = []
    for model, how in dict.fromkeys((r.model, r.extraction) for r in rows if r.method == "heads"):
        for shifted in (False, True):
            grid = head_grid(rows, model, how, shifted)
            reading = "shifted: the step where the word is the decoder's input" if shifted else \
                "the step that outputs the word"
            lines.append(f"{model}: cross-attention AER by layer and head ({how}; {reading})")
            lines.append("layer " + "".join(f"{'head ' + str(h + 1):>8}" for h in range(grid.shape[1] - 1)) +
                         f"{'mean':>8}")
            lines += [f"{k + 1:>5} " + "".join(f"{v:8.3f}" for v in row) for k, row in enumerate(grid)]
        best = best_head(rows, model, how)
        what = f"head {best.head}" if best.head else "mean of heads"
        lines.append(f"{model}: best is layer {best.layer}, {what}{', shifted' if best.shifted else ''}: "
                     f"AER {best.counts.aer:.3f}")
    return lines


def table(report: AlignmentReport) -> str:
    lines = [f"{report.gold}: {report.sentences} sentences (AER: lower is better)",
             f"{'model':<32} {'method':<10} {'extraction':<20} {'AER':>6} {'prec':>6} {'recall':>6} {'sents':>6}"]
    for r in report.rows:
        if r.method == "heads":
            continue
        lines.append(f"{r.model or '-':<32} {r.method:<10} {r.extraction:<20} {r.counts.aer:6.3f} "
                     f"{r.counts.precision:6.3f} {r.counts.recall:6.3f} {r.sentences:6d}")
    lines += grid_lines(report.rows)
    for u in report.unscored:
        lines.append(f"not scored: {u.model}, sentence {u.sentence}: {u.reason}")
    if report.eflomal_corpus:
        lines.append(f"eflomal learnt from {report.eflomal_corpus}")
    return "\n".join(lines)
