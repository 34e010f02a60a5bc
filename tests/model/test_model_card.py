"""The model card reader: typed fields, defaults, and errors that name the field."""
import json

import pytest

from model.cards.schema import Card, Decoding, parse_model_card, read_model_card
from model.core.errors import CardError, CheckpointError

MINIMAL = {"name": "m", "arch": "rnnsearch"}
FULL = {
    **MINIMAL, "pair": "everyday", "trained_on": "captions", "parameters": 7,
    "data": [{"name": "multi30k", "licence": "research use", "attribution": "Elliott et al.", "training_pairs": 5,
              "weight": 2, "pairs_per_split": {"train": 5, "val": 3}}],
    "decoding": {"beam": 3, "length_norm": 0.6, "chosen_on": "validation",
                 "grid": [{"beam": 3, "length_norm": 0.6, "val_bleu": 50.5}]},
    "training": {"updates": 7, "epochs": 1, "wall_minutes": 3.5, "where": {"cpu": "AMD", "threads": 1}},
    "log": [{"step": 7, "epoch": 1, "val_bleu": 12.5, "train_loss": 2.0, "val_bleu_by_corpus": {"a": 1.0}}],
    "test_scores": {"multi30k/test": {"bleu": 40.1, "decoding": "beam 3", "sentences": 5}},
    "length_stress": {"multi30k/test": [{"k": 1, "items": 5, "source_words": 3.0, "bleu": 40.1, "length_ratio": 1.0}]},
    "checks": [{"test_set": "multi30k/test", "first": 3, "decoding": "greedy", "bleu": 39.0}],
    "deviations": ["one", "two"],
    "comparison": {"with": "other", "test": "paired bootstrap",
                   "rows": [{"test_set": "multi30k/test", "m": 40.1, "other": 30.0, "p_value": 0.001}]},
    "replay": {"snapshots": [{"step": 0, "epoch": 0, "val_bleu": None, "probes": [
        {"source": "a b", "source_tokens": ["▁a", "▁b"], "output": "x", "target_tokens": ["▁x", "</s>"],
         "attention": [[0.5, 0.5], [0.2, 0.8]]}]}]},
    "a_field_from_a_newer_version": {"ignored": True},
}


def test_a_minimal_card_gets_every_default():
    card = parse_model_card(MINIMAL)
    assert card == Card("m", "rnnsearch") and card.decoding == Decoding() and card.test_scores == {}


def test_a_full_card_reads_into_typed_values():
    card = parse_model_card(FULL)
    assert card.data[0].weight == 2.0 and card.data[0].pairs_per_split == {"train": 5, "val": 3}
    assert card.decoding.search_config().beam == 3 and card.decoding.grid[0].val_bleu == 50.5
    assert card.training.where.cpu == "AMD" and card.training.epochs == 1.0
    assert card.log[0].val_bleu_by_corpus == {"a": 1.0} and card.checks[0].first == 3
    assert card.length_stress["multi30k/test"][0].k == 1 and card.deviations == ("one", "two")
    row = card.comparison.rows[0]
    assert (card.comparison.other, row.ours, row.theirs, row.difference) == ("other", 40.1, 30.0, 10.1)
    assert card.replay[0].probes[0].attention.shape == (2, 2)


@pytest.mark.parametrize("change, where", [
    ({"name": 3}, "name: expected str"),
    ({"parameters": "many"}, "parameters: expected int"),
    ({"parameters": True}, "parameters: expected int"),
    ({"decoding": {"beam": 2.5}}, "decoding: beam: expected int"),
    ({"test_scores": {"t": {"bleu": "high"}}}, "test_scores.t: bleu: expected float"),
    ({"test_scores": {"t": {}}}, "test_scores.t: missing 'bleu'"),
    ({"length_stress": {"t": {"k": 1}}}, "length_stress.t: expected list"),
    ({"deviations": "one"}, "deviations: expected list"),
    ({"log": [{"step": 1}]}, "log\\[0\\]: missing 'epoch'"),
    ({"comparison": {"with": "other", "rows": [{"test_set": "t", "m": 1.0}]}}, "row 1 lacks"),
    ({"replay": {"snapshots": [{"step": 0}]}}, "replay"),
])
def test_a_wrong_type_is_an_error_naming_the_field(change, where):
    with pytest.raises(CardError, match=where):
        parse_model_card({**FULL, **change}, "card.json")


def test_read_model_card_from_a_folder(tmp_path):
    assert read_model_card(tmp_path) is None  # no card: nothing known, not an error
    (tmp_path / "card.json").write_text(json.dumps(FULL))
    assert read_model_card(tmp_path).name == "m"
    (tmp_path / "card.json").write_text("[1, 2]")
    with pytest.raises(CheckpointError, match="JSON object"):
        read_model_card(tmp_path)


def test_card_errors_are_checkpoint_errors_and_not_value_errors():
    assert issubclass(CardError, CheckpointError) and not issubclass(CardError, ValueError)
