"""The training data in memory: tokenised training and validation pairs of one or several corpora,
the vocabularies (trained on the training side, or read from ``train.vocab_dir``), length
augmentation, and each epoch's batches (model/corpus/parallel.py)."""
from __future__ import annotations

import itertools
import random
from pathlib import Path
from typing import Iterator, Optional


from model.checkpoints.folder import SRC_VOCAB, TGT_VOCAB
from model.core.config import Config
from model.corpus.corpora import corpus_specs, load_split, mix_indices
from model.corpus.parallel import (
    DataError,
    bucket_batches,
    epoch_batches,
    epoch_rng,
    filter_by_length,
    find_split,
    iter_chunks,
    join_examples,
    reservoir_sample,
    stream_pairs,
)
from model.corpus.vocab import Vocab, train_vocab
from model.decoding.translator import MAX_SOURCE_TOKENS
from model.core.errors import ConfigError
from model.training.distributed import Runtime, broadcast


class Data:
    """Tokenised training and validation data plus the vocabularies, all in memory (or the
    training side streamed from one folder corpus). Several corpora (``train.corpora``) are
    concatenated, each remembered by its size and weight, so an epoch can mix them."""

    def __init__(self, cfg: Config, vocabs: Optional[tuple[Vocab, Vocab]] = None, log=print,
                 rt: Runtime = Runtime()):
        t = self.t = cfg.train
        self.specs = corpus_specs(t)
        self._paused = None  # (epoch, batch, iterator, total) left by a validation round
        self.paths = self._stream_paths() if t.streaming else None
        trains = None if t.streaming else [self._split(spec, "train") for spec in self.specs]
        if vocabs is None:
            vocabs = self._vocabs(trains, rt)
        self.src_vocab, self.tgt_vocab = vocabs
        self.src, self.tgt, self.sizes = [], [], []
        for spec, corpus in zip(self.specs, trains or []):
            src, tgt, dropped = self.encode(corpus.src, corpus.tgt)
            self.src += src
            self.tgt += tgt
            self.sizes.append(len(src))
            log(f"{spec.name}: {len(src)} training pairs kept, {dropped} longer than {t.max_len} tokens "
                f"dropped, {corpus.empty_skipped} with an empty side skipped; weight {spec.weight}")
        if t.streaming:
            log(f"streaming training pairs from {self.paths[0]} / {self.paths[1]}")
        self._read_val(log)

    def _split(self, spec, split: str):
        prefixes = {"train": self.t.train_prefix, "val": self.t.val_prefix}
        return load_split(spec, split, self.t.src_lang, self.t.tgt_lang, prefixes, self.t.max_corpus_mb * 2**20)

    def _stream_paths(self) -> tuple[Path, Path]:
        t = self.t
        if len(self.specs) != 1 or not Path(self.specs[0].path).is_dir():
            raise ConfigError("train.streaming reads one folder of train.{src,tgt}[.gz] files; "
                             "it does not mix corpora or read pair files")
        folder = self.specs[0].path
        return find_split(folder, t.train_prefix, t.src_lang), find_split(folder, t.train_prefix, t.tgt_lang)

    def _vocabs(self, trains, rt: Runtime) -> tuple[Vocab, Vocab]:
        """Read ``vocab_dir``'s models, or train new ones on all training corpora together
        (rank 0 trains, every other rank receives them)."""
        t = self.t
        if t.vocab_dir:
            try:
                return Vocab.load(Path(t.vocab_dir) / SRC_VOCAB), Vocab.load(Path(t.vocab_dir) / TGT_VOCAB)
            except (OSError, ValueError) as exc:
                raise DataError(f"train.vocab_dir={t.vocab_dir}: cannot read its vocabularies ({exc})") from None
        protos = None
        if rt.main:
            if trains is not None:
                src, tgt = [s for c in trains for s in c.src], [s for c in trains for s in c.tgt]
            else:
                src, tgt = zip(*reservoir_sample(stream_pairs(*self.paths), t.spm_sample_lines, t.seed))
            protos = (train_vocab(list(src), t.src_vocab, t.spm_sample_lines, t.seed).proto,
                      train_vocab(list(tgt), t.tgt_vocab, t.spm_sample_lines, t.seed).proto)
        return tuple(Vocab(p) for p in broadcast(protos, rt))

    def _read_val(self, log) -> None:
        """Each corpus' validation split (at most ``val_max_sentences``), concatenated;
        ``val_slices`` says which rows belong to which corpus."""
        self.val_src_text, self.val_ref, self.val_slices = [], [], {}
        for spec in self.specs:
            val = self._split(spec, "val")
            n = min(len(val.src), self.t.val_max_sentences)
            start = len(self.val_src_text)
            self.val_src_text += val.src[:n]
            self.val_ref += val.tgt[:n]
            self.val_slices[spec.name] = (start, start + n)
            log(f"{spec.name}: {n} validation pairs")
        self.val_src = [ids[:MAX_SOURCE_TOKENS] for ids in self.src_vocab.encode_batch(self.val_src_text)]
        self.val_tgt = [ids[:MAX_SOURCE_TOKENS] for ids in self.tgt_vocab.encode_batch(self.val_ref)]

    def encode(self, src: list[str], tgt: list[str]):
        """Token ids of both sides, length-filtered: (src ids, tgt ids, pairs dropped)."""
        return filter_by_length(self.src_vocab.encode_batch(src), self.tgt_vocab.encode_batch(tgt), self.t.max_len)

    def batches_from(self, epoch: int, start: int) -> tuple[Iterator, Optional[int]]:
        """``epoch``'s batches from number ``start`` on, and the epoch's batch count: the paused
        iterator when a validation round stopped exactly there (a stream is not read again),
        else the epoch rebuilt and its first ``start`` batches skipped (resuming)."""
        paused, self._paused = self._paused, None
        if paused and paused[:2] == (epoch, start):
            return paused[2], paused[3]
        batches, total = self.epoch(epoch)
        return itertools.islice(batches, start, None), total

    def pause(self, epoch: int, position: int, batches: Iterator, total: Optional[int]) -> None:
        """Keep ``batches`` (at batch ``position`` of ``epoch``) for the next ``batches_from``."""
        self._paused = (epoch, position, batches, total)

    def epoch(self, epoch: int) -> tuple[Iterator, Optional[int]]:
        """(iterator of (src ids, tgt ids, batch index list), number of batches or None when
        streaming). A pure function of (seed, epoch): resuming replays the same order."""
        t = self.t
        if t.streaming:
            return self._stream(epoch), None
        src, tgt = self.src, self.tgt
        if len(self.sizes) > 1 or any(spec.weight != 1 for spec in self.specs):
            mixed = mix_indices(self.sizes, [spec.weight for spec in self.specs],
                                random.Random(f"mix {t.seed} {epoch}"))
            src, tgt = [src[i] for i in mixed], [tgt[i] for i in mixed]
        src, tgt, batches = epoch_batches(src, tgt, epoch, t.seed, t.batch_size, t.pool_batches,
                                          t.join_prob, t.join_max)
        return ((src, tgt, index) for index in batches), len(batches)

    def _stream(self, epoch: int) -> Iterator:
        """Streaming: read pools of ``pool_batches * batch_size`` pairs, shuffle and bucket each
        pool on its own (shuffle a big corpus on disk once; order beyond a pool is the file's)."""
        t = self.t
        rng = epoch_rng(t.seed, epoch)
        pool = t.batch_size * t.pool_batches * max(1, round(1 + t.join_prob * (t.join_max - 1)))
        for chunk in iter_chunks(stream_pairs(*self.paths), pool):
            src_ids, tgt_ids, _ = self.encode([s for s, _ in chunk], [t_ for _, t_ in chunk])
            src, tgt, sizes = join_examples(src_ids, tgt_ids, t.join_prob, t.join_max, rng)
            for index in bucket_batches(src, tgt, t.batch_size, t.pool_batches, rng, sizes):
                yield src, tgt, index
