"""Word-alignment measurement: AER by hand, the two gold formats and their errors, subword
aggregation, link extraction, symmetrisation, and the statistical aligner on an obvious corpus."""
import json
from dataclasses import replace

import numpy as np
import pytest
import torch

from model.core.errors import DataError
from model.scoring.word_alignment import (
    AlignmentFormatError,
    Counts,
    GoldSentence,
    GoldSet,
    count,
    diagonal_matrix,
    extract,
    grow_diag_final_and,
    read_gold,
    word_matrix,
    word_spans,
)


def gold(sure, possible=(), n=3):
    words = tuple(f"w{i}" for i in range(n))
    return GoldSentence(words, words, frozenset(sure), frozenset(set(sure) | set(possible)))


# AER = 1 - (|A&S| + |A&P|) / (|A| + |S|), computed by hand for each row
AER_CASES = [
    # predicted, sure, possible-only, AER, precision, recall
    ({(0, 0), (1, 1)}, {(0, 0), (1, 1)}, set(), 0.0, 1.0, 1.0),  # perfect
    ({(0, 1), (1, 0)}, {(0, 0), (1, 1)}, set(), 1.0, 0.0, 0.0),  # disjoint
    ({(0, 0), (2, 2)}, {(0, 0)}, {(2, 2)}, 0.0, 1.0, 1.0),  # a possible link costs nothing
    ({(0, 0)}, {(0, 0)}, {(2, 2)}, 0.0, 1.0, 1.0),  # ... and missing it costs nothing either
    ({(0, 0), (1, 2)}, {(0, 0), (1, 1)}, set(), 0.5, 0.5, 0.5),  # 1 - (1 + 1) / (2 + 2)
    ({(0, 0), (2, 2), (1, 2)}, {(0, 0), (1, 1)}, {(2, 2)}, 1 - 3 / 5, 2 / 3, 0.5),  # 1 - (1 + 2) / (3 + 2)
    (set(), {(0, 0)}, set(), 1.0, 0.0, 0.0),  # nothing predicted
]


@pytest.mark.parametrize("predicted, sure, possible, aer, precision, recall", AER_CASES)
def test_aer_precision_recall_by_hand(predicted, sure, possible, aer, precision, recall):
    c = count(predicted, gold(sure, possible))
    assert (c.aer, c.precision, c.recall) == pytest.approx((aer, precision, recall))


def test_corpus_counts_add_links_not_rates():
    a, b = count({(0, 0)}, gold({(0, 0)})), count({(0, 1), (1, 0), (2, 1)}, gold({(0, 0), (1, 1)}))
    total = a + b
    assert total == Counts(predicted=4, sure=3, hit_sure=1, hit_possible=1)
    assert total.aer == pytest.approx(1 - 2 / 7)  # not the mean of 0.0 and 1.0


# ---------------------------------------------------------------- readers

SRC, TGT = "the black cat \nsleeps\n", "le chat noir\ndort \n"


@pytest.fixture
def texts(tmp_path):
    (tmp_path / "g.en").write_text(SRC)
    (tmp_path / "g.fr").write_text(TGT)
    return tmp_path


def test_naacl_reader_numbers_from_one_and_p_adds_to_s(texts):
    (texts / "g.wa").write_text("1 1 1 S\n1 2 3 S\n1 3 2 P\n2 1 1\n")
    gold_set = read_gold(texts / "g.en", texts / "g.fr", texts / "g.wa")
    first, second = gold_set.sentences
    assert first.src == ("the", "black", "cat") and second.tgt == ("dort",)  # trailing spaces ignored
    assert first.sure == {(0, 0), (1, 2)} and first.possible == {(0, 0), (1, 2), (2, 1)}
    assert second.sure == {(0, 0)}  # no kind means sure


def test_pharaoh_reader_numbers_from_zero_with_possible_links(texts):
    (texts / "g.align").write_text("0-0 1-2 2?1\n0-0\n")
    gold_set = read_gold(texts / "g.en", texts / "g.fr", texts / "g.align")
    assert gold_set.sentences[0].sure == {(0, 0), (1, 2)} and gold_set.sentences[0].possible == {(0, 0), (1, 2), (2, 1)}


