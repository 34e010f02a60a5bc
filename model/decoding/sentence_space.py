"""Inside the fixed vector: where a model puts a sentence, among the sentences it trained on.

RNNencdec's decoder reads one vector of the whole source at every step, the encoder summary
c = [forward h_Tx ; backward h_1] (the paper's fixed-length bottleneck, Section 2). RNNsearch's
decoder starts from s_0 = tanh(W_s backward h_1) (Appendix A.2.2) and then reads the annotations
h_j through attention. A ``SentenceSpace`` holds that sentence-level vector (c for a model without
attention, s_0 for one with it) for a deterministic sample of a model's training sentences, a 2-D
projection of them (PCA), and for models with attention the annotations h_j of the words of a
smaller sample, so that a user's sentence (or word) can be placed among them and its nearest
neighbours found by cosine similarity (exact search: the samples are small).

    space = build_space(translator, training_sentences(folder))
    found = space.nearest(space.embed(translator, "a dog runs in the park"), k=10)
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

import numpy as np
import torch

from model.corpus.corpora import corpus_specs, load_split, located_spec
from model.decoding.cross_attention import has_heads
from model.decoding.translator import Translator
from model.core.errors import DataError, UserError

SAMPLE = 20_000  # training sentences whose sentence vectors are kept
WORD_SAMPLE = 1_000  # sentences whose words' annotations are kept (models with attention; 100 MB a model in all)
BATCH = 128  # sentences encoded at once
MAX_K = 1_000  # neighbours a caller may ask for


class SpaceError(UserError):
    """A sentence that cannot be placed (blank, nothing the vocabulary encodes) or a bad request."""


@dataclass(frozen=True)
class Neighbour:
    """A training sentence (or a word in one) near the query."""

    text: str  # the sentence
    similarity: float  # cosine similarity, 1 for the same direction
    index: int  # its row in the space
    word: str = ""  # for word neighbours: the word (subword piece) whose annotation is near


@dataclass(frozen=True)
class WordSpace:
    """The annotations h_j of every source piece of a sample of sentences."""

    vectors: np.ndarray  # (pieces, 2n) float32, unit length
    sentence: np.ndarray  # (pieces,) int: the row in SentenceSpace.sentences
    pieces: tuple[str, ...]  # (pieces,) the subword piece at each row


@dataclass(frozen=True)
class SentenceSpace:
    """A model's sentence vectors for a sample of its training sentences, with their projection."""

    kind: str  # "c" (the encoder summary a model without attention reads), "s_0" (the decoder's first state)
    # or "mean" (a Transformer's encoder outputs averaged over the source words: sentence_vector_kind)
    sentences: tuple[str, ...]  # (n,) the sample, in sample order
    vectors: np.ndarray  # (n, d) float32, unit length
    mean: np.ndarray  # (d,) the centre of the projection
    axes: np.ndarray  # (2, d) the first two principal axes of the unit vectors
    points: np.ndarray  # (n, 2) the sample projected
    words: Optional[WordSpace] = None

    @property
    def nbytes(self) -> int:
        """Memory the arrays take (the server keeps one space per model)."""
        arrays = [self.vectors, self.mean, self.axes, self.points]
        if self.words is not None:
            arrays += [self.words.vectors, self.words.sentence]
        return sum(a.nbytes for a in arrays)

    def embed(self, translator: Translator, text: str) -> np.ndarray:
        """The unit sentence vector of ``text`` (d,); SpaceError when nothing of it can be encoded."""
        return _encode(translator, [_ids(translator, text)], self.kind)[0]

    def embed_many(self, translator: Translator, texts: Sequence[str]) -> tuple[np.ndarray, list[int]]:
        """Unit vectors (m, d) of the ``texts`` that can be placed, in batches, and their indices."""
        kept = [(i, ids) for i, t in enumerate(texts) if (ids := _placeable(translator, t))]
        if not kept:
            return np.zeros((0, self.vectors.shape[1]), dtype=np.float32), []
        return _encode(translator, [ids for _, ids in kept], self.kind), [i for i, _ in kept]

    def project(self, vector: np.ndarray) -> np.ndarray:
        """(2,) where a unit vector falls on the space's map."""
        return (vector - self.mean) @ self.axes.T

    def nearest(self, vector: np.ndarray, k: int = 10) -> list[Neighbour]:
        """The ``k`` sample sentences most similar to a unit ``vector``, most similar first (ties by
        sample order); fewer when the sample is smaller."""
        k = check_k(k)
        sims = self.vectors @ vector  # (n,)
        return [Neighbour(self.sentences[i], float(sims[i]), int(i)) for i in _top(sims, k)]

    def nearest_words(self, translator: Translator, text: str, k: int = 5) -> list[tuple[str, list[Neighbour]]]:
        """For each source piece of ``text``: the pieces of sample sentences whose annotations
        h_j are nearest to its own (the word in its context). Models with attention only."""
        if self.words is None:
            raise SpaceError("this model keeps no annotations: only a model with attention reads them")
        k = check_k(k)
        ids = _ids(translator, text)
        annotations = _unit(_annotations(translator, [ids])[0])  # (len, 2n)
        sims = annotations @ self.words.vectors.T  # (len, pieces)
        out = []
        for piece, row in zip(translator.src_vocab.pieces(ids), sims):
            out.append((piece, [Neighbour(self.sentences[self.words.sentence[i]], float(row[i]), int(i),
                                          self.words.pieces[i]) for i in _top(row, k)]))
        return out


