"""Models students train in the PyTorch, bentrevett and d2l tutorials: imported from the files the
contract in docs/own-model.md has them save, they decode token for token as the tutorials' own
loops do (tests/model/tutorial_references.py, written from the tutorials' descriptions), with
attention within 1e-4; what cannot be imported is refused with one sentence naming the file."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import torch

from model.checkpoints.families import load_model
from model.foreign.tutorials.family import import_tutorial
from model.core.errors import CheckpointError, DataError
from model.decoding.search import SearchConfig
from model.decoding.translator import Translator
from tests.conftest import make_pairs
from tests.model import tutorial_references as ref
from tests.model.explanation_checks import assert_shared_forward_equals_one_variant_each
from tests.model.test_cli_errors import run_cli

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tutorials"
WEIGHTS = {"pytorch": "model.pt", "bentrevett": "tut3-model.pt", "d2l": "model.pt"}
GREEDY = SearchConfig(beam=1, trace=True)


def files(kind: str) -> tuple[Path, Path]:
    return FIXTURES / kind / WEIGHTS[kind], FIXTURES / kind / "vocab.json"


def vocab_json(kind: str) -> dict:
    return json.loads(files(kind)[1].read_text())


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("tutorials")
    return {kind: import_tutorial(kind, *files(kind), out / kind) for kind in WEIGHTS}


# ---------------------------------------------------------------- the tutorials' own decoding


def pytorch_reference(state: dict | None = None):
    vocab, saved = vocab_json("pytorch"), torch.load(files("pytorch")[0], weights_only=True)
    state = state or saved
    langs = []
    for side in ("source", "target"):
        lang = ref.Lang()
        lang.index2word = {int(k): w for k, w in vocab[side].items()}
        lang.word2index = {w: i for i, w in lang.index2word.items()}
        langs.append(lang)
    hidden = state["encoder"]["embedding.weight"].shape[1]
    encoder, decoder = ref.EncoderRNN(len(langs[0].index2word), hidden), ref.AttnDecoderRNN(hidden, len(langs[1].index2word))
    encoder.load_state_dict(state["encoder"])
    decoder.load_state_dict(state["decoder"])
    encoder.eval(), decoder.eval()
    return lambda text: ref.pytorch_evaluate(encoder, decoder, text, *langs)


def bentrevett_reference(state: dict | None = None):
    vocab = vocab_json("bentrevett")
    state = state or torch.load(files("bentrevett")[0], weights_only=True)
    enc_h, dec_h = state["encoder.rnn.weight_hh_l0"].shape[1], state["decoder.rnn.weight_hh_l0"].shape[1]
    model = ref.Seq2Seq(ref.BEncoder(len(vocab["source"]), state["encoder.embedding.weight"].shape[1], enc_h, dec_h),
                        ref.BDecoder(len(vocab["target"]), state["decoder.embedding.weight"].shape[1], enc_h, dec_h))
    model.load_state_dict(state)
    model.eval()
    # spaCy's rules give these sentences' words and punctuation (the import's fallback split, checked below)
    return lambda text: ref.translate_sentence(re.findall(r"\w+|[^\w\s]", text), model, vocab["source"], vocab["target"])


def d2l_reference(state: dict | None = None):
    vocab = vocab_json("d2l")
    state = state or torch.load(files("d2l")[0], weights_only=True)
    layers = sum(1 for k in state if k.startswith("encoder.rnn.rnn.weight_hh_l"))
    model = ref.EncoderDecoder(
        ref.Seq2SeqEncoder(len(vocab["source"]), state["encoder.embedding.weight"].shape[1],
                           state["encoder.rnn.rnn.weight_hh_l0"].shape[1], layers),
        ref.Seq2SeqAttentionDecoder(len(vocab["target"]), state["decoder.embedding.weight"].shape[1],
                                    state["decoder.rnn.weight_hh_l0"].shape[1], layers))
    array, valid = ref.d2l_array("a", vocab["source"], vocab["num_steps"])
    model(array, torch.zeros(1, 1, dtype=torch.long), valid)  # the lazy layers take their sizes
    model.load_state_dict(state)
    model.eval()
    return lambda text: ref.d2l_predict(model, text, vocab["source"], vocab["target"], vocab["num_steps"])


REFERENCES = {"pytorch": pytorch_reference, "bentrevett": bentrevett_reference, "d2l": d2l_reference}
END = {"pytorch": "<EOS>", "bentrevett": "<eos>", "d2l": "<eos>"}


def tutorial_tokens(kind: str, reference, text: str) -> tuple[list[str], torch.Tensor]:
    """The tutorial's output tokens as a trace writes them (its end token as </s>) and its attention."""
    tokens, attention = reference(text)
    if kind == "bentrevett":
        tokens = tokens[1:]  # translate_sentence returns <sos> first
    return ["</s>" if t == END[kind] else t for t in tokens], attention


