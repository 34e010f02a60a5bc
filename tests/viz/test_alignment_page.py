"""AppTest runs of the Alignment page with the tiny models: a gold set from a folder and from
uploads, the AER table, the per-sentence table, the answer-key heatmap, and bad files."""
import json

import pytest
from streamlit.testing.v1 import AppTest

from ..conftest import start_app

EN = "a dog runs\nthe small cat\nthe red ball\n"
FR = "un chien court\nle petit chat\nla balle rouge\n"
WA = "1 1 1 S\n1 2 2 S\n1 3 3 S\n2 1 1 S\n2 2 2 P\n2 3 3 S\n3 1 1 S\n3 2 3 S\n3 3 2 S\n"


def _script(settings):
    from viz.pages import alignment as alignment_page

    alignment_page.render(settings)


@pytest.fixture
def gold_folder(tmp_path, checkpoint_dir, monkeypatch):
    """The app started with --align-dir at a folder holding one gold set; its AppSettings."""
    for suffix, text in ((".en", EN), (".fr", FR), (".wa", WA)):
        (tmp_path / f"toy{suffix}").write_text(text)
    return start_app(monkeypatch, "--checkpoints", checkpoint_dir, "--align-dir", tmp_path)


def heatmap_traces(at):
    return [json.loads(c.proto.spec)["data"] for c in at.get("plotly_chart")]


def test_a_built_in_gold_set_is_measured_and_drawn_with_its_answer_key(gold_folder):
    at = AppTest.from_function(_script, args=(gold_folder,), default_timeout=120).run()
    assert not at.exception, at.exception
    assert at.selectbox(key="align_builtin").value == "toy"
    at.multiselect(key="align_methods").set_value(["attention", "saliency", "diagonal"]).run()
    at.button(key="align_run").click().run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    assert list(zip(table["model"], table["method"])) == [
        ("rnnsearch-tiny", "attention"), ("rnnsearch-tiny", "saliency"), ("rnnencdec-tiny", "saliency"),
        ("(baseline)", "diagonal")]
    assert table["AER"].between(0, 1).all() and (table["sentences"] == 3).all()
    diagonal = table[table["method"] == "diagonal"].iloc[0]
    # by hand: the diagonal hits 3, 2 and 1 sure links and 3, 3 and 1 possible ones of 8 sure, with 9 links
    assert diagonal["AER"] == pytest.approx(1 - (3 + 2 + 1 + 3 + 3 + 1) / (9 + 8), abs=1e-3)
    sentences = at.dataframe[1].value
    assert sorted(sentences["sentence"]) == [1, 2, 3] and list(sentences["AER"]) == sorted(sentences["AER"], reverse=True)
    (traces,) = heatmap_traces(at)
    names = [t.get("name") for t in traces]
    assert traces[0]["type"] == "heatmap" and names[1:] == ["gold: sure", "gold: possible", "picked"]
    first = at.number_input(key="align_sentence").value - 1
    sure = {(x, y) for x, y in zip(traces[1]["x"], traces[1]["y"])}
    gold = [{(int(e) - 1, int(f) - 1) for s, e, f, k in (line.split() for line in WA.splitlines())
             if int(s) == first + 1 and k == "S"}]
    assert sure == gold[0]


def test_uploaded_files_and_a_bad_links_file(gold_folder):
    at = AppTest.from_function(_script, args=(gold_folder,), default_timeout=120).run()
    at.radio(key="align_source").set_value("Upload three files").run()
    at.file_uploader(key="align_src").upload("mine.en", EN.encode()).run()
    at.file_uploader(key="align_tgt").upload("mine.fr", FR.encode()).run()
    at.file_uploader(key="align_links").upload("mine.align", b"0-0 1-1 2-2\n0-0 1?1 2-2\n0-0 1-2 2-1\n").run()
    at.multiselect(key="align_methods").set_value(["diagonal"]).run()
    at.button(key="align_run").click().run()
    assert not at.exception, at.exception
    assert list(at.dataframe[0].value["method"]) == ["diagonal"]
    at.file_uploader(key="align_links").upload("bad.wa", b"1 9 1 S\n").run()
    assert not at.exception
    assert [e.value for e in at.error] == [r"bad\.wa, line 1\: position 9\-1 is past the sentence \(3 source and 3 target words\)"]


@pytest.mark.parametrize("english, links, message", [
    (b"\x00\x01\x02binary", b"0-0\n", "mine.en: contains NUL bytes"),
    (b"", b"", "line counts differ"),  # an empty English file against three French lines
    ("é".encode("latin-1") + b"\n" * 3, b"0-0\n" * 3, "mine.en"),  # not UTF-8
])
def test_bad_uploads_get_one_clear_error_naming_the_users_file(gold_folder, english, links, message):
    at = AppTest.from_function(_script, args=(gold_folder,), default_timeout=120).run()
    at.radio(key="align_source").set_value("Upload three files").run()
    at.file_uploader(key="align_src").upload("mine.en", english).run()
    at.file_uploader(key="align_tgt").upload("mine.fr", FR.encode()).run()
    at.file_uploader(key="align_links").upload("mine.align", links).run()
    assert not at.exception, at.exception
    (error,) = [e.value.replace("\\", "") for e in at.error]
    assert message in error and "/tmp" not in error


def test_without_gold_sets_the_page_offers_uploads_and_names_the_flag(checkpoint_dir, tmp_path, monkeypatch):
    settings = start_app(monkeypatch, "--checkpoints", checkpoint_dir, "--align-dir", tmp_path / "no-gold")
    at = AppTest.from_function(_script, args=(settings,), default_timeout=120).run()
    assert not at.exception, at.exception
    assert at.radio(key="align_source").options == ["Upload three files"]
    (notice,) = [i.value for i in at.info]
    assert "--align-dir DIR" in notice
