"""Test sets for the pages: uploads read (``read_upload``), decoded once per server for the same
content, model and decoding (the Evaluate page's runs, ``evaluation_run``, with progress, through
the same batchers and decode slots as the pages' translations; the Paper page's runs of joined
sentences, ``paper_run``), and scored (``scores``, ``length_rows``, ``stress_rows``), each result
kept for every session."""
from __future__ import annotations

import hashlib
from typing import Callable, Optional

from model.corpus.test_sets import EvalSet
from model.decoding.search import SearchConfig
from model.corpus.test_sets import eval_set_from_files, eval_set_from_table
from model.scoring.evaluation import (ModelRun, bleu_by_length, drop_beams, paired_significance, run_model,
                                      stress_report, with_interval)
from viz.serving import decodes, offered_models
from viz.serving.decodes import QueuedSlot, load_translator
from viz.serving.settings import AppSettings
from viz.serving.shared_cache import shared
from viz.serving.shared_results import EVALUATIONS, PAPER_RUNS, SCORES, result_store


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


@shared(max_entries=8)
def read_upload(raws: tuple, names: tuple, take_first: bool) -> EvalSet:
    """A validated EvalSet from one table or two line files; parsed once per content (DataError
    naming the user's file otherwise)."""
    if len(raws) == 1:
        return eval_set_from_table(raws[0], names[0], take_first=take_first)
    return eval_set_from_files(raws[0], raws[1], names[0], names[1], take_first=take_first)


def scores(key: tuple, test: EvalSet, runs: list[ModelRun]) -> tuple[list[dict], Optional[dict]]:
    """Each run's corpus scores with 95% intervals and speed, and the paired bootstrap test of
    the first two; ``key`` names what they depend on (content, runs, decoding)."""
    def compute():
        rows = [{"model": r.name, **with_interval(r.hyps, test.ref), "sentences/s": round(len(test.src) / r.seconds, 1)}
                for r in runs]
        return rows, paired_significance(runs, test.ref) if len(runs) >= 2 else None

    return result_store(SCORES).get_or_compute(("scores", key), compute)


def length_rows(key: tuple, width: int, test: EvalSet, runs: list[ModelRun]) -> list[dict]:
    """BLEU by source length in buckets of ``width`` words (the paper's Figure 2)."""
    return result_store(SCORES).get_or_compute(("length", key, width),
                                               lambda: bleu_by_length(test.src, test.ref, runs, width))


def stress_rows(test: EvalSet, runs: dict[int, list[ModelRun]]) -> tuple[list[dict], list[dict]]:
    """The length stress test's rows and summary (test sentences joined k at a time)."""
    key = (content_digest(test), tuple((k, tuple((r.name, tuple(r.hyps)) for r in rs)) for k, rs in runs.items()))
    return result_store(SCORES).get_or_compute(("stress", key), lambda: stress_report(test, runs))
