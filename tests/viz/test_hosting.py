"""Production mode (a server others can reach): typed checkpoint paths cannot leave the
checkpoint root, and no message names a server path."""
import os
import shutil

import pytest
from streamlit.testing.v1 import AppTest

from viz.serving import hosting, offered_models
from viz.serving.decodes import load_translator
from viz.serving.settings import AppSettings

from ..conftest import start_app

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
    """The app started with ``--production`` on the hosted root: (settings, root, hostile names)."""
    root, hostile = hosted
    return start_app(monkeypatch, "--checkpoints", root, "--production"), root, hostile


@pytest.mark.parametrize("case", HOSTILE)
def test_production_refuses_names_outside_the_root(production, case):
    settings, root, hostile = production
    name = hostile[case]
    for use in (hosting.resolve_checkpoint, load_translator):
        with pytest.raises(hosting.CheckpointNameError) as refused:
            use(name, settings)
        message = str(refused.value)
        assert message in (hosting.BAD_NAME, hosting.OUTSIDE_ROOT)  # fixed words, nothing echoed
        assert name not in message and str(root) not in message and str(root.resolve()) not in message
    assert offered_models.info(name, settings) is None


@pytest.mark.parametrize("name", ["rnnsearch-tiny", "alias", "./rnnsearch-tiny", "alias/../rnnsearch-tiny"])
def test_production_loads_checkpoints_inside_the_root(production, name):
    settings, root, _ = production
    assert hosting.resolve_checkpoint(name, settings) == (root / "rnnsearch-tiny").resolve()
    assert load_translator(name, settings).translate(["a dog runs"])[0].translation


def test_production_lists_no_symlink_out_of_the_root(production):
    settings, root, _ = production
    assert offered_models.list_checkpoints(settings) == ["alias", "rnnsearch-tiny"]
    local = AppSettings(checkpoints=root)
    assert offered_models.list_checkpoints(local) == ["alias", "escape", "rnnsearch-tiny"]


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
    settings = start_app(monkeypatch, "--checkpoints", root)
    if loads:
        assert load_translator(hostile[case], settings).arch == "rnnencdec"
    else:
        with pytest.raises(hosting.CheckpointNameError, match="not a usable checkpoint name"):
            load_translator(hostile[case], settings)


@pytest.mark.parametrize("flags,address,expected", [
    (["--production"], "", True),
    ([], "", False),  # Streamlit's default (unset) cannot be told from a local run
    ([], "0.0.0.0", True),
    ([], "192.168.1.20", True),
    ([], "nmt.example.org", True),
    ([], "127.0.0.1", False),
    ([], "localhost", False),
    ([], "::1", False),
    ([], "[::1]", False),
    (["--production"], "127.0.0.1", True),
])
def test_production_flag_and_server_address(flags, address, expected):
    from viz.serving.settings import parse_settings

    assert hosting.production(parse_settings(flags, server_address=address)) is expected


def _evaluate_page(settings):
    from viz.pages import evaluate as evaluate_page
    from viz.pages import menu

    menu.all_pages(settings)  # registers the pages it links to, as app.py does
    evaluate_page.render(settings)


def page_texts(at) -> list[str]:
    return [str(e.value) for kind in (at.error, at.warning, at.info, at.caption, at.markdown, at.text) for e in kind]


@pytest.fixture
def evaluate_at(production, monkeypatch):
    _, root, _ = production
    settings = start_app(monkeypatch, "--checkpoints", root, "--production", "--data-dir", "/nonexistent")
    at = AppTest.from_function(_evaluate_page, args=(settings,), default_timeout=120).run()
    at.file_uploader(key="eval_src").upload("test.en", SRC.encode()).run()
    at.file_uploader(key="eval_ref").upload("test.fr", REF.encode()).run()
    assert not at.exception and not at.error
    return at


@pytest.mark.parametrize("case", ["absolute path", "dot-dot", "symlink out of the root", "5000 characters",
                                  "NUL byte", "home folder path"])
def test_evaluate_page_path_box_in_production(production, evaluate_at, case):
    _, root, hostile = production
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


def _translate_page(settings):
    from viz.pages import menu
    from viz.pages import translate as translate_page

    menu.all_pages(settings)  # registers the pages it links to, as app.py does
    translate_page.render(settings)


def _models_page(settings):
    from viz.pages import models as models_page

    models_page.render(settings)


def _alignment_page(settings):
    from viz.pages import alignment as alignment_page

    alignment_page.render(settings)


@pytest.mark.parametrize("page", [_translate_page, _evaluate_page, _models_page, _alignment_page])
@pytest.mark.parametrize("setup", ["empty root", "broken checkpoint"])
def test_pages_name_no_server_path_in_production(tmp_path, monkeypatch, page, setup):
    root = tmp_path / "root"
    (root / "broken").mkdir(parents=True)
    if setup == "broken checkpoint":
        (root / "broken" / "config.json").write_text('{"format": "something else"}')
    settings = start_app(monkeypatch, "--checkpoints", root, "--production", "--data-dir", "/nonexistent")
    at = AppTest.from_function(page, args=(settings,), default_timeout=120).run()
    assert not at.exception, at.exception
    assert at.error  # the problem is still reported
    for text in page_texts(at):
        assert str(tmp_path) not in text and "config.json:" not in text


def test_a_checkpoint_replaced_or_removed_while_served(tiny_checkpoints, tmp_path):
    """A folder replaced under the server is read again and its old translations are not served;
    a folder removed gets its one clear error; the listing follows the folder."""
    from model.core.errors import CheckpointError
    from model.decoding.search import SearchConfig
    from viz.serving.decodes import Request, shared_decodes

    root = tmp_path / "root"
    shutil.copytree(tiny_checkpoints["rnnsearch"], root / "mine")
    settings = AppSettings(checkpoints=root, warm=False)
    request = Request("mine", "a dog runs in the park", SearchConfig(beam=2))
    assert load_translator("mine", settings).arch == "rnnsearch"
    assert shared_decodes([request], settings)[0].trace.model == "rnnsearch"
    shutil.rmtree(root / "mine")
    shutil.copytree(tiny_checkpoints["rnnencdec"], root / "mine")  # replaced while served
    os.utime(root / "mine" / "model.safetensors")  # as a new file would be: a new modification time
    assert load_translator("mine", settings).arch == "rnnencdec"
    assert shared_decodes([request], settings)[0].trace.model == "rnnencdec"  # not the stored rnnsearch decode
    shutil.rmtree(root / "mine")  # removed while served
    with pytest.raises(CheckpointError, match="mine"):
        load_translator("mine", settings)
    assert offered_models.list_checkpoints(settings) == []
