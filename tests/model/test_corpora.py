"""Pair files, carved splits and corpus mixing."""
import gzip
import io
import random
import zipfile
from collections import Counter

import pytest

from model.core.config import CorpusSpec, TrainConfig
from model.corpus.corpora import carve_splits, corpus_specs, load_split, mix_indices
from model.corpus.parallel import Corpus, DataError, download_tatoeba, read_pair_file
from model.core.errors import ConfigError


def write(path, text: str):
    data = text.encode()
    path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)
    return path


@pytest.mark.parametrize("name,text,expected", [
    ("two.tsv", "Go.\tVa !\nHi.\tSalut.\n", [("Go.", "Va !"), ("Hi.", "Salut.")]),
    ("three.tsv.gz", "Go.\tVa !\tCC-BY 2.0 (France) #2877272\n", [("Go.", "Va !")]),
    ("crlf.tsv", "Run!\tCours !\r\n\r\nWho?\tQui ?\r\n", [("Run!", "Cours !"), ("Who?", "Qui ?")]),
])
def test_pair_file_columns_and_gzip(tmp_path, name, text, expected):
    corpus = read_pair_file(write(tmp_path / name, text))
    assert list(zip(corpus.src, corpus.tgt)) == expected


def test_pair_file_skips_and_counts_empty_sides(tmp_path):
    corpus = read_pair_file(write(tmp_path / "e.tsv", "a\tA\n\tB\nc\t \nd\tD\n"))
    assert (corpus.src, corpus.tgt, corpus.empty_skipped) == (["a", "d"], ["A", "D"], 2)


@pytest.mark.parametrize("text,message", [
    ("a\tA\nno tab here\n", r"bad\.tsv, line 2: expected 2 or 3 tab-separated columns, found 1"),
    ("a\tA\tx\ty\n", r"line 1: .* found 4"),
    ("\n\n", "no sentence pairs"),
])
def test_malformed_pair_files_name_file_and_line(tmp_path, text, message):
    with pytest.raises(DataError, match=message):
        read_pair_file(write(tmp_path / "bad.tsv", text))


def test_pair_file_rejects_binary(tmp_path):
    (tmp_path / "bin.tsv").write_bytes(b"a\tA\n\x00\x01")
    with pytest.raises(DataError, match="NUL bytes"):
        read_pair_file(tmp_path / "bin.tsv")


def corpus_with_repeats(n_sentences: int, seed: int = 0) -> Corpus:
    """English sentences, some translated 2-3 times (as in Tatoeba), some differing only in case."""
    rng = random.Random(seed)
    src, tgt = [], []
    for i in range(n_sentences):
        for j in range(rng.choice([1, 1, 2, 3])):
            src.append(f"Sentence number {i}." if j != 2 else f"SENTENCE  number {i}.")
            tgt.append(f"Phrase {i} version {j}.")
    return Corpus(src, tgt)


def test_splits_are_deterministic_whatever_the_line_order():
    corpus = corpus_with_repeats(500)
    a = carve_splits(corpus, {"test": 60, "val": 40})
    shuffled = list(zip(corpus.src, corpus.tgt))
    random.Random(1).shuffle(shuffled)
    b = carve_splits(Corpus([s for s, _ in shuffled], [t for _, t in shuffled]), {"test": 60, "val": 40})
    for name in ("train", "val", "test"):
        assert sorted(zip(a[name].src, a[name].tgt)) == sorted(zip(b[name].src, b[name].tgt))


def test_splits_group_english_sentences_and_cover_everything():
    corpus = corpus_with_repeats(500)
    splits = carve_splits(corpus, {"test": 60, "val": 40})
    keys = {name: {" ".join(s.lower().split()) for s in part.src} for name, part in splits.items()}
    assert not keys["train"] & keys["val"] and not keys["train"] & keys["test"] and not keys["val"] & keys["test"]
    assert 60 <= len(splits["test"].src) < 63 and 40 <= len(splits["val"].src) < 43  # whole groups of <= 3
    assert sum(len(p.src) for p in splits.values()) == len(corpus.src)


