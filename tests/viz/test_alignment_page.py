"""AppTest runs of the Alignment page with the tiny models: a gold set from a folder and from
uploads, the AER table, the per-sentence table, the answer-key heatmap, and bad files."""
import json
import re

import pytest
from streamlit.testing.v1 import AppTest

from ..conftest import start_app
from .test_translate_page import canvas

EN = "a dog runs\nthe small cat\nthe red ball\n"
FR = "un chien court\nle petit chat\nla balle rouge\n"
WA = "1 1 1 S\n1 2 2 S\n1 3 3 S\n2 1 1 S\n2 2 2 P\n2 3 3 S\n3 1 1 S\n3 2 3 S\n3 3 2 S\n"


def _script(settings):
    from viz.pages import alignment as alignment_page

    alignment_page.render(settings)


@pytest.fixture
def gold_folder(tmp_path, checkpoint_dir, monkeypatch):
    """The app started with --align-dir at a folder holding one gold set; its AppSettings."""
    for suffix, text in ((".en", EN), (".fr", FR), (".wa", WA)):
        (tmp_path / f"toy{suffix}").write_text(text)
    return start_app(monkeypatch, "--checkpoints", checkpoint_dir, "--align-dir", tmp_path)


def answer_keys(at) -> list[dict]:
    """The answer-key heatmaps the page drew (on a canvas, viz/pages/parts/canvas_charts.py)."""
    return canvas(at, "matrix")


def test_a_built_in_gold_set_is_measured_and_drawn_with_its_answer_key(gold_folder):
    at = AppTest.from_function(_script, args=(gold_folder,), default_timeout=120).run()
    assert not at.exception, at.exception
    assert at.selectbox(key="align_builtin").value == "toy"
    at.multiselect(key="align_methods").set_value(["attention", "saliency", "diagonal"]).run()
    at.button(key="align_run").click().run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    assert list(zip(table["model"], table["method"])) == [
        ("rnnsearch-tiny", "attention"), ("rnnsearch-tiny", "saliency"), ("rnnencdec-tiny", "saliency"),
        ("(baseline)", "diagonal")]
    assert table["AER"].between(0, 1).all() and (table["sentences"] == 3).all()
    diagonal = table[table["method"] == "diagonal"].iloc[0]
    # by hand: the diagonal hits 3, 2 and 1 sure links and 3, 3 and 1 possible ones of 8 sure, with 9 links
    assert diagonal["AER"] == pytest.approx(1 - (3 + 2 + 1 + 3 + 3 + 1) / (9 + 8), abs=1e-3)
    sentences = at.dataframe[1].value
    assert sorted(sentences["sentence"]) == [1, 2, 3] and list(sentences["AER"]) == sorted(sentences["AER"], reverse=True)
    (key,) = answer_keys(at)
    assert [links["name"] for links in key["links"]] == ["gold: sure", "gold: possible", "picked"]
    assert [links["shape"] for links in key["links"]] == ["square", "ring", "cross"] and key["zmax"] is None
    (check,) = [c.value for c in at.caption if c.value.startswith("**How faithful is this picture?**")]
    assert "Forced to write the human translation, rnnsearch" in check and "how well the picture aligns" in check
    assert re.search(r"changes by ([−+]\d\.\d\d|0\.00) when .* and by ([−+]\d\.\d\d|0\.00) when", check)
    first = at.number_input(key="align_sentence").value - 1
    sure = {tuple(cell) for cell in key["links"][0]["cells"]}
    gold = [{(int(e) - 1, int(f) - 1) for s, e, f, k in (line.split() for line in WA.splitlines())
             if int(s) == first + 1 and k == "S"}]
    assert sure == gold[0]
    at.selectbox(key="align_row").set_value(3).run()  # the diagonal: no model to be faithful to
    assert not at.exception, at.exception
    assert not [c for c in at.caption if c.value.startswith("**How faithful")]
    assert any(c.value.startswith("This picture is scored against human links") for c in at.caption)


