"""The language-pair choice: pickers list the chosen pair's models only, a pair with one model
or none, examples per source language, links that carry a pair, and hostile pair values."""
import json
import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from viz.pages.parts.examples import examples, reordering

from ..conftest import start_app

APP = str(Path(__file__).resolve().parents[2] / "viz" / "pages" / "main.py")


@pytest.fixture
def two_directions(tiny_checkpoints, tmp_path, monkeypatch):
    """The tiny en-fr pair, plus one model whose config says it translates French into English
    (the pages read directions from configs; what it outputs does not matter here)."""
    root = tmp_path / "checkpoints"
    for arch, path in tiny_checkpoints.items():
        shutil.copytree(path, root / f"{arch}-tiny")
    folder = root / "fren-rnnsearch"
    shutil.copytree(tiny_checkpoints["rnnsearch"], folder)
    config = json.loads((folder / "config.json").read_text())
    config["train"].update(src_lang="fr", tgt_lang="en")
    (folder / "config.json").write_text(json.dumps(config))
    start_app(monkeypatch, "--checkpoints", root)
    return root


def test_the_pickers_list_the_chosen_pairs_models_and_one_model_decodes_alone(two_directions):
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert not at.exception, at.exception
    direction = at.selectbox(key="direction")
    assert direction.value == "en-fr" and direction.options == ["English → French", "French → English"]
    assert sorted(o.split(" · ")[0] for o in at.selectbox(key="model_left").options) == ["rnnencdec-tiny",
                                                                                         "rnnsearch-tiny"]
    direction.set_value("fr-en").run()
    assert not at.exception, at.exception
    assert [o.split(" · ")[0] for o in at.selectbox(key="model_left").options] == ["fren-rnnsearch"]
    assert at.text_area(key="source").label == "French sentence"
    assert at.text_area(key="source").value == examples("fr")[0][1]  # the pair's own first example
    assert at.query_params["pair"] == "fr-en"


def test_a_link_with_a_pair_round_trips_and_a_hostile_pair_falls_back(two_directions):
    first = AppTest.from_file(APP, default_timeout=120)
    first.query_params["pair"] = "fr-en"
    first.run()
    assert not first.exception and first.selectbox(key="direction").value == "fr-en"
    params = dict(first.query_params)
    second = AppTest.from_file(APP, default_timeout=120)
    for key, value in params.items():
        second.query_params[key] = value
    second.run()
    assert second.selectbox(key="direction").value == "fr-en" and not second.warning
    for hostile in ("de-en", "<script>alert(1)</script>", "x" * 5000):
        at = AppTest.from_file(APP, default_timeout=120)
        at.query_params["pair"] = hostile
        at.run()
        assert not at.exception and at.selectbox(key="direction").value == "en-fr"
        (notice,) = [w.value for w in at.warning if "language pair" in w.value]
        assert "showing en\\-fr instead" in notice and len(notice) < 200 and "<script>" not in notice  # escaped


def test_a_server_without_models_for_any_pair_says_so(tmp_path, monkeypatch):
    (tmp_path / "empty").mkdir()
    start_app(monkeypatch, "--checkpoints", tmp_path / "empty")
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert not at.exception and at.error


@pytest.mark.parametrize("lang, reorder_word", [("en", "adjective"), ("fr", "adjective"), ("de", "verb")])
def test_every_source_language_has_examples_with_reorderings(lang, reorder_word):
    kinds = [kind for kind, _ in examples(lang)]
    assert len(kinds) >= 5 and any(reorder_word in kind for kind in kinds)
    assert reordering(lang) and all(sentence.strip() for sentence in reordering(lang))
