"""The trip of a typed sentence: the Translate page asks the serving layer once per sentence
pair (viz/serving/decodes.py · ``decode_pair``), which loads each model once, reads the sentence
once per model, and answers with a decode or a refusal and its reason."""
from collections import Counter

import pytest
from streamlit.testing.v1 import AppTest

from model.core.errors import DataError
from model.decoding.search import SearchConfig
from model.decoding.translator import Translator
from viz.serving import decodes
from viz.serving.decodes import Decoded, Refused, Request

from .test_translate_page import APP

TEXT = "a small dog runs on the grass"


@pytest.fixture
def counted(monkeypatch):
    """Counts of model loads (``decodes._checkpoint``) by name and of sentence reads
    (``Translator.source_ids``) by model and text."""
    loads, reads = Counter(), Counter()
    checkpoint, source_ids = decodes._checkpoint, Translator.source_ids

    def counting_checkpoint(name, settings):
        loads[name] += 1
        return checkpoint(name, settings)

    def counting_source_ids(self, text):
        reads[(self.name, text)] += 1
        return source_ids(self, text)

    monkeypatch.setattr(decodes, "_checkpoint", counting_checkpoint)
    monkeypatch.setattr(Translator, "source_ids", counting_source_ids)
    return loads, reads


def test_a_typed_sentence_loads_each_model_once_and_reads_it_once(app_env, counted):
    loads, reads = counted
    at = AppTest.from_file(APP, default_timeout=120).run()
    loads.clear(), reads.clear()
    at.text_area(key="source").input(TEXT).run()
    assert not at.exception, at.exception
    assert len(at.text) >= 2  # both translations shown
    names = {name for name, text in reads if text == TEXT}
    assert names == {"rnnsearch-tiny", "rnnencdec-tiny"}
    assert all(reads[(name, TEXT)] == 1 for name in names), reads
    assert all(loads[name] == 1 for name in names), loads


def test_the_same_sentence_again_reads_nothing(app_env, counted):
    """A decode another run (or session) already made comes from the shared store."""
    loads, reads = counted
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.text_area(key="source").input(TEXT).run()
    reads.clear()
    loads.clear()
    at.run()  # the page drawn again: the same requests
    assert not at.exception, at.exception
    assert len(at.text) >= 2
    assert reads[("rnnsearch-tiny", TEXT)] == reads[("rnnencdec-tiny", TEXT)] == 0
    assert loads["rnnsearch-tiny"] == loads["rnnencdec-tiny"] == 1  # a look-up of the loaded model


def test_a_refusal_says_why_and_the_other_model_still_translates(app_env, monkeypatch):
    reading = Translator.source_ids

    def picky(self, text):
        if self.name == "rnnencdec-tiny":
            raise DataError("the word 'dog' is not in this vocabulary")
        return reading(self, text)

    monkeypatch.setattr(Translator, "source_ids", picky)
    search = SearchConfig(beam=2)
    found = decodes.decode_pair([Request("rnnsearch-tiny", "a dog", search), Request("rnnencdec-tiny", "a dog", search),
                                 Request("no-such-model", "a dog", search)], app_env)
    assert isinstance(found[0], Decoded) and found[0].trace.source_ids
    assert isinstance(found[1], Refused) and not found[1].loading and "'dog'" in str(found[1].error)
    assert isinstance(found[2], Refused) and found[2].loading and found[2].name == "no-such-model"
    with pytest.raises(DataError):
        decodes.shared_decodes([Request("rnnencdec-tiny", "a dog", search)], app_env)


def test_ids_read_from_a_folder_since_replaced_are_read_again_by_the_model_that_decodes(app_env):
    """A request read before its folder was replaced carries the old folder's stamp: the batch
    reads its text again with the model it decodes with, never another vocabulary's ids."""
    path, translator, stamp = decodes._checkpoint("rnnsearch-tiny", app_env)
    ids, cut = translator.source_ids("a dog runs")
    stale = Request("rnnsearch-tiny", "a dog runs", SearchConfig(beam=2), encoded=((5,) * 9, cut, ("before",)))
    fresh = Request("rnnsearch-tiny", "a dog runs", SearchConfig(beam=2), encoded=(tuple(ids), cut, stamp))
    (from_stale,), (from_fresh,) = decodes.decode_batch(path, [stale]), decodes.decode_batch(path, [fresh])
    assert from_stale.trace.source_ids == from_fresh.trace.source_ids == list(ids)
