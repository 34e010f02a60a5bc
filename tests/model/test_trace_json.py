"""Traces read back: ``Trace.from_json(t.to_json())`` is ``t`` again, field by field with every
number within the JSON's rounding (6 decimals, so within 1e-6) and everything else exact, for
both of the paper's architectures, a model this project did not write and the lines of
``python -m model.translate --json``; and every kind of malformed trace is refused with a
``TraceError`` that names its field."""
from __future__ import annotations

import copy
import dataclasses
import io
import json

import numpy as np
import pytest
import torch

from model.core.decodable import ModelDescription
from model.decoding.search import SearchConfig
from model.decoding.trace import BeamNode, Candidate, Trace
from model.decoding.translator import Translator
from model.translate import main
from model.core.errors import DataError, TraceError
from tests.model.test_decodable import doc_namespace

ROUNDING = 1e-6  # the JSON keeps 6 decimals
SENTENCES = ["a dog runs in the park", "", "the small cat", "a man eats a red ball on the street"]
CONFIGS = {  # beam trees and top-k of different sizes, and a decode without evidence
    "beam 3, top 5": SearchConfig(beam=3, topk=5),
    "beam 5, top 7, no length norm": SearchConfig(beam=5, topk=7, length_norm=0.0),
    "greedy, no trace": SearchConfig(beam=1, trace=False),
}


def assert_same(back, original, where: str = "trace") -> None:
    """``back`` equals ``original``: dataclasses field by field, lists item by item, arrays of the
    same shape, numbers within ROUNDING (-inf only as -inf), everything else exactly."""
    if dataclasses.is_dataclass(original):
        assert type(back) is type(original), where
        for f in dataclasses.fields(original):
            assert_same(getattr(back, f.name), getattr(original, f.name), f"{where}.{f.name}")
    elif isinstance(original, list):
        assert isinstance(back, list) and len(back) == len(original), where
        for k, (b, o) in enumerate(zip(back, original)):
            assert_same(b, o, f"{where}[{k}]")
    elif isinstance(original, np.ndarray):
        assert isinstance(back, np.ndarray) and back.shape == original.shape, where
        np.testing.assert_allclose(back, original, rtol=0, atol=ROUNDING, err_msg=where)
    elif isinstance(original, float):
        assert isinstance(back, float), where
        assert back == original if not np.isfinite(original) else abs(back - original) <= ROUNDING, where
    else:
        assert type(back) is type(original) and back == original, where


def round_trip(trace: Trace) -> Trace:
    """Through the JSON's text, as a file of traces holds it."""
    return Trace.loads(json.dumps(trace.to_json(), ensure_ascii=False))


@pytest.fixture(scope="module", params=["rnnsearch", "rnnencdec"])
def translator(request, tiny_checkpoints) -> Translator:
    return Translator.from_checkpoint(tiny_checkpoints[request.param])


@pytest.mark.parametrize("config", CONFIGS)
def test_traces_of_both_architectures_read_back_equal(translator, config):
    cfg = CONFIGS[config]
    for trace in translator.translate(SENTENCES, cfg):
        assert_same(round_trip(trace), trace)
    searched = translator.translate(SENTENCES[:1], cfg)[0]
    data = searched.to_json()
    assert (data["model"], data["origin"]) == (translator.arch, "this project")
    assert data["alignment_model"] == ("additive" if translator.arch == "rnnsearch" else "")
    if cfg.trace:  # the evidence is there to compare, not empty on both sides
        assert len(searched.beam) > cfg.beam and len(searched.topk[0]) == cfg.topk
        with_attention = [node.attention is not None for node in searched.beam[1:]]
        assert all(with_attention) if translator.arch == "rnnsearch" else not any(with_attention)


