"""AppTest runs of the Translate page against tiny checkpoints."""
import json
import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ..conftest import open_tab, start_app

APP = str(Path(__file__).resolve().parents[2] / "viz" / "pages" / "main.py")


def charts(at) -> list[dict]:
    """The plotly figure specs the page emitted (parsed from the element protos)."""
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def canvas(at, kind=None) -> list[dict]:
    """The data of the charts the page drew on a canvas (viz/pages/parts/canvas_charts.py), of ``kind``."""
    from viz.pages.parts.canvas_charts import NAME

    found = [json.loads(el.proto.json) for el in at.get("bidi_component") if el.proto.component_name == NAME]
    return [data for data in found if kind is None or data["kind"] == kind]


def heatmaps(at) -> list[dict]:
    """Every heatmap's cells (``z``): the Alignment tab's, drawn on a canvas, then plotly's."""
    return canvas(at, "matrix") + [trace for spec in charts(at) for trace in spec["data"] if trace["type"] == "heatmap"]


@pytest.fixture
def at(app_env):
    return AppTest.from_file(APP, default_timeout=120).run()


def type_sentence(at, text):
    at.text_area(key="source").input(text).run()
    assert not at.exception, at.exception
    return at


def test_first_load_translates_an_example_and_introduces_the_paper(at):
    assert not at.exception
    assert at.text_area(key="source").value == "I would like a cup of coffee, please."
    assert len(at.text) >= 2  # both translations shown
    assert any("rnnencdec" in m.value and "no attention" in m.value for m in at.info)
    assert at.title[0].value == "Inside attention NMT"
    assert any("arXiv 1409.0473" in m.value for m in at.markdown)
    assert [link.proto.page for link in at.get("page_link")][0].endswith("paper")


def test_typing_translates_with_both_models_and_draws_the_heatmap(at):
    type_sentence(at, "a dog runs in the park")
    assert at.text[0].value == "un chien court dans le parc"
    heat = heatmaps(at)[0]
    assert len(heat["z"]) == 7 and len(heat["z"][0]) == 6  # 6 outputs + </s> by 6 source pieces
    assert all(abs(sum(row) - 1) < 1e-4 for row in heat["z"])


def test_each_attention_heatmap_says_how_faithful_it_is_for_this_sentence(at, checkpoint_dir):
    from model.decoding.search import SearchConfig
    from model.decoding.translator import Translator
    from model.explaining.faithfulness import comprehensiveness_check

    type_sentence(at, "a dog runs in the park")
    notes = [c.value for c in at.caption if c.value.startswith("**How faithful is this picture?**")]
    assert len(notes) == 1  # RNNsearch's heatmap; RNNencdec has none
    translator = Translator.from_checkpoint(checkpoint_dir / "rnnsearch-tiny")
    trace = translator.translate(["a dog runs in the park"], SearchConfig(beam=5))[0]  # the page's default search
    check = comprehensiveness_check(translator.model, trace.source_ids, trace.target_ids, trace.attention.sum(0))
    assert f"by {check.method:.2f} per token" in notes[0] and f"lowers it by {check.random:.2f}." in notes[0]
    assert ("more than chance" in notes[0]) == check.beats_random
    open_tab(at, "Step by step")
    (line,) = [c.value for c in at.caption if c.value.startswith("How faithful: removing the most-attended")]
    assert line.endswith("(more than chance)." if check.beats_random else "(no better than chance).")


def test_changing_beam_size_and_word_toggle(at):
    type_sentence(at, "a dog runs in the park")
    at.slider(key="beam").set_value(1).run()
    assert not at.exception and at.text[0].value == "un chien court dans le parc"
    pieces = heatmaps(at)[0]
    at.toggle(key="align_words").set_value(True).run()
    assert not at.exception
    (words,) = canvas(at, "matrix")
    assert words["x_labels"] == ["a", "dog", "runs", "in", "the", "park"]
    assert len(words["z"]) <= len(pieces["z"])  # output pieces merged into words
    assert all(abs(sum(row) - 1) < 1e-4 for row in words["z"])


def test_eflomal_links_overlay_the_word_heatmap(at):
    pytest.importorskip("eflomal")
    type_sentence(at, "a dog runs in the park")
    at.toggle(key="align_statistical").set_value(True).run()
    assert not at.exception, at.exception
    (spec,) = canvas(at, "matrix")
    assert spec["x_labels"] == ["a", "dog", "runs", "in", "the", "park"]  # whole words
    (links,) = [t for t in spec["links"] if t["name"] == "eflomal links"]
    rows, cols = len(spec["z"]), len(spec["z"][0])
    assert links["cells"] and all(0 <= x < cols and 0 <= y < rows - 1 for x, y in links["cells"])
    # the tiny corpus is word for word, and this sentence too: eflomal links each word to its translation
    assert sorted(map(tuple, links["cells"])) == [(i, i) for i in range(6)]


