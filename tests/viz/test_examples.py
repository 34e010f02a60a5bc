"""The example sentences and the reference translation written for each (viz/pages/parts/examples.py)."""
import pytest

from viz.pages.parts.examples import EXAMPLES, example_reference


@pytest.mark.parametrize("pair", ["en-fr", "fr-en", "de-en"])
def test_every_example_of_a_pair_has_a_reference_in_its_target_language(pair):
    sentences = [s for _, s in EXAMPLES[pair.split("-")[0]]]
    references = [example_reference(s, pair) for s in sentences]
    assert all(references) and len(set(references)) == len(sentences)
    assert all(r != s for r, s in zip(references, sentences))


@pytest.mark.parametrize("sentence, pair, expected", [
    ("I am hungry.", "en-fr", "J'ai faim."),
    ("  I am hungry.\n", "en-fr", "J'ai faim."),  # as a text box may hold it
    ("J'ai faim.", "fr-en", "I am hungry."),
    ("I am hungry.", "fr-en", None),  # an English sentence is no example of French-to-English
    ("I am hungry.", "en-de", None),  # a pair without references
    ("I am very hungry.", "en-fr", None),
    ("", "", None),
])
def test_a_reference_is_found_only_for_an_example_of_the_pair(sentence, pair, expected):
    assert example_reference(sentence, pair) == expected
