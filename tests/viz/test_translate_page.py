"""AppTest runs of the Translate page against two tiny checkpoints."""
import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def charts(at) -> list[dict]:
    """The plotly figure specs the page emitted (parsed from the element protos)."""
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def heatmaps(at) -> list[dict]:
    return [trace for spec in charts(at) for trace in spec["data"] if trace["type"] == "heatmap"]


@pytest.fixture
def at(app_env):
    return AppTest.from_file(APP, default_timeout=120).run()


def type_sentence(at, text):
    at.text_area(key="source").input(text).run()
    assert not at.exception, at.exception
    return at


def test_first_load_translates_an_example(at):
    assert not at.exception
    assert at.text_area(key="source").value.startswith("A man in a blue shirt")
    assert len(at.text) >= 2  # both translations shown
    assert any("rnnencdec" in m.value and "no attention" in m.value for m in at.info)


def test_typing_translates_with_both_models_and_draws_the_heatmap(at):
    type_sentence(at, "a dog runs in the park")
    assert at.text[0].value == "un chien court dans le parc"
    heat = heatmaps(at)[0]
    assert len(heat["z"]) == 7 and len(heat["z"][0]) == 6  # 6 outputs + </s> by 6 source pieces
    assert all(abs(sum(row) - 1) < 1e-4 for row in heat["z"])


def test_changing_beam_size_and_word_toggle(at):
    type_sentence(at, "a dog runs in the park")
    at.slider(key="beam").set_value(1).run()
    assert not at.exception and at.text[0].value == "un chien court dans le parc"
    at.toggle(key="align_words").set_value(True).run()
    assert not at.exception


def test_stepping_through_decoding(at):
    type_sentence(at, "a dog runs in the park")
    assert at.slider(key="step").value == 1
    at.button(key="step_next").click().run()
    at.button(key="step_next").click().run()
    assert not at.exception and at.slider(key="step").value == 3
    assert any("Partial translation:** un chien court" in m.value for m in at.markdown)
    at.button(key="step_prev").click().run()
    assert at.slider(key="step").value == 2
    bars = [t for spec in charts(at) for t in spec["data"] if t["type"] == "bar" and t.get("orientation") == "h"]
    assert len(bars[0]["x"]) == 5  # top-k candidates


def test_play_runs_through_every_step(at):
    type_sentence(at, "the cat sits")
    at.button(key="step_play").click().run()
    assert not at.exception
    assert at.slider(key="step").value == at.slider(key="step").max
    assert not at.session_state["step_playing"]


def test_what_if_forces_another_token(at):
    type_sentence(at, "a dog runs in the park")
    token_box = at.selectbox(key="whatif_token")
    token_box.select(token_box.options[1]).run()
    assert not at.exception
    assert any(m.value.startswith("**What if**") for m in at.markdown)
    at.radio(key="whatif_mode").set_value("the attention").run()
    at.selectbox(key="whatif_source").select(5).run()
    assert not at.exception


def test_beam_tree_and_node_drilldown(at):
    type_sentence(at, "the cat sits")
    tree = next(spec for spec in charts(at) if any(t.get("name") == "best path" for t in spec["data"]))
    n_markers = sum(len(t["customdata"]) for t in tree["data"] if t["mode"] == "markers+text")
    node_box = at.number_input(key="beam_node_rnnsearch-tiny")
    assert node_box.max == n_markers - 1
    node_box.set_value(3).run()
    assert not at.exception
    assert any(m.value.startswith("**Hypothesis 3**") for m in at.markdown)


def test_empty_and_hostile_input(at):
    at.text_area(key="source").input("   ").run()
    assert not at.exception and "Type an English sentence" in at.info[0].value
    type_sentence(at, "<script>alert(1)</script> a dog " + "x" * 3000)
    assert any("only the first 2,000" in w.value for w in at.warning)


def _models_script():
    from viz import models_page

    models_page.render()


def test_models_page_shows_each_card(app_env):
    at = AppTest.from_function(_models_script, default_timeout=60).run()
    assert not at.exception
    assert [e.label for e in at.expander] == ["rnnencdec-tiny", "rnnsearch-tiny"]
    assert any("Architecture:** rnnsearch" in m.value for m in at.markdown)
    assert len(at.get("plotly_chart")) == 2  # training curves from each card's log
