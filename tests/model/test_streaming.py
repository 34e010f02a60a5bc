"""Streaming training data: lazily read pools, same guarantees as the in-memory path."""
import gzip
from collections import Counter

import pytest

from model.core.config import preset
from model.corpus.parallel import DataError, reservoir_sample, stream_pairs
from model.training.data import Data
from model.training.trainer import train


def test_stream_pairs_skips_empty_and_checks_alignment(tmp_path):
    (tmp_path / "s.gz").write_bytes(gzip.compress(b"a\n\nc\nd\n"))
    (tmp_path / "t").write_text("A\nB\n\nD\n")
    assert list(stream_pairs(tmp_path / "s.gz", tmp_path / "t")) == [("a", "A"), ("d", "D")]
    (tmp_path / "short").write_text("A\n")
    with pytest.raises(DataError, match="line counts differ"):
        list(stream_pairs(tmp_path / "s.gz", tmp_path / "short"))
    (tmp_path / "bad").write_bytes(b"ok\n\xff\n")
    with pytest.raises(DataError, match="not valid UTF-8"):
        list(stream_pairs(tmp_path / "bad", tmp_path / "bad"))


def test_reservoir_sample_is_uniform_and_deterministic():
    pairs = [(str(i), str(i)) for i in range(1000)]
    assert reservoir_sample(iter(pairs), 2000, 0) == pairs
    counts = Counter()
    for seed in range(300):
        counts.update(int(s) // 100 for s, _ in reservoir_sample(iter(pairs), 50, seed))
    assert min(counts.values()) > 0.75 * 1500 and reservoir_sample(iter(pairs), 5, 1) == reservoir_sample(iter(pairs), 5, 1)


def streaming_config(corpus, out, **fields):
    cfg = preset("tiny")
    cfg.train.data_dir, cfg.train.out_dir, cfg.train.streaming = str(corpus), str(out), True
    cfg.train.batch_size, cfg.train.pool_batches, cfg.train.val_max_sentences = 16, 3, 10
    for key, value in fields.items():
        setattr(cfg.train, key, value)
    return cfg


def test_streaming_epoch_uses_every_pair_once_and_replays(tiny_corpus, tmp_path):
    data = Data(streaming_config(tiny_corpus, tmp_path), log=lambda *_: None)
    assert data.src == [] and data.tgt == []  # nothing of the training corpus is held
    batches, total = data.epoch(0)
    seen = [tuple(src[i]) for src, _, index in batches for i in index]
    assert total is None and len(seen) == 600  # the tiny corpus: 600 pairs, none too long
    first = [index for _, _, index in data.epoch(3)[0]]
    assert first == [index for _, _, index in data.epoch(3)[0]]
    assert first != [index for _, _, index in data.epoch(4)[0]]


def test_streaming_training_runs_and_resumes(tiny_corpus, tmp_path):
    best = train(streaming_config(tiny_corpus, tmp_path, epochs=1, max_steps=6), log=lambda *_: None, show_bar=False)
    assert (best / "model.safetensors").is_file()
    messages = []
    train(streaming_config(tiny_corpus, tmp_path, epochs=2, max_steps=9), resume=True, log=messages.append,
          show_bar=False)
    assert any("resuming" in m for m in messages)