@pytest.mark.parametrize("name, links, message", [
    ("bad.wa", "1 1 1 S\n1 x 1 S\n", r"bad.wa, line 2: expected 'SENT SRC TGT \[S\|P\]'"),
    ("bad.wa", "1 1 1 Q\n", "line 1: expected"),
    ("past.wa", "1 4 1 S\n", r"past.wa, line 1: position 4-1 is past the sentence \(3 source and 3 target"),
    ("nosent.wa", "1 1 1 S\n3 1 1 S\n", "nosent.wa, line 2: sentence 3 has no text"),
    ("bad.align", "0-0 1-x\n0-0\n", r"bad.align, line 1: '1-x' is not an i-j or i\?j link"),
    ("past.align", "0-0\n0-1\n", "past.align, line 2: position 1-2 is past the sentence"),
    ("short.align", "0-0\n", "line counts differ: .*short.align has 1 lines"),
])
def test_malformed_gold_files_name_the_file_and_line(texts, name, links, message):
    (texts / name).write_text(links)
    with pytest.raises(AlignmentFormatError, match=message):
        read_gold(texts / "g.en", texts / "g.fr", texts / name)


def test_mismatched_sentence_files_and_binary_files_are_refused(texts):
    (texts / "g.wa").write_text("1 1 1 S\n")
    (texts / "three.fr").write_text("a\nb\nc\n")
    with pytest.raises(AlignmentFormatError, match="line counts differ"):
        read_gold(texts / "g.en", texts / "three.fr", texts / "g.wa")
    (texts / "bin.wa").write_bytes(b"\xff\xfe\x00\x01" * 10)
    with pytest.raises(DataError, match="bin.wa: contains NUL bytes"):
        read_gold(texts / "g.en", texts / "g.fr", texts / "bin.wa")


# ---------------------------------------------------------------- matrices and links


@pytest.mark.parametrize("src_pieces, tgt_pieces", [
    (["▁a", "b", "c", "▁d", "e"], ["▁x", "y", "z", "▁w", "▁v", "u", "t"]),  # 5 source, 7 target pieces
    (["▁a", "b", "▁c"], ["▁x", "y", "z", "w", "v"]),  # 3 and 5
    (["▁a", "▁b", "c", "d", "e", "f", "▁g"], ["▁x", "▁y", "z"]),  # 7 and 3
])
def test_word_matrix_sums_source_pieces_and_averages_target_pieces(src_pieces, tgt_pieces):
    rng = np.random.default_rng(len(src_pieces))
    alpha = rng.random((len(tgt_pieces), len(src_pieces)))
    alpha /= alpha.sum(1, keepdims=True)
    src_spans, tgt_spans = word_spans(src_pieces), word_spans(tgt_pieces)
    words = word_matrix(alpha, src_spans, tgt_spans)
    assert words.shape == (len(tgt_spans), len(src_spans))
    np.testing.assert_allclose(words.sum(1), 1.0)  # still a distribution per target word
    a, b = src_spans[0]
    c, d = tgt_spans[0]
    assert words[0, 0] == pytest.approx(alpha[c:d, a:b].sum(1).mean())


def test_extractions_on_a_hand_made_matrix():
    m = np.array([[0.7, 0.2, 0.1],   # target 0 -> source 0
                  [0.6, 0.3, 0.1],   # target 1 -> source 0
                  [0.1, 0.1, 0.8]])  # target 2 -> source 2
    assert extract(m, "target") == {(0, 0), (0, 1), (2, 2)}
    assert extract(m, "source") == {(0, 0), (1, 1), (2, 2)}  # source 1's best target is 1
    assert extract(m, "intersect") == {(0, 0), (2, 2)}
    assert extract(m, "union") == {(0, 0), (0, 1), (1, 1), (2, 2)}
    assert extract(m, "threshold", 0.6) == {(0, 0), (0, 1), (2, 2)}
    with pytest.raises(ValueError, match="unknown extraction 'max'"):
        extract(m, "max")


