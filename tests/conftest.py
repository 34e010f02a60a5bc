"""Shared fixtures: a tiny made-up parallel corpus and a tiny trained checkpoint."""
from __future__ import annotations

import gzip
import os
import random
import sys
import tempfile
from pathlib import Path

import pytest
import torch

# Multi30k for the tests marked shared_data (skipped without it): $NMT_SHARED_DATA/multi30k, by
# default ../shared/data/multi30k beside the repository (as in bench/common.py).
SHARED_DATA = Path(os.environ.get("NMT_SHARED_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data") \
    / "multi30k"

# Sentence spaces the tests build are kept in a folder of their own, never in the user's cache
# (model/decoding/sentence_space_cache.py); servers the tests start inherit it.
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="nmt-test-cache-")

if os.environ.get("PYTEST_XDIST_WORKER"):  # the suite runs on as many workers as cores: one thread each
    torch.set_num_threads(1)

WORDS_EN = "a the dog cat man woman child runs sits plays eats red blue big small in on park street ball".split()
FR = {"a": "un", "the": "le", "dog": "chien", "cat": "chat", "man": "homme", "woman": "femme",
      "child": "enfant", "runs": "court", "sits": "assis", "plays": "joue", "eats": "mange",
      "red": "rouge", "blue": "bleu", "big": "grand", "small": "petit", "in": "dans", "on": "sur",
      "park": "parc", "street": "rue", "ball": "balle"}


def make_pairs(n: int, seed: int = 0) -> list[tuple[str, str]]:
    """Word-by-word 'translations' of random sentences: easy to learn, cheap to make."""
    rng = random.Random(seed)
    pairs = []
    for _ in range(n):
        words = [rng.choice(WORDS_EN) for _ in range(rng.randint(3, 8))]
        pairs.append((" ".join(words), " ".join(FR[w] for w in words)))
    return pairs


def write_corpus(folder: Path, prefix: str, pairs, gz: bool = True) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for lang, idx in (("en", 0), ("fr", 1)):
        text = "\n".join(p[idx] for p in pairs) + "\n"
        path = folder / f"{prefix}.{lang}{'.gz' if gz else ''}"
        path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())


@pytest.fixture(scope="session")
def tiny_corpus(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("corpus")
    write_corpus(folder, "train", make_pairs(600, seed=1))
    write_corpus(folder, "val", make_pairs(40, seed=2), gz=False)
    return folder


FIXTURE_RUNS = Path(__file__).resolve().parent / "fixtures" / "runs"


@pytest.fixture(scope="session")
def tiny_checkpoints(tiny_corpus, tmp_path_factory) -> dict[str, Path]:
    """The best checkpoints of one tiny RNNsearch run and one tiny RNNencdec run, trained once on
    ``tiny_corpus``'s pairs and committed (tests/fixtures/make_tiny_checkpoints.py); each sits in a
    copy of its run folder (``.parent``: config.json, log.jsonl, probes.jsonl), so a test may change
    it. Their configs name this test run's ``tiny_corpus`` (the same pairs) as their training data."""
    import json
    import shutil

    root = tmp_path_factory.mktemp("fixture_runs")
    runs = {arch: Path(shutil.copytree(FIXTURE_RUNS / f"{arch}-tiny", root / arch)) for arch in ("rnnsearch", "rnnencdec")}
    for run in runs.values():
        for path in (run / "config.json", run / "best" / "config.json"):
            config = json.loads(path.read_text())
            config["train"]["data_dir"] = str(tiny_corpus)
            path.write_text(json.dumps(config, indent=2) + "\n")
    return {arch: run / "best" for arch, run in runs.items()}


def tiny_config(corpus: Path, out: Path, arch: str = "rnnsearch", **train_fields):
    """The ``tiny`` preset training on ``corpus`` into ``out``, with ``train_fields`` changed."""
    from model.core.config import preset

    cfg = preset("tiny")
    cfg.model.arch = arch
    cfg.train.data_dir, cfg.train.out_dir = str(corpus), str(out)
    cfg.train.val_max_sentences = 10
    for key, value in train_fields.items():
        setattr(cfg.train, key, value)
    return cfg


@pytest.fixture(scope="session")
def tiny_runs(tiny_corpus, tmp_path_factory) -> dict[str, Path]:
    """Run folders of two short trainings (two epochs each), for tests of what training writes."""
    from model.training.trainer import train

    torch.set_num_threads(1)
    return {arch: train(tiny_config(tiny_corpus, tmp_path_factory.mktemp(f"run_{arch}"), arch, epochs=2),
                        log=lambda *_: None, show_bar=False).parent
            for arch in ("rnnsearch", "rnnencdec")}


@pytest.fixture(scope="session")
def checkpoint_dir(tiny_checkpoints, tmp_path_factory) -> Path:
    """A checkpoint root holding the two tiny models (what ``--checkpoints`` points the app at)."""
    import shutil

    root = tmp_path_factory.mktemp("checkpoints")
    for arch, path in tiny_checkpoints.items():
        shutil.copytree(path, root / f"{arch}-tiny")
    return root


@pytest.fixture(autouse=True)
def no_warm_up(request, monkeypatch):
    """Apps the tests run build no sentence space in the background (app.py's warm-up): it would
    only compete with the other tests for the cores. Tests marked ``warm_up`` test it."""
    if "warm_up" not in request.keywords:
        import viz.serving.sentence_space as serving

        monkeypatch.setattr(serving, "warm_in_background", lambda settings: None)


@pytest.fixture(autouse=True)
def whole_first_run(request, monkeypatch):
    """Apps the tests run draw their charts on a session's first run (the browser's first-paint
    deferral, viz/pages/parts/first_paint.py, needs a browser). Tests marked ``first_paint`` test it."""
    if "first_paint" not in request.keywords:
        import viz.pages.parts.first_paint as first_paint

        monkeypatch.setattr(first_paint, "ENABLED", False)


def start_app(monkeypatch, *flags):
    """The app as ``streamlit run app.py -- FLAGS`` starts it: ``sys.argv`` set for
    ``AppTest.from_file(app.py)``, and the AppSettings app.py parses from it, returned for a page
    run alone (``AppTest.from_function(script, args=(settings,))``)."""
    from viz.serving.settings import parse_settings

    monkeypatch.setattr(sys, "argv", ["app.py", *map(str, flags)])
    return parse_settings(sys.argv[1:])


@pytest.fixture
def app_env(checkpoint_dir, monkeypatch):
    """The app started with ``--checkpoints`` at the two tiny models; its AppSettings."""
    return start_app(monkeypatch, "--checkpoints", checkpoint_dir)


def open_tab(at, label: str, key: str = "tab"):
    """Switch the AppTest page's tabs ``key`` (tabs that track their state) to ``label`` and rerun."""
    at.session_state[key] = label
    at.run()
    assert not at.exception, at.exception
    return at


def pytest_collection_modifyitems(config, items):
    if SHARED_DATA.is_dir():
        return
    skip = pytest.mark.skip(reason=f"{SHARED_DATA} not present")
    for item in items:
        if "shared_data" in item.keywords:
            item.add_marker(skip)
