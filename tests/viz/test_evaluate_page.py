"""AppTest runs of the Evaluate page: uploads, scores, chart spec, table, bad input."""
import gzip

import pytest
from streamlit.testing.v1 import AppTest

from ..conftest import start_app
from .test_translate_page import canvas

SRC = "a dog runs in the park\nthe small cat sits\na man eats a red ball\nchild plays on the street\n"
REF = "un chien court dans le parc\nle petit chat assis\nun homme mange une balle rouge\nenfant joue sur la rue\n"


def _script(settings):
    from viz.pages import evaluate as evaluate_page
    from viz.pages import menu

    menu.all_pages(settings)  # registers the pages it links to, as app.py does
    evaluate_page.render(settings)


@pytest.fixture
def at(checkpoint_dir, monkeypatch):
    settings = start_app(monkeypatch, "--checkpoints", checkpoint_dir, "--data-dir", "/nonexistent")  # uploads only
    return AppTest.from_function(_script, args=(settings,), default_timeout=120).run()


def upload(at, src: bytes, ref: bytes):
    at.file_uploader(key="eval_src").upload("test.en", src).run()
    at.file_uploader(key="eval_ref").upload("test.fr.gz", ref).run()
    return at


def test_without_a_built_in_set_the_page_asks_for_files_and_says_where_recorded_scores_are(at):
    assert at.radio(key="eval_source_kind").options == ["Two files (source, reference)", "One TSV/CSV file"]
    (notice,) = [i.value for i in at.info]
    assert notice.startswith("Upload both files.") and "Models page" in notice and "built-in" not in notice


def test_upload_evaluate_and_inspect(at):
    upload(at, SRC.encode(), gzip.compress(REF.encode()))
    assert not at.exception and not at.error
    at.button(key="eval_run").click().run()
    assert not at.exception, at.exception
    scores = at.dataframe[0].value  # plain dataframes are not addressable by key in AppTest
    assert list(scores["model"]) == ["rnnsearch-tiny", "rnnencdec-tiny"]
    assert scores["BLEU"].between(0, 100).all()
    assert any("nrefs:1|case:mixed" in c.value for c in at.caption)
    assert any(m.value.startswith("**Paired bootstrap**") for m in at.markdown)
    (chart,) = canvas(at, "lines")  # BLEU by length, drawn on a canvas
    assert [line["name"] for line in chart["lines"]] == ["rnnsearch-tiny", "rnnencdec-tiny"]
    assert [label for _x, label in chart["x_ticks"]] == ["1-10\nn=4"]  # one bucket holding all 4 sentences
    assert all(lo <= y <= hi for line in chart["lines"] for y, lo, hi in zip(line["y"], *line["band"]))
    table = at.dataframe[1].value
    assert len(table) == 4 and "rnnsearch-tiny coverage" in table.columns
    at.slider(key="eval_width").set_value(3).run()  # re-bucketing only, no re-translation
    assert not at.exception
    at.number_input(key="eval_row").set_value(2).run()
    assert any(t.value == "a man eats a red ball" for t in at.text)
    checks = [c.value for c in at.caption if c.value.startswith("How faithful: removing the most-attended")]
    assert len(checks) == 1  # under RNNsearch's heatmap of that sentence


def test_mismatched_files_give_one_clear_error(at):
    upload(at, SRC.encode(), "un\ndeux\n".encode())
    assert not at.exception
    assert [e.value for e in at.error] == ["line counts differ: test.en has 4 lines, test.fr.gz has 2"]


@pytest.mark.parametrize("content,message", [
    (b"\x00\x01\x02\x03binary", "NUL bytes"),
    ("caf\u00e9\n".encode("latin-1"), "not valid UTF-8"),
    (b"", "the file is empty"),
])
def test_bad_uploads(at, content, message):
    upload(at, content, REF.encode())
    assert not at.exception and message in at.error[0].value


def test_length_stress_test(at):
    upload(at, SRC.encode(), REF.encode())
    at.toggle(key="eval_stress").set_value(True).run()
    at.button(key="eval_run").click().run()
    assert not at.exception, at.exception
    summary = at.dataframe[-1].value
    assert sorted(set(summary["k"])) == [1, 2, 3, 4]


def test_too_many_lines_are_refused_before_splitting(at):
    many = "a dog\n" * 10_001
    upload(at, many.encode(), many.encode())
    assert "more than 10,000 lines" in at.error[0].value
    at.checkbox(key="eval_first").check().run()
    assert not at.error and any("first 10,000" in w.value for w in at.warning)


def test_markdown_in_uploads_is_inert():
    from viz.pages.parts.safe_text import md

    assert md("![x](http://evil/p.png) [link](http://e) $x$ <b>") == (
        "\\!\\[x\\]\\(http\\://evil/p\\.png\\) \\[link\\]\\(http\\://e\\) \\$x\\$ \\<b\\>")


def test_any_checkpoint_folder_by_path(at, checkpoint_dir, tmp_path):
    upload(at, SRC.encode(), REF.encode())
    at.text_input(key="eval_extra").input(str(tmp_path / "nothing-here")).run()
    assert not at.exception and "not a checkpoint folder" in at.error[0].value
    at.text_input(key="eval_extra").input(str(checkpoint_dir / "rnnsearch-tiny")).run()
    at.button(key="eval_run").click().run()
    assert not at.exception
    assert len(at.dataframe[0].value) == 3  # two defaults plus the folder given by path
    at.button(key="eval_cancel").click().run()
    assert "Press Evaluate" in at.caption[-1].value