def test_the_downloads_tab_offers_the_report_trace_and_alignment(at):
    type_sentence(at, "a dog runs in the park")
    open_tab(at, "Downloads")
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels[0].startswith("Report of this translation")
    assert labels[1:4] == [f"rnnsearch-tiny: heatmap ({kind})" for kind in ("PDF", "SVG", "PNG")]  # RNNsearch only
    assert len(labels) == 1 + 3 + 2 + 1  # report, heatmap files, 2 traces, 1 Pharaoh
    # a click downloads without rerunning the page: a rerun beside the file's request could drop the file
    assert all(b.proto.ignore_rerun for b in at.get("download_button"))


def test_the_downloads_tab_makes_no_file_until_one_is_clicked(at, monkeypatch):
    from viz import html_report
    from viz.pages.translate import downloads_tab

    made = []
    monkeypatch.setattr(html_report, "report_html", lambda *args: made.append("report") or "")
    monkeypatch.setattr(downloads_tab, "print_figure", lambda *args: made.append("figure") or b"")
    type_sentence(at, "a dog runs in the park")
    open_tab(at, "Downloads")
    type_sentence(at, "the cat sits")  # a Ctrl+Enter on this tab
    assert len(at.get("download_button")) == 7 and made == []


def test_a_file_made_on_click_is_in_the_pages_language():
    import threading

    from viz import i18n
    from viz.pages.parts import widgets

    with i18n.using("ar"):
        make = widgets.deferred(lambda word: i18n._(word), "Translate")
    found = []
    clicked = threading.Thread(target=lambda: found.append(make()))  # Streamlit runs it on a thread of its own
    clicked.start()
    clicked.join()
    assert found == [i18n.catalog("ar").gettext("Translate")] and found[0] != "Translate"


def test_stepping_through_decoding(at):
    type_sentence(at, "a dog runs in the park")
    open_tab(at, "Step by step")
    assert at.slider(key="step").value == 1
    at.button(key="step_next").click().run()
    at.button(key="step_next").click().run()
    assert not at.exception and at.slider(key="step").value == 3
    assert any("Partial translation:** un chien court" in m.value for m in at.markdown)
    at.button(key="step_prev").click().run()
    assert at.slider(key="step").value == 2
    (bars,) = [b for b in canvas(at, "bars") if b["horizontal"]]
    assert len(bars["values"]) == 5 and bars["value_range"] == [0.0, 1.0]  # top-k candidates


def test_play_advances_one_step_per_tick_and_stops_at_the_end(at):
    """Each run stands for one tick of the step view's timer (AppTest has no timers)."""
    type_sentence(at, "the cat sits")
    open_tab(at, "Step by step")
    at.button(key="step_play").click().run()
    n = int(at.slider(key="step").max)
    shown = [at.slider(key="step").value]
    while at.session_state["step_playing"] and len(shown) < 3 * n:
        at.run()
        shown.append(at.slider(key="step").value)
    assert not at.exception and shown == list(range(1, n + 1)) and not at.session_state["step_playing"]


def test_what_if_forces_another_token(at):
    type_sentence(at, "a dog runs in the park")
    open_tab(at, "What if")
    token_box = at.selectbox(key="whatif_token")
    forced = token_box.options[1]
    token_box.select(forced).run()
    assert not at.exception
    assert any(m.value.startswith("**What if**") for m in at.markdown)
    original, changed = at.text[-2].value, at.text[-1].value
    word = forced.split(" (p=")[0].replace("\u2581", "")
    assert changed.split()[0].startswith(word) and changed != original  # step 1 now writes the forced token
    at.radio(key="whatif_mode").set_value("the attention").run()
    at.selectbox(key="whatif_source").select(5).run()
    assert not at.exception
    what_if = heatmaps(at)[-1]
    assert what_if["z"][0][5] == 1.0 and sum(what_if["z"][0]) == 1.0  # step 1 attended to piece 5 only


def checks(at) -> list[str]:
    return [c.value for c in at.caption if c.value.startswith("How faithful: removing the most-attended")]


