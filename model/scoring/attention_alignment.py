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
- ``diagonal``: each word linked by its relative position, the baseline that knows no words.

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
import torch

from model.checkpoints.folder import CARD, read_json
from model.checkpoints.families import describe_folder
from model.core.config import CorpusSpec
from model.corpus.corpora import corpus_specs, is_pair_file, load_split, located_spec
from model.corpus.parallel import read_pair_file
from model.corpus.vocab import BOS, EOS, PAD
from model.decoding.device import device_of
from model.core.decodable import Vocabulary
from model.explaining.saliency import saliency_many
from model.decoding.translator import MAX_SOURCE_TOKENS, Translator
from model.core.errors import UserError
from model.scoring.word_alignment import (
    BOTH_DIRECTIONS,
    DEFAULT_EXTRACTION,
    Counts,
    GoldSet,
    both_directions,
    diagonal_matrix,
    extract,
    score,
    word_matrix,
)

METHODS = ("attention", "saliency", "eflomal", "diagonal")
SYMMETRISED = "grow-diag-final-and"
PAIRED = " + "  # joins the names of a model and its opposite direction's in a row of both
BATCH = 32


@dataclass(frozen=True)
class Unscored:
    """A sentence one model could not score, and why."""

    model: str
    sentence: int  # 1-based, as in the gold file
    why: str  # "empty" (a side has no words), "unencodable" (a word encodes to nothing), "too long"
    side: str = ""  # "source" or "target", for "empty" and "unencodable"
    word: str = ""  # the word that encodes to nothing (its first 30 characters)
    pieces: int = 0  # the source's pieces, for "too long"

    @property
    def reason(self) -> str:
        """Why, in words (the command line's and the JSON report's; pages word it themselves)."""
        if self.why == "empty":
            return f"the {self.side} sentence is empty"
        if self.why == "unencodable":
            return f"the vocabulary encodes the {self.side} word {self.word!r} to nothing"
        return f"the source has {self.pieces} pieces; the model reads at most {MAX_SOURCE_TOKENS}"


@dataclass(frozen=True)
class Row:
    """One source (a model's attention or saliency, or a baseline) with one link extraction."""

    model: Optional[str]  # None for the baselines
    method: str  # one of METHODS
    extraction: str  # one of EXTRACTIONS, SYMMETRISED for eflomal, or one of BOTH_DIRECTIONS
    counts: Counts  # over the scored sentences
    per_sentence: tuple[Optional[Counts], ...]  # None where the sentence was not scored

    @property
    def sentences(self) -> int:
        return sum(c is not None for c in self.per_sentence)

    def to_json(self) -> dict:
        return {"model": self.model, "method": self.method, "extraction": self.extraction,
                "aer": round(self.counts.aer, 4), "precision": round(self.counts.precision, 4),
                "recall": round(self.counts.recall, 4), "sentences": self.sentences}


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


@dataclass(frozen=True)
class WordMatrices:
    """A model's word-level (target words, source words) matrices for one gold sentence."""

    attention: Optional[np.ndarray]  # None for a model without attention
    saliency: Optional[np.ndarray]  # None when saliency was not asked for


# ---------------------------------------------------------------- the models' matrices


def encode_words(vocab: Vocabulary, words: Sequence[str]) -> tuple[list[int], list[tuple[int, int]]]:
    """Piece ids of the sentence ``words`` make, and each word's [start, end) piece span: where
    the word's own pieces (it encoded alone) occur, in order. SentencePiece splits at spaces
    first, so the pieces are the same; a character-level vocabulary has a space piece between
    words, which belongs to no word; a vocabulary that ends a source with </s> (Joey NMT's) has
    it after the last word. Where a word's pieces are not found in order, its pieces
    are used one word after another instead."""
    ids = vocab.encode(" ".join(words))
    spans, start = [], 0
    for word in words:
        pieces = [p for p in vocab.encode(word) if p != EOS]
        at = next((i for i in range(start, len(ids) - len(pieces) + 1) if ids[i:i + len(pieces)] == pieces), None)
        if at is None or not pieces:
            return _encode_word_by_word(vocab, words)
        spans.append((at, at + len(pieces)))
        start = at + len(pieces)
    return ids, spans


def _encode_word_by_word(vocab: Vocabulary, words: Sequence[str]) -> tuple[list[int], list[tuple[int, int]]]:
    ids, spans, suffix = [], [], []
    for word in words:
        pieces = vocab.encode(word)
        if pieces and pieces[-1] == EOS:
            pieces, suffix = pieces[:-1], [EOS]
        spans.append((len(ids), len(ids) + len(pieces)))
        ids += pieces
    return ids + suffix, spans


