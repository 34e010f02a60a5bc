"""Property-based tests (hypothesis): tokenizer round trip, bucketing, Pharaoh, upload parsing."""
import csv
import io
import random

import numpy as np
import pytest

pytest.importorskip("hypothesis", reason="the property tests need hypothesis (the test extra)")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from model.corpus.parallel import bucket_batches, join_examples  # noqa: E402
from model.corpus.test_sets import build_eval_set, parse_table  # noqa: E402
from model.corpus.textfile import read_text  # noqa: E402
from model.corpus.vocab import train_vocab  # noqa: E402
from model.core.errors import DataError  # noqa: E402
from model.scoring.word_alignment import parse_links  # noqa: E402
from viz.figures.heatmap import pharaoh  # noqa: E402

TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), max_size=60)


@pytest.fixture(scope="module")
def vocab():
    from tests.conftest import make_pairs

    corpus = [s for pair in make_pairs(300) for s in pair] + ["Ça été déjà très, très bien!", "ça Ünïcödé ñ 漢字"]
    return train_vocab(corpus, 80)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=st.lists(st.sampled_from("a the dog chien très été ça bien , ! ñ 漢字 Ünïcödé".split()), max_size=12))
def test_tokenizer_round_trip_on_covered_characters(vocab, words):
    text = " ".join(words)
    assert vocab.decode(vocab.encode(text)) == text


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXT)
def test_tokenizer_never_fails_and_pieces_match_ids(vocab, text):
    ids = vocab.encode(text)
    assert len(vocab.pieces(ids)) == len(ids)
    assert all(0 <= i < len(vocab) for i in ids)


def test_pieces_read_once_name_every_id_as_sentencepiece_does(vocab):
    ids = list(range(len(vocab)))
    assert vocab.pieces(ids) == [vocab.sp.id_to_piece(i) for i in ids]
    assert vocab.pieces(np.array([4, 3])) == [vocab.sp.id_to_piece(4), vocab.sp.id_to_piece(3)]
    for outside in (-1, len(vocab)):
        with pytest.raises(IndexError):
            vocab.pieces([outside])


@settings(max_examples=100, deadline=None)
@given(lengths=st.lists(st.integers(1, 40), min_size=1, max_size=300), batch=st.integers(1, 17),
       pool=st.integers(1, 6), seed=st.integers(0, 1000))
def test_bucketing_partitions_and_sorts(lengths, batch, pool, seed):
    seqs = [[1] * n for n in lengths]
    batches = bucket_batches(seqs, seqs, batch, pool, random.Random(seed))
    assert sorted(i for b in batches for i in b) == list(range(len(seqs)))
    assert all(1 <= len(b) <= batch for b in batches)
    assert all([lengths[i] for i in b] == sorted(lengths[i] for i in b) for b in batches)


@settings(max_examples=100, deadline=None)
@given(n=st.integers(1, 200), prob=st.floats(0, 1), seed=st.integers(0, 1000))
def test_joining_uses_every_pair_once(n, prob, seed):
    src = [[i] for i in range(n)]
    out, tgt, sizes = join_examples(src, [[-i] for i in range(n)], prob, 4, random.Random(seed))
    assert sorted(x for s in out for x in s) == list(range(n))
    assert all([-x for x in s] == t for s, t in zip(out, tgt))
    assert sizes == [len(s) for s in out]


@settings(max_examples=100, deadline=None)
@given(sizes=st.lists(st.integers(1, 4), min_size=1, max_size=300), batch=st.integers(4, 17),
       pool=st.integers(1, 6), seed=st.integers(0, 1000))
def test_batches_count_the_pairs_joined_examples_hold(sizes, batch, pool, seed):
    """Each batch holds at most ``batch`` training pairs, and pools are not cut into more
    batches than the pairs need (at most one batch per pool is not nearly full)."""
    seqs = [[1] * k for k in sizes]
    batches = bucket_batches(seqs, seqs, batch, pool, random.Random(seed), sizes)
    assert sorted(i for b in batches for i in b) == list(range(len(seqs)))
    assert all(sum(sizes[i] for i in b) <= batch for b in batches)
    pools = -(-len(seqs) // (batch * pool))
    assert sum(sum(sizes[i] for i in b) <= batch - 4 for b in batches) <= pools


@settings(max_examples=100, deadline=None)
@given(rows=st.integers(1, 12), cols=st.integers(1, 12), seed=st.integers(0, 10_000))
def test_pharaoh_round_trip(rows, cols, seed):
    att = np.random.default_rng(seed).random((rows, cols))
    pairs = parse_links(pharaoh(att, drop_eos=False))
    assert pairs == {(int(np.argmax(att[j])), j) for j in range(rows)}


@settings(max_examples=150, deadline=None)
@given(pairs=st.lists(st.tuples(TEXT, TEXT), min_size=1, max_size=20), delimiter=st.sampled_from([",", "\t"]))
def test_table_parsing_round_trips_any_text(pairs, delimiter):
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=delimiter, lineterminator="\n")
    writer.writerow(["source", "reference"])
    writer.writerows(pairs)
    text = buffer.getvalue()
    if delimiter == "," and "\t" in text.splitlines()[0]:
        return  # a tab in the header line makes it a TSV by our sniffing rule
    assert parse_table(text, "t") == ([s for s, _ in pairs], [r for _, r in pairs])


@settings(max_examples=150, deadline=None)
@given(raw=st.binary(max_size=300))
def test_any_bytes_give_text_or_one_clear_error(raw):
    try:
        text = read_text(raw, "upload")
    except DataError as exc:
        assert str(exc).startswith("upload")
        return
    try:
        build_eval_set(text.splitlines(), text.splitlines())
    except DataError as exc:
        assert "empty" in str(exc)


def test_unknown_characters_stay_visible(vocab):
    assert "\u2047" in vocab.decode(vocab.encode("a ☃ dog"))
