"""Attention from both directions, symmetrised as statistical aligners are: link sets worked out
by hand, the rows they give, which models pair up, and the whole path through align_report on a
pair of fixture models of opposite directions."""
from dataclasses import replace

import numpy as np
import pytest
import torch

from model.checkpoints.folder import load_checkpoint, save_checkpoint
from model.core.config import TrainConfig, dataclass_from_dict
from model.network.nmt_model import NMTModel
from model.scoring.attention_alignment import (
    ScoredModel,
    WordMatrices,
    align_report,
    both_directions_rows,
    forced_matrices,
    opposite_pairs,
)
from model.scoring.word_alignment import (
    BOTH_DIRECTIONS,
    GoldSentence,
    GoldSet,
    both_directions,
    extract,
    grow_diag_final_and,
    read_gold,
)

# Four source and four target words. Links are (source i, target j).
# Forward (source -> target model): each target word's best source word: j0->0, j1->1, j2->2, j3->0.
FORWARD = np.array([[.7, .1, .1, .1],
                    [.1, .7, .1, .1],
                    [.1, .1, .7, .1],
                    [.6, .1, .1, .2]])
# Backward (target -> source model), laid out (target, source): each source word's best target
# word: i0->0, i1->1, i2->2, i3->3.
BACKWARD = np.array([[.7, .1, .1, .1],
                     [.1, .7, .1, .1],
                     [.1, .1, .7, .1],
                     [.1, .1, .1, .7]])
# By hand: forward {00, 11, 22, 03}, backward {00, 11, 22, 33}; intersection {00, 11, 22}.
# grow-diag: (3,3) neighbours (2,2) diagonally and source 3 is unaligned: added. (0,3) neighbours
# no link. final-and: (0,3) has source 0 and target 3 both aligned by then: left out.
INTERSECTION = {(0, 0), (1, 1), (2, 2)}
GROW_DIAG_FINAL_AND = {(0, 0), (1, 1), (2, 2), (3, 3)}


def test_each_direction_keeps_its_own_reading_and_they_combine_as_worked_out_by_hand():
    assert extract(FORWARD, "target") == {(0, 0), (1, 1), (2, 2), (0, 3)}
    assert extract(BACKWARD, "source") == {(0, 0), (1, 1), (2, 2), (3, 3)}
    links = both_directions(FORWARD, BACKWARD)
    assert set(links) == set(BOTH_DIRECTIONS)
    assert links["both-intersect"] == INTERSECTION
    assert links["both-grow-diag-final-and"] == GROW_DIAG_FINAL_AND


@pytest.mark.parametrize("forward, backward", [
    (FORWARD, BACKWARD), (BACKWARD, FORWARD), (FORWARD.T, BACKWARD.T),
    (np.random.default_rng(3).random((3, 5)), np.random.default_rng(5).random((3, 5))),
    (np.random.default_rng(7).random((7, 3)), np.random.default_rng(9).random((7, 3))),
])
def test_intersection_within_grow_diag_final_and_within_union(forward, backward):
    ahead, back = extract(forward, "target"), extract(backward, "source")
    links = both_directions(forward, backward)
    assert links["both-intersect"] == ahead & back
    assert links["both-intersect"] <= links["both-grow-diag-final-and"] <= ahead | back
    assert links["both-grow-diag-final-and"] == grow_diag_final_and(ahead, back)


def test_matrices_of_different_shapes_are_refused():
    with pytest.raises(ValueError, match="differ in shape"):
        both_directions(FORWARD, BACKWARD[:3])


def _gold(*sentences) -> GoldSet:
    return GoldSet("hand", tuple(GoldSentence(("a",) * 4, ("b",) * 4, frozenset(s), frozenset(s)) for s in sentences))