def sentences(kind: str, n: int = 40) -> list[str]:
    """Raw sentences as a student types them: capitals, a full stop, the tutorial's source language."""
    pairs = make_pairs(n, seed=77)
    return [(en if kind == "d2l" else fr).capitalize() + "." for en, fr in pairs]


def assert_same_as_the_tutorial(kind: str, folder: Path, texts: list[str], reference) -> None:
    traces = Translator.from_checkpoint(folder).translate(texts, GREEDY)
    for text, trace in zip(texts, traces):
        tokens, attention = tutorial_tokens(kind, reference, text)
        assert trace.target_tokens == tokens, text
        assert trace.attention.shape == tuple(attention.shape), text
        assert abs(trace.attention - attention.numpy()).max() < 1e-4, text


@pytest.mark.parametrize("kind", list(WEIGHTS))
def test_greedy_outputs_and_attention_are_the_tutorials(kind, imported):
    assert_same_as_the_tutorial(kind, imported[kind], sentences(kind), REFERENCES[kind]())


@pytest.mark.parametrize("kind, text", [
    ("bentrevett", "Le zèbre court dans le parc."),  # zèbre was seen once: <unk>
    ("d2l", "A zebra runs."),
    ("d2l", "The big dog runs in the park on the street."),  # trimmed to num_steps: no <eos> read
    ("pytorch", "Le chien, le CHAT : un Enfant court..."),  # capitals and punctuation that normalisation drops
])
def test_unknown_words_trimming_and_punctuation_as_the_tutorial(kind, text, imported):
    assert_same_as_the_tutorial(kind, imported[kind], [text], REFERENCES[kind]())


def test_unknown_words_read_as_unk_where_the_tutorial_has_it(imported):
    trace = Translator.from_checkpoint(imported["bentrevett"]).translate(["Le zèbre court."], GREEDY)[0]
    assert trace.source_tokens[:3] == ["<sos>", "le", "<unk>"] and trace.source_tokens[-1] == "</s>"
    d2l = Translator.from_checkpoint(imported["d2l"]).translate(["The big dog runs in the park on the street."], GREEDY)[0]
    assert len(d2l.source_tokens) == vocab_json("d2l")["num_steps"] and "</s>" not in d2l.source_tokens


def test_the_pytorch_tutorials_model_refuses_unknown_words_naming_them(imported):
    translator = Translator.from_checkpoint(imported["pytorch"])
    with pytest.raises(DataError, match="girafe, xyz"):
        translator.translate(["Le girafe xyz court."], GREEDY)


def test_the_command_line_goes_on_after_a_sentence_it_cannot_read(imported):
    lines = "Le chien court.\nLe girafe court.\nUn chat mange.\n"
    result = run_cli("model.translate", "--checkpoint", imported["pytorch"], "--beam", "1", "--json",
                     stdin=lines.encode())
    assert result.returncode == 0
    out = [json.loads(line) for line in result.stdout.decode().splitlines()]
    assert [("error" in o) for o in out] == [False, True, False]
    assert out[1]["line"] == 2 and "girafe" in out[1]["error"]
    assert b"line 2" in result.stderr
    reference = pytorch_reference()
    for text, o in zip(lines.splitlines()[::2], out[::2]):
        assert o["target_tokens"] == tutorial_tokens("pytorch", reference, text)[0]


def _with_output_bias(kind: str, token: str, value: float) -> dict:
    """The fixture's weights with the output layer's bias for ``token`` set to ``value``."""
    vocab = vocab_json(kind)
    words = list(vocab["target"].values()) if kind == "pytorch" else vocab["target"]
    state = torch.load(files(kind)[0], weights_only=True)
    part, name = {"pytorch": ("decoder", "out.bias"), "bentrevett": (None, "decoder.fc_out.bias"),
                  "d2l": (None, "decoder.dense.bias")}[kind]
    (state[part] if part else state)[name][words.index(token)] = value
    return state


@pytest.mark.parametrize("kind, token", [("pytorch", "EOS"), ("d2l", "<eos>"), ("bentrevett", "<eos>")])
def test_an_output_that_never_ends_stops_at_the_tutorials_cap_without_an_end(kind, token, tmp_path):
    """The end token made impossible: the tutorial's loop runs to its cap (10, 25, num_steps), and so does the import."""
    state = _with_output_bias(kind, token, -1e4)
    folder = _import_state(kind, state, tmp_path)
    cap = {"pytorch": ref.MAX_LENGTH, "bentrevett": 25, "d2l": vocab_json(kind).get("num_steps")}[kind]
    text = sentences(kind, 3)[0]
    trace = Translator.from_checkpoint(folder).translate([text], GREEDY)[0]
    assert len(trace.target_tokens) == cap and "</s>" not in trace.target_tokens
    assert_same_as_the_tutorial(kind, folder, [text], REFERENCES[kind](state))