def test_uploaded_files_and_a_bad_links_file(gold_folder):
    at = AppTest.from_function(_script, args=(gold_folder,), default_timeout=120).run()
    at.radio(key="align_source").set_value("Upload three files").run()
    at.file_uploader(key="align_src").upload("mine.en", EN.encode()).run()
    at.file_uploader(key="align_tgt").upload("mine.fr", FR.encode()).run()
    at.file_uploader(key="align_links").upload("mine.align", b"0-0 1-1 2-2\n0-0 1?1 2-2\n0-0 1-2 2-1\n").run()
    at.multiselect(key="align_methods").set_value(["diagonal"]).run()
    at.button(key="align_run").click().run()
    assert not at.exception, at.exception
    assert list(at.dataframe[0].value["method"]) == ["diagonal"]
    at.file_uploader(key="align_links").upload("bad.wa", b"1 9 1 S\n").run()
    assert not at.exception
    assert [e.value for e in at.error] == [r"bad\.wa, line 1\: position 9\-1 is past the sentence \(3 source and 3 target words\)"]


@pytest.mark.parametrize("english, links, message", [
    (b"\x00\x01\x02binary", b"0-0\n", "mine.en: contains NUL bytes"),
    (b"", b"", "line counts differ"),  # an empty English file against three French lines
    ("é".encode("latin-1") + b"\n" * 3, b"0-0\n" * 3, "mine.en"),  # not UTF-8
])
def test_bad_uploads_get_one_clear_error_naming_the_users_file(gold_folder, english, links, message):
    at = AppTest.from_function(_script, args=(gold_folder,), default_timeout=120).run()
    at.radio(key="align_source").set_value("Upload three files").run()
    at.file_uploader(key="align_src").upload("mine.en", english).run()
    at.file_uploader(key="align_tgt").upload("mine.fr", FR.encode()).run()
    at.file_uploader(key="align_links").upload("mine.align", links).run()
    assert not at.exception, at.exception
    (error,) = [e.value.replace("\\", "") for e in at.error]
    assert message in error and "/tmp" not in error


def test_without_gold_sets_the_page_offers_uploads_and_names_the_flag(checkpoint_dir, tmp_path, monkeypatch):
    settings = start_app(monkeypatch, "--checkpoints", checkpoint_dir, "--align-dir", tmp_path / "no-gold")
    at = AppTest.from_function(_script, args=(settings,), default_timeout=120).run()
    assert not at.exception, at.exception
    assert at.radio(key="align_source").options == ["Upload three files"]
    (notice,) = [i.value for i in at.info]
    assert "--align-dir DIR" in notice


# ---------------------------------------------------------------- results the cards record


def record(folder, gold_name: str, rows: list[dict], digest: str, sentences: int = 3) -> None:
    """Write ``rows`` into a checkpoint's card as ``python -m model.align --card`` does."""
    path = folder / "card.json"
    card = json.loads(path.read_text()) if path.is_file() else {"name": folder.name, "arch": "transformer"}
    card.setdefault("alignment", {})[gold_name] = {"rows": rows, "command": f"python -m model.align ... {folder.name}",
                                                   "sentences": sentences, "gold_digest": digest}
    path.write_text(json.dumps(card))


def row(model, method, extraction, aer):
    return {"model": model, "method": method, "extraction": extraction, "aer": aer, "precision": 0.5, "recall": 0.25,
            "sentences": 3}


def toy_digest(folder):
    from model.scoring.attention_alignment import gold_digest
    from model.scoring.word_alignment import read_gold

    return gold_digest(read_gold(folder / "toy.en", folder / "toy.fr", folder / "toy.wa"))


