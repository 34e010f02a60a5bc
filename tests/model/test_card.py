"""The shipping pipeline on a tiny run: fp16 export, card.json with scores, README rendering."""
import json
import shutil

from model.card import TEST_SETS, build, main as card_main
from model.translate import Translator
from viz import model_cards


def data_with_test_sets(corpus, tmp_path):
    """The tiny corpus plus its val split copied under each Multi30k test-set name."""
    data = tmp_path / "data"
    shutil.copytree(corpus, data)
    for name in TEST_SETS:
        for lang in ("en", "fr"):
            shutil.copy(data / f"val.{lang}", data / f"{name}.{lang}")
    return data


def test_card_and_readme(tiny_checkpoints, tiny_corpus, tmp_path):
    data = data_with_test_sets(tiny_corpus, tmp_path)
    run = tiny_checkpoints["rnnsearch"].parent
    out = tmp_path / "ship" / "rnnsearch-tiny"
    card = build(run, out, data, "python -m model.train --preset tiny")
    saved = json.loads((out / "card.json").read_text())
    assert saved == json.loads(json.dumps(card))
    assert set(saved["test_scores"]) == set(TEST_SETS) | {"test_2016_flickr (greedy)"}
    assert all("nrefs:1" in s["bleu_signature"] and "case:lc" in s["bleu_lc_signature"]
               for s in saved["test_scores"].values())
    assert [r["k"] for r in saved["length_stress"]] == [1, 2, 3, 4]
    assert saved["training"]["epochs"] == len(saved["log"])
    assert Translator.from_checkpoint(out).translate(["a dog runs"])[0].translation
    assert model_cards.main([str(tmp_path / "ship")]) == 0
    readme = (tmp_path / "ship" / "README.md").read_text()
    assert "## rnnsearch-tiny" in readme and "| test_2017_mscoco |" in readme and "Limitations" in readme


def test_ablation_is_scored_and_rendered_next_to_the_card(tiny_checkpoints, tiny_corpus, tmp_path):
    data = data_with_test_sets(tiny_corpus, tmp_path)
    out = tmp_path / "ship" / "rnnsearch-tiny"
    build(tiny_checkpoints["rnnsearch"].parent, out, data, "train A")
    other = str(tiny_checkpoints["rnnencdec"].parent)
    args = ["--ablation", other, "--label", "no attention", "--out", str(out), "--data-dir", str(data), "--command", "train B"]
    assert card_main(args) == 0
    assert card_main(args) == 0  # the same label again replaces, not duplicates
    card = json.loads((out / "card.json").read_text())
    assert [a["label"] for a in card["ablations"]] == ["no attention"]
    ablation = card["ablations"][0]
    assert set(ablation["test_scores"]) == set(card["test_scores"]) and len(ablation["length_stress"]) == 4
    model_cards.main([str(tmp_path / "ship")])
    readme = (tmp_path / "ship" / "README.md").read_text()
    assert "### Ablation: no attention" in readme and "`train B`" in readme
    first = card["test_scores"]["test_2016_flickr"]["bleu"] - ablation["test_scores"]["test_2016_flickr"]["bleu"]
    assert f"{first:+.2f} |" in readme
