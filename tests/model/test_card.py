"""The shipping pipeline on a tiny run: weight selection, tuning, fp16 export, card.json with
scores on every corpus' test sets, the paired comparison, and the rendered README."""
import json
import shutil

import pytest

from model.cards.builder import DEVIATIONS, ENCDEC_SUMMARY, build, compare, deviations, pick_decoding
from model.card import main as card_main
from model.cards.schema import read_model_card
from model.decoding.translator import Translator
from viz.commands import cards as cards_cli

from ..conftest import make_pairs


@pytest.fixture
def run_on_two_corpora(tiny_checkpoints, tiny_corpus, tmp_path):
    """Copies of the tiny runs whose configs name two corpora: a folder with Multi30k-style test
    files and a Tatoeba-style pair file (the models translate either; only the card reads them)."""
    data = tmp_path / "captions"
    shutil.copytree(tiny_corpus, data)
    for name in ("test_2016_flickr", "test_2017_flickr"):
        for lang in ("en", "fr"):
            shutil.copy(data / f"val.{lang}", data / f"{name}.{lang}")
    pairs = tmp_path / "everyday.tsv"
    pairs.write_text("".join(f"{en}\t{fr}\tCC-BY\n" for en, fr in make_pairs(300, seed=5)))
    runs = {}
    for arch, best in tiny_checkpoints.items():
        run = tmp_path / f"run-{arch}"
        shutil.copytree(best.parent, run)
        for path in run.rglob("config.json"):  # the run's and each checkpoint's, as training writes them
            config = json.loads(path.read_text())
            config["train"]["corpora"] = [{"name": "tatoeba", "path": str(pairs)}, {"name": "multi30k", "path": str(data)}]
            path.write_text(json.dumps(config))
        runs[arch] = run
    return runs


def test_card_scores_every_corpus_and_renders(run_on_two_corpora, tmp_path):
    run, out = run_on_two_corpora["rnnsearch"], tmp_path / "ship" / "rnnsearch-tiny"
    card = build(run, out, "python -m model.train --preset tiny", pair="everyday", trained_on="toy sentences",
                 tune=True, limitations="Knows twenty words.", how_trained="One run on one thread.")
    saved = json.loads((out / "card.json").read_text())
    typed = read_model_card(out)  # what the pages read: the same scores, typed
    assert (typed.pair, typed.trained_on, typed.limitations) == ("everyday", "toy sentences", "Knows twenty words.")
    assert typed.how_trained == "One run on one thread." and ENCDEC_SUMMARY not in typed.deviations
    assert {k: v.bleu for k, v in typed.test_scores.items()} == {k: v["bleu"] for k, v in card["test_scores"].items()}
    assert typed.replay and typed.replay[0].step == 0  # the training replay travels into the card
    assert set(saved["test_scores"]) == {"tatoeba/test", "tatoeba/test, unseen references", "multi30k/test_2016_flickr",
                                         "multi30k/test_2017_flickr"}
    tatoeba = saved["data"][0]
    assert tatoeba["pairs_per_split"]["test"] == saved["test_scores"]["tatoeba/test"]["sentences"]
    assert "also occur as training targets" in tatoeba["test_references_seen_in_training"]
    assert all("nrefs:1" in s["bleu_signature"] and "case:lc" in s["bleu_lc_signature"] and s["bleu_lc_moses"] >= 0
               for s in saved["test_scores"].values())
    assert [r["k"] for r in saved["length_stress"]["tatoeba/test"]] == [1, 2, 3, 4, 5]
    assert [r["k"] for r in saved["length_stress"]["multi30k/test_2016_flickr"]] == [1, 2, 3, 4]
    assert [d["name"] for d in saved["data"]] == ["tatoeba", "multi30k"]
    assert "Tatoeba Project (tatoeba.org), via www.manythings.org/anki" in saved["data"][0]["attribution"]
    grid = saved["decoding"]["grid"]
    assert len(grid) == 7 and saved["decoding"]["beam"] == pick_decoding(grid)["beam"]
    assert saved["test_scores"]["tatoeba/test"]["decoding"].startswith(f"beam {saved['decoding']['beam']}") or \
        saved["decoding"]["beam"] == 1
    assert saved["training"]["updates"] == saved["log"][-1]["step"] and saved["checks"][0]["first"] == 500
    assert saved["training"]["where"]["device"] == "cpu" and saved["training"]["where"]["threads"] >= 1
    assert Translator.from_checkpoint(out).translate(["a dog runs"])[0].translation
    assert cards_cli.main([str(tmp_path / "ship")]) == 0
    readme = (tmp_path / "ship" / "README.md").read_text()
    for text in ("## rnnsearch-tiny", "| tatoeba/test |", "Limitations", "Knows twenty words.",
                 "Tatoeba Project (tatoeba.org)", "reset gate"):
        assert text in readme, text


def test_only_rnnencdec_cards_list_the_encoder_summary_deviation():
    assert deviations("rnnencdec") == DEVIATIONS and ENCDEC_SUMMARY in DEVIATIONS
    assert deviations("rnnsearch") == [d for d in DEVIATIONS if d != ENCDEC_SUMMARY]


def test_a_transformer_card_lists_its_own_deviations_and_none_of_the_grus():
    listed = deviations("transformer")
    assert any(d.startswith("Pre-norm") for d in listed) and any("warm-up" in d for d in listed)
    assert not any("GRU" in d for d in listed)