def test_diagonal_links_words_by_relative_position():
    assert extract(diagonal_matrix(3, 3)) == {(0, 0), (1, 1), (2, 2)}
    assert extract(diagonal_matrix(2, 6)) == {(1, 0), (4, 1)}  # target j looks at source (j + .5) * 3 - .5


def test_grow_diag_final_and_keeps_agreement_and_grows_next_to_it():
    forward = {(0, 0), (1, 1), (2, 1)}
    backward = {(0, 0), (1, 1), (3, 3)}
    links = grow_diag_final_and(forward, backward)
    assert {(0, 0), (1, 1)} <= links  # the intersection
    assert (2, 1) in links  # next to (1, 1), and source 2 was unaligned
    assert (3, 3) in links  # final-and: both words unaligned


# ---------------------------------------------------------------- the statistical aligner


def test_eflomal_finds_the_obvious_links():
    pytest.importorskip("eflomal")
    from model.scoring.statistical_aligner import eflomal_links

    lexicon = {"cat": "chat", "dog": "chien", "sees": "voit", "likes": "aime", "the": "le", "a": "un"}
    rng = np.random.default_rng(3)
    corpus = []
    for _ in range(400):
        subj, verb, obj = rng.choice(["cat", "dog"]), rng.choice(["sees", "likes"]), rng.choice(["cat", "dog"])
        det1, det2 = rng.choice(["the", "a"]), rng.choice(["the", "a"])
        en = [det1, subj, verb, det2, obj]
        corpus.append((" ".join(en), " ".join(lexicon[w] for w in en)))
    src = [("the", "dog", "likes", "a", "cat")]
    tgt = [("le", "chien", "aime", "un", "chat")]
    (links,) = eflomal_links(src, tgt, corpus)
    assert links == {(i, i) for i in range(5)}


# ---------------------------------------------------------------- models against gold


@pytest.mark.parametrize("kind", ["rnnsearch", "transformer"])
def test_forced_attention_is_the_beam_search_attention_with_the_reference_as_prefix(tiny_checkpoints, tmp_path, kind):
    """Forced through a reference, a model's attention (a Transformer's: every layer and head too,
    and the shifted reading one step later) equals what its search records with that prefix."""
    from model.corpus.vocab import EOS
    from model.decoding.search import SearchConfig
    from model.decoding.translator import Translator
    from model.scoring.forced_matrices import _forced_attention, encode_words
    from tests.model.transformer_fixtures import save_tiny_transformer

    folder = tiny_checkpoints["rnnsearch"] if kind == "rnnsearch" else \
        save_tiny_transformer(tiny_checkpoints["rnnsearch"], tmp_path / "transformer")
    t = Translator.from_checkpoint(folder)
    pairs = [("a dog runs in the park", "un chien court dans le parc"), ("the cat", "le petit chat"),
             ("a man eats a red ball", "un homme mange")]
    encoded = []
    for src, tgt in pairs:
        src_ids, src_spans = encode_words(t.src_vocab, src.split())
        tgt_ids, tgt_spans = encode_words(t.tgt_vocab, tgt.split())
        assert src_ids == t.src_vocab.encode(src)  # word by word: the same pieces as the whole sentence
        encoded.append((src_ids, src_spans, tgt_ids, tgt_spans))
    forced = _forced_attention(t, encoded + [None])
    assert forced[-1] == (None, None)
    traces = t.translate([s for s, _ in pairs], SearchConfig(beam=1, max_len_ratio=3.0),
                         prefixes=[e[2] + [EOS] for e in encoded])
    for (_, _, tgt_ids, _), (matrix, cross), trace in zip(encoded, forced, traces):
        assert trace.target_ids == tgt_ids + [EOS]
        np.testing.assert_allclose(matrix, trace.attention[:-1], atol=1e-5)
        if kind == "rnnsearch":
            assert cross is None
            continue
        assert cross.shape == trace.cross_attention.shape  # one more row than target pieces: </s>'s input step
        np.testing.assert_allclose(cross, trace.cross_attention, atol=1e-5)


