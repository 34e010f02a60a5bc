"""Which heads matter (model/explaining/head_importance.py, python -m model.heads) on a tiny random
Transformer with the tiny test vocabularies: shapes, the baselines the numbers are measured
from, the pruning curve's ends, and clear refusals."""
import json
from pathlib import Path

import numpy as np
import pytest

from model.core.anatomy import CROSS, DECODER_SELF, ENCODER
from model.core.errors import ConfigError
from model.decoding.translator import Translator
from model.explaining.head_importance import HeadImportance, HeadScore, correlation, head_importance, mean_logprob
from tests.model.test_cli_errors import run_cli
from tests.model.transformer_fixtures import save_tiny_transformer

SOURCES = ["a dog runs", "the big dog sits in a small park", "a cat", "two men walk on the beach"]


@pytest.fixture(scope="module")
def transformer_dir(tiny_checkpoints, tmp_path_factory):
    return save_tiny_transformer(tiny_checkpoints["rnnsearch"], tmp_path_factory.mktemp("tf") / "tiny-transformer",
                                 heads=3, enc_layers=1, dec_layers=2)


@pytest.fixture(scope="module")
def found(transformer_dir):
    return head_importance(Translator.from_checkpoint(transformer_dir), SOURCES, prune_steps=3)


def test_every_head_of_every_attention_is_scored_once(found):
    assert found.shape == {ENCODER: (1, 3), DECODER_SELF: (2, 3), CROSS: (2, 3)}
    assert sorted(s.key for s in found.scores) == sorted(
        (kind, layer, head) for kind, (layers, heads) in found.shape.items() for layer in range(layers)
        for head in range(heads))
    for kind, (layers, heads) in found.shape.items():
        assert found.grid(kind).shape == (layers, heads) and not np.isnan(found.grid(kind)).any()


def test_without_references_bleu_is_measured_against_the_models_own_output(found):
    assert found.bleu_against == "own output" and found.base_bleu == pytest.approx(100.0)
    assert all(s.reference_change is None for s in found.scores)
    assert found.pruning[0] == (0, found.base_bleu)  # nothing off: the model as it is
    counts = [n for n, _ in found.pruning]
    assert counts == sorted(set(counts)) and counts[-1] == len(found.scores) - 1  # all but one head off at the end


def test_the_least_important_head_comes_first(found):
    order = found.order()
    assert [s.logprob_change for s in order] == sorted((s.logprob_change for s in found.scores), reverse=True)


def test_references_give_their_own_change(transformer_dir):
    translator = Translator.from_checkpoint(transformer_dir)
    refs = ["un chien court", "le grand chien", "un chat", "deux hommes"]
    found = head_importance(translator, SOURCES[:2], refs[:2], prune_steps=1)
    assert found.bleu_against == "references"
    assert all(s.reference_change is not None for s in found.scores)
    with pytest.raises(ConfigError, match="3 references for 4"):
        head_importance(translator, SOURCES, refs[:3])  # refused before anything is decoded


def test_mean_logprob_reads_each_token_once_whatever_the_batch(transformer_dir, monkeypatch):
    import model.explaining.head_importance as hi
    model = Translator.from_checkpoint(transformer_dir).model
    src, out = [[5, 6, 3], [7, 3], [8, 9, 10, 11, 3]], [[4, 4, 3], [5, 6, 7, 3], [3]]
    together = mean_logprob(model, src, out)
    monkeypatch.setattr(hi, "BATCH", 1)
    assert mean_logprob(model, src, out) == pytest.approx(together, abs=1e-5)


def test_recurrent_models_are_refused_in_one_line(tiny_checkpoints):
    with pytest.raises(ConfigError, match="only Transformers that can be taken apart"):
        head_importance(Translator.from_checkpoint(tiny_checkpoints["rnnsearch"]), SOURCES)