def _grid(*rows):
    return [{"beam": beam, "length_norm": norm, "val_bleu": bleu} for beam, norm, bleu in rows]


CLOSE = _grid((5, 0.6, 41.96), (5, 1.0, 41.84), (3, 0.6, 41.42), (8, 0.6, 42.01), (12, 0.6, 42.02))


@pytest.mark.parametrize("grid, tolerance, chosen", [
    (CLOSE, 0.1, (5, 0.6)),
    (CLOSE, 0.0, (12, 0.6)),
    (_grid((5, 1.0, 50.54), (5, 1.2, 50.57), (3, 1.2, 50.26), (12, 1.2, 50.57)), 0.1, (5, 1.2)),  # a tie keeps 5
    (_grid((5, 1.0, 50.47), (5, 1.2, 50.40), (3, 1.0, 50.37), (12, 1.0, 50.47)), 0.1, (3, 1.0)),  # exactly 0.1 off
    (_grid((5, 1.0, 56.81), (3, 1.0, 56.62), (8, 1.0, 57.0), (12, 1.0, 57.01)), 0.1, (8, 1.0)),  # a real gain
])
def test_pick_decoding_takes_the_smallest_beam_within_tolerance(grid, tolerance, chosen):
    row = pick_decoding(grid, tolerance)
    assert (row["beam"], row["length_norm"]) == chosen


@pytest.mark.parametrize("broken", ["best", "a step"])
def test_averaging_is_chosen_only_when_it_scores_higher(run_on_two_corpora, tmp_path, broken):
    """Kept checkpoints +-0.01 around the trained weights average back to them; a "best" whose
    weights were shifted by 0.3 then loses to the average, and a step shifted by 1.0 spoils it."""
    from .test_checkpoint import _shifted_copy

    run = run_on_two_corpora["rnnsearch"]
    trained = tmp_path / "trained"
    shutil.copytree(run / "best", trained)
    shifts = {"step-0000010": 0.01, "step-0000020": -0.01} if broken == "best" else {"step-0000010": 1.0,
                                                                                         "step-0000020": 0.0}
    for name, shift in shifts.items():  # kept checkpoints, as train.keep_last leaves them
        _shifted_copy(trained, run / name, shift)
    if broken == "best":
        _shifted_copy(trained, run / "best", 0.3)
    card = build(run, tmp_path / "avg", "cmd", k_average=2)
    scores = card["selection"]["val_bleu_greedy"]
    assert set(scores) == {"best", "average of step-0000010, step-0000020"}
    assert card["selection"]["chosen"] == ("best" if broken == "a step" else "average of step-0000010, step-0000020")
    assert scores[card["selection"]["chosen"]] > min(scores.values())


def test_compare_writes_the_paired_test_into_both_cards(run_on_two_corpora, tmp_path, capsys):
    a, b = tmp_path / "a" / "search", tmp_path / "b" / "encdec"
    build(run_on_two_corpora["rnnsearch"], a, "cmd A")
    build(run_on_two_corpora["rnnencdec"], b, "cmd B")
    assert card_main(["--compare", str(a), str(b)]) == 0
    for folder, other in ((a, b), (b, a)):
        comparison = json.loads((folder / "card.json").read_text())["comparison"]
        assert comparison["with"] == other.name and len(comparison["rows"]) == 3
        row = comparison["rows"][0]
        assert 0 <= row["p_value"] <= 1 and row["difference"] == round(row["search"] - row["encdec"], 2)


def test_compare_refuses_when_no_test_set_is_found_from_here(run_on_two_corpora, tmp_path, monkeypatch):
    """Corpus paths in a config are relative to where it runs: from elsewhere nothing is found,
    and an empty comparison must not be written as if it were one."""
    from model.core.errors import DataError

    a, b = tmp_path / "a" / "search", tmp_path / "b" / "encdec"
    build(run_on_two_corpora["rnnsearch"], a, "cmd A")
    build(run_on_two_corpora["rnnencdec"], b, "cmd B")
    for folder in (a, b):
        config = json.loads((folder / "config.json").read_text())
        config["train"]["data_dir"] = "nowhere/multi30k"
        config["train"]["corpora"] = [dict(c, path=f"nowhere/{c['name']}") for c in config["train"].get("corpora", [])]
        (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(DataError, match="none of its test sets is found"):
        compare(a, b)
    assert "comparison" not in json.loads((a / "card.json").read_text())


def test_ablation_is_scored_and_rendered_next_to_the_card(run_on_two_corpora, tmp_path):
    out = tmp_path / "ship" / "rnnsearch-tiny"
    build(run_on_two_corpora["rnnsearch"], out, "train A")
    args = ["--ablation", str(run_on_two_corpora["rnnencdec"]), "--label", "no attention", "--out", str(out),
            "--command", "train B"]
    assert card_main(args) == 0
    assert card_main(args) == 0  # the same label again replaces, not duplicates
    card = json.loads((out / "card.json").read_text())
    assert [a["label"] for a in card["ablations"]] == ["no attention"]
    ablation = card["ablations"][0]
    assert set(ablation["test_scores"]) == set(card["test_scores"])
    cards_cli.main([str(tmp_path / "ship")])
    readme = (tmp_path / "ship" / "README.md").read_text()
    assert "### Ablation: no attention" in readme and "`train B`" in readme
    first = card["test_scores"]["tatoeba/test"]["bleu"] - ablation["test_scores"]["tatoeba/test"]["bleu"]
    assert f"{first:+.2f} |" in readme