@pytest.fixture
def own(tmp_path, tiny_checkpoints, monkeypatch):
    """(AppSettings, checkpoint root): the app at a root of its own (a test writes into cards) and
    a gold set folder holding "toy"."""
    import shutil

    root = tmp_path / "checkpoints"
    for arch, path in tiny_checkpoints.items():
        shutil.copytree(path, root / f"{arch}-tiny")
    gold = tmp_path / "gold"
    gold.mkdir()
    for suffix, text in ((".en", EN), (".fr", FR), (".wa", WA)):
        (gold / f"toy{suffix}").write_text(text)
    return start_app(monkeypatch, "--checkpoints", root, "--align-dir", gold), root


@pytest.fixture
def scored_names(monkeypatch):
    """The names of the models the page forces through a gold set, in order."""
    from viz.serving import alignments

    names, real = [], alignments.score_model
    monkeypatch.setattr(alignments, "score_model", lambda name, *a, **k: names.append(name) or real(name, *a, **k))
    return names


def _recorded_app(own, digest, models=("rnnsearch-tiny", "rnnencdec-tiny")):
    settings, checkpoint_dir = own
    if "rnnsearch-tiny" in models:
        record(checkpoint_dir / "rnnsearch-tiny", "toy", [row("rnnsearch-tiny", "attention", "target", 0.111),
                                                          row("rnnsearch-tiny", "saliency", "target", 0.444),
                                                          row("rnnsearch-tiny", "attention", "source", 0.555),
                                                          row(None, "diagonal", "target", 0.333)], digest)
    if "rnnencdec-tiny" in models:
        record(checkpoint_dir / "rnnencdec-tiny", "toy", [row("rnnencdec-tiny", "saliency", "target", 0.222),
                                                          row(None, "diagonal", "target", 0.333)], digest)
    at = AppTest.from_function(_script, args=(settings,), default_timeout=120).run()
    at.multiselect(key="align_models").set_value(["rnnsearch-tiny", "rnnencdec-tiny"]).run()
    at.multiselect(key="align_methods").set_value(["attention", "saliency", "diagonal"]).run()
    assert not at.exception, at.exception
    return at


def test_a_built_in_gold_set_shows_the_recorded_table_at_once(own, scored_names):
    at = _recorded_app(own, toy_digest(own[0].align_dir))
    table = at.dataframe[0].value
    assert list(zip(table["model"], table["method"], table["AER"], table["from"])) == [
        ("rnnsearch-tiny", "attention", 0.111, "card"), ("rnnsearch-tiny", "saliency", 0.444, "card"),
        ("rnnencdec-tiny", "saliency", 0.222, "card"), ("(baseline)", "diagonal", 0.333, "card")]
    assert scored_names == []  # nothing was run
    assert len(at.dataframe) == 1 and not answer_keys(at)  # sentence by sentence needs the models run
    # Measure runs every model for the drawings; the table is then the one measured now
    at.button(key="align_run").click().run()
    assert not at.exception, at.exception
    assert scored_names == ["rnnsearch-tiny", "rnnencdec-tiny"]
    assert "from" not in at.dataframe[0].value and len(answer_keys(at)) == 1


@pytest.mark.parametrize("digest, sentences", [("0" * 64, 3), ("", 4)], ids=["other sentences", "other size"])
def test_results_of_other_sentences_are_not_shown(own, scored_names, digest, sentences):
    settings, checkpoint_dir = own
    for name in ("rnnsearch-tiny", "rnnencdec-tiny"):
        record(checkpoint_dir / name, "toy", [row(name, "attention", "target", 0.111)], digest, sentences)
    at = AppTest.from_function(_script, args=(settings,), default_timeout=120).run()
    assert not at.exception, at.exception
    assert not at.dataframe and "Press Measure to score the chosen sources" in " ".join(c.value for c in at.caption)


