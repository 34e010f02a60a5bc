"""AppTest runs of the Sentence space page with the fixture models: both maps and neighbour
tables, RNNsearch's words in context, a blank sentence, and a space rebuilt when its checkpoint
changes."""
import json

import pytest
from streamlit.testing.v1 import AppTest

from ..conftest import start_app


def _script(settings):
    from viz.pages import sentence_space

    sentence_space.render(settings)


@pytest.fixture
def own_root(tmp_path, tiny_checkpoints, monkeypatch):
    import shutil

    root = tmp_path / "checkpoints"
    for arch, path in tiny_checkpoints.items():
        shutil.copytree(path, root / f"{arch}-tiny")
    return start_app(monkeypatch, "--checkpoints", root), root


def test_both_models_place_a_training_sentence_first_among_its_neighbours(own_root, tiny_corpus):
    import gzip

    settings, _ = own_root
    sentence = gzip.decompress((tiny_corpus / "train.en.gz").read_bytes()).decode().splitlines()[4]
    at = AppTest.from_function(_script, args=(settings,), default_timeout=300).run()
    at.text_input(key="space_text").set_value(sentence).run()
    assert not at.exception and not at.info and not at.error, (at.exception, at.info, at.error)
    search_table, words, encdec_table = (d.value for d in at.dataframe)  # columns in the pickers' order
    for table in (search_table, encdec_table):
        assert table["training sentence"].iloc[0] == sentence and table["similarity"].iloc[0] >= 0.999
        assert len(table) == 10 and list(table["similarity"]) == sorted(table["similarity"], reverse=True)
    from model.decoding.translator import Translator

    search = Translator.from_checkpoint(own_root[1] / "rnnsearch-tiny")
    assert list(words["word"]) == search.src_vocab.pieces(search.source_ids(sentence)[0])  # RNNsearch only
    assert all(cell.startswith(f"{w} (1.00)") for w, cell in zip(words["word"], words["#1"]))  # each finds itself
    maps = [json.loads(c.proto.json) for c in at.get("bidi_component")]  # viz/pages/parts/canvas_charts.py
    assert len(maps) == 2 and all([t["name"] for t in m["layers"]] == ["training sentences", "nearest", "yours"]
                                  for m in maps)
    for found, table in zip(maps, (search_table, encdec_table)):  # the nearest dots are the table's sentences
        assert found["layers"][1]["texts"] == list(table["training sentence"])
        assert found["layers"][2]["texts"] == [sentence] and found["download"]["format"] == "png"


def test_a_blank_sentence_gets_a_notice_not_an_error(own_root):
    settings, _ = own_root
    at = AppTest.from_function(_script, args=(settings,), default_timeout=300).run()
    at.text_input(key="space_text").set_value("   ").run()
    assert not at.exception and not at.error
    assert [i.value for i in at.info] == ["type a sentence to place it among the training sentences"] * 2


def test_a_replaced_checkpoint_gets_a_new_space(own_root):
    from viz.serving import sentence_space as served_space

    settings, root = own_root
    first = served_space.sentence_space("rnnencdec-tiny", settings)
    assert served_space.sentence_space("rnnencdec-tiny", settings) is first  # kept for every session
    weights = root / "rnnencdec-tiny" / "model.safetensors"
    weights.write_bytes(weights.read_bytes())  # the same weights written again: a new modification time
    stamp = served_space.checkpoint_stamp(root / "rnnencdec-tiny")
    assert served_space._space(root / "rnnencdec-tiny", stamp, "rnnencdec-tiny", settings) is not first