def test_what_if_heatmaps_say_how_faithful_they_are_unless_their_weights_were_put_there(at):
    type_sentence(at, "a dog runs in the park")
    open_tab(at, "What if")
    token_box = at.selectbox(key="whatif_token")
    token_box.select(token_box.options[1]).run()
    assert not at.exception and len(checks(at)) == 2  # the decode's and the forced token's, each learnt
    at.radio(key="whatif_mode").set_value("the attention").run()
    assert not at.exception and len(checks(at)) == 1  # the original only
    assert any(c.value == "Not checked for faithfulness: at step 1 these weights were put there, not learnt."
               for c in at.caption)


def test_beam_tree_and_node_drilldown(at):
    type_sentence(at, "the cat sits")
    open_tab(at, "Beam tree")
    (tree,) = canvas(at, "tree")  # drawn on a canvas: one node per hypothesis, the best path marked
    assert "best" in tree["statuses"] and tree["ids"] == list(range(len(tree["ids"])))
    node_box = at.number_input(key="beam_node_rnnsearch-tiny")
    assert node_box.max == len(tree["ids"]) - 1
    node_box.set_value(3).run()
    assert not at.exception
    assert any(m.value.startswith("**Hypothesis 3**") for m in at.markdown)


def test_a_beam_hypothesis_heatmap_says_how_faithful_it_is(at, checkpoint_dir):
    """The check re-scores the hypothesis itself (a prefix of an output, perhaps without </s>)."""
    import numpy as np

    from model.decoding.search import SearchConfig
    from model.decoding.translator import Translator
    from model.explaining.faithfulness import heatmap_check

    type_sentence(at, "the cat sits")
    open_tab(at, "Beam tree")
    at.number_input(key="beam_node_rnnsearch-tiny").set_value(3).run()
    assert not at.exception
    translator = Translator.from_checkpoint(checkpoint_dir / "rnnsearch-tiny")
    trace = translator.translate(["the cat sits"], SearchConfig(beam=5))[0]  # the page's default search
    path = trace.path(3)[1:]
    check = heatmap_check(translator.model, trace.source_ids, [n.token_id for n in path],
                          np.stack([n.attention for n in path]))
    (line,) = checks(at)
    assert f"costs the output {check.method:.2f} of" in line and f"cost {check.random:.2f} (" in line


def how_to_read(at):
    """The open tab's "How to read this" expander (only the open tab is drawn)."""
    (how,) = [e for e in at.expander if e.label == "How to read this"]
    return how


def test_each_tab_explains_itself_and_collapses_after_the_first_visit(at):
    assert how_to_read(at).proto.expanded  # the first load opens the Alignment tab
    for label in ("Step by step", "Beam tree", "What if", "Explanations", "Downloads"):
        assert how_to_read(open_tab(at, label)).proto.expanded, label
    assert not how_to_read(open_tab(at, "Alignment")).proto.expanded


def test_the_tabs_with_widgets_of_their_own_rerun_alone(at, monkeypatch):
    """A toggle or pick inside these tabs reruns the tab (a fragment), not the page: the
    translations, pickers and sidebar are not sent again."""
    import streamlit

    from viz.pages.translate import tabs

    real, made = streamlit.fragment, []
    monkeypatch.setattr(streamlit, "fragment", lambda fn=None, **kw: made.append(fn.__name__) or real(fn, **kw))
    for slug, label in tabs.LABELS.items():
        made.clear()
        open_tab(at, label)
        expected = ["<lambda>"] if slug in tabs.ALONE else ["step_view"] if slug == "steps" else []
        assert made == expected, label  # the tab's whole view as one fragment; the step view is its own
    assert set(tabs.ALONE) == set(tabs.LABELS) - {"steps", "downloads"}


def test_only_the_open_tab_computes(app_env, monkeypatch):
    """Rendering the Alignment tab runs no explanation and no what-if decode; opening
    Explanations explains each model's output once by each default method that applies to it."""
    import viz.serving.explanations
    from model.decoding.translator import Translator

    calls = {"saliency": 0, "what-if": 0}
    saliency, translate = viz.serving.explanations.explain, Translator.translate

    def counted_saliency(*args, **kwargs):
        calls["saliency"] += 1
        return saliency(*args, **kwargs)

    def counted_translate(self, sentences, cfg, *args, **kwargs):
        calls["what-if"] += kwargs.get("prefixes") is not None or kwargs.get("attend") is not None
        return translate(self, sentences, cfg, *args, **kwargs)

    monkeypatch.setattr(viz.serving.explanations, "explain", counted_saliency)
    monkeypatch.setattr(Translator, "translate", counted_translate)
    at = AppTest.from_file(APP, default_timeout=120).run()
    type_sentence(at, "a small dog sits on the red ball")
    assert heatmaps(at) and calls == {"saliency": 0, "what-if": 0}
    open_tab(at, "Explanations")
    # RNNsearch: attention, norm-weighted attention, gradient x input, occlusion; RNNencdec: the last two
    assert calls == {"saliency": 6, "what-if": 0}


