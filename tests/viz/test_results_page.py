"""docs/results.md is generated from the shipped cards (python -m viz.model_cards --results) and
matches them."""
from pathlib import Path

import pytest

from viz import model_cards

REPO = Path(__file__).resolve().parents[2]
CHECKPOINTS = REPO / "checkpoints"
RESULTS = REPO / "docs" / "results.md"
CARDS = model_cards.read_cards(CHECKPOINTS) if CHECKPOINTS.is_dir() else []
pytestmark = pytest.mark.skipif(not CARDS, reason="no shipped checkpoints with cards")


def test_the_committed_results_page_is_what_the_cards_generate():
    assert RESULTS.read_text() == model_cards.results_text(CHECKPOINTS, CARDS), \
        "docs/results.md is stale: python -m viz.model_cards --results docs/results.md"


@pytest.mark.parametrize("card", CARDS, ids=[c.name for c in CARDS])
def test_every_card_appears_with_its_scores(card):
    text = RESULTS.read_text()
    assert f"| {card.name} |" in text
    for score in card.test_scores.values():
        assert f"{score.bleu:.2f} / {score.bleu_lc:.2f} / {score.chrf:.2f}" in text


def test_the_cli_writes_the_results_page(tmp_path):
    out = tmp_path / "docs" / "results.md"
    assert model_cards.main(["--results", str(out), str(CHECKPOINTS)]) == 0
    assert out.read_text() == RESULTS.read_text()
    assert not (tmp_path / "README.md").exists()
