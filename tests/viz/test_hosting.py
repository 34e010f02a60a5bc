"""Production mode (a server others can reach): typed checkpoint paths cannot leave the
checkpoint root, and no message names a server path."""
import os
import shutil

import pytest
from streamlit.testing.v1 import AppTest

from viz.serving import hosting, offered_models
from viz.serving.decodes import load_translator

SRC = "a dog runs in the park\nthe small cat sits\n"
REF = "un chien court dans le parc\nle petit chat assis\n"


@pytest.fixture(scope="module")
def hosted(checkpoint_dir, tiny_checkpoints, tmp_path_factory):
    """A root holding a real checkpoint, a symlink to it (inside) and a symlink out of the root,
    and the hostile names to try against it, each pointing (where it can) at a real checkpoint."""
    root = tmp_path_factory.mktemp("hosted") / "root"
    root.mkdir()
    shutil.copytree(checkpoint_dir / "rnnsearch-tiny", root / "rnnsearch-tiny")
    (root / "alias").symlink_to(root / "rnnsearch-tiny", target_is_directory=True)
    outside = tiny_checkpoints["rnnencdec"]
    (root / "escape").symlink_to(outside, target_is_directory=True)
    hostile = {
        "absolute path": str(outside),
        "dot-dot": os.path.relpath(outside, root),
        "dot-dot behind a real name": f"rnnsearch-tiny/../{os.path.relpath(outside, root)}",
        "symlink out of the root": "escape",
        "the root itself": "rnnsearch-tiny/..",
        "5000 characters": "rnnsearch-tiny/" + "x" * 4985,
        "NUL byte": "rnnsearch-tiny\x00",
        "lone surrogate": "rnnsearch-tiny\ud800",
        "home folder": "~/",
        "home folder path": "~/.ssh",
    }
    return root, hostile


HOSTILE = ["absolute path", "dot-dot", "dot-dot behind a real name", "symlink out of the root", "the root itself",
           "5000 characters", "NUL byte", "lone surrogate", "home folder", "home folder path"]


@pytest.fixture
def production(hosted, monkeypatch):
    monkeypatch.setenv("NMT_CHECKPOINTS", str(hosted[0]))
    monkeypatch.setenv("NMT_PRODUCTION", "1")
    return hosted


@pytest.mark.parametrize("case", HOSTILE)
def test_production_refuses_names_outside_the_root(production, case):
    root, hostile = production
    name = hostile[case]
    for use in (offered_models.resolve_checkpoint, load_translator):
        with pytest.raises(hosting.CheckpointNameError) as refused:
            use(name)
        message = str(refused.value)
        assert message in (hosting.BAD_NAME, hosting.OUTSIDE_ROOT)  # fixed words, nothing echoed
        assert name not in message and str(root) not in message and str(root.resolve()) not in message
    assert offered_models.info(name) is None


@pytest.mark.parametrize("name", ["rnnsearch-tiny", "alias", "./rnnsearch-tiny", "alias/../rnnsearch-tiny"])
def test_production_loads_checkpoints_inside_the_root(production, name):
    root, _ = production
    assert offered_models.resolve_checkpoint(name) == (root / "rnnsearch-tiny").resolve()
    assert load_translator(name).translate(["a dog runs"])[0].translation


def test_production_lists_no_symlink_out_of_the_root(production, monkeypatch):
    assert offered_models.list_checkpoints() == ["alias", "rnnsearch-tiny"]
    monkeypatch.delenv("NMT_PRODUCTION")
    assert offered_models.list_checkpoints() == ["alias", "escape", "rnnsearch-tiny"]


@pytest.mark.parametrize("case,loads", [
    ("absolute path", True),  # local users may point at their own runs
    ("dot-dot", True),
    ("symlink out of the root", True),
    ("5000 characters", False),
    ("NUL byte", False),
    ("lone surrogate", False),
])
def test_locally_paths_work_but_odd_names_are_refused(hosted, monkeypatch, case, loads):
    root, hostile = hosted
    monkeypatch.setenv("NMT_CHECKPOINTS", str(root))
    monkeypatch.delenv("NMT_PRODUCTION", raising=False)
    if loads:
        assert load_translator(hostile[case]).arch == "rnnencdec"
    else:
        with pytest.raises(hosting.CheckpointNameError, match="not a usable checkpoint name"):
            load_translator(hostile[case])


