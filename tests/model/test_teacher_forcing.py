"""Teacher forcing made visible: the model given the reference's prefix beside its own greedy
decode, for this project's models and imported ones. Invariants only: until the outputs differ
the two prefixes are the same, so are the two sides' predictions and attention."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from model.foreign.tutorials.family import import_tutorial
from model.core.errors import DataError
from model.decoding.search import SearchConfig
from model.decoding.teacher_forcing import teacher_forcing
from model.decoding.translator import Translator
from tests.model.test_cli_errors import run_cli
from tests.model.test_tutorials import files

SOURCE = {"rnnsearch": "a dog runs in the park", "rnnencdec": "the small cat sits", "pytorch": "Le chien court dans le parc.",
          "d2l": "A big dog plays in the street."}


@pytest.fixture(scope="module")
def folders(tiny_checkpoints, tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("tf")
    found = {kind: Path(tiny_checkpoints[kind]) for kind in ("rnnsearch", "rnnencdec")}
    found.update({kind: import_tutorial(kind, *files(kind), out / kind) for kind in ("pytorch", "d2l")})
    return found


def _agree(a, b) -> None:
    assert [c.token for c in a] == [c.token for c in b]
    assert np.allclose([c.prob for c in a], [c.prob for c in b], atol=1e-4)


@pytest.mark.parametrize("kind", list(SOURCE))
def test_with_its_own_output_as_the_reference_both_sides_agree_at_every_step(kind, folders):
    translator = Translator.from_checkpoint(folders[kind])
    own = translator.translate([SOURCE[kind]], SearchConfig(beam=1))[0]  # greedy decoding's output, as the reference
    greedy = teacher_forcing(translator, SOURCE[kind], translator.tgt_vocab.decode(own.target_ids))
    ended = greedy.free.target_tokens[-1] == "</s>"
    assert greedy.diverges_at is None if ended else greedy.diverges_at == len(greedy.free.target_ids)
    for step in greedy.steps[:greedy.diverges_at]:
        _agree(step.forced, step.free_candidates)
        assert step.reference == step.free
        if step.forced_attention is not None:
            assert np.allclose(step.forced_attention, step.free_attention, atol=1e-4)
    assert greedy.forced_accuracy == 1.0 or not ended


@pytest.mark.parametrize("kind", list(SOURCE))
def test_a_reference_that_differs_at_its_first_word_diverges_there(kind, folders):
    translator = Translator.from_checkpoint(folders[kind])
    free = translator.translate([SOURCE[kind]], SearchConfig(beam=1))[0]
    first = free.target_ids[0]
    other = next(i for i in range(4, len(translator.tgt_vocab)) if i != first and
                 translator.tgt_vocab.encode(translator.tgt_vocab.decode([i])) == [i])
    reference = translator.tgt_vocab.decode([other] + [i for i in free.target_ids[1:]])
    found = teacher_forcing(translator, SOURCE[kind], reference)
    assert found.diverges_at == 0
    assert found.reference_tokens[0] != found.free.target_tokens[0] and found.reference_tokens[-1] == "</s>"
    _agree(found.steps[0].forced, found.steps[0].free_candidates)  # step 1 reads the same <s> on both sides
    assert all(s.reference is not None for s in found.steps[:len(found.reference_tokens)])
    assert 0.0 <= found.forced_accuracy <= 1.0
    assert len(found.steps) == max(len(found.reference_tokens), len(found.free.target_tokens))
    has_attention = translator.model.has_attention
    assert all((s.forced_attention is not None) == has_attention for s in found.steps if s.reference is not None)


def test_blank_input_is_refused_clearly(folders):
    translator = Translator.from_checkpoint(folders["rnnsearch"])
    for source, reference in (("", "un chien"), ("a dog", "  ")):
        with pytest.raises(DataError, match="reference translation"):
            teacher_forcing(translator, source, reference)


def test_the_command_line_compares_each_line_with_its_reference(folders, tmp_path):
    refs = tmp_path / "ref.txt"
    refs.write_text("The dog runs in the park.\nThe giraffe runs.\n")
    result = run_cli("model.translate", "--checkpoint", folders["pytorch"], "--reference", refs, "--json",
                     stdin=b"Le chien court dans le parc.\nLe chien court.\n")
    assert result.returncode == 0, result.stderr
    first, second = [json.loads(line) for line in result.stdout.decode().splitlines()]
    assert first["reference_tokens"][-1] == "</s>" and "diverges_at" in first and len(first["steps"]) >= 7
    assert "giraffe" in second["error"] and b"line 2" in result.stderr  # the reference has a word the model lacks
    plain = run_cli("model.translate", "--checkpoint", folders["pytorch"], "--reference", refs,
                    stdin=b"Le chien court dans le parc.\nLe chien court.\n")
    assert b"given the reference" in plain.stdout and b"reference: the dog runs in the park </s>" in plain.stdout
    short = run_cli("model.translate", "--checkpoint", folders["pytorch"], "--reference", refs, stdin=b"Le chien court.\n")
    assert short.returncode == 2 and b"has 2 lines, stdin has 1" in short.stderr
