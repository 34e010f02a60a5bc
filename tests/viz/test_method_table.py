"""One table of explanation methods (model/explaining/registry.py): a method registered there,
with its function and its label (viz/figures/method_labels.py), reaches every place that lists
methods: the Translate page's Explanations tab, the notebook, ``python -m model.explain`` and the
test-set faithfulness table. Nothing else is touched."""
import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from model.explaining import registry
from model.explaining.explanation import Explanation
from viz.figures import method_labels

from ..conftest import open_tab
from .test_translate_page import APP, canvas, type_sentence

TOY, LABEL = "first_word", "the first source word"


def first_word(model, src_ids, out_ids, contrast):
    """A toy method: every output word explained by the first source word alone."""
    source = np.zeros((len(out_ids), len(src_ids)))
    source[:, 0] = 1.0
    return Explanation(TOY, source, np.zeros((len(out_ids), len(out_ids))))


@pytest.fixture
def toy(monkeypatch):
    registry.register(registry.Method(TOY, first_word, default=True))
    monkeypatch.setitem(method_labels.LABELS, TOY, LABEL)
    yield TOY
    registry.unregister(TOY)


def test_the_table_lists_each_method_once_with_what_it_needs():
    assert registry.names() == ("attention", "attention_norm", "gradient_x_input", "integrated_gradients", "occlusion",
                                "alti_plus", "value_zeroing", "rollout")
    assert [registry.needs_attention(m) for m in registry.names()] == [True, True, False, False, False, True, True, True]
    assert [registry.needs_anatomy(m) for m in registry.names()] == [False] * 5 + [True] * 3
    assert registry.applicable(False) == ("gradient_x_input", "integrated_gradients", "occlusion")
    assert registry.applicable(True) == registry.names()[:5]
    assert registry.applicable(True, anatomy=True) == registry.names()
    assert registry.needs_attention("attention_layer_2") and not registry.needs_attention("no such method")
    assert set(registry.defaults()) <= set(registry.names())
    assert set(registry.names()) <= set(method_labels.LABELS)  # each has a label


def test_a_registered_method_is_offered_and_explained_in_the_explanations_tab(toy, app_env):
    at = AppTest.from_file(APP, default_timeout=120).run()
    type_sentence(at, "a small dog sits")
    open_tab(at, "Explanations")
    picker = at.multiselect(key="explain_methods")
    assert LABEL in picker.options and TOY in picker.value  # offered under its label, chosen by default
    tables = [t.value for t in at.dataframe]
    assert len(tables) == 2 and all(LABEL in set(t.iloc[:, 0]) for t in tables)  # its faithfulness row, each model
    panels = [p for p in canvas(at, "lines") if p["subtitle"].startswith("deletion")]
    assert all(LABEL in {line["name"] for line in p["lines"]} for p in panels) and panels


def test_a_registered_method_explains_in_the_notebook(toy, tiny_checkpoints):
    from viz.notebook import load

    translation = load(tiny_checkpoints["rnnencdec"]).translate("a dog runs")
    found = translation.explain(TOY)
    assert found.method == TOY and np.allclose(found.normalised()[0][:, 0], 1.0)


def test_a_registered_method_is_a_choice_of_the_explain_command(toy, tiny_checkpoints, tmp_path, capsys):
    from model.explain import main

    out = tmp_path / "found.jsonl"
    assert main(["--checkpoint", str(tiny_checkpoints["rnnsearch"]), "--text", "a dog runs", "--methods",
                 f"{TOY},occlusion", "--seeds", "2", "--json", str(out)]) == 0
    assert set(json.loads(out.read_text())["methods"]) == {TOY, "occlusion"}


def test_a_registered_method_has_a_row_in_the_test_set_faithfulness_table(toy, tiny_checkpoints):
    from model.decoding.translator import Translator
    from model.explaining.test_set import faithfulness_table

    translator = Translator.from_checkpoint(tiny_checkpoints["rnnencdec"])
    pairs = [(t.source_ids, t.target_ids) for t in translator.translate(["a dog runs", "two men sit"])]
    table = faithfulness_table(translator.model, "tiny", pairs, [TOY, "gradient_x_input"], seeds=2)
    assert set(table.to_json()["methods"]) >= {TOY, "gradient_x_input"}


def test_the_reason_a_model_cannot_use_the_layerwise_methods_is_marked_for_translation_as_the_table_words_it():
    assert method_labels.UNSUPPORTED == registry.UNSUPPORTED