def test_measure_runs_only_what_the_cards_do_not_record(own, scored_names):
    at = _recorded_app(own, toy_digest(own[0].align_dir), models=("rnnsearch-tiny",))
    assert "not recorded there: rnnencdec-tiny" in " ".join(c.value for c in at.caption)
    at.button(key="align_run").click().run()
    assert not at.exception, at.exception
    assert scored_names == ["rnnencdec-tiny"]
    table = at.dataframe[0].value
    assert list(zip(table["model"], table["method"], table["from"])) == [
        ("rnnsearch-tiny", "attention", "card"), ("rnnsearch-tiny", "saliency", "card"),
        ("rnnencdec-tiny", "saliency", "measured now"), ("(baseline)", "diagonal", "card")]
    at.button(key="align_all").click().run()  # then everything, for the drawings
    assert scored_names == ["rnnencdec-tiny", "rnnsearch-tiny", "rnnencdec-tiny"]
    assert len(answer_keys(at)) == 1


def test_models_of_both_directions_get_the_combined_rows_and_their_drawing(own):
    """A fr->en model beside the en->fr RNNsearch (a fresh initialisation: the plumbing, not what
    it learnt): rows "A + B" for both combinations, and the drawing picks the combined links."""
    from dataclasses import replace

    import torch

    from model.checkpoints.folder import load_checkpoint, save_checkpoint
    from model.core.config import TrainConfig, dataclass_from_dict
    from model.network.nmt_model import NMTModel
    from model.scoring.word_alignment import BOTH_DIRECTIONS

    settings, checkpoint_dir = own
    model, src_vocab, tgt_vocab, raw = load_checkpoint(checkpoint_dir / "rnnsearch-tiny")
    torch.manual_seed(7)
    train = replace(dataclass_from_dict(TrainConfig, raw["train"]), src_lang="fr", tgt_lang="en")
    save_checkpoint(checkpoint_dir / "fr-en-tiny", NMTModel(replace(model.config, src_vocab_size=len(tgt_vocab),
                                                                    tgt_vocab_size=len(src_vocab))),
                    tgt_vocab, src_vocab, train)
    at = AppTest.from_function(_script, args=(settings,), default_timeout=120).run()
    at.multiselect(key="align_models").set_value(["rnnsearch-tiny", "fr-en-tiny"]).run()
    at.multiselect(key="align_methods").set_value(["attention"]).run()
    at.button(key="align_run").click().run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    assert list(zip(table["model"], table["links"])) == [("rnnsearch-tiny", "target"), ("fr-en-tiny", "target")] + [
        ("rnnsearch-tiny + fr-en-tiny", how) for how in BOTH_DIRECTIONS]
    at.selectbox(key="align_row").set_value(2).run()  # the intersection
    assert not at.exception, at.exception
    (key,) = answer_keys(at)
    picked = {tuple(cell) for cell in key["links"][-1]["cells"]}
    assert key["links"][-1]["name"] == "picked" and picked  # the intersection of two directions' best links


def test_recorded_rows_of_both_directions_show_when_both_models_are_chosen(own, scored_names):
    """The cards of an en->fr and a fr->en model of the same text each record the combined rows:
    shown at once with both models chosen, and not with one of them."""
    import shutil

    from model.scoring.word_alignment import BOTH_DIRECTIONS

    settings, root = own
    shutil.copytree(root / "rnnsearch-tiny", root / "fr-en-tiny")
    config = json.loads((root / "fr-en-tiny" / "config.json").read_text())
    config["train"].update(src_lang="fr", tgt_lang="en")
    (root / "fr-en-tiny" / "config.json").write_text(json.dumps(config))
    pair = "rnnsearch-tiny + fr-en-tiny"
    combined = [row(pair, "attention", how, 0.1 * k) for k, how in enumerate(BOTH_DIRECTIONS, 1)]
    digest = toy_digest(settings.align_dir)
    record(root / "rnnsearch-tiny", "toy", [row("rnnsearch-tiny", "attention", "target", 0.6)] + combined, digest)
    record(root / "fr-en-tiny", "toy", [row("fr-en-tiny", "attention", "target", 0.7)] + combined, digest)
    at = AppTest.from_function(_script, args=(settings,), default_timeout=120).run()
    at.multiselect(key="align_methods").set_value(["attention"]).run()
    at.multiselect(key="align_models").set_value(["rnnsearch-tiny", "fr-en-tiny"]).run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    assert list(zip(table["model"], table["links"], table["AER"])) == [
        ("rnnsearch-tiny", "target", 0.6), ("fr-en-tiny", "target", 0.7), (pair, BOTH_DIRECTIONS[0], 0.1),
        (pair, BOTH_DIRECTIONS[1], 0.2)]
    at.multiselect(key="align_models").set_value(["fr-en-tiny"]).run()
    assert list(at.dataframe[0].value["model"]) == ["fr-en-tiny"]
    assert scored_names == []


