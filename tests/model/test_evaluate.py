"""Test-set validation, bucketing, per-bucket BLEU, significance wiring and the CLI report."""
import gzip
import json

import pytest
from sacrebleu.metrics import BLEU

from model.corpus.test_sets import build_eval_set, join_consecutive, parse_table
from model.corpus.textfile import read_text
from model.decoding.trace import Trace
from model.core.errors import DataError
from model.evaluate import main
from model.scoring.evaluation import ModelRun, attention_stats, bleu_by_length, length_bucket, paired_significance


def fake_run(name, hyps):
    traces = [Trace("rnnencdec", "", [], [], [], [], h, 0.0, 0.0, [], None, None) for h in hyps]
    return ModelRun(name, "rnnencdec", traces, 1.0)


@pytest.mark.parametrize("words,bucket", [(1, (1, 10)), (10, (1, 10)), (11, (11, 20)), (20, (11, 20)),
                                          (21, (21, 30)), (0, (1, 10))])
def test_length_bucket_edges(words, bucket):
    assert length_bucket(words, 10) == bucket


def test_bleu_per_bucket_equals_sacrebleu_on_the_subset():
    src = ["w " * n for n in (3, 12, 5, 25, 10, 11)]
    refs = ["le chat est noir", "un chien court vite", "la maison", "il pleut beaucoup ici", "oui", "non merci"]
    hyps = ["le chat noir", "un chien court", "la maison", "il pleut ici", "oui", "non"]
    rows = bleu_by_length(src, refs, [fake_run("m", hyps)], width=10)
    assert [(r["label"], r["count"]) for r in rows] == [("1-10", 3), ("11-20", 2), ("21-30", 1)]  # no empty buckets
    first = [0, 2, 4]
    assert rows[0]["bleu"] == pytest.approx(BLEU().corpus_score([hyps[i] for i in first],
                                                                [[refs[i] for i in first]]).score, abs=0.01)
    assert rows[2]["ci95"] is None  # one sentence: no bootstrap


def test_paired_test_wiring():
    refs = ["the cat sat on the mat today"] * 30
    good, bad = fake_run("good", ["the cat sat on the mat today"] * 30), fake_run("bad", ["a dog"] * 30)
    result = paired_significance([good, bad], refs, n_samples=100)
    assert result["baseline"] == "good" and "bs:100" in result["signature"]
    assert result["systems"][1]["p_value"] < 0.05


@pytest.mark.parametrize("src,ref,kwargs,message", [
    ([], ["a"], {}, "source: the file is empty"),
    (["a"], ["", " "], {}, "reference: the file is empty"),
    (["a", "b", "c"], ["x", "y"], {}, "source has 3 lines, reference has 2"),
    (["a"] * 5, ["b"] * 5, {"max_lines": 3}, "more than the limit of 3"),
])
def test_validation_messages(src, ref, kwargs, message):
    with pytest.raises(DataError, match=message):
        build_eval_set(src, ref, **kwargs)


def test_take_first_and_long_lines_are_reported():
    test = build_eval_set(["a"] * 5 + ["x" * 5000], ["b"] * 6, max_lines=6)
    assert len(test.src[-1]) == 1000 and "1 source line(s) longer" in test.notes[0]
    test = build_eval_set(["a"] * 5, ["b"] * 5, max_lines=3, take_first=True)
    assert len(test.src) == 3 and "first 3" in test.notes[0]


@pytest.mark.parametrize("raw,message", [
    (b"\x89PNG\r\n\x1a\n\x00\x00binary", "NUL bytes"),
    ("caf\u00e9".encode("latin-1"), "not valid UTF-8"),
    ("hello".encode("utf-16"), "NUL bytes"),
    (b"\x1f\x8b\x08\x00broken", "broken gzip"),
])
def test_bad_uploads(raw, message):
    with pytest.raises(DataError, match=message):
        read_text(raw, "upload.txt")


def test_gzip_bomb_stops_at_the_cap():
    bomb = gzip.compress(b"a" * 5_000_000)
    with pytest.raises(DataError, match="more than"):
        read_text(bomb, "bomb.gz", max_bytes=1_000_000)
    assert read_text(gzip.compress(b"hi\n"), "ok.gz") == "hi\n"


