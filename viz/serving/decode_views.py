"""What the pages compute from a finished decode with the model itself: the paper's quantities
step by step (the Paper page's equations), and a Transformer's decoder layers each read as if it
were the last (the logit lens), once per server for the same model and decode, at a place of the
decode queue. (The Explanations tab's work is in explanations.py.)"""
from __future__ import annotations

from model.decoding.step_by_step import Anatomy, dissect
from model.explaining.logit_lens import LogitLens, logit_lens
from viz.serving.decodes import Decoded, QueuedSlot
from viz.serving.settings import AppSettings
from viz.serving.shared_results import ANATOMIES, LOGIT_LENSES, result_store


def _key(result: Decoded) -> tuple:
    return result.name, id(result.translator), tuple(result.trace.source_ids), tuple(result.trace.target_ids)


def anatomy_of(result: Decoded, settings: AppSettings) -> Anatomy:
    """The paper's quantities for ``result``'s decode, step by step (model/decoding/step_by_step.py)."""
    def compute() -> Anatomy:
        with QueuedSlot(settings)():
            return dissect(result.translator.model, result.trace.source_ids, result.trace.target_ids)

    return result_store(ANATOMIES).get_or_compute(_key(result), compute)


def logit_lens_of(result: Decoded, settings: AppSettings) -> LogitLens:
    """Every decoder layer's reading of ``result``'s output (model/explaining/logit_lens.py); only
    for a model that can be taken apart layer by layer (``Decodable.supports_anatomy``)."""
    def compute() -> LogitLens:
        with QueuedSlot(settings)():
            return logit_lens(result.translator.model, result.trace.source_ids, result.trace.target_ids)

    return result_store(LOGIT_LENSES).get_or_compute(_key(result), compute)