def test_what_the_vector_keeps_is_measured_on_a_test_set(own_root, tmp_path, monkeypatch):
    from ..conftest import make_pairs

    _, root = own_root
    data = tmp_path / "data"
    data.mkdir()
    pairs = make_pairs(30, seed=11)
    (data / "test.en").write_text("\n".join(en for en, _ in pairs) + "\n")
    (data / "test.fr").write_text("\n".join(fr for _, fr in pairs) + "\n")
    settings = start_app(monkeypatch, "--checkpoints", root, "--data-dir", data)
    at = AppTest.from_function(_script, args=(settings,), default_timeout=300).run()
    assert not at.exception, at.exception
    at.button(key="space_measure").click().run()
    assert not at.exception, at.exception
    kept = at.dataframe[-1].value
    assert sorted(set(kept["model"])) == ["rnnencdec-tiny", "rnnsearch-tiny"]
    for model, rows in kept.groupby("model"):
        assert rows["sentences"].sum() == len(pairs)  # every test sentence has 3 to 8 words
        assert ((rows[["first words", "last words", "words shared"]] >= 0) & (rows[["first words", "last words",
                                                                                  "words shared"]] <= 1)).all().all()


NAMES = ["a-tiny", "b-tiny", "c-tiny"]


@pytest.mark.parametrize("params, view, notices", [
    ({}, (["a-tiny", "b-tiny"], None, 10), 0),
    ({"models": "c-tiny", "text": "a cat", "k": "3"}, (["c-tiny"], "a cat", 3), 0),
    ({"models": "c-tiny,zzz"}, (["a-tiny", "b-tiny"], None, 10), 1),  # an unknown model
    ({"models": "a-tiny,b-tiny,c-tiny"}, (["a-tiny", "b-tiny"], None, 10), 1),  # more than two
    ({"k": "0"}, (["a-tiny", "b-tiny"], None, 10), 1),
    ({"k": "21"}, (["a-tiny", "b-tiny"], None, 10), 1),
    ({"k": "<script>"}, (["a-tiny", "b-tiny"], None, 10), 1),
    ({"text": "x" * 2001}, (["a-tiny", "b-tiny"], None, 10), 1),
    ({"text": "a\x00b"}, (["a-tiny", "b-tiny"], None, 10), 1),
])
def test_a_link_is_checked_against_what_the_server_offers(params, view, notices):
    from viz.pages.sentence_space import EXAMPLE, parse_params

    (models, text, k), told = parse_params(params, NAMES, ["a-tiny", "b-tiny"])
    assert (models, text, k) == (view[0], view[1] or EXAMPLE, view[2]) and len(told) == notices
    assert all("<script>" not in t for t in told)


def test_a_link_reproduces_the_view(own_root):
    settings, _ = own_root
    at = AppTest.from_function(_script, args=(settings,), default_timeout=300)
    at.query_params.update({"models": "rnnencdec-tiny", "text": "the small cat", "k": "4"})
    at.run()
    assert not at.exception, at.exception
    assert at.multiselect(key="space_models").value == ["rnnencdec-tiny"]
    assert at.text_input(key="space_text").value == "the small cat" and at.slider(key="space_k").value == 4
    assert len(at.dataframe[0].value) == 4
    at.slider(key="space_k").set_value(6).run()
    assert at.query_params["k"] == "6" and at.query_params["text"] == "the small cat"


@pytest.mark.first_paint
def test_a_new_visitor_gets_the_maps_at_once_and_the_tables_in_the_next_run(own_root):
    """The maps need no plotly, so they come with the page's text; the tables' grid waits for the
    browser's first paint (viz/pages/parts/first_paint.py)."""
    settings, _ = own_root

    def script(settings):
        from viz.pages import sentence_space
        from viz.pages.parts import first_paint

        first_paint.start_run()
        sentence_space.render(settings)
        first_paint.probe_ui()

    at = AppTest.from_function(script, args=(settings,), default_timeout=300).run()
    assert not at.exception, at.exception
    maps = [c for c in at.get("bidi_component") if c.proto.component_name.endswith("canvas_chart")]
    assert len(maps) == 2 and not at.dataframe
    assert [c.value for c in at.caption].count("Drawing the tables...") == 2
    at.run()  # the run the probe asks for
    assert not at.exception, at.exception
    assert len(at.dataframe) == 3 and "Drawing the tables..." not in [c.value for c in at.caption]