@pytest.mark.parametrize("text,src,ref", [
    ("source\treference\na b\tc d\n", ["a b"], ["c d"]),
    ("src,ref\n\"a, quoted\nnewline\",x\n", ["a, quoted\nnewline"], ["x"]),
    ("one\ttwo\nthree\tfour\n", ["one", "three"], ["two", "four"]),
    ("id,reference,source\n1,R,S\n", ["S"], ["R"]),
])
def test_parse_table(text, src, ref):
    assert parse_table(text, "t") == (src, ref)


def test_parse_table_missing_column():
    with pytest.raises(DataError, match="row 2 has 1 column"):
        parse_table("a\tb\nonly\n", "t.tsv")


def test_join_consecutive():
    test = build_eval_set(["s1", "s2", "s3", "s4", "s5"], ["r1", "r2", "r3", "r4", "r5"])
    joined = join_consecutive(test, 2)
    assert joined.src == ["s1 s2", "s3 s4"] and joined.ref == ["r1 r2", "r3 r4"]
    assert join_consecutive(test, 1).src == test.src


def test_attention_stats():
    trace = Trace("rnnsearch", "", [], [], [], [], "", 0.0, 0.0, [], None, None)
    assert attention_stats(trace) == (None, None)
    import numpy as np
    trace.attention = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    assert attention_stats(trace) == (pytest.approx(2 / 3, abs=1e-4), pytest.approx(0.0, abs=1e-4))


def test_cli_writes_the_whole_report(tiny_checkpoints, tmp_path, capsys):
    (tmp_path / "s.en").write_text("a dog runs\nthe cat sits in the park\na man eats\n")
    (tmp_path / "r.fr.gz").write_bytes(gzip.compress("un chien court\nle chat assis dans le parc\nun homme mange\n".encode()))
    code = main(["--src", str(tmp_path / "s.en"), "--ref", str(tmp_path / "r.fr.gz"), "--out", str(tmp_path / "rep"),
                 "--checkpoint", str(tiny_checkpoints["rnnsearch"]), "--checkpoint", str(tiny_checkpoints["rnnencdec"]),
                 "--beam", "3", "--stress"])
    assert code == 0
    stress = json.loads((tmp_path / "rep" / "stress.json").read_text())
    assert sorted({r["k"] for r in stress["summary"]}) == [1, 2, 3] and len(stress["summary"]) == 6  # 3 lines: no k=4
    scores = json.loads((tmp_path / "rep" / "scores.json").read_text())
    assert len(scores["models"]) == 2 and scores["paired_bootstrap"]["systems"][1]["p_value"] is not None
    assert all("bleu_signature" in m and "chrf_ci95" in m for m in scores["models"].values())
    out = capsys.readouterr().out
    assert "BLEU" in out and "nrefs:1|case:mixed" in out
    assert "charts: python -m viz.commands.length_chart" in out
    assert not list((tmp_path / "rep").glob("*.html"))  # model/ draws nothing
    header = (tmp_path / "rep" / "sentences.csv").read_text().splitlines()[0]
    assert "source_words" in header and "coverage" in header


def test_cli_mismatched_files(tmp_path, tiny_checkpoints, capsys):
    (tmp_path / "s").write_text("a\nb\n")
    (tmp_path / "r").write_text("a\n")
    assert main(["--src", str(tmp_path / "s"), "--ref", str(tmp_path / "r"), "--out", str(tmp_path / "o"),
                 "--checkpoint", str(tiny_checkpoints["rnnsearch"])]) == 2
    assert "has 2 lines" in capsys.readouterr().err


def test_stress_report_bleu_per_k_equals_sacrebleu_on_the_joined_lines():
    from model.scoring.evaluation import stress_report

    test = build_eval_set(["s1 a", "s2 b", "s3 c", "s4 d"], ["le chat", "un chien", "la maison", "il pleut"])
    hyps = {1: ["le chat", "un chat", "la maison", "il pleut"]}
    hyps[2] = ["le chat un chat", "la maison il"]
    runs = {k: [fake_run("m", h)] for k, h in hyps.items()}
    rows, summary = stress_report(test, runs, width=2)
    joined_refs = join_consecutive(test, 2).ref
    assert joined_refs == ["le chat un chien", "la maison il pleut"]
    expected = BLEU().corpus_score(hyps[2], [joined_refs]).score
    assert summary[1]["k"] == 2 and summary[1]["bleu"] == pytest.approx(expected, abs=0.01)
    assert summary[1]["length_ratio"] == pytest.approx(7 / 8)
    assert {r["label"] for r in rows} == {"1-2", "3-4"}  # 2-word singles and 4-word pairs