def test_a_transformer_is_scored_in_every_layer_and_head_in_both_readings(tiny_checkpoints, tmp_path):
    from model.decoding.translator import Translator
    from model.scoring.attention_alignment import head_grid, score_model
    from model.scoring.word_alignment import GoldSet, GoldSentence
    from tests.model.transformer_fixtures import save_tiny_transformer

    t = Translator.from_checkpoint(save_tiny_transformer(tiny_checkpoints["rnnsearch"], tmp_path / "t"))
    diagonal = lambda n: frozenset((i, i) for i in range(n))  # noqa: E731  sure links, P including S
    gold = GoldSet("tiny", (GoldSentence(("a", "dog", "runs"), ("un", "chien", "court"), diagonal(3), diagonal(3)),
                            GoldSentence(("the", "cat"), ("le", "chat"), diagonal(2), diagonal(2))))
    rows, missed, matrices = score_model("t", t, ("en", "fr"), gold, ("attention", "heads"))
    assert not missed
    heads = [r for r in rows if r.method == "heads"]
    assert len(heads) == 2 * 2 * (3 + 1)  # two readings x two layers x (three heads and their mean)
    for shifted in (False, True):
        grid = head_grid(rows, "t", rows[0].extraction, shifted)
        assert grid.shape == (2, 4) and not np.isnan(grid).any()
    (default,) = [r for r in rows if r.method == "attention"]
    (last_mean,) = [r for r in heads if r.layer == 2 and r.head is None and not r.shifted]
    assert default.counts == last_mean.counts  # the attention views show is the last layer's mean
    assert matrices[0].heads.shape == (2, 3, 3, 3) and matrices[0].shifted_heads.shape == (2, 3, 3, 3)
    assert json_fields(heads[1]) == {"layer": 1, "head": 1, "shifted": False}


def json_fields(row) -> dict:
    data = row.to_json()
    return {k: data[k] for k in ("layer", "head", "shifted")}


def test_batched_saliency_equals_one_gradient_per_output_token(tiny_checkpoints):
    from model.checkpoints.folder import load_checkpoint
    from model.corpus.vocab import BOS, EOS
    from model.explaining.saliency import saliency

    model, src_vocab, tgt_vocab, _ = load_checkpoint(tiny_checkpoints["rnnsearch"])
    model.eval()
    src, out = src_vocab.encode("a small dog runs"), tgt_vocab.encode("un petit chien court") + [EOS]
    emb = model.encoder.embed(torch.tensor([src])).detach().requires_grad_(True)
    annotations, summary = model.encoder.encode_embedded(emb, torch.tensor([len(src)]))
    logits, _ = model.decoder(torch.tensor([[BOS] + out[:-1]]), model.decoder.prepare(annotations, torch.ones(1, len(src), dtype=torch.bool), summary))
    logp = torch.log_softmax(logits[0], -1)
    rows = []
    for i, token in enumerate(out):
        (grad,) = torch.autograd.grad(logp[i, token], emb, retain_graph=True)
        rows.append((grad * emb).sum(-1).abs()[0].detach().numpy())
    expected = np.stack(rows) / np.stack(rows).sum(1, keepdims=True)
    np.testing.assert_allclose(saliency(model, src, out), expected, rtol=1e-4, atol=1e-6)


@pytest.fixture
def gold_files(tmp_path):
    """Three sentences the tiny models know, with a diagonal gold, plus one they cannot encode."""
    (tmp_path / "g.en").write_text("a dog runs\nthe small cat\nthe red ball\n\u200b\n")
    (tmp_path / "g.fr").write_text("un chien court\nle petit chat\nla balle rouge\nx\n")
    (tmp_path / "g.wa").write_text("1 1 1 S\n1 2 2 S\n1 3 3 S\n2 1 1 S\n2 2 2 P\n2 3 3 S\n3 1 1 S\n3 2 3 S\n"
                                   "3 3 2 S\n4 1 1 S\n")
    return tmp_path


