"""What the pages compute from a finished decode with the model itself: gradient x input saliency
(the Translate page's Saliency tab) and the paper's quantities step by step (the Paper page's
equations). Each runs once per server for the same model and decode, at a place of the decode
queue (a forward or backward pass per output token costs like a decode)."""
from __future__ import annotations

import numpy as np

from model.decoding.step_by_step import Anatomy, dissect
from model.explaining.saliency import saliency
from viz.serving.decodes import Decoded, QueuedSlot
from viz.serving.settings import AppSettings
from viz.serving.shared_results import ANATOMIES, SALIENCIES, result_store


def _key(result: Decoded) -> tuple:
    return result.name, id(result.translator), tuple(result.trace.source_ids), tuple(result.trace.target_ids)


def saliency_of(result: Decoded, settings: AppSettings) -> np.ndarray:
    """(output tokens, source tokens) gradient x input of ``result``'s decode."""
    def compute() -> np.ndarray:
        with QueuedSlot(settings)():
            return saliency(result.translator.model, result.trace.source_ids, result.trace.target_ids)

    return result_store(SALIENCIES).get_or_compute(_key(result), compute)


def anatomy_of(result: Decoded, settings: AppSettings) -> Anatomy:
    """The paper's quantities for ``result``'s decode, step by step (model/decoding/step_by_step.py)."""
    def compute() -> Anatomy:
        with QueuedSlot(settings)():
            return dissect(result.translator.model, result.trace.source_ids, result.trace.target_ids)

    return result_store(ANATOMIES).get_or_compute(_key(result), compute)