@pytest.mark.parametrize("hyp,ref,expected", [
    ("L'homme court dans le parc.", "L'homme court dans le parc.", 100.0),  # identical: 100 under any tokenisation
    ("l'homme court dans le parc", "L'HOMME COURT DANS LE PARC", 100.0),  # lowercased
])
def test_moses_bleu_is_lowercased_and_tokenised_like_multi_bleu(hyp, ref, expected):
    from model.scoring.metrics import moses_bleu_lc

    score, signature = moses_bleu_lc([hyp], [ref], "fr")
    assert score == pytest.approx(expected) and "tok:none" in signature and "case:lc" in signature


def test_moses_tokenisation_splits_what_13a_keeps_together():
    """French elisions: Moses splits "l'enfant" into "l' enfant", 13a does not, so a hypothesis
    that gets the noun right but the article wrong scores higher Moses-tokenised."""
    from model.scoring.metrics import bleu, moses_bleu_lc

    hyps, refs = ["un chien voit l'enfant dans le grand parc"], ["un chien voit cet enfant dans le grand parc"]
    assert moses_bleu_lc(hyps, refs, "fr")[0] > bleu(hyps, refs, lowercase=True)[0]


def test_the_bootstrap_interval_is_the_one_sacrebleu_prints():
    """with_interval reads sacreBLEU's public score; its figures match sacreBLEU's own printed "μ = m ± ci"."""
    import re

    from model.scoring.evaluation import with_interval

    hyps = ["the cat sat on the mat", "a dog runs", "it rains today", "hello there my friend"] * 5
    refs = ["the cat sat on a mat", "the dog runs", "it is raining today", "hello my friend"] * 5
    scores = with_interval(hyps, refs, n_bootstrap=200)
    printed = BLEU().corpus_score(hyps, [refs], n_bootstrap=200).format()
    mean, half = map(float, re.search(r"μ = ([\d.]+) ± ([\d.]+)", printed).groups())
    assert (scores["bleu_mean"], scores["bleu_ci95"]) == (mean, half)


def test_outputs_whose_resamples_sacrebleu_cannot_average_keep_their_scores():
    """sacreBLEU's chrF resampling fails on some degenerate outputs (empty lines and repeats, as an
    untrained model writes): the scores stand, without that interval."""
    from model.scoring.evaluation import with_interval

    hyps = ["", "bleu bleu bleu bleu bleu bleu bleu bleu bleu bleu bleu bleu bleu bleu bleu bleu bleu",
            "grandg ⁇  ⁇  ⁇  assis assis assis assis", ""]
    refs = ["un chien court dans le parc", "le petit chat assis", "un homme mange une balle rouge",
            "enfant joue sur la rue"]
    scores = with_interval(hyps, refs, n_bootstrap=1000)
    assert scores["sentences"] == 4 and scores["chrf"] >= 0 and scores["bleu"] == 0.0
    assert scores["chrf_ci95"] is None or scores["chrf_ci95"] >= 0


def test_sigterm_during_an_evaluation_ends_it_cleanly_with_nothing_half_written(tiny_checkpoints, tmp_path):
    """A child evaluation stopped by SIGTERM while it decodes the length stress test (after its
    report's files are written): exit status 143, one line saying so, the report's files whole,
    no stress.json and no temporary file."""
    import signal
    import subprocess
    import sys

    from tests.conftest import make_pairs

    pairs = make_pairs(300, seed=11)
    (tmp_path / "test.en").write_text("\n".join(p[0] for p in pairs) + "\n")
    (tmp_path / "test.fr").write_text("\n".join(p[1] for p in pairs) + "\n")
    out = tmp_path / "report"
    child = subprocess.Popen([sys.executable, "-m", "model.evaluate", "--src", str(tmp_path / "test.en"),
                              "--ref", str(tmp_path / "test.fr"), "--checkpoint", str(tiny_checkpoints["rnnsearch"]),
                              "--out", str(out), "--stress"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for line in child.stdout:  # the report is written; the stress test's decoding starts
        if line.startswith("wrote") and line.rstrip().endswith("scores.json"):
            break
    child.send_signal(signal.SIGTERM)
    _, err = child.communicate(timeout=120)
    assert child.returncode == 143 and "stopped: SIGTERM" in err and "Traceback" not in err
    assert sorted(p.name for p in out.iterdir()) == ["hyps.best.txt", "scores.json", "sentences.csv"]
    assert json.loads((out / "scores.json").read_text())["models"]["best"]["bleu"] >= 0
