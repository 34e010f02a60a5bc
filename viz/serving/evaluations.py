"""Test sets decoded for the pages, each run once per server for the same content, model and
decoding: the Evaluate page's runs (``evaluation_run``), with progress, through the same batchers
and decode slots as the pages' translations, and the Paper page's runs of joined sentences
(``paper_run``)."""
from __future__ import annotations

import hashlib
from typing import Callable, Optional

from model.corpus.test_sets import EvalSet
from model.decoding.search import SearchConfig
from model.scoring.evaluation import ModelRun, drop_beams, run_model
from viz.serving import decodes, offered_models
from viz.serving.decodes import QueuedSlot, load_translator
from viz.serving.settings import AppSettings
from viz.serving.shared_results import EVALUATIONS, PAPER_RUNS, result_store


def content_digest(test: EvalSet) -> str:
    joined = "\n".join(test.src) + "\0" + "\n".join(test.ref)
    return hashlib.sha256(joined.encode()).hexdigest()


def evaluation_run(name: str, arch: str, test: EvalSet, search: SearchConfig, settings: AppSettings, label: str = "",
                   progress: Optional[Callable[[int], None]] = None,
                   on_queued: Optional[Callable[[str], None]] = None) -> ModelRun:
    """One model's run over ``test`` named ``label`` (default ``name``), of architecture ``arch``,
    from the shared store when the same content and decoding were run before; else decoded in
    batches beside other users' evaluations, each waiting its turn at the server's decode limit
    (``decodes.translate_lines``; ``progress(done)`` and ``on_queued(text)`` as there). Beam trees
    are dropped (see ``run_model``)."""
    label = label or name

    def compute() -> ModelRun:
        traces, seconds = decodes.translate_lines(name, test.src, search, settings, progress, on_queued)
        drop_beams(traces)
        # seconds: the decoding time of the batches that held its sentences, not other users' load
        return ModelRun(label, arch, traces, max(seconds, 1e-9))

    return result_store(EVALUATIONS).get_or_compute((label, content_digest(test), search), compute)


def paper_run(name: str, test: EvalSet, label: str, settings: AppSettings) -> ModelRun:
    """One model on one joined version of a test set, decoded once per server (its default decoding)."""
    decoding = offered_models.info(name, settings).decoding

    def compute() -> ModelRun:
        run = run_model(load_translator(name, settings), test, decoding, slot=QueuedSlot(settings))
        run.name = name
        return run

    return result_store(PAPER_RUNS).get_or_compute((name, label, test.name, len(test.src), decoding), compute)