def test_empty_and_hostile_input(at):
    at.text_area(key="source").input("   ").run()
    assert not at.exception and "Type an English sentence" in at.info[0].value
    type_sentence(at, "<script>alert(1)</script> a dog " + "x" * 3000)
    assert any("only the first 2,000" in w.value for w in at.warning)


def test_a_link_reproduces_the_view(app_env):
    """State -> URL -> a fresh session on that URL shows the same view."""
    first = AppTest.from_file(APP, default_timeout=120).run()
    type_sentence(first, "the small cat sits")
    first.slider(key="beam").set_value(3).run()
    first.slider(key="lp").set_value(0.6).run()
    open_tab(first, "Step by step")
    first.button(key="step_next").click().run()
    params = dict(first.query_params)
    assert params == {"src": "the small cat sits", "beam": "3", "lp": "0.6", "tab": "steps", "step": "2"}
    code = next(c.value for c in first.code if "src=the+small+cat+sits" in c.value)
    assert "beam=3" in code and "tab=steps" in code
    second = AppTest.from_file(APP, default_timeout=120)
    for key, value in params.items():
        second.query_params[key] = value
    second.run()
    assert not second.exception and not second.warning
    assert (second.text_area(key="source").value, second.slider(key="beam").value, second.slider(key="lp").value,
            second.slider(key="step").value) == ("the small cat sits", 3, 0.6, 2)
    assert [t.value for t in second.text] == [t.value for t in first.text]


@pytest.mark.parametrize("params,bad", [
    ({"beam": "99"}, "beam"), ({"beam": "five"}, "beam"), ({"lp": "nan"}, "lp"), ({"lp": "-1"}, "lp"),
    ({"left": "../../etc/passwd"}, "left"), ({"right": "no-such-model"}, "right"), ({"tab": "<script>"}, "tab"),
    ({"step": "0"}, "step"), ({"src": "x" * 5000}, "src"), ({"src": "a\x00b"}, "src"),
])
def test_hostile_link_parameters_fall_back_to_defaults_with_a_notice(app_env, params, bad):
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception
    assert [w.value for w in at.warning if "link" in w.value] == \
        [f"The link's {bad!r} value was not usable; showing the default instead."]
    assert at.slider(key="beam").value == 5 and at.text_area(key="source").value.startswith("I would like")


@pytest.fixture
def two_pairs(tiny_checkpoints, tmp_path, monkeypatch):
    """A checkpoint root with a caption pair and an everyday pair (cards say which)."""
    root = tmp_path / "checkpoints"
    for pair, label in (("captions", "image captions"), ("everyday", "everyday English")):
        for arch, path in tiny_checkpoints.items():
            folder = root / f"{pair[:3]}-{arch}"
            shutil.copytree(path, folder)
            card = json.loads((folder / "card.json").read_text())
            (folder / "card.json").write_text(json.dumps({**card, "arch": arch, "pair": pair, "trained_on": label}))
    start_app(monkeypatch, "--checkpoints", root)
    return root


def test_the_everyday_pair_opens_by_default_and_pickers_say_what_models_learned_from(two_pairs):
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert not at.exception
    assert (at.selectbox(key="model_left").value, at.selectbox(key="model_right").value) == \
        ("eve-rnnsearch", "eve-rnnencdec")
    assert "cap-rnnsearch · image captions" in at.selectbox(key="model_left").options
    assert any("everyday English" in m.value for m in at.markdown)


def test_a_link_followed_within_a_session_replaces_the_view(at):
    """A session already on the page follows a link (as the Paper page's links do): the link's
    values win, what it does not name keeps the session's value."""
    type_sentence(at, "a dog runs in the park")
    at.slider(key="beam").set_value(3).run()
    at.query_params["src"] = "the small cat sits"
    at.query_params["tab"] = "steps"
    at.query_params["step"] = "2"
    at.run()
    assert not at.exception
    assert at.text_area(key="source").value == "the small cat sits" and at.slider(key="step").value == 2
    assert at.slider(key="beam").value == 3  # not in the link: kept
    at.slider(key="beam").set_value(4).run()  # the page's own URL writes don't reapply the link
    assert at.text_area(key="source").value == "the small cat sits" and at.slider(key="beam").value == 4