def forced_matrices(translator: Translator, gold: GoldSet, with_saliency: bool, reverse: bool = False,
                    name: str = "") -> tuple[list[Optional[WordMatrices]], list[Unscored]]:
    """Each gold sentence's word matrices from ``translator`` forced to output the gold
    target (``reverse``: the model translates the gold's target language into its source
    language; its matrices are transposed back to (gold target, gold source))."""
    name = name or translator.name
    encoded, unscored = [], []
    for k, sentence in enumerate(gold.sentences):
        src_words, tgt_words = (sentence.tgt, sentence.src) if reverse else (sentence.src, sentence.tgt)
        src_ids, src_spans = encode_words(translator.src_vocab, src_words)
        tgt_ids, tgt_spans = encode_words(translator.tgt_vocab, tgt_words)
        why = _unscorable(src_words, src_spans, tgt_words, tgt_spans, len(src_ids))
        if why:
            unscored.append(Unscored(name, k + 1, **why))
        encoded.append(None if why else (src_ids, src_spans, tgt_ids, tgt_spans))
    attention = _forced_attention(translator, encoded) if translator.model.has_attention else [None] * len(encoded)
    saliencies = iter(saliency_many(translator.model, [(e[0], e[2] + [EOS]) for e in encoded if e is not None])
                      if with_saliency else ())
    out: list[Optional[WordMatrices]] = []
    for item, alpha in zip(encoded, attention):
        if item is None:
            out.append(None)
            continue
        src_ids, src_spans, tgt_ids, tgt_spans = item
        sal = next(saliencies)[:len(tgt_ids)] if with_saliency else None  # the </s> row left out
        words = [None if m is None else word_matrix(m, src_spans, tgt_spans) for m in (alpha, sal)]
        out.append(WordMatrices(*[None if m is None else (m.T if reverse else m) for m in words]))
    return out, unscored


def _unscorable(src_words, src_spans, tgt_words, tgt_spans, n_src: int) -> dict:
    """Why a gold sentence cannot be scored (Unscored's fields), or {} when it can."""
    for side, words, spans in (("source", src_words, src_spans), ("target", tgt_words, tgt_spans)):
        if not words:
            return {"why": "empty", "side": side}
        empty = [w for w, (a, b) in zip(words, spans) if a == b]
        if empty:
            return {"why": "unencodable", "side": side, "word": empty[0][:30]}
    if n_src > MAX_SOURCE_TOKENS:
        return {"why": "too long", "pieces": n_src}
    return {}


def _forced_attention(translator: Translator, encoded) -> list[Optional[np.ndarray]]:
    """(target pieces, source pieces) attention of each forced sentence, decoded in
    length-sorted batches; None where ``encoded`` is None."""
    out: list[Optional[np.ndarray]] = [None] * len(encoded)
    todo = sorted((k for k, e in enumerate(encoded) if e is not None), key=lambda k: len(encoded[k][0]))
    for start in range(0, len(todo), BATCH):
        chunk = todo[start:start + BATCH]
        srcs = [encoded[k][0] for k in chunk]
        tgts = [[BOS] + encoded[k][2] for k in chunk]  # the decoder's inputs: <s> y_1 .. y_T (it then emits </s>)
        model = translator.model
        dev = device_of(model)
        src, src_len = _pad(srcs).to(dev), torch.tensor([len(s) for s in srcs], device=dev)  # (B, S), (B,)
        with torch.inference_mode():
            _, alpha = model.teacher_forced(model.encode(src, src_len), _pad(tgts).to(dev))  # (B, T+1, S)
        alpha = alpha.float().cpu()
        for row, k in enumerate(chunk):
            n_tgt, n_src = len(encoded[k][2]), len(encoded[k][0])
            out[k] = alpha[row, :n_tgt, :n_src].numpy()  # the </s> row left out
    return out


def _pad(rows: Sequence[Sequence[int]]) -> torch.Tensor:
    width = max(len(r) for r in rows)
    return torch.tensor([list(r) + [PAD] * (width - len(r)) for r in rows])


# ---------------------------------------------------------------- the report


def model_rows(name: str, matrices: Sequence[Optional[WordMatrices]], gold: GoldSet,
               extractions: Sequence[str]) -> list[Row]:
    rows = []
    for method in ("attention", "saliency"):
        picked = [None if m is None else getattr(m, method) for m in matrices]
        if all(p is None for p in picked):
            continue
        for how in extractions:
            total, per = score([None if p is None else extract(p, how) for p in picked], gold)
            rows.append(Row(name, method, how, total, tuple(per)))
    return rows


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


def eflomal_gold_links(gold: GoldSet, corpus: Sequence[tuple[str, str]]) -> list[set]:
    from model.scoring.statistical_aligner import eflomal_links

    return eflomal_links([s.src for s in gold.sentences], [s.tgt for s in gold.sentences], corpus)


