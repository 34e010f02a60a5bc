"""Every shipped checkpoint loads, translates, and still scores what its card says."""
import json
from pathlib import Path

import pytest

from model.card import test_sets as corpus_test_sets  # not collected as a test
from model.checkpoint import read_card
from model.config import TrainConfig, dataclass_from_dict
from model.corpora import corpus_specs
from model.evaluate import TestSet as Sentences  # aliased: pytest would try to collect TestSet
from model.evaluate import run_model
from model.metrics import bleu
from model.search import SearchConfig
from model.translate import Translator

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "checkpoints"
NAMES = sorted(p.parent.name for p in SHIPPED.glob("*/config.json"))
CARDS = {n: read_card(SHIPPED / n) for n in NAMES}
pytestmark = pytest.mark.skipif(not NAMES, reason="no shipped checkpoints")


@pytest.mark.parametrize("name", NAMES)
def test_shipped_checkpoint_translates(name):
    translator = Translator.from_checkpoint(SHIPPED / name)
    traces = translator.translate(["A dog is running in the snow.", "Two men are playing football."],
                                  SearchConfig(beam=5))
    assert all(t.translation and t.target_ids[-1] == 3 for t in traces)
    assert "chien" in traces[0].translation.lower()  # every shipped model learned captions
    assert (translator.arch == "rnnsearch") == (traces[0].attention is not None)


def test_shipped_folders_stay_small():
    size = sum(p.stat().st_size for n in NAMES for p in (SHIPPED / n).iterdir())
    assert size <= 150 * 2**20


def test_the_default_everyday_pair_is_shipped():
    everyday = sorted(c["arch"] for c in CARDS.values() if c.get("pair") == "everyday")
    assert everyday == ["rnnencdec", "rnnsearch"]  # what the app opens with


EVERYDAY = [  # issue 15's sentences that the caption models turned into nonsense, and a word the French needs
    ("I am hungry.", "faim"),
    ("Where is the train station?", "gare"),
    ("The weather is nice today.", "aujourd'hui"),
    ("I would like a cup of coffee, please.", "café"),
]


def test_everyday_rnnsearch_translates_everyday_sentences():
    name = next(n for n, c in CARDS.items() if c.get("pair") == "everyday" and c["arch"] == "rnnsearch")
    traces = Translator.from_checkpoint(SHIPPED / name).translate([e for e, _ in EVERYDAY], SearchConfig(beam=5))
    for (english, word), trace in zip(EVERYDAY, traces):
        assert word in trace.translation.lower(), (english, trace.translation)


def _train_config(name: str) -> TrainConfig:
    return dataclass_from_dict(TrainConfig, json.loads((SHIPPED / name / "config.json").read_text())["train"])


def _checks(name: str) -> list[tuple[Sentences, float]]:
    """(sentences, BLEU the card recorded) for each greedy check in the card: the first sentences
    of each training corpus' first test set."""
    tests = corpus_test_sets(_train_config(name))
    return [(Sentences(tests[c["test_set"]].src[:c["first"]], tests[c["test_set"]].ref[:c["first"]]), c["bleu"])
            for c in CARDS[name]["checks"]]


@pytest.mark.shared_data
@pytest.mark.parametrize("name", NAMES)
def test_greedy_bleu_matches_the_card(name, monkeypatch):
    monkeypatch.chdir(REPO)  # corpus paths in the configs are relative to the repository
    missing = [s.path for s in corpus_specs(_train_config(name)) if not Path(s.path).exists()]
    if missing:
        pytest.skip(f"training corpora not present: {missing}")
    translator = Translator.from_checkpoint(SHIPPED / name)
    for test, recorded in _checks(name):
        score, _ = bleu(run_model(translator, test, SearchConfig(beam=1, trace=False)).hyps, test.ref)
        assert abs(score - recorded) <= 1.0, (name, len(test.src), score, recorded)