def test_rows_score_each_combination_and_skip_sentences_either_model_missed():
    gold = _gold(GROW_DIAG_FINAL_AND, GROW_DIAG_FINAL_AND)
    forward = [WordMatrices(FORWARD, None), WordMatrices(FORWARD, None)]
    backward = [WordMatrices(BACKWARD, None), None]  # the backward model could not score sentence 2
    rows = both_directions_rows("en-fr", forward, "fr-en", backward, gold)
    assert [(r.model, r.method, r.extraction) for r in rows] == [
        ("en-fr + fr-en", "attention", "both-intersect"), ("en-fr + fr-en", "attention", "both-grow-diag-final-and")]
    intersect, grown = rows
    assert intersect.sentences == grown.sentences == 1 and intersect.per_sentence[1] is None
    # AER = 1 - (|A&S| + |A&P|) / (|A| + |S|), S = P = the four diagonal links
    assert intersect.counts.aer == pytest.approx(1 - (3 + 3) / (3 + 4))
    assert (intersect.counts.precision, intersect.counts.recall) == (1.0, 0.75)
    assert grown.counts.aer == 0.0


def _scored(name, forward, corpora=("tatoeba", "multi30k"), attention=True):
    return ScoredModel(name, forward, corpora, (WordMatrices(FORWARD if attention else None, None),))


@pytest.mark.parametrize("models, pairs", [
    ([_scored("a", True), _scored("b", False)], [("a", "b")]),
    ([_scored("b", False), _scored("a", True)], [("a", "b")]),  # forward first whatever the order given
    ([_scored("a", True), _scored("b", True)], []),  # same direction
    ([_scored("a", True), _scored("b", False, ("multi30k",))], []),  # trained on different text
    ([_scored("a", True, ()), _scored("b", False, ())], []),  # training data unknown (imports)
    ([_scored("a", True), _scored("b", False, attention=False)], []),  # RNNencdec has no attention
    ([_scored("a", True), _scored("c", True), _scored("b", False)], [("a", "b"), ("c", "b")]),
])
def test_models_pair_up_when_they_run_opposite_ways_on_the_same_text(models, pairs):
    assert [(a.name, b.name) for a, b in opposite_pairs(models)] == pairs


@pytest.fixture
def opposite_pair(tiny_checkpoints, tmp_path):
    """The tiny en->fr RNNsearch and a fr->en model of the same sizes, trained on the same text
    (its weights are a fresh initialisation: the test checks the plumbing, not what it learnt)."""
    model, src_vocab, tgt_vocab, raw = load_checkpoint(tiny_checkpoints["rnnsearch"])
    config = replace(model.config, src_vocab_size=len(tgt_vocab), tgt_vocab_size=len(src_vocab))
    torch.manual_seed(5)
    train = replace(dataclass_from_dict(TrainConfig, raw["train"]), src_lang="fr", tgt_lang="en")
    folder = save_checkpoint(tmp_path / "fr-en", NMTModel(config), tgt_vocab, src_vocab, train)
    return tiny_checkpoints["rnnsearch"], folder


def test_align_report_adds_both_directions_rows_equal_to_the_two_models_matrices(opposite_pair, tmp_path):
    from model.decoding.translator import Translator

    (tmp_path / "g.en").write_text("a dog runs\nthe small cat\nthe red ball\n")
    (tmp_path / "g.fr").write_text("un chien court\nle petit chat\nla balle rouge\n")
    (tmp_path / "g.wa").write_text("1 1 1 S\n1 2 2 S\n1 3 3 S\n2 1 1 S\n2 2 2 S\n2 3 3 S\n3 1 1 S\n3 2 3 S\n3 3 2 S\n")
    gold = read_gold(tmp_path / "g.en", tmp_path / "g.fr", tmp_path / "g.wa")
    forward_dir, backward_dir = opposite_pair
    report = align_report(gold, [backward_dir, forward_dir], methods=("attention",), log=lambda *_: None)
    both = [r for r in report.rows if r.extraction in BOTH_DIRECTIONS]
    assert [(r.model, r.extraction) for r in both] == [(f"{forward_dir.name} + fr-en", how) for how in BOTH_DIRECTIONS]
    ahead, _ = forced_matrices(Translator.from_checkpoint(forward_dir), gold, with_saliency=False)
    back, _ = forced_matrices(Translator.from_checkpoint(backward_dir), gold, with_saliency=False, reverse=True)
    expected = both_directions_rows(forward_dir.name, ahead, "fr-en", back, gold)
    assert [(r.counts, r.per_sentence) for r in both] == [(r.counts, r.per_sentence) for r in expected]
    for sentence, (a, b) in zip(gold.sentences, zip(ahead, back)):
        assert a.attention.shape == b.attention.shape == (len(sentence.tgt), len(sentence.src))
