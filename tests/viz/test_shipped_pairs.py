"""The shipped pairs in the app (AppTest): the pair picker offers each direction with its own
models and examples, both models translate, and the Paper page replays the pair's training."""
import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from model.cards.schema import read_model_card
from viz.pages.parts.examples import examples

from ..conftest import start_app
from .test_translate_page import canvas

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "viz" / "pages" / "main.py")
SHIPPED = REPO / "checkpoints"


def _direction(folder: Path) -> str:
    train = json.loads((folder / "config.json").read_text())["train"]
    return f"{train['src_lang']}-{train['tgt_lang']}"


BY_DIRECTION: dict[str, list[str]] = {}
for _folder in sorted(SHIPPED.glob("*/config.json")):
    BY_DIRECTION.setdefault(_direction(_folder.parent), []).append(_folder.parent.name)
TUTORIAL = [d for d in ("fr-en", "de-en") if d in BY_DIRECTION]  # the tutorials' directions shipped here
pytestmark = pytest.mark.skipif(not TUTORIAL, reason="no tutorial pair is shipped")


@pytest.mark.parametrize("direction", TUTORIAL)
def test_the_picker_offers_the_pair_with_its_own_models_and_examples(direction, monkeypatch):
    start_app(monkeypatch, "--checkpoints", SHIPPED)
    at = AppTest.from_file(APP, default_timeout=300).run()
    assert not at.exception, at.exception
    picker = at.selectbox(key="direction")
    assert picker.value == "en-fr" and len(picker.options) == len(BY_DIRECTION)  # the default pair first
    picker.set_value(direction).run()
    assert not at.exception, at.exception
    assert sorted(o.split(" · ")[0] for o in at.selectbox(key="model_left").options) == BY_DIRECTION[direction]
    source = direction.split("-")[0]
    assert at.text_area(key="source").value == examples(source)[0][1]  # the pair's own first example
    outputs = [t.value for t in at.text]
    assert len(outputs) == 2 and all(outputs), outputs  # RNNsearch and RNNencdec both translate it


def _paper(settings, direction):
    import streamlit as st

    from viz.pages import paper
    from viz.pages import menu

    menu.all_pages(settings)
    st.session_state.setdefault("paper_direction", direction)
    st.session_state.setdefault("paper_section", paper.SECTIONS["figure3"])
    paper.render(settings)


@pytest.mark.parametrize("direction", TUTORIAL)
def test_the_paper_page_replays_the_pairs_training_from_update_0(direction, monkeypatch):
    settings = start_app(monkeypatch, "--checkpoints", SHIPPED)
    at = AppTest.from_function(_paper, args=(settings, direction), default_timeout=300).run()
    assert not at.exception, at.exception
    cards = [read_model_card(SHIPPED / name) for name in BY_DIRECTION[direction]]
    search = next(c for c in cards if c.arch == "rnnsearch")
    probes = at.selectbox(key="paper_replay_probe")
    assert probes.options == [p.source for p in search.replay[0].probes]
    steps = at.select_slider(key="paper_replay_step")
    steps.set_value(0).run()
    assert not at.exception, at.exception
    heatmaps = [h for h in canvas(at, "matrix") if "update 0" in h["title"]]
    assert len(heatmaps) == 1  # RNNsearch's attention at update 0; RNNencdec has none to draw
    assert sum(c.value.startswith("Recorded during training: how faithful") for c in at.caption) == 1