@pytest.mark.parametrize("kind, token", [("pytorch", "SOS"), ("bentrevett", "<pad>"), ("d2l", "<unk>")])
def test_a_special_token_the_model_emits_is_shown_as_the_tutorial_shows_it(kind, token, tmp_path):
    """Plain argmax over the whole vocabulary: no token is masked, specials included."""
    state = _with_output_bias(kind, token, 50.0)
    folder = _import_state(kind, state, tmp_path)
    text = sentences(kind, 3)[1]
    trace = Translator.from_checkpoint(folder).translate([text], GREEDY)[0]
    assert trace.target_tokens[0] == token
    assert_same_as_the_tutorial(kind, folder, [text], REFERENCES[kind](state))


def _import_state(kind: str, state: dict, tmp_path: Path) -> Path:
    weights = tmp_path / WEIGHTS[kind]
    torch.save(state, weights)
    return import_tutorial(kind, weights, files(kind)[1], tmp_path / "imported")


def test_beam_search_and_the_imported_folder_open_like_any_other(imported):
    for kind, folder in imported.items():
        model, src_vocab, tgt_vocab, raw = load_model(folder)
        assert raw["family"] == "tutorial" and raw["tutorial"]["kind"] == kind
        assert model.description.differences and model.description.origin.endswith("(imported)")
        trace = Translator(model, src_vocab, tgt_vocab).translate(sentences(kind, 2)[:1], SearchConfig(beam=3))[0]
        assert trace.beam is not None and trace.attention.shape[0] == len(trace.target_tokens)
        card = json.loads((folder / "card.json").read_text())
        assert card["tutorial"]["kind"] == kind and card["tutorial"]["licence"]


# ---------------------------------------------------------------- what cannot be imported