def test_align_command_writes_every_source_and_names_unscored_sentences(tiny_checkpoints, gold_files, capsys):
    pytest.importorskip("eflomal")
    from model.align import main

    out = gold_files / "report.json"
    corpus = gold_files / "corpus.tsv"
    corpus.write_text("a dog runs\tun chien court\nthe cat\tle chat\n" * 20)
    code = main(["--src", str(gold_files / "g.en"), "--tgt", str(gold_files / "g.fr"), "--gold", str(gold_files / "g.wa"),
                 "--checkpoint", str(tiny_checkpoints["rnnsearch"]), "--checkpoint", str(tiny_checkpoints["rnnencdec"]),
                 "--corpus", str(corpus), "--extractions", "target,intersect", "--json", str(out)])
    assert code == 0
    report = json.loads(out.read_text())
    kinds = {(r["model"] is None, r["method"], r["extraction"]) for r in report["rows"]}
    assert {(False, "attention", "target"), (False, "attention", "intersect"), (False, "saliency", "target"),
            (True, "eflomal", "grow-diag-final-and"), (True, "diagonal", "target")} <= kinds
    assert [r["model"] for r in report["rows"] if r["method"] == "attention"] == ["best", "best"]  # RNNsearch only
    assert sum(r["method"] == "saliency" for r in report["rows"]) == 4  # both models, both extractions
    for row in report["rows"]:
        assert set(row) == {"model", "method", "extraction", "aer", "precision", "recall", "sentences"}
        assert 0.0 <= row["aer"] <= 1.0
        assert row["sentences"] == (4 if row["model"] is None else 3)  # the zero-width word cannot be encoded
    assert len(report["unscored"]) == 2 and all(u["sentence"] == 4 for u in report["unscored"])
    assert "encodes the source word" in report["unscored"][0]["reason"]
    assert "corpus.tsv (40 pairs)" in report["eflomal_corpus"]
    assert "not scored: best, sentence 4" in capsys.readouterr().out


def test_align_command_refuses_bad_input_with_one_line(gold_files, capsys):
    from model.align import main

    (gold_files / "bad.wa").write_text("1 9 1 S\n")
    assert main(["--src", str(gold_files / "g.en"), "--tgt", str(gold_files / "g.fr"),
                 "--gold", str(gold_files / "bad.wa"), "--methods", "diagonal"]) == 2
    assert "position 9-1 is past the sentence" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--src", "a", "--tgt", "b", "--gold", "c", "--methods", "vibes"])


def test_align_card_flag_records_the_models_rows_and_the_baselines(tiny_checkpoints, gold_files, tmp_path):
    import shutil

    from model.cards.schema import read_model_card
    from model.align import main

    folder = tmp_path / "rnnsearch-tiny"
    shutil.copytree(tiny_checkpoints["rnnsearch"], folder)
    assert main(["--src", str(gold_files / "g.en"), "--tgt", str(gold_files / "g.fr"), "--gold", str(gold_files / "g.wa"),
                 "--checkpoint", str(folder), "--methods", "attention,diagonal", "--card"]) == 0
    result = read_model_card(folder).alignment["g"]
    assert [(r.model, r.method) for r in result.rows] == [("rnnsearch-tiny", "attention"), (None, "diagonal")]
    assert result.sentences == 4 and result.command.startswith("python -m model.align --src data/alignments/g.en")
    from model.scoring.attention_alignment import gold_digest

    assert result.gold_digest == gold_digest(read_gold(gold_files / "g.en", gold_files / "g.fr", gold_files / "g.wa"))


