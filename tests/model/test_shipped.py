"""Every shipped checkpoint loads, translates, and still scores what its card says."""
import json
from pathlib import Path

import pytest

from model.cards.builder import ENCDEC_SUMMARY, held_out_sets
from model.cards.schema import read_model_card
from model.core.config import TrainConfig, dataclass_from_dict
from model.corpus.corpora import corpus_specs
from model.corpus.licences import corpus_facts
from model.corpus.test_sets import EvalSet
from model.decoding.search import SearchConfig
from model.decoding.translator import Translator
from model.scoring.evaluation import run_model
from model.scoring.metrics import bleu

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "checkpoints"
NAMES = sorted(p.parent.name for p in SHIPPED.glob("*/config.json"))
CARDS = {n: read_model_card(SHIPPED / n) for n in NAMES}
CAPTIONS = {  # a caption every shipped model learned from Multi30k, and a word its translation needs
    "en": ("A dog is running in the snow.", {"fr": "chien"}),
    "fr": ("Un chien court dans la neige.", {"en": "dog"}),
    "de": ("Ein Hund rennt durch den Schnee.", {"en": "dog"}),
}
pytestmark = pytest.mark.skipif(not NAMES, reason="no shipped checkpoints")


@pytest.mark.parametrize("name", NAMES)
def test_shipped_checkpoint_translates(name):
    translator = Translator.from_checkpoint(SHIPPED / name)
    train = _train_config(name)
    caption, words = CAPTIONS[train.src_lang]
    (trace,) = translator.translate([caption], SearchConfig(beam=5))
    assert trace.translation and trace.target_ids[-1] == 3
    assert words[train.tgt_lang] in trace.translation.lower(), trace.translation
    assert (translator.arch != "rnnencdec") == (trace.attention is not None)


def test_shipped_folders_stay_small():
    size = sum(p.stat().st_size for n in NAMES for p in (SHIPPED / n).iterdir())
    assert size <= 260 * 2**20  # every shipped model, weights in half precision


@pytest.mark.parametrize("name", NAMES)
def test_every_shipped_card_reads_and_names_its_data(name):
    card = CARDS[name]
    assert card.name == name and card.data and all(d.licence and d.attribution for d in card.data)
    assert card.test_scores and card.checks and card.training and card.training.where


@pytest.mark.parametrize("name", NAMES)
def test_every_shipped_card_says_how_a_user_trains_it(name):
    """The command runs on a user's machine (data where the download commands write it); the
    story of this copy's training is in how_trained; RNNencdec cards name its encoder summary."""
    card, train = CARDS[name], _train_config(name)
    assert card.command.startswith("python -m model.train ") and "../" not in card.command
    for corpus in card.data:
        assert corpus_facts(corpus.name, train.src_lang, train.tgt_lang).path in card.command, corpus.name
    assert card.how_trained
    assert (ENCDEC_SUMMARY in card.deviations) == (card.arch == "rnnencdec")


def test_the_default_everyday_pair_is_shipped():
    everyday = sorted(c.arch for n, c in CARDS.items() if c.pair == "everyday" and _train_config(n).tgt_lang == "fr")
    assert {"rnnencdec", "rnnsearch"} <= set(everyday) <= {"rnnencdec", "rnnsearch", "transformer"}  # what the app opens with


EVERYDAY = {  # everyday sentences the caption models turn into nonsense, and a word the translation needs
    "en": [("I am hungry.", "faim"), ("Where is the train station?", "gare"),
           ("The weather is nice today.", "aujourd'hui"), ("I would like a cup of coffee, please.", "café")],
    "fr": [("J'ai faim.", "hungry"), ("Où est la gare ?", "station"), ("Il fait beau aujourd'hui.", "today"),
           ("Je voudrais une tasse de café, s'il vous plaît.", "coffee")],
}


@pytest.mark.parametrize("source", list(EVERYDAY))
def test_everyday_rnnsearch_translates_everyday_sentences(source):
    name = next(n for n, c in CARDS.items() if c.pair == "everyday" and c.arch == "rnnsearch"
                and _train_config(n).src_lang == source)
    cases = EVERYDAY[source]
    traces = Translator.from_checkpoint(SHIPPED / name).translate([s for s, _ in cases], SearchConfig(beam=5))
    for (sentence, word), trace in zip(cases, traces):
        assert word in trace.translation.lower(), (sentence, trace.translation)


TUTORIAL_PAIRS = {("fr", "en"): "everyday", ("de", "en"): "captions"}  # the direction a tutorial trains, and the pair shipped for it


@pytest.mark.parametrize("direction,pair", list(TUTORIAL_PAIRS.items()))
def test_the_tutorials_pairs_are_shipped_with_their_replays(direction, pair):
    """Both RNNs of the pair, trained alike (same data, vocabularies and number of updates),
    each card carrying its training replay from update 0 and its comparison with the other (a
    Transformer of the pair, where there is one, is compared with RNNsearch in its own card)."""
    names = sorted(n for n, c in CARDS.items() if c.pair == pair and c.arch != "transformer"
                   and (_train_config(n).src_lang, _train_config(n).tgt_lang) == direction)
    assert sorted(CARDS[n].arch for n in names) == ["rnnencdec", "rnnsearch"]
    for name in names:
        card = CARDS[name]
        assert card.replay and card.replay[0].step == 0, name
        assert card.comparison and card.comparison.other in names and card.length_stress, name
    search, encdec = sorted(names, key=lambda n: CARDS[n].arch != "rnnsearch")
    assert CARDS[search].training.updates == CARDS[encdec].training.updates
    for model in ("src", "tgt"):
        assert (SHIPPED / search / f"{model}.spm.model").read_bytes() == (SHIPPED / encdec / f"{model}.spm.model").read_bytes()


def _train_config(name: str) -> TrainConfig:
    return dataclass_from_dict(TrainConfig, json.loads((SHIPPED / name / "config.json").read_text())["train"])


def _checks(name: str) -> list[tuple[EvalSet, float]]:
    """(sentences, BLEU the card recorded) for each greedy check in the card: the first sentences
    of each training corpus' first test set."""
    tests = held_out_sets(_train_config(name))
    return [(EvalSet(tests[c.test_set].src[:c.first], tests[c.test_set].ref[:c.first]), c.bleu)
            for c in CARDS[name].checks]


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
