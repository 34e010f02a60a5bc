"""docs/results.md is generated from the shipped cards (python -m viz.commands.cards --results) and
matches them."""
from pathlib import Path

import pytest

from viz import cards_markdown
from viz.commands import cards as cards_cli

REPO = Path(__file__).resolve().parents[2]
CHECKPOINTS = REPO / "checkpoints"
RESULTS = REPO / "docs" / "results.md"
CARDS = cards_markdown.read_cards(CHECKPOINTS) if CHECKPOINTS.is_dir() else []
pytestmark = pytest.mark.skipif(not CARDS, reason="no shipped checkpoints with cards")


def test_the_committed_results_page_is_what_the_cards_generate():
    assert RESULTS.read_text() == cards_markdown.results_text(CHECKPOINTS, CARDS), \
        "docs/results.md is stale: python -m viz.commands.cards --results docs/results.md"


@pytest.mark.parametrize("card", CARDS, ids=[c.name for c in CARDS])
def test_every_card_appears_with_its_scores(card):
    text = RESULTS.read_text()
    assert f"| {card.name} |" in text
    for score in card.test_scores.values():
        assert f"{score.bleu:.2f} / {score.bleu_lc:.2f} / {score.chrf:.2f}" in text


def test_the_cli_writes_the_results_page(tmp_path):
    out = tmp_path / "docs" / "results.md"
    assert cards_cli.main(["--results", str(out), str(CHECKPOINTS)]) == 0
    assert out.read_text() == RESULTS.read_text()
    assert not (tmp_path / "README.md").exists()


def test_a_card_s_alignment_scores_are_rendered_with_their_command():
    from model.cards.schema import parse_model_card
    from viz.cards_markdown import alignment_section

    card = parse_model_card({"name": "m", "arch": "rnnsearch", "alignment": {"gold": {
        "sentences": 37, "command": "python -m model.align --card", "rows": [
            {"model": "m", "method": "attention", "extraction": "target", "aer": 0.5451, "precision": 0.46,
             "recall": 0.44, "sentences": 37},
            {"model": None, "method": "diagonal", "extraction": "target", "aer": 0.591, "precision": 0.44,
             "recall": 0.33, "sentences": 36}]}}})
    text = "\n".join(alignment_section(card))
    assert "### Word alignment (gold, 37 sentences" in text
    assert "| this model: attention | target | 0.545 | 0.460 | 0.440 | 37 |" in text
    assert "| baseline: diagonal | target | 0.591 | 0.440 | 0.330 | 36 |" in text
    assert "`python -m model.align --card`" in text