def test_the_gold_digest_changes_with_any_word_or_link_and_not_with_the_name():
    from model.scoring.attention_alignment import gold_digest

    sentence = GoldSentence(("a", "dog"), ("un", "chien"), frozenset({(0, 0), (1, 1)}), frozenset({(0, 0), (1, 1)}))
    base = gold_digest(GoldSet("g", (sentence,)))
    assert gold_digest(GoldSet("other name", (sentence,))) == base
    for changed in (replace(sentence, src=("a", "cat")), replace(sentence, tgt=("un", "chat")),
                    replace(sentence, sure=frozenset({(0, 0)})), replace(sentence, possible=frozenset({(0, 1)}))):
        assert gold_digest(GoldSet("g", (changed,))) != base


def test_saliency_of_many_sentences_at_once_equals_one_at_a_time(tiny_checkpoints, monkeypatch):
    from model.checkpoints.folder import load_checkpoint
    from model.explaining import saliency as module

    model, src_vocab, tgt_vocab, _ = load_checkpoint(tiny_checkpoints["rnnencdec"])
    model.eval()
    pairs = [(src_vocab.encode(s), tgt_vocab.encode(t) + [3]) for s, t in
             [("a dog", "un chien"), ("the small cat sits", "le petit chat assis"),
              ("a man eats a red ball on the street", "un homme mange une balle rouge dans la rue")]]
    alone = [module.saliency(model, s, o) for s, o in pairs]
    monkeypatch.setattr(module, "MAX_COPIES", 12)  # forces the three sentences into two batches
    together = module.saliency_many(model, pairs + [([], [4])])
    assert [m.shape for m in together] == [(len(o), len(s)) for s, o in pairs] + [(1, 0)]
    for a, b in zip(alone, together):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("pieces, spans", [
    (["\u2581the", "\u2581do", "g", "\u2581runs", "</s>"], [(0, 1), (1, 3), (3, 4), (4, 5)]),  # SentencePiece
    (["the", "do@@", "g", "run@@", "n@@", "ing", "</s>"], [(0, 1), (1, 3), (3, 6), (6, 7)]),  # subword-nmt
    (["the", "dog", "runs", "</s>"], [(0, 1), (1, 2), (2, 3), (3, 4)]),  # whole words (Joey's word level)
    (["<unk>", "dog@@", "s"], [(0, 1), (1, 3)]),
])
def test_word_spans_read_each_subword_convention(pieces, spans):
    assert word_spans(pieces) == spans


class _CharVocab:
    """Characters as pieces, a space piece between words, optionally </s> after a source (as Joey's)."""

    def __init__(self, eos: bool):
        self.eos = eos

    def encode(self, text: str) -> list[int]:
        return [10 + ord(c) - ord("a") if c != " " else 5 for c in text] + ([3] if self.eos else [])


@pytest.mark.parametrize("eos, ids, spans", [
    (False, [10, 11, 5, 12], [(0, 2), (3, 4)]),
    (True, [10, 11, 5, 12, 3], [(0, 2), (3, 4)]),
])
def test_word_spans_of_a_character_vocabulary_skip_the_space_pieces(eos, ids, spans):
    from model.scoring.forced_matrices import encode_words

    assert encode_words(_CharVocab(eos), ["ab", "c"]) == (ids, spans)


def test_the_explanation_methods_get_alignment_rows_of_their_own(tiny_checkpoints):
    """Each explanation method asked for is scored like attention: its source rows for the forced
    gold output, merged to words; the matrices are the method's own (model/explaining/methods.py)."""
    from model.corpus.vocab import EOS
    from model.decoding.translator import Translator
    from model.explaining.registry import explain
    from model.scoring.attention_alignment import score_model
    from model.scoring.forced_matrices import encode_words
    from model.scoring.word_alignment import GoldSentence, GoldSet, word_matrix

    links = frozenset({(0, 0), (1, 1), (2, 2)})
    gold = GoldSet("toy", (GoldSentence(("a", "dog", "runs"), ("un", "chien", "court"), links, links),))
    translator = Translator.from_checkpoint(tiny_checkpoints["rnnencdec"])
    rows, missed, matrices = score_model("encdec", translator, ("en", "fr"), gold,
                                         ("attention", "gradient_x_input", "occlusion"), ("target",))
    assert not missed and {r.method for r in rows} == {"gradient_x_input", "occlusion"}  # no attention to score
    assert all(0.0 <= r.counts.aer <= 1.0 for r in rows)
    src_ids, src_spans = encode_words(translator.src_vocab, gold.sentences[0].src)
    tgt_ids, tgt_spans = encode_words(translator.tgt_vocab, gold.sentences[0].tgt)
    own = explain(translator.model, src_ids, tgt_ids + [EOS], ["occlusion"])["occlusion"].normalised()[0]
    assert np.allclose(matrices[0].of("occlusion"), word_matrix(own[:len(tgt_ids)], src_spans, tgt_spans))