def test_ablated_runs_sit_beside_the_model_and_are_tested_against_the_first(at):
    upload(at, SRC.encode(), gzip.compress(REF.encode()))
    at.multiselect(key="eval_ablate").set_value(["uniform", "last"]).run()
    at.button(key="eval_run").click().run()
    assert not at.exception, at.exception
    scores = at.dataframe[0].value
    assert list(scores["model"]) == ["rnnsearch-tiny", "rnnencdec-tiny", "rnnsearch-tiny+uniform", "rnnsearch-tiny+last"]
    (chart,) = canvas(at, "lines")
    assert [line["name"] for line in chart["lines"]] == list(scores["model"])  # one BLEU-by-length line per run
    assert sum(c.value.startswith("How faithful: removing") for c in at.caption) == 1  # the model's own weights
    assert sum(c.value.startswith("These weights were put there") for c in at.caption) == 2  # each ablation's


def test_the_test_set_faithfulness_table_ranks_methods_beside_a_random_order(at):
    upload(at, SRC.encode(), REF.encode())
    at.button(key="eval_run").click().run()
    assert not at.exception, at.exception
    at.number_input(key="eval_faith_n").set_value(3).run()
    assert not at.exception
    at.button(key="eval_faith_run").click().run()
    assert not at.exception, at.exception
    tables = [d.value for d in at.dataframe if "deletion (lower is better)" in d.value.columns]
    assert len(tables) == 2  # one per model
    search, encdec = tables
    assert list(search["method"])[-1] == "random order" and "attention α" in list(search["method"])
    assert "attention α" not in list(encdec["method"])  # RNNencdec has no attention to explain with
    deletion = [float(cell.split(" ± ")[0]) for cell in search["deletion (lower is better)"][:-1]]
    assert deletion == sorted(deletion)  # ranked, lowest deletion area first
    assert any("3 sentences" in m.value for m in at.markdown)


def test_the_downloads_are_made_only_when_clicked(at, monkeypatch):
    import viz.pages.evaluate as evaluate_page

    calls = []
    real = evaluate_page.sentence_rows
    monkeypatch.setattr(evaluate_page, "sentence_rows", lambda *args: calls.append(1) or real(*args))
    upload(at, SRC.encode(), gzip.compress(REF.encode()))
    at.button(key="eval_run").click().run()
    assert not at.exception, at.exception
    assert len(calls) == 1  # the table on screen; the CSV's copy waits for its button
    assert [b.proto.label for b in at.get("download_button")][-2:] == ["Per-sentence table (CSV)", "Length chart (HTML)"]
    assert all(b.proto.ignore_rerun for b in at.get("download_button"))  # a click reruns nothing (widgets.deferred)


def test_an_upload_a_new_session_lost_is_asked_for_again_by_name(checkpoint_dir, monkeypatch):
    """The URL marks the uploaded files; a new session (the server restarted) without them says so
    in one line, and uploading them again clears it."""
    settings = start_app(monkeypatch, "--checkpoints", checkpoint_dir, "--data-dir", "/nonexistent")
    first = AppTest.from_function(_script, args=(settings,), default_timeout=120).run()
    upload(first, SRC.encode(), REF.encode())
    assert first.query_params["uploaded"] in ("test.en, test.fr.gz", ["test.en, test.fr.gz"])
    restarted = AppTest.from_function(_script, args=(settings,), default_timeout=120)
    restarted.query_params["uploaded"] = "test.en, test.fr.gz"
    restarted.run()
    assert not restarted.exception
    assert [w.value.replace("\\", "") for w in restarted.warning] == [  # as markdown shows it
        "The server restarted, or this page moved to another server: please upload test.en, test.fr.gz again."]
    upload(restarted, SRC.encode(), REF.encode())
    assert not [w for w in restarted.warning if "upload" in w.value]


def test_a_sentence_opens_in_the_translate_page_through_a_link_with_its_reference(at, checkpoint_dir, monkeypatch):
    """The Evaluate page hands a sentence over as a link (url_state.View), never by setting the
    Translate page's widgets: the link alone restores the models, the sentence and its reference."""
    import urllib.parse

    from .test_translate_page import APP

    upload(at, SRC.encode(), gzip.compress(REF.encode()))
    at.button(key="eval_run").click().run()
    at.number_input(key="eval_row").set_value(2).run()
    assert not at.exception, at.exception
    assert not [k for k in ("source", "model_left", "reference") if k in at.session_state]  # nothing written
    (link,) = [e for e in at.get("page_link") if "Translate page" in e.proto.label]
    params = dict(urllib.parse.parse_qsl(link.proto.query_string))
    assert (params["src"], params["ref"]) == ("a man eats a red ball", "un homme mange une balle rouge")
    assert (params["left"], params["right"]) == ("rnnsearch-tiny", "rnnencdec-tiny")
    start_app(monkeypatch, "--checkpoints", checkpoint_dir)
    translate = AppTest.from_file(APP, default_timeout=120)
    translate.query_params.update(params)
    translate.run()
    assert not translate.exception, translate.exception
    assert translate.text_area(key="source").value == "a man eats a red ball"
    assert translate.selectbox(key="model_left").value == "rnnsearch-tiny"
    assert any(t.value == "un homme mange une balle rouge" for t in translate.text)  # the reference, under it
    assert translate.query_params["ref"] == "un homme mange une balle rouge"  # kept in the view's link