def test_a_different_seed_holds_out_different_sentences():
    corpus = corpus_with_repeats(500)
    assert carve_splits(corpus, {"test": 60}, seed="a")["test"].src != carve_splits(corpus, {"test": 60}, seed="b")["test"].src


def test_load_split_swaps_columns_for_the_reverse_direction(tmp_path):
    path = write(tmp_path / "p.tsv", "".join(f"English {i}.\tFrançais {i}.\n" for i in range(40)))
    spec = CorpusSpec(name="p", path=str(path))
    forward, backward = load_split(spec, "train", "en", "fr"), load_split(spec, "train", "fr", "en")
    assert forward.src == backward.tgt and forward.src[0].startswith("English")
    with pytest.raises(DataError, match="holds en-fr pairs, not en-de"):
        load_split(spec, "train", "en", "de")


@pytest.mark.parametrize("weights", [(1.0, 1.0, 1.0), (2.0, 0.5, 1.0), (0.3, 3.0, 0.0)])
def test_mixing_weights_are_respected(weights):
    sizes = (300, 500, 700)
    picked = mix_indices(sizes, weights, random.Random(0))
    corpus_of = Counter(0 if i < 300 else 1 if i < 800 else 2 for i in picked)
    for c, (size, weight) in enumerate(zip(sizes, weights)):
        assert abs(corpus_of[c] - size * weight) <= 1
    if weights[0] == 2.0:  # a whole weight repeats every example exactly that often
        assert set(Counter(i for i in picked if i < 300).values()) == {2}


def test_corpus_specs_default_and_validation():
    assert [s.path for s in corpus_specs(TrainConfig(data_dir="data/m30k"))] == ["data/m30k"]
    with pytest.raises(ConfigError, match="distinct"):
        corpus_specs(TrainConfig(corpora=[CorpusSpec("a", "x"), CorpusSpec("a", "y")]))
    with pytest.raises(ConfigError, match="weights"):
        corpus_specs(TrainConfig(corpora=[CorpusSpec("a", "x", weight=0.0)]))


class FakeResponse(io.BytesIO):
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_download_tatoeba_with_a_mocked_opener(tmp_path):
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("fra.txt", "Go.\tVa !\tCC-BY 2.0 (France) Attribution: tatoeba.org\n")
        z.writestr("_about.txt", "about")
    urls = []
    out = download_tatoeba(tmp_path / "tat", opener=lambda req: urls.append(req.full_url) or FakeResponse(archive.getvalue()))
    assert urls == ["http://www.manythings.org/anki/fra-eng.zip"]
    assert read_pair_file(out).src == ["Go."]
    with pytest.raises(DataError, match="not the expected zip"):
        download_tatoeba(tmp_path / "bad", opener=lambda req: FakeResponse(b"<html>blocked</html>"))


@pytest.mark.parametrize("named, present, expected", [
    ("data/multi30k", "data/multi30k", "data/multi30k"),  # where it says
    ("../shared/data/multi30k", "data/multi30k", "data/multi30k"),  # written elsewhere, downloaded here
    ("../shared/data/tatoeba/eng-fra.tsv.gz", "data/tatoeba/eng-fra.tsv.gz", "data/tatoeba/eng-fra.tsv.gz"),
    ("../elsewhere/corpus", "data/corpus", "../elsewhere/corpus"),  # no data/ in the name: as given
])
def test_a_config_s_corpus_is_found_where_the_downloads_put_it(tmp_path, named, present, expected):
    from model.corpus.corpora import locate_corpus

    root = tmp_path / "repo"
    (root / present).parent.mkdir(parents=True, exist_ok=True)
    (root / present).write_text("x")
    assert locate_corpus(named, root) == str(root / expected)