@dataclass(frozen=True)
class SharedParts:
    """What the nearest neighbours of sentences of one length share with them, beside random
    sample sentences (the bottleneck made visible: does the vector keep the sentence's start, its
    end, or its words?)."""

    lengths: str  # the bucket of source lengths in words, e.g. "11-20"
    sentences: int
    first: float  # share of neighbours that start with the sentence's first two words
    last: float  # share of neighbours that end with its last two words
    words: float  # mean Jaccard overlap of the lowercased word sets
    random_first: float
    random_last: float
    random_words: float


BUCKETS = ((1, 10), (11, 20), (21, 30), (31, 1000))


def shared_parts(space: "SentenceSpace", translator: Translator, sentences: Sequence[str], k: int = 5,
                 seed: int = 0) -> list[SharedParts]:
    """For each length bucket of ``sentences`` (test sentences, say): what their ``k`` nearest
    training sentences share with them, against ``k`` random sample sentences each."""
    rng = random.Random(seed)
    scored = {bucket: [] for bucket in BUCKETS}
    vectors, kept = space.embed_many(translator, sentences)
    for vector, index in zip(vectors, kept):
        words = _words(sentences[index])
        bucket = next((b for b in BUCKETS if b[0] <= len(words) <= b[1]), None)
        if bucket is None or len(words) < 2:
            continue
        near = [_words(n.text) for n in space.nearest(vector, k)]
        rand = [_words(space.sentences[rng.randrange(len(space.sentences))]) for _ in range(k)]
        scored[bucket].append((_parts(words, near), _parts(words, rand)))
    rows = []
    for (lo, hi), pairs in scored.items():
        if pairs:
            mean = lambda which, i: float(np.mean([p[which][i] for p in pairs]))  # noqa: E731
            rows.append(SharedParts(f"{lo}-{hi}" if hi < 1000 else f"{lo}+", len(pairs), mean(0, 0), mean(0, 1),
                                    mean(0, 2), mean(1, 0), mean(1, 1), mean(1, 2)))
    return rows


def _words(text: str) -> list[str]:
    return [w for w in (w.strip(".,;:!?\"'()").lower() for w in text.split()) if w]