@pytest.mark.parametrize("reverse", [False, True])
def test_a_word_matrix_is_checked_on_the_pieces_of_the_words_it_ranks_first(tiny_checkpoints, monkeypatch, reverse):
    """The check of an answer-key heatmap removes the pieces of the words its column sums rank
    first (a reverse model reads the gold target, so its words are the matrix's rows)."""
    from model.corpus.vocab import EOS
    from model.decoding.translator import Translator
    from model.scoring import forced_matrices
    from model.scoring.forced_matrices import encode_words, word_matrix_check

    translator = Translator.from_checkpoint(tiny_checkpoints["rnnsearch"])
    src, tgt = ("a", "dog", "runs", "in", "the", "park"), ("un", "chien", "court")
    matrix = np.full((3, 6), 0.01)  # (gold target words, gold source words)
    if reverse:
        matrix[:, 4] = 1.0  # irrelevant to a reverse model: it reads the gold target
        matrix[1, :] = 0.5  # "chien" ranks first
        read, written, first = tgt, src, 1
    else:
        matrix[:, 4] = 1.0  # "the" ranks first, then every other word alike
        read, written, first = src, tgt, 4
    seen = {}

    def spy(model, src_ids, out_ids, importance, seeds=5):
        seen.update(src_ids=list(src_ids), out_ids=list(out_ids), importance=np.asarray(importance))
        return "checked"

    monkeypatch.setattr(forced_matrices, "comprehensiveness_check", spy)
    assert word_matrix_check(translator, src, tgt, matrix, reverse) == "checked"
    src_ids, spans = encode_words(translator.src_vocab, read)
    tgt_ids, _ = encode_words(translator.tgt_vocab, written)
    assert seen["src_ids"] == src_ids and seen["out_ids"] == tgt_ids + [EOS]
    start, end = spans[first]
    top = np.flatnonzero(seen["importance"] == seen["importance"].max())
    assert list(top) == list(range(start, end))
    for j, (a, b) in enumerate(spans):  # every piece of a word carries that word's total
        assert len(set(seen["importance"][a:b])) == 1


def test_a_word_matrix_check_of_an_unscorable_sentence_is_none(tiny_checkpoints):
    from model.decoding.translator import Translator
    from model.scoring.forced_matrices import word_matrix_check

    translator = Translator.from_checkpoint(tiny_checkpoints["rnnsearch"])
    assert word_matrix_check(translator, (), ("un",), np.zeros((1, 0))) is None


def test_a_word_matrix_check_measures_the_forced_gold_output(tiny_checkpoints):
    from model.decoding.translator import Translator
    from model.scoring.forced_matrices import word_matrix_check

    import math

    from model.explaining.faithfulness import BINS
    from model.scoring.forced_matrices import encode_words

    translator = Translator.from_checkpoint(tiny_checkpoints["rnnencdec"])
    src, tgt = ("a", "dog", "runs", "in", "the", "park"), ("un", "chien", "court")
    check = word_matrix_check(translator, src, tgt, np.eye(3, 6))
    S = len(encode_words(translator.src_vocab, src)[0])  # source pieces, not words
    assert check.removed == tuple(min(S, max(1, math.ceil(q * S))) for q in BINS)
    assert np.isfinite(check.method) and np.isfinite(check.random)