@pytest.mark.parametrize("aer, sign", [("same", 1.0), ("reversed", -1.0)])
def test_correlation_is_spearmans(aer, sign):
    changes = [-0.5, -0.1, -0.3, 0.0, -0.2, -0.4]
    scores = tuple(HeadScore(CROSS, 1 + k // 3, 1 + k % 3, c, None, 0.0) for k, c in enumerate(changes))
    found = HeadImportance({CROSS: (2, 3)}, 1, "own output", 0.0, 0.0, scores, ())
    grid = np.array(changes).reshape(2, 3) * (1 if aer == "same" else -1) * 7 + 1  # any monotone map
    assert correlation(found, grid) == pytest.approx(sign)


def test_the_command_prints_the_grids_and_writes_json(transformer_dir, tmp_path):
    src = tmp_path / "src.txt"
    src.write_text("\n".join(SOURCES) + "\n")
    out = tmp_path / "heads.json"
    ran = run_cli("model.heads", "--checkpoint", transformer_dir, "--src", src, "--limit", "2", "--prune-steps", "1",
                  "--json", out)
    assert ran.returncode == 0, ran.stderr
    printed = ran.stdout.decode()
    assert "cross: change in mean log p" in printed and "pruning, least important first" in printed
    report = json.loads(out.read_text())
    assert len(report["heads"]) == 1 * 3 + 2 * 3 + 2 * 3 and report["sentences"] == 2


def test_the_command_refuses_a_recurrent_model(tiny_checkpoints, tmp_path):
    src = tmp_path / "src.txt"
    src.write_text("a dog\n")
    ran = run_cli("model.heads", "--checkpoint", tiny_checkpoints["rnnsearch"], "--src", src)
    assert ran.returncode == 2 and "only Transformers that can be taken apart" in ran.stderr.decode()


def test_the_command_records_its_report_in_the_card(transformer_dir, tmp_path):
    import shutil

    from model.cards.schema import read_model_card

    folder = Path(shutil.copytree(transformer_dir, tmp_path / "copy"))
    src = tmp_path / "src.txt"
    src.write_text("\n".join(SOURCES) + "\n")
    ran = run_cli("model.heads", "--checkpoint", folder, "--src", src, "--card")
    assert ran.returncode == 2 and "no card.json to record in" in ran.stderr.decode()  # refused before the work
    (folder / "card.json").write_text(json.dumps({"name": "copy", "arch": "transformer"}))
    ran = run_cli("model.heads", "--checkpoint", folder, "--src", src, "--limit", "3", "--prune-steps", "1", "--card")
    assert ran.returncode == 0, ran.stderr
    record = read_model_card(folder).head_importance
    assert len(record.heads) == 15 and record.sentences == 3 and record.bleu_against == "own output"
    assert record.pruning[0].heads_off == 0 and record.command.startswith("python -m model.heads --checkpoint ")


def test_the_command_sets_the_cross_attentions_aer_beside_its_importance(transformer_dir, tmp_path):
    from tests.viz.test_alignment_page import EN, FR, WA

    files = {}
    for suffix, text in (("en", EN), ("fr", FR), ("wa", WA)):
        files[suffix] = tmp_path / f"gold.{suffix}"
        files[suffix].write_text(text)
    src = tmp_path / "src.txt"
    src.write_text("\n".join(SOURCES) + "\n")
    out = tmp_path / "heads.json"
    ran = run_cli("model.heads", "--checkpoint", transformer_dir, "--src", src, "--limit", "2", "--prune-steps", "1",
                  "--align-src", files["en"], "--align-tgt", files["fr"], "--align-gold", files["wa"], "--json", out)
    assert ran.returncode == 0, ran.stderr
    report = json.loads(out.read_text())
    for reading in ("output", "shifted"):
        grid = np.array(report[f"cross_aer_{reading}"])
        assert grid.shape == (2, 3) and ((0 <= grid) & (grid <= 1)).all()
        assert -1 <= report[f"aer_correlation_{reading}"] <= 1
    assert report["aer_gold"] == "gold" and "rank correlation of that AER" in ran.stdout.decode()


def test_a_bad_gold_file_is_refused_before_the_measurement(transformer_dir, tmp_path):
    src = tmp_path / "src.txt"
    src.write_text("a dog\n")
    (tmp_path / "g.en").write_text("a dog\n")
    (tmp_path / "g.fr").write_text("un chien\n")
    (tmp_path / "g.wa").write_text("not a link\n")
    ran = run_cli("model.heads", "--checkpoint", transformer_dir, "--src", src, "--align-src", tmp_path / "g.en",
                  "--align-tgt", tmp_path / "g.fr", "--align-gold", tmp_path / "g.wa")
    assert ran.returncode == 2 and "g.wa" in ran.stderr.decode() and "head 1 of" not in ran.stderr.decode()
