"""``Translator``: text in, traces out, with a checkpoint's vocabularies (the command line is
``model/translate.py``)."""
from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Callable, ContextManager, Optional, Sequence

import torch

from model.checkpoints.families import load_model
from model.corpus.parallel import iter_chunks
from model.corpus.vocab import EOS
from model.decoding.device import device_of, pick_device
from model.core.decodable import Decodable, Vocabulary
from model.decoding.search import SearchConfig, beam_search, greedy_traces
from model.decoding.trace import Trace
from model.core.errors import ConfigError

# Inputs longer than this (subword pieces) are cut; the trace says so.
MAX_SOURCE_TOKENS = 200
MAX_BEAM = 16
MAX_LEN_RATIO = 3.0  # outputs may be at most this many times the source length (+ MAX_LEN_EXTRA)
MAX_LEN_EXTRA = 50
# Bytes read from stdin at most; as model.evaluate.MAX_TEST_BYTES, far more than 10,000 lines need.
MAX_STDIN_BYTES = 64 * 2**20


class Translator:
    """A model (any ``Decodable``: model/core/decodable.py) with its vocabularies, ready to decode.
    Read-only: safe to share across threads."""

    def __init__(self, model: Decodable, src_vocab: Vocabulary, tgt_vocab: Vocabulary, name: str = "",
                 device: str | torch.device | None = None):
        """``device`` ("cpu", "cuda", "auto", a ``torch.device``; model/decoding/device.py): where the
        model decodes. It is moved there once, here, in place; None leaves it where its weights are."""
        if device is not None:
            model.to(pick_device(device))
        self.model, self.src_vocab, self.tgt_vocab = model.eval(), src_vocab, tgt_vocab
        self.name = name or model.description.arch

    @classmethod
    def from_checkpoint(cls, path: str | Path, device: str | torch.device | None = None) -> "Translator":
        """The checkpoint folder's model and vocabularies; loaded on the CPU, then moved to ``device``."""
        model, src_vocab, tgt_vocab, _ = load_model(path)
        return cls(model, src_vocab, tgt_vocab, Path(path).name, device)

    @property
    def arch(self) -> str:
        return self.model.description.arch

    @property
    def device(self) -> torch.device:
        """Where the model's weights are, and so where it decodes."""
        return device_of(self.model)

    def source_ids(self, text: str) -> tuple[list[int], bool]:
        """Subword ids of ``text``, cut to MAX_SOURCE_TOKENS; (ids, truncated). A source that ends
        with </s> (Joey NMT's) keeps it when cut: the model never saw one without it."""
        ids = self.src_vocab.encode(text)
        if len(ids) <= MAX_SOURCE_TOKENS:
            return ids, False
        return (ids[:MAX_SOURCE_TOKENS - 1] + [EOS] if ids[-1] == EOS else ids[:MAX_SOURCE_TOKENS]), True

    def translate(self, sentences: Sequence[str], cfg: SearchConfig = SearchConfig(), batch_size: int = 64,
                  prefixes: Optional[Sequence[Sequence[int]]] = None, attend: Optional[dict] = None,
                  progress: Optional[Callable[[int], None]] = None,
                  slot: Callable[[], ContextManager] = contextlib.nullcontext,
                  encoded: Optional[Sequence[tuple[list[int], bool]]] = None) -> list[Trace]:
        """One Trace per sentence, in input order. Blank sentences give empty traces.
        ``encoded``: each sentence's ``source_ids`` when the caller has read them already (the
        app reads a sentence once, to refuse one a model cannot read before it waits in line).

        Sentences are decoded in length-sorted batches; ``progress(n_done)`` is called after each.
        Each batch's decode runs inside ``slot()`` (the app's limit on concurrent decoding), so a
        long evaluation gives others a turn between batches.
        """
        if not 1 <= cfg.beam <= MAX_BEAM:
            raise ConfigError(f"beam size must be 1..{MAX_BEAM}, got {cfg.beam}")
        if not (0 <= cfg.max_len_ratio <= MAX_LEN_RATIO and 0 <= cfg.max_len_extra <= MAX_LEN_EXTRA):
            raise ConfigError(f"output length cap must be at most {MAX_LEN_RATIO} x source + {MAX_LEN_EXTRA}")
        if cfg.ablation is not None and not self.model.has_attention:
            raise ConfigError(f"cannot replace the attention of {self.name}: it has no attention")
        if encoded is not None and len(encoded) != len(sentences):
            raise ValueError(f"{len(encoded)} encoded sources for {len(sentences)} sentences")
        encoded = [self.source_ids(s) if s.strip() else ([], False) for s in sentences] if encoded is None \
            else [(list(ids), cut) if s.strip() else ([], False) for s, (ids, cut) in zip(sentences, encoded)]
        traces: list[Optional[Trace]] = [None] * len(sentences)
        todo = sorted((i for i, (ids, _) in enumerate(encoded) if ids), key=lambda i: len(encoded[i][0]))
        done = 0
        for chunk in iter_chunks(todo, batch_size):
            src = [encoded[i][0] for i in chunk]
            chunk_prefixes = None if prefixes is None else [prefixes[i] for i in chunk]
            with slot():
                decoded = self._decode(src, cfg, chunk_prefixes, attend)
            for i, trace in zip(chunk, decoded):
                trace.truncated = encoded[i][1]
                traces[i] = trace
            done += len(chunk)
            if progress:
                progress(done)
        return [t if t is not None else self._empty_trace() for t in traces]

    def _decode(self, src, cfg: SearchConfig, prefixes, attend) -> list[Trace]:
        vocabs = (self.src_vocab, self.tgt_vocab)
        if cfg.beam == 1 and not cfg.trace and prefixes is None and attend is None and cfg.ablation is None:
            return greedy_traces(self.model, vocabs, src, cfg)
        return beam_search(self.model, vocabs, src, cfg, prefixes, attend)

    def _empty_trace(self) -> Trace:
        described = self.model.description
        return Trace(described.arch, "", [], [], [], [], "", 0.0, 0.0, [], None, None,
                     alignment_model=described.attention, origin=described.origin)
