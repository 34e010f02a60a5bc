"""The sentence space (model/decoding/sentence_space.py) on the fixture models: every sample
sentence is its own nearest neighbour, neighbours come most similar first, the sample and the map
are the same every time, and bad requests get one clear error."""
import json

import numpy as np
import pytest

from model.sentence_space import main
from model.decoding.sentence_space import (
    MAX_K,
    SpaceError,
    build_space,
    sample,
    training_sentences,
)
from model.decoding.translator import Translator

from ..conftest import make_pairs

SENTENCES = [en for en, _ in make_pairs(300, seed=5)]


@pytest.fixture(scope="module", params=["rnnsearch", "rnnencdec", "transformer"])
def built(request, tiny_checkpoints, tmp_path_factory):
    if request.param == "transformer":
        from tests.model.transformer_fixtures import save_tiny_transformer

        folder = save_tiny_transformer(tiny_checkpoints["rnnsearch"], tmp_path_factory.mktemp("space") / "t")
    else:
        folder = tiny_checkpoints[request.param]
    translator = Translator.from_checkpoint(folder)
    return translator, build_space(translator, SENTENCES, size=150, word_size=40)


def test_a_sample_sentence_is_its_own_nearest_neighbour(built):
    translator, space = built
    for k in (0, 7, 33, len(space.sentences) - 1):
        text = space.sentences[k]
        (first,) = space.nearest(space.embed(translator, text), 1)
        assert (first.text, first.index) == (text, k) and first.similarity >= 0.999


def test_what_each_model_reads_is_the_space(built):
    translator, space = built
    kinds = {"rnnsearch": "s_0", "rnnencdec": "c", "transformer": "mean"}  # the Transformer: its encoder's mean output
    assert space.kind == kinds[translator.model.description.arch]
    n = len(space.sentences)
    assert space.vectors.shape[0] == n == space.points.shape[0] and space.points.shape[1] == 2
    assert np.allclose(np.linalg.norm(space.vectors, axis=1), 1, atol=1e-5)
    assert np.allclose(space.project(space.vectors[5]), space.points[5], atol=1e-5)


@pytest.mark.parametrize("k", [1, 5, 7, 1000])
def test_neighbours_come_most_similar_first_and_k_past_the_sample_gives_all(built, k):
    translator, space = built
    found = space.nearest(space.embed(translator, "a red dog eats in the street"), k)
    assert len(found) == min(k, len(space.sentences))
    sims = [n.similarity for n in found]
    assert sims == sorted(sims, reverse=True) and all(-1.0001 <= s <= 1.0001 for s in sims)
    assert len({n.index for n in found}) == len(found)


def test_the_sample_and_the_map_are_the_same_every_time(tiny_checkpoints):
    translator = Translator.from_checkpoint(tiny_checkpoints["rnnencdec"])
    a, b = (build_space(translator, SENTENCES, size=100, word_size=0) for _ in range(2))
    assert a.sentences == b.sentences
    np.testing.assert_array_equal(a.points, b.points)
    np.testing.assert_array_equal(a.axes, b.axes)


@pytest.mark.parametrize("pool, size, expected", [
    (["b", "a", "b", " ", "c"], 10, ["b", "a", "c"]),  # distinct, non-blank, in order
    (["x"] * 5, 3, ["x"]),
    ([], 3, []),
])
def test_sample_keeps_distinct_sentences_in_order(pool, size, expected):
    assert sample(pool, size) == expected


def test_a_drawn_sample_is_a_fixed_ordered_subset():
    drawn = sample(SENTENCES, 50, seed=3)
    distinct = list(dict.fromkeys(SENTENCES))
    assert drawn == sample(SENTENCES, 50, seed=3) and len(drawn) == 50
    positions = [distinct.index(s) for s in drawn]
    assert positions == sorted(positions)


@pytest.mark.parametrize("text, message", [
    ("", "type a sentence"),
    ("   \t", "type a sentence"),
    ("\u200b\u200b", "nothing of this sentence is in the model's vocabulary"),  # zero-width spaces
])
def test_a_sentence_that_cannot_be_placed_gets_a_clear_message(built, text, message):
    translator, space = built
    with pytest.raises(SpaceError, match=message):
        space.embed(translator, text)