def test_the_first_run_keeps_a_sentence_another_page_sent(app_env):
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["source"] = "the big blue dog sits"  # as the Evaluate page's "Open in the Translate page"
    at.run()
    assert not at.exception and at.text_area(key="source").value == "the big blue dog sits"


def test_a_link_carries_the_chosen_models(two_pairs):
    """Models other than the default pair travel in the link and come back in a fresh session."""
    first = AppTest.from_file(APP, default_timeout=120).run()
    first.selectbox(key="model_left").set_value("cap-rnnsearch").run()
    first.selectbox(key="model_right").set_value("eve-rnnsearch").run()
    assert not first.exception, first.exception
    params = dict(first.query_params)
    assert (params["left"], params["right"]) == ("cap-rnnsearch", "eve-rnnsearch")
    second = AppTest.from_file(APP, default_timeout=120)
    for key, value in params.items():
        second.query_params[key] = value
    second.run()
    assert not second.exception and not second.warning
    assert (second.selectbox(key="model_left").value, second.selectbox(key="model_right").value) == \
        ("cap-rnnsearch", "eve-rnnsearch")


def test_the_explanations_tab_shows_each_methods_faithfulness_for_both_models(at):
    type_sentence(at, "a small dog sits on the red ball")
    open_tab(at, "Explanations")
    tables = [t.value for t in at.dataframe]
    assert len(tables) == 2  # one faithfulness table per model
    for table in tables:
        assert table.iloc[-1, 0] == "random order"  # the yardstick, last
        deletion = table.columns[2]
        assert list(table[deletion][:-1]) == sorted(table[deletion][:-1])  # methods ranked by deletion area
    search, encdec = tables
    assert "attention α" in set(search.iloc[:, 0]) and "attention α" not in set(encdec.iloc[:, 0])
    bars = canvas(at, "stacks")  # each output token's source and prefix shares
    assert len(bars) == 2 and all(abs(a + b - 1) < 1e-3 for bar in bars for a, b in zip(*bar["values"]))
    assert not charts(at)  # the tab loads no plotly
    for name, table in (("rnnsearch-tiny", search), ("rnnencdec-tiny", encdec)):  # each model's curves
        panels = [p for p in canvas(at, "lines") if p["title"].startswith(name)]
        assert [p["subtitle"].split(":")[0] for p in panels] == ["deletion", "insertion"]
        for panel in panels:  # every method in the table, and the random order
            assert [line["name"] for line in panel["lines"]][-1] == "random order"
            assert {line["name"] for line in panel["lines"]} == set(table.iloc[:, 0])


def test_a_contrast_explains_why_one_word_and_not_another(at):
    type_sentence(at, "a small dog sits")
    open_tab(at, "Explanations")
    before = at.dataframe[0].value
    at.selectbox(key="explain_step").set_value(0).run()
    other = at.selectbox(key="explain_other").options[1]
    at.selectbox(key="explain_other").select(other).run()
    assert not at.exception, at.exception
    after = at.dataframe[0].value
    assert not before.equals(after)  # the first model's scores now explain a difference of log-probabilities


def test_an_old_link_to_the_saliency_tab_opens_explanations(app_env):
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["tab"] = "saliency"
    at.run()
    assert not at.exception and at.session_state["tab"] == "Explanations"


@pytest.mark.first_paint
def test_a_sessions_first_run_draws_the_controls_and_translations_then_the_charts(app_env):
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert not at.exception, at.exception
    assert at.text_area(key="source").value and len(at.text) == 2  # the text box and both translations
    assert charts(at) == canvas(at) == [] and not at.tabs  # no chart, no tab yet: the text box comes first
    assert any(c.value == "Drawing the charts..." for c in at.caption)
    at.run()  # the rerun the browser's probe asks for (or any later run, if its script never ran)
    assert not at.exception, at.exception
    assert heatmaps(at) and at.tabs
    assert not any(c.value == "Drawing the charts..." for c in at.caption)


@pytest.mark.first_paint
def test_the_browsers_report_of_its_first_paint_lets_the_charts_draw(app_env):
    from viz.pages.parts import first_paint

    at = AppTest.from_file(APP, default_timeout=120).run()
    assert charts(at) == []
    at.session_state[first_paint.DRAWN] = True  # what the probe's callback sets
    at.session_state[first_paint.FIRST_RUN_SEEN] = False  # as if this were the session's first run again
    at.run()
    assert heatmaps(at)