def _parts(words: list[str], others: list[list[str]]) -> tuple[float, float, float]:
    first = np.mean([o[:2] == words[:2] for o in others])
    last = np.mean([o[-2:] == words[-2:] for o in others])
    jaccard = np.mean([len(set(o) & set(words)) / max(1, len(set(o) | set(words))) for o in others])
    return float(first), float(last), float(jaccard)


def check_k(k) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= MAX_K:
        raise SpaceError(f"k must be a whole number from 1 to {MAX_K}, got {k!r}")
    return int(k)


def training_sentences(folder: Path, root: Optional[Path] = None) -> list[str]:
    """The source side of the training split of every corpus a checkpoint's config names, in
    order (relative paths from ``root``, default the working directory). SpaceError when the
    config names none or none can be read."""
    from model.checkpoints.families import describe_folder

    summary = describe_folder(folder)
    if summary.train is None:
        raise SpaceError(f"{Path(folder).name}: its config does not say what it trained on; give the sentences")
    sentences, missing = [], []
    for spec in corpus_specs(summary.train):
        located = located_spec(spec, Path(root or "."))
        if not Path(located.path).exists():
            missing.append(spec.path)
            continue
        sentences += load_split(located, "train", summary.src_lang, summary.tgt_lang).src
    if not sentences:
        raise SpaceError(f"{Path(folder).name}: none of its training corpora is here ({', '.join(missing)})")
    return sentences


def sample(sentences: Sequence[str], size: int, seed: int = 0) -> list[str]:
    """Up to ``size`` distinct non-blank sentences, drawn the same way every time (``seed``), in
    their original order."""
    distinct = list(dict.fromkeys(s.strip() for s in sentences if s.strip()))
    if len(distinct) <= size:
        return distinct
    keep = sorted(random.Random(seed).sample(range(len(distinct)), size))
    return [distinct[i] for i in keep]


def build_space(translator: Translator, sentences: Sequence[str], size: int = SAMPLE,
                word_size: int = WORD_SAMPLE, seed: int = 0) -> SentenceSpace:
    """Encode a sample of ``sentences`` (see ``sample``) and project it to 2-D; with attention,
    also the annotations of ``word_size`` sampled sentences, evenly spread over the sample."""
    chosen = sample(sentences, size, seed)
    encoded = [(s, ids) for s in chosen if (ids := _placeable(translator, s))]
    if not encoded:
        raise SpaceError("no sentence to place: the sample is empty or nothing of it can be encoded")
    kind = sentence_vector_kind(translator.model)
    texts = tuple(s for s, _ in encoded)
    vectors = _encode(translator, [ids for _, ids in encoded], kind)
    mean, axes = _principal_axes(vectors)
    words = None
    if translator.model.has_attention and word_size > 0:  # spread over the sample (corpora come one after another)
        rows = sorted(set(np.linspace(0, len(encoded) - 1, min(word_size, len(encoded))).astype(int).tolist()))
        words = _word_space(translator, rows, [encoded[r][1] for r in rows])
    return SentenceSpace(kind, texts, vectors, mean, axes, (vectors - mean) @ axes.T, words)


def sentence_vector_kind(model) -> str:
    """Which vector stands for a sentence: "c" (the encoder summary RNNencdec's decoder reads),
    "s_0" (RNNsearch's first decoder state) or "mean" (a Transformer's encoder outputs averaged
    over the source words: it has neither)."""
    if model.description.arch == "transformer" or has_heads(model):  # imported Transformers too
        return "mean"
    return "s_0" if model.has_attention else "c"


def _placeable(translator: Translator, text: str) -> list[int]:
    """``text``'s source ids; none when it is blank, nothing of it is in the vocabulary, or the
    vocabulary cannot read it (a word outside one without <unk>, the PyTorch tutorial's)."""
    if not text.strip():
        return []
    try:
        return translator.source_ids(text)[0]
    except DataError:
        return []