@pytest.fixture(scope="module")
def family_translator() -> Translator:
    """The model of docs/own-model.md, describing itself as a family of its own would."""
    ns = doc_namespace()

    class Described(ns["TinyAttention"]):
        @property
        def description(self):
            return ModelDescription("tiny-attention", True, "dot-product", origin="a lab of its own")

    torch.manual_seed(7)
    src, tgt = ns["WordVocab"]("a the dog cat runs sits".split()), ns["WordVocab"]("un le chien chat court".split())
    return Translator(Described(len(src), len(tgt), hidden=5), src, tgt, name="family")


def test_a_model_of_another_family_describes_itself_and_reads_back(family_translator):
    traces = family_translator.translate(["the dog runs", "a cat sits on the dog", "dog"], SearchConfig(beam=3, topk=3))
    for trace in traces:
        data = trace.to_json()
        assert (data["model"], data["alignment_model"], data["origin"]) == ("tiny-attention", "dot-product",
                                                                           "a lab of its own")
        assert data["attention"] is not None and data["beam"][1]["attention"] is not None
        assert_same(round_trip(trace), trace)


@pytest.mark.parametrize("arch", ["rnnsearch", "rnnencdec"])
def test_the_command_lines_json_reads_back_as_the_traces_it_printed(tiny_checkpoints, monkeypatch, capsys, arch):
    text = "a dog runs\n\nthe small cat sits\n"
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    assert main(["--checkpoint", str(tiny_checkpoints[arch]), "--json", "--beam", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    decoded = Translator.from_checkpoint(tiny_checkpoints[arch]).translate(text.splitlines(), SearchConfig(beam=3))
    assert len(lines) == len(decoded) == 3
    for number, (line, trace) in enumerate(zip(lines, decoded), start=1):
        assert_same(Trace.loads(line, f"line {number}"), trace, f"line {number}")


def handmade() -> Trace:
    """A trace of 5 source and 3 target pieces and a 7-node tree, written by no model: an
    imported one's description, energies -inf at a masked position, a cut input."""
    rng = np.random.default_rng(3)
    attention = rng.dirichlet(np.ones(5), size=3).astype(np.float32)  # (3, 5)
    energies = np.log(attention)
    energies[2, 4] = -np.inf
    nodes = [BeamNode(0, None, 0, "<s>", 2, 0.0, 0.0, "best")]
    for k, (parent, token, status) in enumerate([(0, "▁le", "best"), (0, "▁la", "kept"), (1, "▁chat", "best"),
                                                 (1, "</s>", "pruned"), (3, "</s>", "best"), (2, "▁chien", "kept")],
                                                start=1):
        step = nodes[parent].step + 1
        nodes.append(BeamNode(k, parent, step, token, 10 + k, -0.5 * k - 1 / 3, (-0.5 * k - 1 / 3) / step, status,
                              attention[min(step, 3) - 1]))
    nodes[4].norm_score = float("-inf")
    topk = [[Candidate(f"p{i}{j}", 20 + j, round(0.9 / (j + 2), 6)) for j in range(3)] for i in range(3)]
    return Trace("joey-rnn", "the cat", ["▁the", "▁c", "at", "</s>", "▁x"], [5, 6, 7, 3, 8], [10, 12, 3],
                 ["▁le", "▁chat", "</s>"], "le chat", -2.0 / 3, -2.0, [-1 / 3, -2 / 3, -1.0], attention, energies, topk,
                 nodes, truncated=True, alignment_model="bahdanau", origin="Joey NMT 2.3.0 (imported)")


def test_a_handmade_trace_reads_back_with_its_infinities():
    trace = handmade()
    back = round_trip(trace)
    assert_same(back, trace)
    assert back.energies[2, 4] == -np.inf and back.beam[4].norm_score == -np.inf and back.truncated


def _set(path, value):
    def change(data):
        *inner, last = path
        for key in inner:
            data = data[key]
        data[last] = value
    return change


def _drop(path):
    def change(data):
        *inner, last = path
        for key in inner:
            data = data[key]
        del data[last]
    return change


def _cut(path, keep):
    def change(data):
        *inner, last = path
        for key in inner:
            data = data[key]
        data[last] = data[last][:keep]
    return change


MALFORMED = [  # (what is wrong, how to make it, what the error says)
    ("an older schema", _set(["schema"], 1), "trace schema 1, this reader reads schema 2"),
    ("no schema", _drop(["schema"]), "missing field 'schema'"),
    ("no target ids", _drop(["target_ids"]), "missing field 'target_ids'"),
    ("an empty model name", _set(["model"], ""), "field 'model' is empty"),
    ("a number as the origin", _set(["origin"], 7), "field 'origin' must be a string, got an integer"),
    ("text for a score", _set(["score"], "high"), "field 'score' must be a number or null, got a string"),
    ("true for a number", _set(["logprob"], True), "field 'logprob' must be a number or null, got true/false"),
    ("1 for true", _set(["truncated"], 1), "field 'truncated' must be true or false, got an integer"),
    ("a float id", _set(["source_ids", 0], 5.0), "field 'source_ids' must be a list of integers, got a number"),
    ("ids for fewer tokens", _cut(["source_ids"], 4), "field 'source_ids' has 4 ids for 5 tokens"),
    ("a token that is not text", _set(["target_tokens", 1], None), "field 'target_tokens' must be a list of strings"),
    ("a ragged attention matrix", _cut(["attention", 1], 4), "field 'attention' is ragged: its rows have [4, 5]"),
    ("a row too few", _cut(["energies"], 2), "field 'energies' is 2 x 5; expected 3 x 5"),
    ("a row that is no list", _set(["attention", 0], None), "field 'attention[0]' must be a list, got null"),
    ("text in a matrix", _set(["energies", 2, 0], "0.5"), "field 'energies[2]' must be a list of numbers"),
    ("log-probabilities of 2 steps", _cut(["step_logprobs"], 2), "field 'step_logprobs' has 2 steps"),
    ("a candidate without its probability", _drop(["topk", 1, 0, "prob"]), "topk[1][0]: missing field 'prob'"),
    ("a step of candidates that is no list", _set(["topk", 2], {}), "field 'topk[2]' must be a list, got an object"),
    ("a node out of place", _set(["beam", 2, "id"], 5), "beam[2]: field 'id' is 5; a node's id is its position"),
    ("a second root", _set(["beam", 3, "parent"], None), "beam[3]: field 'parent' is None"),
    ("a parent after its child", _set(["beam", 1, "parent"], 4), "beam[1]: field 'parent' is 4"),
    ("an unknown status", _set(["beam", 5, "status"], "maybe"), "beam[5]: field 'status' is 'maybe'"),
    ("a node two steps after its parent", _set(["beam", 6, "step"], 3), "beam[6]: field 'step' is 3"),
    ("a root after the start", _set(["beam", 0, "step"], 1), "beam[0]: field 'step' is 1"),
    ("a node's attention over 3 tokens", _cut(["beam", 6, "attention"], 3),
     "beam[6]: field 'attention' has 3 values; expected 5"),
    ("a node that is no object", _set(["beam", 2], [0]), "beam[2]: expected a JSON object, got a list"),
]


@pytest.mark.parametrize("what, change, message", MALFORMED, ids=[case[0] for case in MALFORMED])
def test_a_malformed_trace_is_refused_naming_its_field(what, change, message):
    data = copy.deepcopy(handmade().to_json())
    Trace.from_json(copy.deepcopy(data))  # as written, it reads
    change(data)
    with pytest.raises(TraceError) as raised:
        Trace.from_json(data, "line 7")
    assert str(raised.value).startswith("line 7: ") and message in str(raised.value)


@pytest.mark.parametrize("text, message", [("[1, 2]", "expected a JSON object, got a list"),
                                          ('{"schema": 2, "model": ', "not JSON"),
                                          ('{"model": "rnnsearch"}', "missing field 'schema'")])
def test_a_line_that_is_no_trace_is_refused(text, message):
    with pytest.raises(TraceError, match=message):
        Trace.loads(text)


def test_a_trace_error_is_a_data_error_the_command_lines_report():
    assert issubclass(TraceError, DataError)