@pytest.mark.parametrize("k", [0, -3, MAX_K + 1, 2.5, "3", True, None])
def test_a_hostile_k_is_refused(built, k):
    translator, space = built
    with pytest.raises(SpaceError, match="k must be a whole number"):
        space.nearest(space.vectors[0], k)


def test_each_word_finds_itself_in_its_own_sentence(tiny_checkpoints):
    translator = Translator.from_checkpoint(tiny_checkpoints["rnnsearch"])
    space = build_space(translator, SENTENCES, size=150, word_size=40)
    kept = sorted(set(space.words.sentence.tolist()))
    assert len(kept) == 40 and kept[0] == 0 and kept[-1] == len(space.sentences) - 1  # spread over the sample
    text = space.sentences[kept[3]]  # among the sentences whose annotations are kept
    pieces = translator.src_vocab.pieces(translator.source_ids(text)[0])
    found = space.nearest_words(translator, text, 3)
    assert [p for p, _ in found] == pieces
    for piece, neighbours in found:
        assert neighbours[0].similarity >= 0.999 and neighbours[0].word == piece and neighbours[0].text == text


def test_a_model_without_attention_keeps_no_annotations(tiny_checkpoints):
    translator = Translator.from_checkpoint(tiny_checkpoints["rnnencdec"])
    space = build_space(translator, SENTENCES, size=30)
    assert space.words is None
    with pytest.raises(SpaceError, match="only a model with attention"):
        space.nearest_words(translator, "a dog runs", 3)


def test_the_training_sentences_are_the_configs_training_split(tiny_checkpoints, tiny_corpus):
    import gzip

    train = gzip.decompress((tiny_corpus / "train.en.gz").read_bytes()).decode().splitlines()
    assert training_sentences(tiny_checkpoints["rnnsearch"]) == train


def test_the_command_prints_neighbours_as_json(tiny_checkpoints, tmp_path, capsys):
    (tmp_path / "pool.txt").write_text("\n".join(SENTENCES[:40]) + "\n")
    assert main(["--checkpoint", str(tiny_checkpoints["rnnsearch"]), "--text", SENTENCES[2], "--k", "3",
                 "--sentences", str(tmp_path / "pool.txt"), "--words", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["vector"] == "s_0" and out["neighbours"][0]["sentence"] == SENTENCES[2]
    assert len(out["neighbours"]) == 3 and len(out["map"]) == 2 and out["words"]


@pytest.mark.parametrize("args, message", [
    (["--text", "  "], "error: type a sentence"),
    (["--text", "a dog", "--sentences", "missing.txt"], "error: "),
])
def test_the_command_ends_with_one_error_line(tiny_checkpoints, tmp_path, capsys, args, message):
    assert main(["--checkpoint", str(tiny_checkpoints["rnnencdec"]), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_shared_parts_of_sample_sentences_with_their_one_nearest_are_whole(built):
    """k = 1 and sentences from the sample: each one's nearest is itself, so it shares its first
    and last words and all its words; random sentences are the baseline beside it."""
    from model.decoding.sentence_space import shared_parts

    translator, space = built
    queries = [s for s in space.sentences if len(s.split()) >= 2][:30]
    rows = shared_parts(space, translator, queries, k=1)
    assert sum(r.sentences for r in rows) == len(queries)
    assert {r.lengths for r in rows} <= {"1-10", "11-20", "21-30", "31+"}
    for r in rows:
        assert (r.first, r.last, r.words) == (1.0, 1.0, 1.0)
        assert all(0.0 <= x <= 1.0 for x in (r.random_first, r.random_last, r.random_words))


def test_shared_parts_skip_what_cannot_be_placed(built):
    from model.decoding.sentence_space import shared_parts

    translator, space = built
    assert shared_parts(space, translator, ["", "one", "\u200b \u200b"], k=3) == []


def test_sentences_placed_together_are_placed_as_one_by_one(built):
    translator, space = built
    texts = ["a dog runs", "", "the small red cat sits on the big blue ball", "\u200b", "a man eats"]
    vectors, kept = space.embed_many(translator, texts)
    assert kept == [0, 2, 4] and vectors.shape == (3, space.vectors.shape[1])
    for vector, index in zip(vectors, kept):
        np.testing.assert_allclose(vector, space.embed(translator, texts[index]), atol=1e-5)