class Runs:
    """A pickled object that would write a file if it were ever unpickled."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (Path.write_text, (Path(self.path), "ran"))


def _write(path: Path, content) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif isinstance(content, str):
        path.write_text(content)
    else:
        torch.save(content, path)
    return path


def _bad_cases(tmp_path: Path) -> list[tuple[str, Path, Path, str]]:
    pt_w, pt_v = files("pytorch")
    bt_w, bt_v = files("bentrevett")
    d2_w, d2_v = files("d2l")
    pt_state = torch.load(pt_w, weights_only=True)
    nan = {part: dict(sd) for part, sd in pt_state.items()}
    nan["decoder"]["out.bias"] = torch.full_like(nan["decoder"]["out.bias"], float("nan"))
    vocab = json.loads(pt_v.read_text())
    short = dict(vocab, target={k: v for k, v in list(vocab["target"].items())[:-1]})
    wide = {"encoder": {**pt_state["encoder"], "embedding.weight": torch.zeros(200_001, 1)}, "decoder": pt_state["decoder"]}
    return [
        ("pytorch", bt_w, pt_v, "expected a dictionary with the encoder's and the decoder's state_dict"),
        ("bentrevett", d2_w, bt_v, "not the bentrevett tutorial's model"),
        ("d2l", _write(tmp_path / "d2l-model.pt", {"encoder.embedding.weight": torch.zeros(3, 2)}), d2_v,
         "not the d2l tutorial's model"),
        ("pytorch", pt_w, _write(tmp_path / "short.json", json.dumps(short)),
         "the target vocabulary has"),
        ("pytorch", _write(tmp_path / "whole.pt", b""), pt_v, "refused by PyTorch's restricted loader"),
        ("pytorch", _write(tmp_path / "pickled.pt", Runs(tmp_path / "ran.txt")), pt_v,
         "refused by PyTorch's restricted loader"),
        ("pytorch", pt_w, _write(tmp_path / "bad.json", "{not json"), "not valid JSON"),
        ("pytorch", pt_w, _write(tmp_path / "deep.json", "[" * 100_000 + "]" * 100_000), "not valid JSON"),
        ("pytorch", pt_w, _write(tmp_path / "latin1.json", "{\"source\": \"\xe9\"}".encode("latin-1")), "not UTF-8"),
        ("pytorch", pt_w, _write(tmp_path / "list.json", "[1, 2]"), "expected a JSON object"),
        ("pytorch", pt_w, _write(tmp_path / "nokeys.json", json.dumps({"source": vocab["source"]})), "no 'target'"),
        ("bentrevett", bt_w, _write(tmp_path / "empty.json", json.dumps({"source": [], "target": []})), "is empty"),
        ("bentrevett", bt_w, _write(tmp_path / "ints.json", json.dumps({"source": [1, 2], "target": [3]})),
         "must be a list of words"),
        ("d2l", d2_w, _write(tmp_path / "steps.json", json.dumps(dict(json.loads(d2_v.read_text()), num_steps=-3))),
         "'num_steps' must be a whole number"),
        ("pytorch", _write(tmp_path / "nan.pt", nan), pt_v, "NaN or infinite"),
        ("pytorch", _write(tmp_path / "wide.pt", wide), _write(tmp_path / "wide.json", json.dumps(
            dict(vocab, source=[f"w{i}" for i in range(200_001)]))), "outside this project's limits"),
        ("pytorch", tmp_path / "absent.pt", pt_v, "missing (the weights file"),
        ("bentrevett", bt_w, _write(tmp_path / "nospecials.json", json.dumps(
            {"source": ["a"] * len(json.loads(bt_v.read_text())["source"]), "target": json.loads(bt_v.read_text())["target"]})),
         "has no '<pad>'"),
    ]


def test_every_bad_file_is_refused_with_one_sentence_naming_it_and_nothing_is_written(tmp_path):
    for kind, weights, vocab, expected in _bad_cases(tmp_path):
        out = tmp_path / f"out-{kind}-{weights.name}-{vocab.name}"
        with pytest.raises(CheckpointError) as caught:
            import_tutorial(kind, weights, vocab, out)
        message = str(caught.value)
        assert expected in message, (weights.name, vocab.name, message)
        assert weights.name in message or vocab.name in message, message
        assert "\n" not in message
        assert not out.exists(), "nothing is written for a refused import"
    assert not (tmp_path / "ran.txt").exists(), "the pickle's code never ran"


def test_the_import_command_says_what_it_wrote_or_why_not(tmp_path):
    weights, vocab = files("d2l")
    ok = run_cli("model.checkpoint", "import-tutorial", "d2l", weights, vocab, tmp_path / "ok")
    assert ok.returncode == 0 and b"wrote" in ok.stdout
    again = run_cli("model.checkpoint", "import-tutorial", "d2l", weights, vocab, tmp_path / "ok")
    assert again.returncode == 2 and b"not an empty folder" in again.stderr
    wrong = run_cli("model.checkpoint", "import-tutorial", "fairseq", weights, vocab, tmp_path / "no")
    assert wrong.returncode == 2 and b"invalid choice" in wrong.stderr


def test_the_fallback_tokenizer_splits_words_and_punctuation_as_spacy_does_for_such_sentences():
    from model.foreign.tutorials.bentrevett import WORDS_AND_PUNCTUATION

    assert WORDS_AND_PUNCTUATION.findall("Ein Mann, der ein T-Shirt trägt, läuft.") == \
        ["Ein", "Mann", ",", "der", "ein", "T-Shirt", "trägt", ",", "läuft", "."]


def test_a_copied_folder_translates_the_same(imported, tmp_path):
    copy = shutil.copytree(imported["bentrevett"], tmp_path / "copy")
    texts = sentences("bentrevett", 5)
    a = Translator.from_checkpoint(imported["bentrevett"]).translate(texts, GREEDY)
    b = Translator.from_checkpoint(copy).translate(texts, GREEDY)
    assert [t.target_tokens for t in a] == [t.target_tokens for t in b]


@pytest.mark.parametrize("kind", list(WEIGHTS))
def test_the_sentence_space_holds_the_tutorial_encoders_sentence_vector(kind, imported, tmp_path):
    """s_0 (the first decoder state) of each sample sentence; sentences the vocabulary cannot read are left out."""
    sample = tmp_path / "sample.txt"
    texts = sentences(kind, 12) + ["Le girafe xyz court."]
    sample.write_text("\n".join(texts) + "\n")
    result = run_cli("model.sentence_space", "--checkpoint", imported[kind], "--text", texts[0], "--sentences", sample,
                     "--k", "3", "--json", "--words")
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    readable = len(texts) - (1 if kind == "pytorch" else 0)
    assert found["vector"] == "s_0" and found["sample"] == readable
    assert found["neighbours"][0]["sentence"] == texts[0] and found["words"]


def test_integrated_gradients_share_their_forward_pass_on_each_tutorials_model(imported):
    for kind, folder in imported.items():
        translator = Translator.from_checkpoint(folder)
        trace = translator.translate(sentences(kind, 2)[:1], SearchConfig(beam=3))[0]
        assert_shared_forward_equals_one_variant_each(translator.model, trace.source_ids, trace.target_ids)