def _ids(translator: Translator, text: str) -> list[int]:
    """``_placeable``'s ids of ``text``; SpaceError saying why when there are none."""
    if not isinstance(text, str) or not text.strip():
        raise SpaceError("type a sentence to place it among the training sentences")
    ids = translator.source_ids(text)[0]  # a word the vocabulary cannot read: its DataError names the word
    if not ids:
        raise SpaceError("nothing of this sentence is in the model's vocabulary")
    return ids


def _top(sims: np.ndarray, k: int) -> np.ndarray:
    """(<= k,) the rows of the ``k`` largest similarities ``sims`` (n,), largest first, ties by row."""
    return np.lexsort((np.arange(len(sims)), -sims))[:k]


def _encode(translator: Translator, id_lists: Sequence[Sequence[int]], kind: str) -> np.ndarray:
    """(len(id_lists), d) unit sentence vectors (``kind``: "c" or "s_0") of non-empty source
    ids, ``BATCH`` sentences at a time."""
    return np.concatenate([_unit(_sentence_vectors(translator, id_lists[i:i + BATCH], kind))
                           for i in range(0, len(id_lists), BATCH)])


def _batch(translator: Translator, batch: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    lengths = torch.tensor([len(ids) for ids in batch])
    src = torch.zeros(len(batch), int(lengths.max()), dtype=torch.long)  # PAD is 0
    for row, ids in enumerate(batch):
        src[row, :len(ids)] = torch.tensor(ids)
    device = translator.device
    return src.to(device), lengths.to(device)


@torch.no_grad()
def _sentence_vectors(translator: Translator, batch: Sequence[Sequence[int]], kind: str) -> np.ndarray:
    """(batch, d): c = the encoder summary, or s_0 = the decoder's first state."""
    model = translator.model
    memory = model.encode(*_batch(translator, batch))
    state = getattr(memory, "summary", None) if kind in ("c", "mean") else model.init_state(memory)
    if not isinstance(state, torch.Tensor):
        raise SpaceError(f"{translator.name}: its decoder state is not one vector")
    return state.float().cpu().numpy()


@torch.no_grad()
def _annotations(translator: Translator, batch: Sequence[Sequence[int]]) -> list[np.ndarray]:
    """Each sentence's annotations h_j, (len, 2n)."""
    memory = translator.model.encode(*_batch(translator, batch))
    if not isinstance(getattr(memory, "annotations", None), torch.Tensor):
        raise SpaceError(f"{translator.name}: its encoder keeps no annotations h_j")
    annotations = memory.annotations.float().cpu().numpy()  # (batch, src_len, 2n)
    return [annotations[row, :len(ids)] for row, ids in enumerate(batch)]


def _word_space(translator: Translator, rows: Sequence[int], encoded: Sequence[Sequence[int]]) -> WordSpace:
    """The annotations of sentences ``rows`` of the sample (their ids ``encoded``)."""
    vectors, sentence, pieces = [], [], []
    for start in range(0, len(encoded), BATCH):
        batch = encoded[start:start + BATCH]
        for row, ids, h in zip(rows[start:start + BATCH], batch, _annotations(translator, batch)):
            vectors.append(_unit(h))
            sentence += [row] * len(ids)
            pieces += translator.src_vocab.pieces(ids)
    return WordSpace(np.concatenate(vectors), np.asarray(sentence), tuple(pieces))


def _unit(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (a zero row stays zero)."""
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.where(norms > 0, norms, 1.0)


def _principal_axes(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mean (d,), the two leading principal axes (2, d)), each axis's sign fixed so that its
    largest component is positive (the same map every time)."""
    mean = vectors.mean(axis=0)
    centred = vectors - mean
    if len(vectors) < 2:
        return mean, np.eye(2, vectors.shape[1], dtype=np.float32)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    axes = vt[:2]
    if len(axes) < 2:
        axes = np.vstack([axes, np.zeros_like(axes)])
    signs = np.sign(axes[np.arange(2), np.abs(axes).argmax(axis=1)])
    return mean, (axes * np.where(signs == 0, 1, signs)[:, None]).astype(np.float32)
