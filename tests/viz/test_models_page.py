"""AppTest runs of the Models page: the tiny cards as training writes them, and a full card."""
import json
import shutil

import pytest
from streamlit.testing.v1 import AppTest

from ..conftest import start_app
from .test_translate_page import canvas


def _models_script(settings):
    from viz.pages import models as models_page

    models_page.render(settings)


def test_models_page_shows_each_card(app_env):
    at = AppTest.from_function(_models_script, args=(app_env,), default_timeout=60).run()
    assert not at.exception
    assert [e.label for e in at.expander] == ["rnnencdec-tiny (English → French)", "rnnsearch-tiny (English → French)"]
    assert any("Architecture:** rnnsearch" in m.value for m in at.markdown)
    panels = canvas(at, "lines")  # training curves from each card's log: loss, then BLEU
    assert len(panels) == 4 and [p["y_title"] for p in panels] == ["cross-entropy", "BLEU"] * 2


@pytest.fixture
def shipped_like(tiny_checkpoints, tmp_path, monkeypatch):
    """The tiny RNNsearch with a card as model/cards/builder.py writes for shipped models;
    the app's settings with it as the checkpoint root."""
    root = tmp_path / "checkpoints"
    folder = root / "everyday-rnnsearch"
    shutil.copytree(tiny_checkpoints["rnnsearch"], folder)
    card = json.loads((folder / "card.json").read_text())
    stress = [{"k": k, "items": 10, "source_words": 6.0 * k, "bleu": 40.0, "length_ratio": 1.0} for k in (1, 2, 3)]
    card.update(name="everyday-rnnsearch", pair="everyday", trained_on="everyday English",
                data=[{"name": "tatoeba", "description": "Tatoeba pairs", "licence": "CC-BY 2.0 (France)",
                       "attribution": "Tatoeba Project (tatoeba.org), via www.manythings.org/anki",
                       "training_pairs": 100, "weight": 1.0, "splits": "carved"}],
                training={"updates": 8000, "epochs": 2.9, "wall_minutes": 120.0, "best_val_bleu": 40.0,
                          "where": {"cpu": "AMD EPYC", "threads": 1, "device": "cpu"}},
                decoding={"beam": 8, "length_norm": 0.8, "chosen_on": "validation BLEU"},
                test_scores={"tatoeba/test": {"bleu": 45.0, "bleu_lc": 46.0, "chrf": 60.0, "decoding": "beam 8"}},
                length_stress={"tatoeba/test": stress},
                comparison={"with": "everyday-rnnencdec", "test": "paired bootstrap",
                            "rows": [{"test_set": "tatoeba/test", "everyday-rnnsearch": 45.0,
                                      "everyday-rnnencdec": 38.0, "difference": 7.0, "p_value": 0.001,
                                      "signature": "nrefs:1"}]},
                deviations=["The encoder GRU applies its reset gate after the recurrent product."],
                alignment={"golden100": {"sentences": 100, "rows": [
                    {"model": "everyday-rnnsearch", "method": "attention", "extraction": "target", "aer": 0.605,
                     "precision": 0.405, "recall": 0.384, "sentences": 100}]}},
                limitations="Short everyday sentences only.")
    (folder / "card.json").write_text(json.dumps(card))
    return start_app(monkeypatch, "--checkpoints", root)


def test_a_shipped_card_shows_data_training_stress_and_comparison(shipped_like):
    at = AppTest.from_function(_models_script, args=(shipped_like,), default_timeout=60).run()
    assert not at.exception, at.exception
    text = " ".join(m.value for m in at.markdown)
    for expected in ("8,000 updates", "AMD EPYC", "beam 8, length normalisation λ 0.8", "reset gate", "Short everyday"):
        assert expected in text, expected
    frames = [d.value for d in at.dataframe]
    assert any("attribution" in f.columns and "Tatoeba Project" in f["attribution"][0] for f in frames)
    assert any("p" in f.columns and f["p"][0] == 0.001 and f["difference"][0] == 7.0 for f in frames)
    assert any("AER" in f.columns and f["AER"][0] == 0.605 and f["source"][0] == "this model: attention" for f in frames)
    titles = [chart["title"] for chart in canvas(at, "lines")]
    assert "tatoeba/test" in titles and any(t.startswith("Length stress test, tatoeba/test") for t in titles)


def _models_script_with_language(settings):
    from viz.pages import models as models_page
    from viz.pages.parts.language import language_ui

    language_ui()
    models_page.render(settings)


@pytest.mark.parametrize("change, english, arabic", [
    ({"parameters": "many"}, "expected int, got str", "كان المتوقع"),
    ({"comparison": {"with": "other", "rows": [{"test_set": "t"}]}}, "row 1 lacks the scores of", "تنقصه درجات"),
])
@pytest.mark.parametrize("lang", ["en", "ar"])
def test_a_malformed_card_is_reported_in_the_readers_language(tiny_checkpoints, tmp_path, monkeypatch, change,
                                                             english, arabic, lang):
    """The card's problem reaches the page as the error itself (template and values), so it is
    worded in the reader's language; the model is still listed, without its card."""
    from viz import i18n

    folder = tmp_path / "checkpoints" / "odd-rnnsearch"
    shutil.copytree(tiny_checkpoints["rnnsearch"], folder)
    card = json.loads((folder / "card.json").read_text())
    (folder / "card.json").write_text(json.dumps({**card, **change}))
    settings = start_app(monkeypatch, "--checkpoints", folder.parent)
    with i18n.using(lang):
        at = AppTest.from_function(_models_script_with_language, args=(settings,), default_timeout=60)
        at.query_params["lang"] = lang
        at.run()
    assert not at.exception, at.exception
    (shown,) = [e.value for e in at.error]
    assert "card.json" in shown.replace("\\", "")  # where, markdown-escaped
    assert (english in shown) == (lang == "en") and (arabic in shown) == (lang == "ar"), shown
    assert [e.label.split(" ")[0] for e in at.expander] == ["\u2066odd-rnnsearch\u2069" if lang == "ar" else "odd-rnnsearch"]