@pytest.mark.parametrize("fields,english", [
    ({"why": "empty", "side": "target"}, "the target sentence is empty"),
    ({"why": "unencodable", "side": "source", "word": "ſ"}, "the vocabulary encodes the source word 'ſ' to nothing"),
    ({"why": "too long", "pieces": 600}, "the source has 600 pieces; the model reads at most 510"),
])
def test_why_a_sentence_was_not_scored_reads_in_the_readers_language(fields, english):
    from model.decoding.translator import MAX_SOURCE_TOKENS
    from model.scoring.forced_matrices import Unscored
    from viz import i18n
    from viz.pages.alignment import unscored_text

    unscored = Unscored("m", 3, **fields)
    english = english.replace("510", str(MAX_SOURCE_TOKENS))
    assert unscored.reason == english  # the command line's words
    with i18n.using("en"):
        assert unscored_text(unscored).replace("\\", "") == english
    with i18n.using("ar"):
        arabic = unscored_text(unscored)
    assert any("\u0600" <= ch <= "\u06ff" for ch in arabic) and "the" not in arabic


@pytest.mark.parametrize("used,missing,english", [
    ((("tatoeba", 159005), ("multi30k", 29000)), (), "the gold sentences plus tatoeba (159,005 pairs), multi30k (29,000 pairs)"),
    ((), ("data/multi30k",), "the gold sentences alone; not found, so not used: data/multi30k"),
])
def test_what_eflomal_learnt_from_reads_in_the_readers_language(used, missing, english):
    from model.scoring.statistical_aligner import AlignerText
    from viz import i18n
    from viz.pages.alignment import aligner_text

    text = AlignerText(used, missing)
    assert text.note == english  # the command line's words
    with i18n.using("en"):
        assert aligner_text(text).replace("\\", "") == english
    with i18n.using("ar"):
        arabic = aligner_text(text)
    assert "الجمل الذهبية" in arabic and "gold" not in arabic
    assert all(f"\u2066{name}\u2069" in arabic for name, _ in used)  # corpus names stay left to right



@pytest.mark.parametrize("drop, shown", [(0.64, "−0.64"), (-0.11, "+0.11"), (0.001, "0.00"), (-0.004, "0.00")])
def test_a_checks_drop_reads_as_the_signed_change_it_is(drop, shown):
    from viz.pages.alignment import change_text

    assert change_text(drop) == shown


def test_gold_files_a_new_session_lost_are_asked_for_again_by_name(gold_folder):
    """The link marks the uploaded gold files; a new session (the server restarted) without them
    says so in one line."""
    at = AppTest.from_function(_script, args=(gold_folder,), default_timeout=120)
    at.query_params["gold"] = "toy.en, toy.fr, toy.wa"
    at.run()
    at.radio(key="align_source").set_value("Upload three files").run()
    assert not at.exception, at.exception
    assert [w.value.replace("\\", "") for w in at.warning] == [
        "The server restarted, or this page moved to another server: please upload toy.en, toy.fr, toy.wa again."]


# ---------------------------------------------------------------- no gold set: what the cards record


