"""Decoding with the attention weights replaced: each replacement's weights, that the model's
own weights reproduce the normal output, and the command that compares them."""
import json

import pytest
import torch

from model.explaining.attention_ablation import ABLATIONS, Ablation, ablated_alpha
from model.decoding.search import SearchConfig
from model.decoding.translator import Translator
from model.core.errors import ConfigError

SENTENCES = ["a dog runs in the park", "the small cat", "a man eats a red ball on the street"]


def test_each_ablation_puts_its_weight_where_it_says():
    mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 1, 1, 0, 0]]).bool()
    alpha = torch.tensor([[0.1, 0.7, 0.2, 0.0, 0.0], [0.1, 0.1, 0.1, 0.2, 0.5], [0.6, 0.3, 0.1, 0.0, 0.0]])
    uniform = ablated_alpha("uniform", alpha, mask, 4)
    torch.testing.assert_close(uniform[0], torch.tensor([1 / 3, 1 / 3, 1 / 3, 0.0, 0.0]))
    assert ablated_alpha("argmax", alpha, mask, 4).argmax(1).tolist() == [1, 4, 0]
    assert ablated_alpha("diagonal", alpha, mask, 1).argmax(1).tolist() == [1, 1, 1]
    assert ablated_alpha("diagonal", alpha, mask, 4).argmax(1).tolist() == [2, 4, 2]  # never past the sentence
    assert ablated_alpha("last", alpha, mask, 0).argmax(1).tolist() == [2, 4, 2]
    for kind in ABLATIONS:  # every replacement is a distribution over real positions
        weights = ablated_alpha(kind, alpha, mask, 2)
        torch.testing.assert_close(weights.sum(1), torch.ones(3))
        assert (weights[~mask] == 0).all()
    with pytest.raises(ConfigError, match="unknown ablation 'none'"):
        ablated_alpha("none", alpha, mask, 0)


def test_the_models_own_weights_through_the_ablation_path_change_nothing(tiny_checkpoints):
    t = Translator.from_checkpoint(tiny_checkpoints["rnnsearch"])
    cfg = SearchConfig(beam=3)
    plain = t.translate(SENTENCES, cfg)
    same = t.translate(SENTENCES, SearchConfig(beam=3, ablation=lambda alpha, mask, step: alpha))  # the identity
    assert [x.target_ids for x in same] == [x.target_ids for x in plain]
    assert [x.score for x in same] == pytest.approx([x.score for x in plain], abs=1e-5)


def test_uniform_weights_change_the_output_and_are_what_the_trace_shows(tiny_checkpoints):
    t = Translator.from_checkpoint(tiny_checkpoints["rnnsearch"])
    plain = t.translate(SENTENCES, SearchConfig(beam=3))
    uniform = t.translate(SENTENCES, SearchConfig(beam=3, ablation=Ablation("uniform")))
    assert [x.target_ids for x in uniform] != [x.target_ids for x in plain]
    for trace in uniform:
        n = len(trace.source_ids)
        assert abs(trace.attention - 1 / n).max() < 1e-6  # the weights used, not the model's


def test_an_ablation_needs_attention_and_a_known_name(tiny_checkpoints):
    with pytest.raises(ConfigError, match="has no attention"):
        Translator.from_checkpoint(tiny_checkpoints["rnnencdec"]).translate(["a dog"], SearchConfig(ablation=Ablation("uniform")))
    with pytest.raises(ConfigError, match="choose from uniform"):
        Ablation("x")


def test_evaluate_ablate_reports_each_run_against_the_model(tiny_checkpoints, tiny_corpus, tmp_path, capsys):
    from model.evaluate import main

    out = tmp_path / "report"
    code = main(["--src", str(tiny_corpus / "val.en"), "--ref", str(tiny_corpus / "val.fr"),
                 "--checkpoint", str(tiny_checkpoints["rnnsearch"]), "--checkpoint", str(tiny_checkpoints["rnnencdec"]),
                 "--out", str(out), "--ablate", "uniform,last", "--beam", "2"])
    assert code == 0
    scores = json.loads((out / "scores.json").read_text())
    search, encdec = (f"{tiny_checkpoints[a].parent.name}-best" for a in ("rnnsearch", "rnnencdec"))
    assert list(scores["models"]) == [search, encdec, f"{search}+uniform", f"{search}+last"]  # no RNNencdec ablation
    paired = scores["paired_bootstrap"]
    assert paired["baseline"] == list(scores["models"])[0] and len(paired["systems"]) == 4
    assert {row["model"] for row in scores["bleu_by_length"]} == set(scores["models"])
    with pytest.raises(SystemExit):
        main(["--src", "a", "--ref", "b", "--checkpoint", "c", "--out", "d", "--ablate", "vibes"])