@pytest.mark.first_paint
def test_a_first_run_without_charts_holds_nothing_back(app_env):
    from viz.pages.parts import first_paint

    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["src"] = ""  # an empty text box: nothing to translate, no chart
    at.run()
    assert not at.exception, at.exception
    assert not any(c.value == "Drawing the charts..." for c in at.caption)
    assert first_paint.HELD not in at.session_state


@pytest.mark.first_paint
def test_a_new_translation_shows_before_its_faithfulness_check(app_env, monkeypatch):
    """The check under a new heatmap is computed at the end of the same run, once everything else
    is drawn (the browser shows a run's elements as they come), and kept for the next time."""
    import streamlit as st

    from viz.pages.parts import first_paint
    from viz.serving import explanations
    from viz.serving.shared_results import ResultStore

    store = ResultStore(16)  # this test's own: the process's may hold these sentences' checks
    monkeypatch.setattr(explanations, "result_store", lambda kind: store)
    checked, check = [], explanations.heatmap_check

    def recording(*args, **kwargs):
        checked.append(st.session_state.get(first_paint.WHOLE_RUN))  # False: the whole run has ended
        return check(*args, **kwargs)

    monkeypatch.setattr(explanations, "heatmap_check", recording)
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.run()  # the charts' rerun: the tabs are drawn
    at.run()
    assert not at.exception, at.exception
    checked.clear()
    at.text_area(key="source").input("the small cat sits").run()  # Ctrl+Enter
    assert not at.exception, at.exception
    assert heatmaps(at) and at.text[0].value
    captions = [c.value for c in at.caption]
    assert "Measuring how faithful this picture is..." not in captions  # replaced in the same run ...
    assert any(c.startswith("**How faithful") for c in captions)
    assert checked and not any(checked)  # ... computed once the rest of the run was drawn
    at.text_area(key="source").input("a dog runs in the park").run()
    checked.clear()
    at.text_area(key="source").input("the small cat sits").run()  # seen before: its check is kept
    assert any(c.value.startswith("**How faithful") for c in at.caption) and not checked


def test_a_model_whose_folder_goes_away_while_the_page_is_open_is_replaced_with_one_clear_line(
        tiny_checkpoints, tmp_path, monkeypatch):
    root = tmp_path / "checkpoints"
    for arch, path in tiny_checkpoints.items():
        shutil.copytree(path, root / f"{arch}-tiny")
    shutil.copytree(tiny_checkpoints["rnnsearch"], root / "extra-tiny")
    start_app(monkeypatch, "--checkpoints", root)
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.sidebar.selectbox(key="model_left").select("rnnsearch-tiny")
    at.sidebar.selectbox(key="model_right").select("extra-tiny").run()
    assert not at.exception and not at.warning
    shutil.rmtree(root / "extra-tiny")  # removed while served
    type_sentence(at, "a dog runs in the park")
    assert at.session_state["model_right"] != "extra-tiny"
    gone = [w.value for w in at.warning if "no longer on this server" in w.value]
    assert len(gone) == 1 and "extra" in gone[0], [w.value for w in at.warning]
    assert at.text[0].value == "un chien court dans le parc"  # the other model still translates
    at.run()  # a later run (the browser's rerun for what the first one held back) keeps the line
    assert [w.value for w in at.warning if "no longer on this server" in w.value] == gone
    at.sidebar.selectbox(key="model_right").select("rnnsearch-tiny").run()  # the student moves on
    assert not [w.value for w in at.warning if "no longer on this server" in w.value]


def test_the_teacher_forcing_tab_offers_the_reference_written_for_an_example(at):
    open_tab(at, "Teacher forcing")
    (notice,) = [i.value for i in at.info if "written for this example" in i.value]
    assert "Je voudrais une tasse de café, s'il vous plaît" in notice and not at.dataframe  # (its period escaped)
    at.button(key="tf_use_example").click().run()
    assert not at.exception, at.exception
    assert at.text_input(key="tf_reference").value == "Je voudrais une tasse de café, s'il vous plaît."
    assert len(at.dataframe) == 1  # the step-by-step table of the two prefixes
    type_sentence(at.text_input(key="tf_reference").set_value("").run(), "a dog runs in the park")
    # a sentence of the user's own has no reference to offer
    assert not [i for i in at.info if "written for this example" in i.value]
    assert not [b for b in at.button if b.key == "tf_use_example"]