def heads_rows(model: str, layers: int, heads: int) -> list[dict]:
    """A Transformer's "heads" rows as a card records them: each layer's heads and mean, both readings."""
    return [{**row(model, "heads", "target", round(0.1 * layer + 0.01 * (head or 9) + 0.5 * shifted, 3)),
             "layer": layer, "head": head, "shifted": shifted}
            for shifted in (False, True) for layer in range(1, layers + 1) for head in [*range(1, heads + 1), None]]


def test_without_a_gold_set_the_page_shows_what_the_cards_record(own, tiny_checkpoints, tmp_path, monkeypatch,
                                                                 scored_names):
    from tests.model.transformer_fixtures import save_tiny_transformer

    _, root = own
    save_tiny_transformer(tiny_checkpoints["rnnsearch"], root / "transformer-tiny", seed=5)
    record(root / "rnnsearch-tiny", "toy", [row("rnnsearch-tiny", "attention", "target", 0.111),
                                            row(None, "diagonal", "target", 0.333)], "d1")
    record(root / "rnnsearch-tiny", "other", [row("rnnsearch-tiny", "attention", "target", 0.7)], "d2", sentences=5)
    record(root / "rnnencdec-tiny", "toy", [row("rnnencdec-tiny", "saliency", "target", 0.222),
                                            row(None, "diagonal", "target", 0.333)], "d1")
    record(root / "transformer-tiny", "toy", [row("transformer-tiny", "attention", "target", 0.123),
                                              *heads_rows("transformer-tiny", 2, 3),
                                              row(None, "diagonal", "target", 0.333)], "d1")
    record(root / "transformer-tiny", "other", [row("transformer-tiny", "attention", "target", 0.8)], "d2", sentences=5)
    record(root / "rnnencdec-tiny", "other", [row("rnnencdec-tiny", "saliency", "target", 0.9)], "d3", sentences=5)
    settings = start_app(monkeypatch, "--checkpoints", root, "--align-dir", tmp_path / "no-gold")
    at = AppTest.from_function(_script, args=(settings,), default_timeout=120).run()
    assert not at.exception, at.exception
    assert "Recorded in the models' cards" in [h.value for h in at.subheader]
    assert [t.label for t in at.tabs] == ["toy (3 sentences)", "other (5 sentences)"]
    toy, other = (at.dataframe[i].value for i in range(2))
    # each model's rows from its own card, the baseline once though three cards record it
    assert sorted(zip(toy["model"], toy["method"], toy["AER"])) == sorted([
        ("rnnsearch-tiny", "attention", 0.111), ("rnnencdec-tiny", "saliency", 0.222),
        ("transformer-tiny", "attention", 0.123), ("(baseline)", "diagonal", 0.333)])
    assert list(toy["model"])[-1] == "(baseline)"
    # RNNencdec's card scored other sentences than the two others under the name "other": left out
    assert sorted(zip(other["model"], other["AER"])) == [("rnnsearch-tiny", 0.7), ("transformer-tiny", 0.8)]
    grids = [m for m in canvas(at, "matrix") if m["title"].startswith("AER")]
    assert len(grids) == 2 and all(g["y_labels"] == ["layer 1", "layer 2"] and g["y_title"] == "decoder layer"
                                   and g["x_labels"] == ["head 1", "head 2", "head 3", "mean"] and g["x_title"] == "head"
                                   for g in grids)
    assert grids[0]["z"][1] == [0.21, 0.22, 0.23, 0.29] and grids[1]["z"][0] == [0.61, 0.62, 0.63, 0.69]
    assert scored_names == []  # nothing is run


def test_without_a_gold_set_or_recorded_scores_only_the_uploads_show(own, tmp_path, monkeypatch):
    _, root = own
    settings = start_app(monkeypatch, "--checkpoints", root, "--align-dir", tmp_path / "no-gold")
    at = AppTest.from_function(_script, args=(settings,), default_timeout=120).run()
    assert not at.exception, at.exception
    assert not at.subheader and not at.tabs and not at.dataframe


