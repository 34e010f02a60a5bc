"""What a model's attention and saliency say about a gold translation: each model reads the gold
source and is forced to output the gold target (teacher forcing, the same probabilities as its
beam search with the target as a forced prefix); its matrices, merged to words
(model/scoring/word_alignment.py), are what model/scoring/attention_alignment.py scores.
Sentences a model cannot score are named with why (``Unscored``), never dropped silently."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np
import torch

from model.core.decodable import Vocabulary
from model.corpus.vocab import BOS, EOS, PAD
from model.decoding.cross_attention import has_heads
from model.decoding.device import device_of
from model.decoding.translator import MAX_SOURCE_TOKENS, Translator
from model.explaining.faithfulness import Comprehensiveness, comprehensiveness_check
from model.explaining.registry import explain
from model.explaining.saliency import saliency_many
from model.scoring.word_alignment import GoldSet, word_matrix

BATCH = 32  # gold sentences forced through a model at once


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
class WordMatrices:
    """A model's word-level (target words, source words) matrices for one gold sentence."""

    attention: Optional[np.ndarray]  # None for a model without attention
    saliency: Optional[np.ndarray]  # None when saliency was not asked for
    explained: dict = field(default_factory=dict)  # method of model/explaining/methods.py -> its source matrix
    # a model with several attentions (a Transformer's cross-attention): every layer's and head's,
    # (layers, heads, target words, source words), read at the step that outputs each word, and
    # shifted: at the step where the word is the decoder's input (model/decoding/cross_attention.py)
    heads: Optional[np.ndarray] = None
    shifted_heads: Optional[np.ndarray] = None

    def of(self, method: str) -> Optional[np.ndarray]:
        """The matrix of ``method`` ("attention", "saliency" or an explanation method), None if not computed."""
        if method in ("attention", "saliency"):
            return getattr(self, method)
        return self.explained.get(method)

    def head(self, layer: int, head: Optional[int], shifted: bool) -> Optional[np.ndarray]:
        """(target words, source words): 0-based ``layer``'s ``head`` (None: the mean of its
        heads), in the plain or the shifted reading; None for a model with one attention."""
        heads = self.shifted_heads if shifted else self.heads
        if heads is None:
            return None
        return heads[layer].mean(0) if head is None else heads[layer, head]


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
                    name: str = "", explained: Sequence[str] = ()) -> tuple[list[Optional[WordMatrices]], list[Unscored]]:
    """Each gold sentence's word matrices from ``translator`` forced to output the gold
    target (``reverse``: the model translates the gold's target language into its source
    language; its matrices are transposed back to (gold target, gold source)); ``explained``:
    explanation methods (model/explaining/methods.py) whose normalised source rows are added."""
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
    read = _forced_attention(translator, encoded) if translator.model.has_attention else [(None, None)] * len(encoded)
    saliencies = iter(saliency_many(translator.model, [(e[0], e[2] + [EOS]) for e in encoded if e is not None])
                      if with_saliency else ())
    out: list[Optional[WordMatrices]] = []
    for item, (alpha, cross) in zip(encoded, read):
        if item is None:
            out.append(None)
            continue
        src_ids, src_spans, tgt_ids, tgt_spans = item
        sal = next(saliencies)[:len(tgt_ids)] if with_saliency else None  # the </s> row left out
        words = [None if m is None else word_matrix(m, src_spans, tgt_spans) for m in (alpha, sal)]
        found = explain(translator.model, src_ids, tgt_ids + [EOS], explained) if explained else {}
        more = {m: word_matrix(e.normalised()[0][:len(tgt_ids)], src_spans, tgt_spans) for m, e in found.items()}
        heads = None if cross is None else [_word_heads(cross[:, :, rows], src_spans, tgt_spans, reverse)
                                            for rows in (slice(0, len(tgt_ids)), slice(1, len(tgt_ids) + 1))]
        out.append(WordMatrices(*[None if m is None else (m.T if reverse else m) for m in words],
                                explained={m: (x.T if reverse else x) for m, x in more.items()},
                                heads=None if heads is None else heads[0],
                                shifted_heads=None if heads is None else heads[1]))
    return out, unscored


