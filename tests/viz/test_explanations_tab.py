"""The Explanations tab draws what is quick first: attention-like readings of every model at once,
then the methods that take gradients or re-scorings one at a time, each computed and measured
once; the assembled figures equal a measurement of all methods together."""
import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from model.explaining import faithfulness, registry
from model.explaining.registry import explain
from viz.serving import explanations

from ..conftest import open_tab
from .test_translate_page import APP, type_sentence

SLOW = ("gradient_x_input", "occlusion")


@pytest.fixture
def computed(monkeypatch):
    """The (model, method) pairs the tab computes, in order."""
    found = []

    def recording(model, src_ids, out_ids, methods, contrast=None):
        found.extend((model.description.arch, m) for m in methods)
        return explain(model, src_ids, out_ids, methods, contrast)

    monkeypatch.setattr(explanations, "explain", recording)
    return found


def test_quick_readings_of_every_model_come_before_the_slow_methods(app_env, computed):
    at = AppTest.from_file(APP, default_timeout=120).run()
    type_sentence(at, "a big dog runs in the park")
    at.session_state["explain_methods"] = ["attention", *SLOW, "attention_norm"]
    open_tab(at, "Explanations")
    assert not at.exception, at.exception
    slow_at = [k for k, (_, m) in enumerate(computed) if m in SLOW]
    quick_at = [k for k, (_, m) in enumerate(computed) if registry.instant(m)]
    assert quick_at and slow_at and max(quick_at) < min(slow_at)
    assert sorted(computed) == sorted(set(computed))  # each method of each model computed once
    assert {arch for arch, m in computed if m in SLOW} == {"rnnsearch", "rnnencdec"}
    assert not any(c.value.startswith("Still computing") for c in at.caption)  # the previews were replaced
    tables = [t.value for t in at.dataframe]
    assert len(tables) == 2 and all(len(t) == n + 1 for t, n in zip(tables, (4, 2)))  # methods and the random order
    computed.clear()
    at.run()  # nothing changed: nothing computed again
    assert computed == [] and len(at.dataframe) == 2


def test_a_method_measured_alone_equals_it_measured_with_the_others(tiny_checkpoints):
    from model.decoding.translator import Translator

    model = Translator.from_checkpoint(tiny_checkpoints["rnnsearch"]).model
    src, out = [5, 6, 7, 8, 3], [4, 9, 6, 3]
    found = explain(model, src, out, ["attention", "gradient_x_input", "occlusion"])
    together = faithfulness.measure(model, src, out, found)
    methods, curves = faithfulness.measure_methods(model, src, out, {"occlusion": found["occlusion"]})
    random, random_curves = faithfulness.measure_random(model, src, out)
    for name in ("deletion_area", "insertion_area", "comprehensiveness", "sufficiency"):
        assert getattr(methods["occlusion"], name) == pytest.approx(getattr(together.methods["occlusion"], name), abs=1e-5)
        assert getattr(random, name) == pytest.approx(getattr(together.random, name), abs=1e-5)
    np.testing.assert_allclose(curves["occlusion"].deletion, together.curves["occlusion"].deletion, atol=1e-5)
    np.testing.assert_allclose(random_curves.insertion, together.random_curves.insertion, atol=1e-5)