def test_a_gold_set_name_from_a_card_is_shown_as_text(own, tmp_path, monkeypatch):
    _, root = own
    record(root / "rnnsearch-tiny", "[x](javascript:alert(1))", [row("rnnsearch-tiny", "attention", "target", 0.1)],
           "d1")
    settings = start_app(monkeypatch, "--checkpoints", root, "--align-dir", tmp_path / "no-gold")
    at = AppTest.from_function(_script, args=(settings,), default_timeout=120).run()
    assert not at.exception, at.exception
    assert [t.label for t in at.tabs] == [r"\[x\]\(javascript\:alert\(1\)\) (3 sentences)"]  # no link


def importance_record(layers: int, heads: int, aer_sign: float) -> dict:
    """A card's ``head_importance`` as ``python -m model.heads --card`` writes it: each cross head's
    loss grows with layer and head; its AER grid ranks the heads the same way (aer_sign -1) or
    the opposite way (+1)."""
    loss = lambda layer, head: 0.01 * (layer * heads + head)  # noqa: E731
    rows = [{"kind": kind, "layer": layer, "head": head, "logprob_change": -loss(layer, head), "bleu": 30.0 - head,
             "reference_change": None}
            for kind in ("encoder", "decoder_self", "cross") for layer in range(1, layers + 1) for head in range(1, heads + 1)]
    aer = [[0.5 + aer_sign * loss(layer, head) for head in range(1, heads + 1)] for layer in range(1, layers + 1)]
    return {"heads": rows, "pruning": [{"heads_off": 0, "bleu": 31.0}, {"heads_off": 9, "bleu": 20.0},
                                       {"heads_off": 17, "bleu": 2.0}],
            "sentences": 7, "bleu_against": "references", "base_logprob": -1.5, "base_bleu": 31.0,
            "command": "python -m model.heads --checkpoint transformer-tiny", "cross_aer_output": aer, "aer_gold": "toy"}


@pytest.mark.parametrize("aer_sign, verdict", [(-1.0, "the heads that align better tend to matter more"),
                                               (1.0, "the heads that align better tend to matter less")])
def test_which_heads_matter_shows_beside_the_grid_from_the_card(own, tiny_checkpoints, tmp_path, monkeypatch,
                                                               aer_sign, verdict):
    from tests.model.transformer_fixtures import save_tiny_transformer

    _, root = own
    save_tiny_transformer(tiny_checkpoints["rnnsearch"], root / "transformer-tiny", seed=5)
    record(root / "transformer-tiny", "toy", [row("transformer-tiny", "attention", "target", 0.123),
                                              *heads_rows("transformer-tiny", 2, 3)], "d1")
    card = json.loads((root / "transformer-tiny" / "card.json").read_text())
    card["head_importance"] = importance_record(2, 3, aer_sign)
    (root / "transformer-tiny" / "card.json").write_text(json.dumps(card))
    settings = start_app(monkeypatch, "--checkpoints", root, "--align-dir", tmp_path / "no-gold")
    at = AppTest.from_function(_script, args=(settings,), default_timeout=120).run()
    assert not at.exception, at.exception
    lost = [m for m in canvas(at, "matrix") if m["value_name"] == "log p lost"]
    assert [m["title"] for m in lost] == ["transformer-tiny: cross-attention, log p lost with the head off",
                                          "encoder self-attention", "decoder self-attention"]
    assert lost[0]["z"] == [[0.04, 0.05, 0.06], [0.07, 0.08, 0.09]]  # rows the layers, columns the heads
    pruning = [p for p in canvas(at, "lines") if p["x_title"] == "heads switched off"]
    assert len(pruning) == 1 and pruning[0]["lines"][0]["y"] == [31.0, 20.0, 2.0]
    captions = " ".join(c.value for c in at.caption)
    assert "BLEU is 31.0 on 7 sentences (against the references)" in captions and verdict in captions
