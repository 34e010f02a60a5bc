import gzip
import random
from collections import Counter

import pytest

from model.corpus.parallel import (
    bucket_batches,
    download_multi30k,
    epoch_batches,
    filter_by_length,
    join_examples,
    make_batch,
    read_parallel,
)
from model.corpus.textfile import read_text
from model.corpus.vocab import BOS, EOS, PAD
from model.core.errors import DataError


def write(path, data: bytes):
    path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)
    return path


@pytest.mark.parametrize("name", ["a.txt", "a.txt.gz"])
def test_read_text_plain_and_gzip(tmp_path, name):
    path = write(tmp_path / name, "héllo\r\nwörld\n".encode())
    assert read_text(path).splitlines() == ["héllo", "wörld"]


@pytest.mark.parametrize("data,message", [
    (b"caf\xe9\n", "not valid UTF-8 \\(line 1"),
    (b"ok\n\xff\xfe", "not valid UTF-8 \\(line 2"),
    ("hi".encode("utf-16"), "NUL bytes"),
    (b"\x00\x01\x02binary", "NUL bytes"),
])
def test_bad_encodings_are_named(tmp_path, data, message):
    with pytest.raises(DataError, match=message):
        read_text(write(tmp_path / "bad.txt", data))


def test_size_cap_and_missing_and_corrupt_gzip(tmp_path):
    with pytest.raises(DataError, match="more than"):
        read_text(write(tmp_path / "big.gz", b"x" * 5000), max_bytes=1000)
    with pytest.raises(DataError, match="no such file"):
        read_text(tmp_path / "missing.txt")
    (tmp_path / "corrupt.gz").write_bytes(b"\x1f\x8b\x08garbage")
    with pytest.raises(DataError, match="broken gzip"):
        read_text(tmp_path / "corrupt.gz")


def test_mismatched_line_counts_name_both_files(tmp_path):
    src = write(tmp_path / "s.txt", b"a\nb\nc\n")
    tgt = write(tmp_path / "t.txt", b"a\nb\n")
    with pytest.raises(DataError, match=r"s\.txt has 3 lines, .*t\.txt has 2"):
        read_parallel(src, tgt)


def test_empty_pairs_are_skipped_and_counted(tmp_path):
    corpus = read_parallel(write(tmp_path / "s", b"a\n\nc\nd\n"), write(tmp_path / "t", b"A\nB\n \nD\n"))
    assert corpus.src == ["a", "d"] and corpus.tgt == ["A", "D"] and corpus.empty_skipped == 2


def test_length_filter():
    src, tgt, dropped = filter_by_length([[1] * 3, [1] * 5, [], [1]], [[2] * 3, [2], [2], [2] * 7], max_len=5)
    assert (src, tgt, dropped) == ([[1] * 3, [1] * 5], [[2] * 3, [2]], 2)


def test_batch_tensors():
    batch = make_batch([[5, 6, 7], [8]], [[9], [10, 11]], [0, 1])
    assert batch.src.tolist() == [[5, 6, 7], [8, PAD, PAD]]
    assert batch.tgt_in.tolist() == [[BOS, 9, PAD], [BOS, 10, 11]]
    assert batch.tgt_out.tolist() == [[9, EOS, PAD], [10, 11, EOS]]
    assert batch.n_tgt_tokens == 5


def test_bucketing_covers_every_example_once_and_sorts_pools():
    rng = random.Random(3)
    src = [[1] * rng.randint(1, 30) for _ in range(257)]
    batches = bucket_batches(src, src, batch_size=7, pool_batches=5, rng=random.Random(0))
    assert sorted(i for b in batches for i in b) == list(range(257))
    assert all(len(b) <= 7 for b in batches)
    assert all([len(src[i]) for i in b] == sorted(len(src[i]) for i in b) for b in batches)
    spread = sum(max(len(src[i]) for i in b) - min(len(src[i]) for i in b) for b in batches) / len(batches)
    assert spread < 8  # random batches of 7 from 1..30 would spread ~20


def test_joined_examples_stay_aligned():
    """Source i is [i, i] and target i is [-i]: joining must keep the same order both sides."""
    src = [[i, i] for i in range(1, 301)]
    tgt = [[-i] for i in range(1, 301)]
    out_src, out_tgt, _ = join_examples(src, tgt, prob=0.5, max_join=4, rng=random.Random(1))
    seen = Counter()
    for s, t in zip(out_src, out_tgt):
        assert s[::2] == [-x for x in t] and 1 <= len(t) <= 4
        seen.update(t)
    assert sorted(seen) == sorted(x for [x] in tgt) and max(seen.values()) == 1


def test_join_probability_and_determinism():
    src = [[i] for i in range(20000)]
    out1, _, _ = join_examples(src, src, prob=0.3, max_join=4, rng=random.Random(7))
    out2, _, _ = join_examples(src, src, prob=0.3, max_join=4, rng=random.Random(7))
    assert out1 == out2
    joined = sum(len(s) > 1 for s in out1) / len(out1)
    assert joined == pytest.approx(0.3, abs=0.02)
    assert join_examples(src, src, 0.0, 4, random.Random(0))[0] != src  # shuffled, none joined
    assert all(len(s) == 1 for s in join_examples(src, src, 0.0, 4, random.Random(0))[0])


def test_epoch_order_is_a_function_of_seed_and_epoch():
    src = [[1] * (i % 13 + 1) for i in range(100)]
    a = epoch_batches(src, src, epoch=2, seed=5, batch_size=8, pool_batches=3, join_prob=0.2)
    b = epoch_batches(src, src, epoch=2, seed=5, batch_size=8, pool_batches=3, join_prob=0.2)
    c = epoch_batches(src, src, epoch=3, seed=5, batch_size=8, pool_batches=3, join_prob=0.2)
    assert a == b and a[2] != c[2]


def test_download_multi30k_with_a_mocked_opener(tmp_path, monkeypatch):
    import io

    import model.corpus.parallel as data

    monkeypatch.setattr(data, "MULTI30K_LINES", {"train": 3, "val": 2})
    served = {"train.en.gz": 3, "train.fr.gz": 3, "val.en.gz": 2, "val.fr.gz": 2}
    urls = []

    def opener(url):
        urls.append(url)
        name = url.rsplit("/", 1)[1]
        return io.BytesIO(gzip.compress(("line\n" * served[name]).encode()))

    written = download_multi30k(tmp_path, ["en", "fr"], opener=opener)
    assert sorted(p.name for p in written) == sorted(served)
    assert all("data/task1/raw/" in u for u in urls)
    served["val.fr.gz"] = 1
    with pytest.raises(DataError, match="expected 2 lines"):
        download_multi30k(tmp_path / "again", ["en", "fr"], opener=opener)