@dataclass(frozen=True)
class AlignerText:
    """What the statistical aligner learnt from besides the gold sentences."""

    used: tuple[tuple[str, int], ...]  # (corpus, pairs) read
    missing: tuple[str, ...]  # corpus paths not found, so not used

    @property
    def note(self) -> str:
        """In words (the command line's and the JSON report's; pages word it themselves)."""
        used = [f"{name} ({pairs:,} pairs)" for name, pairs in self.used]
        note = "the gold sentences" + (" plus " + ", ".join(used) if used else " alone")
        return note + ("; not found, so not used: " + ", ".join(self.missing) if self.missing else "")


def training_corpus(checkpoints: Sequence[Path], extra: Sequence[str], src_lang: str,
                    tgt_lang: str, root: Optional[Path] = None) -> tuple[list[tuple[str, str]], AlignerText]:
    """The parallel text the statistical aligner learns from: ``extra`` paths if given (a pair
    file whole, source column first; a folder's train files), else the training split of the
    checkpoints' corpora (once each), in the gold's direction; and what it
    was, including what could not be read. Relative corpus paths in the checkpoints' configs
    are read from ``root`` (default: the working directory)."""
    specs = [CorpusSpec(name=Path(p).name, path=p, columns=f"{src_lang}-{tgt_lang}") for p in extra]
    if not extra:
        for folder in checkpoints:
            train = describe_folder(folder).train  # imports name no corpus
            if train is not None:
                found = [located_spec(s, Path(root or ".")) for s in corpus_specs(train)]
                specs += [s for s in found if s.path not in {x.path for x in specs}]
    pairs, used, missing = [], [], []
    for spec in specs:
        if not (Path(spec.path).is_dir() or is_pair_file(spec.path)):
            missing.append(spec.path)
            continue
        if spec.path in extra and is_pair_file(spec.path):  # a user's own pair file: all of it, source first
            corpus = read_pair_file(spec.path)
        else:  # a folder's train files, or the part of a pair file a model trained on
            corpus = load_split(spec, "train", src_lang, tgt_lang)
        pairs += list(zip(corpus.src, corpus.tgt))
        used.append((spec.name or spec.path, len(corpus.src)))
    return pairs, AlignerText(tuple(used), tuple(missing))


def score_model(name: str, translator: Translator, direction: tuple[str, str], gold: GoldSet,
                methods: Sequence[str] = METHODS, extractions: Sequence[str] = (DEFAULT_EXTRACTION,),
                src_lang: str = "en", tgt_lang: str = "fr") -> tuple[list[Row], list[Unscored], list]:
    """One model's rows (attention and saliency, as asked and as it has them), the sentences it
    could not score, and its word matrices per sentence (None where unscored)."""
    if direction not in ((src_lang, tgt_lang), (tgt_lang, src_lang)):
        raise UserError(f"{name} translates {'-'.join(direction)}; the gold set is {src_lang}-{tgt_lang}")
    wanted = [m for m in ("attention", "saliency") if m in methods]
    if not wanted or (wanted == ["attention"] and not translator.model.has_attention):
        return [], [], []
    matrices, missed = forced_matrices(translator, gold, "saliency" in methods,
                                       reverse=direction != (src_lang, tgt_lang), name=name)
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


def table(report: AlignmentReport) -> str:
    lines = [f"{report.gold}: {report.sentences} sentences (AER: lower is better)",
             f"{'model':<32} {'method':<10} {'extraction':<20} {'AER':>6} {'prec':>6} {'recall':>6} {'sents':>6}"]
    for r in report.rows:
        lines.append(f"{r.model or '-':<32} {r.method:<10} {r.extraction:<20} {r.counts.aer:6.3f} "
                     f"{r.counts.precision:6.3f} {r.counts.recall:6.3f} {r.sentences:6d}")
    for u in report.unscored:
        lines.append(f"not scored: {u.model}, sentence {u.sentence}: {u.reason}")
    if report.eflomal_corpus:
        lines.append(f"eflomal learnt from {report.eflomal_corpus}")
    return "\n".join(lines)


def record_in_card(folder: Path, report: AlignmentReport, command: str, digest: str = "") -> None:
    """The rows of ``folder``'s model, of its pairings with a model of the other direction ("A + B")
    and of the baselines, into its card under ``alignment[gold set]`` (read back as
    card_schema.AlignmentResult), with the gold set's ``gold_digest``."""
    card = read_json(folder / CARD) if (folder / CARD).is_file() else {}
    rows = [r.to_json() for r in report.rows if r.model is None or folder.name in r.model.split(PAIRED)]
    card.setdefault("alignment", {})[report.gold] = {"rows": rows, "command": command, "sentences": report.sentences,
                                                     "gold_digest": digest}
    (folder / CARD).write_text(json.dumps(card, indent=2, ensure_ascii=False) + "\n")
