"""The shipped checkpoints load, translate, and still score what their cards say."""
from pathlib import Path

import pytest

from model.checkpoint import read_card
from model.evaluate import load_test_files, run_model
from model.metrics import bleu
from model.search import SearchConfig
from model.translate import Translator

from ..conftest import SHARED_DATA

SHIPPED = Path(__file__).resolve().parents[2] / "checkpoints"
NAMES = ["rnnsearch-en-fr", "rnnencdec-en-fr"]
pytestmark = pytest.mark.skipif(not all((SHIPPED / n / "config.json").is_file() for n in NAMES),
                                reason="shipped checkpoints not present")


@pytest.mark.parametrize("name", NAMES)
def test_shipped_checkpoint_translates(name):
    translator = Translator.from_checkpoint(SHIPPED / name)
    traces = translator.translate(["A dog is running in the snow.", "Two men are playing football."],
                                  SearchConfig(beam=5))
    assert all(t.translation and t.target_ids[-1] == 3 for t in traces)
    assert "chien" in traces[0].translation.lower()
    assert (translator.arch == "rnnsearch") == (traces[0].attention is not None)


def test_shipped_folders_stay_small():
    size = sum(p.stat().st_size for n in NAMES for p in (SHIPPED / n).iterdir())
    assert size <= 60 * 2**20


@pytest.mark.shared_data
@pytest.mark.parametrize("name", NAMES)
def test_greedy_bleu_matches_the_card(name):
    card = read_card(SHIPPED / name)
    test = load_test_files(SHARED_DATA / "test_2016_flickr.en.gz", SHARED_DATA / "test_2016_flickr.fr.gz")
    run = run_model(Translator.from_checkpoint(SHIPPED / name), test, SearchConfig(beam=1, trace=False))
    score, _ = bleu(run.hyps, test.ref)
    assert abs(score - card["test_scores"]["test_2016_flickr (greedy)"]["bleu"]) <= 1.0
