"""The one-line "far from the training data" note: each signal fires, and ordinary input is quiet."""
import pytest

from model.decoding.search import SearchConfig
from model.decoding.trace import Trace
from model.decoding.translator import Translator
from model.scoring.input_familiarity import Unfamiliar, familiarity, fragmented_words


@pytest.mark.parametrize("pieces,expected", [
    (["▁a", "▁dog"], (0, 2)),
    (["▁x", "y", "z", "▁dog"], (1, 2)),  # "xyz" in three pieces
    (["▁q", "u", "u", "x", "▁z", "z", "z"], (2, 2)),
    (["a", "b", "c"], (1, 1)),  # no boundary mark at all: one word
])
def test_fragmented_words(pieces, expected):
    assert fragmented_words(pieces) == expected


@pytest.fixture(scope="module")
def translator(tiny_checkpoints):
    return Translator.from_checkpoint(tiny_checkpoints["rnnsearch"])


def trace_of(translator, text):
    return translator.translate([text], SearchConfig(beam=3))[0]


def test_ordinary_input_gets_no_note(translator):
    assert familiarity(trace_of(translator, "a dog runs in the park"), translator.src_vocab) is None


def test_unknown_characters_are_named(translator):
    note = familiarity(trace_of(translator, "a dog runs in the park 東京"), translator.src_vocab)
    assert note and note.signal == "unknown" and note.unknown == 1  # SentencePiece makes "東京" one <unk> piece


def test_words_split_into_many_pieces_are_noticed(translator):
    note = familiarity(trace_of(translator, "brekdaswilm kuthorp dog"), translator.src_vocab)  # known letters
    assert note and note.signal == "fragmented" and note.rare >= 2 and note.words == 3


def test_a_low_score_per_token_is_noticed(translator):
    trace = trace_of(translator, "a dog runs in the park")
    unsure = Trace(**{**trace.__dict__, "logprob": -2.0 * len(trace.target_ids)})
    assert familiarity(unsure, translator.src_vocab) == Unfamiliar("unsure", per_token=-2.0)