@pytest.mark.parametrize("flag,address,expected", [
    ("1", None, True),
    ("", None, False),  # Streamlit's default (unset) cannot be told from a local run
    ("0", None, False),
    ("", "0.0.0.0", True),
    ("", "192.168.1.20", True),
    ("", "nmt.example.org", True),
    ("", "127.0.0.1", False),
    ("", "localhost", False),
    ("", "::1", False),
    ("", "[::1]", False),
    ("1", "127.0.0.1", True),
])
def test_production_flag_and_server_address(monkeypatch, flag, address, expected):
    monkeypatch.setenv("NMT_PRODUCTION", flag)
    monkeypatch.setattr("streamlit.get_option", lambda key: address if key == "server.address" else None)
    assert hosting.production() is expected


def _evaluate_page():
    from viz.pages import evaluate as evaluate_page

    evaluate_page.render()


def page_texts(at) -> list[str]:
    return [str(e.value) for kind in (at.error, at.warning, at.info, at.caption, at.markdown, at.text) for e in kind]


@pytest.fixture
def evaluate_at(production, monkeypatch):
    monkeypatch.setenv("NMT_DATA_DIR", "/nonexistent")
    at = AppTest.from_function(_evaluate_page, default_timeout=120).run()
    at.file_uploader(key="eval_src").upload("test.en", SRC.encode()).run()
    at.file_uploader(key="eval_ref").upload("test.fr", REF.encode()).run()
    assert not at.exception and not at.error
    return at


@pytest.mark.parametrize("case", ["absolute path", "dot-dot", "symlink out of the root", "5000 characters",
                                  "NUL byte", "home folder path"])
def test_evaluate_page_path_box_in_production(production, evaluate_at, case):
    root, hostile = production
    at = evaluate_at
    at.text_input(key="eval_extra").input(hostile[case]).run()
    assert not at.exception, at.exception
    from viz.pages.evaluate import HOSTED_EXTRA

    assert [e.value for e in at.error] == [HOSTED_EXTRA]
    typed = hostile[case].strip()
    for text in page_texts(at):
        assert typed not in text and str(root) not in text and str(root.resolve()) not in text


def test_evaluate_page_path_box_takes_a_name_inside_the_root(production, evaluate_at):
    at = evaluate_at
    at.text_input(key="eval_extra").input("alias").run()
    assert not at.exception and not at.error
    at.button(key="eval_run").click().run()
    assert not at.exception and sorted(at.dataframe[0].value["model"]) == ["alias", "rnnsearch-tiny"]


def _translate_page():
    from viz.pages import menu
    from viz.pages import translate as translate_page

    menu.all_pages()  # registers the pages it links to, as app.py does
    translate_page.render()


def _models_page():
    from viz.pages import models as models_page

    models_page.render()


def _alignment_page():
    from viz.pages import alignment as alignment_page

    alignment_page.render()


@pytest.mark.parametrize("page", [_translate_page, _evaluate_page, _models_page, _alignment_page])
@pytest.mark.parametrize("setup", ["empty root", "broken checkpoint"])
def test_pages_name_no_server_path_in_production(tmp_path, monkeypatch, page, setup):
    root = tmp_path / "root"
    (root / "broken").mkdir(parents=True)
    if setup == "broken checkpoint":
        (root / "broken" / "config.json").write_text('{"format": "something else"}')
    monkeypatch.setenv("NMT_CHECKPOINTS", str(root))
    monkeypatch.setenv("NMT_PRODUCTION", "1")
    monkeypatch.setenv("NMT_DATA_DIR", "/nonexistent")
    at = AppTest.from_function(page, default_timeout=120).run()
    assert not at.exception, at.exception
    assert at.error  # the problem is still reported
    for text in page_texts(at):
        assert str(tmp_path) not in text and "config.json:" not in text