def word_matrix_check(translator: Translator, src_words: Sequence[str], tgt_words: Sequence[str],
                      matrix: np.ndarray, reverse: bool = False) -> Optional[Comprehensiveness]:
    """How faithful a word matrix ``matrix`` (gold target words, gold source words), one of
    ``forced_matrices``'s, is to the model it came from, forced to output the gold target
    (``reverse`` as there): ``comprehensiveness_check`` of the order it gives the words the model
    reads, each piece ranked by its word's total (its column sum; pieces of no word, such as a
    closing </s>, last). None when the sentence cannot be scored."""
    words = matrix.T if reverse else matrix  # (model's target words, model's source words)
    if reverse:
        src_words, tgt_words = tgt_words, src_words
    src_ids, src_spans = encode_words(translator.src_vocab, src_words)
    tgt_ids, tgt_spans = encode_words(translator.tgt_vocab, tgt_words)
    if _unscorable(src_words, src_spans, tgt_words, tgt_spans, len(src_ids)):
        return None
    importance = np.full(len(src_ids), -np.inf)
    for j, (start, end) in enumerate(src_spans):
        importance[start:end] = words[:, j].sum()
    return comprehensiveness_check(translator.model, src_ids, tgt_ids + [EOS], importance)


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


def _word_heads(cross: np.ndarray, src_spans, tgt_spans, reverse: bool) -> np.ndarray:
    """(layers, heads, target words, source words) from (layers, heads, target pieces, source
    pieces), transposed to (gold target, gold source) words when ``reverse``."""
    words = np.stack([np.stack([word_matrix(head, src_spans, tgt_spans) for head in layer]) for layer in cross])
    return np.swapaxes(words, -1, -2) if reverse else words


def _forced_attention(translator: Translator, encoded) -> list[tuple]:
    """Each forced sentence's (target pieces, source pieces) attention and, for a model with
    several (``has_heads``), its cross-attention (layers, heads, target pieces + 1, source
    pieces), whose row i is the step with input y_i (row 0: <s>), else None; decoded in
    length-sorted batches; (None, None) where ``encoded`` is None."""
    out: list[tuple] = [(None, None)] * len(encoded)
    heads = has_heads(translator.model)
    todo = sorted((k for k, e in enumerate(encoded) if e is not None), key=lambda k: len(encoded[k][0]))
    for start in range(0, len(todo), BATCH):
        chunk = todo[start:start + BATCH]
        srcs = [encoded[k][0] for k in chunk]
        tgts = [[BOS] + encoded[k][2] for k in chunk]  # the decoder's inputs: <s> y_1 .. y_T (it then emits </s>)
        model = translator.model
        dev = device_of(model)
        src, src_len = _pad(srcs).to(dev), torch.tensor([len(s) for s in srcs], device=dev)  # (B, S), (B,)
        with torch.inference_mode():
            memory = model.encode(src, src_len)
            _, alpha = model.teacher_forced(memory, _pad(tgts).to(dev))  # (B, T+1, S)
            cross = model.forced_cross_attention(memory, _pad(tgts).to(dev)).float().cpu() if heads else None
        alpha = alpha.float().cpu()
        for row, k in enumerate(chunk):
            n_tgt, n_src = len(encoded[k][2]), len(encoded[k][0])
            out[k] = (alpha[row, :n_tgt, :n_src].numpy(),  # the </s> row left out
                      None if cross is None else cross[row, :, :, :n_tgt + 1, :n_src].numpy())
    return out


def _pad(rows: Sequence[Sequence[int]]) -> torch.Tensor:
    width = max(len(r) for r in rows)
    return torch.tensor([list(r) + [PAD] * (width - len(r)) for r in rows])
