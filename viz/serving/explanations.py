"""The Translate page's Explanations tab on the server: a decode's output explained by the
methods asked for (model/explaining/methods.py), each with its faithfulness for this sentence
(model/explaining/faithfulness.py) and a random order's, computed at a place of the decode queue
and kept for every session; and the Evaluate page's test-set table of the same figures
(``test_set_faithfulness``); and the check under every heatmap (``heatmap_check``,
``attention_check``): how much the output loses when the source words it ranks first go, against
random words."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

import numpy as np

from model.explaining.explanation import Explanation
from model.explaining.faithfulness import (Comprehensiveness, Curves, Faithfulness, checkable, measure_methods,
                                           measure_random)
from model.explaining.faithfulness import heatmap_check as check_heatmap
from model.explaining.methods import expand_methods
from model.explaining.explanation import layer_of
from model.explaining.registry import applies, explain
from model.explaining.test_set import FaithfulnessTable, faithfulness_table
from model.decoding.trace import Trace
from model.decoding.translator import Translator
from model.scoring.evaluation import ModelRun
from viz.serving.decodes import Decoded, QueuedSlot, load_translator
from viz.serving.settings import AppSettings
from viz.serving.shared_results import ATTENTION_CHECKS, EXPLANATIONS, FAITHFULNESS_TABLES, result_store


@dataclass(frozen=True)
class Explained:
    """One decode's explanations, each with its faithfulness and its curves, and the random order's."""

    explanations: dict[str, Explanation]
    faithfulness: dict[str, Faithfulness]
    random: Faithfulness
    curves: dict[str, Curves]
    random_curves: Curves


def explained(result: Decoded, methods: tuple[str, ...], contrast: Optional[tuple[int, int]],
              settings: AppSettings) -> Explained:
    """``methods`` on ``result``'s output (``contrast``: (step, token id): why that step's token
    and not this one; every other step is contrasted with itself), each method computed and
    measured once per server (``explained_method``), beside the random order (``yardstick``)."""
    found = {m: explained_method(result, m, contrast, settings) for m in expanded(result, methods)}
    found = {m: f for m, f in found.items() if f is not None}
    random, random_curves = yardstick(result, settings)
    return Explained({m: f[0] for m, f in found.items()}, {m: f[1] for m, f in found.items()}, random,
                     {m: f[2] for m, f in found.items()}, random_curves)


def expanded(result: Decoded, methods: Sequence[str]) -> list[str]:
    """``methods`` as ``result``'s model has them (``LAYERS``: each of its layers), those that
    do not apply to it left out."""
    model = result.translator.model
    return [m for m in expand_methods(model, methods) if layer_of(m) or applies(model, m)]


def _pair(result: Decoded, contrast: Optional[tuple[int, int]]) -> tuple[list, list, Optional[list]]:
    src, out = list(result.trace.source_ids), list(result.trace.target_ids)
    other = None
    if contrast is not None:
        step, token = contrast
        other = out[:step] + [token] + out[step + 1:]
    return src, out, other


def known_method(result: Decoded, method: str, contrast: Optional[tuple[int, int]]) -> bool:
    """Whether ``method`` on ``result`` is computed already (the tab draws it at once)."""
    src, out, _ = _pair(result, contrast)
    return result_store(EXPLANATIONS).get(_method_key(result, method, src, out, contrast)) is not None


def _method_key(result: Decoded, method: str, src, out, contrast) -> tuple:
    return result.name, id(result.translator), tuple(src), tuple(out), method, contrast


def explained_method(result: Decoded, method: str, contrast: Optional[tuple[int, int]],
                     settings: AppSettings) -> Optional[tuple[Explanation, Faithfulness, Curves]]:
    """One method's explanation of ``result``'s output, its faithfulness and its curves (None where
    it does not apply), computed at a place of the decode queue and kept for every session."""
    src, out, other = _pair(result, contrast)

    def compute() -> tuple:
        with QueuedSlot(settings)():
            model = result.translator.model
            found = explain(model, src, out, [method], other).get(method)
            if found is None:
                return (None,)
            faith, curves = measure_methods(model, src, out, {method: found})
            return found, faith[method], curves[method]

    got = result_store(EXPLANATIONS).get_or_compute(_method_key(result, method, src, out, contrast), compute)
    return None if got[0] is None else got


def yardstick(result: Decoded, settings: AppSettings) -> tuple[Faithfulness, Curves]:
    """The random order's figures and curves for ``result``'s output, once per server."""
    src, out, _ = _pair(result, None)

    def compute() -> tuple:
        with QueuedSlot(settings)():
            return measure_random(result.translator.model, src, out)

    return result_store(EXPLANATIONS).get_or_compute((result.name, id(result.translator), tuple(src), tuple(out),
                                                      "random order"), compute)


def check_key(name: str, translator: Translator, trace: Trace) -> Optional[tuple]:
    """What the check of ``trace``'s attention heatmap is kept under (None: nothing to check)."""
    return heatmap_key(name, translator, trace.source_ids, trace.target_ids, trace.attention) \
        if checkable(trace) else None


def heatmap_key(name: str, translator: Translator, src_ids: Sequence[int], out_ids: Sequence[int],
                matrix: np.ndarray) -> Optional[tuple]:
    """What the check of a heatmap ``matrix`` over (``src_ids``, ``out_ids``) is kept under
    (None: nothing to check)."""
    if not len(src_ids) or not len(out_ids):
        return None
    return name, id(translator), tuple(src_ids), tuple(out_ids), matrix_digest(matrix)  # a what-if decode's differs


def matrix_digest(matrix: np.ndarray) -> str:
    """A short digest of a drawn matrix's values: what a check is kept under besides its pair."""
    return hashlib.blake2b(np.ascontiguousarray(matrix, dtype=np.float64).tobytes(), digest_size=8).hexdigest()


def known_check(key: tuple) -> Optional[Comprehensiveness]:
    """The check kept under ``key`` (``heatmap_key``), if one was made."""
    return result_store(ATTENTION_CHECKS).get(key)


def heatmap_check(name: str, translator: Translator, src_ids: Sequence[int], out_ids: Sequence[int],
                  matrix: np.ndarray, settings: AppSettings) -> Optional[Comprehensiveness]:
    """How faithful a heatmap ``matrix`` (len(out_ids), len(src_ids)) is
    (``faithfulness.heatmap_check``), re-scored by ``translator`` (model ``name``); None with
    nothing to check. Computed once per server at a place of the decode queue."""
    key = heatmap_key(name, translator, src_ids, out_ids, matrix)
    if key is None:
        return None

    def run() -> Comprehensiveness:
        with QueuedSlot(settings)():
            return check_heatmap(translator.model, list(src_ids), list(out_ids), matrix)

    return result_store(ATTENTION_CHECKS).get_or_compute(key, run)


def attention_check(name: str, translator: Translator, trace: Trace,
                    settings: AppSettings) -> Optional[Comprehensiveness]:
    """``heatmap_check`` of ``trace``'s attention heatmap (``translator``, model ``name``, decoded
    it); None with nothing to check."""
    if not checkable(trace):
        return None
    return heatmap_check(name, translator, trace.source_ids, trace.target_ids, trace.attention, settings)


def test_set_faithfulness(run: ModelRun, digest: str, methods: tuple[str, ...], limit: int, settings: AppSettings,
                          progress: Optional[Callable[[int, int], None]] = None) -> FaithfulnessTable:
    """The faithfulness table (model/explaining/test_set.py) of ``run``'s first ``limit`` sentences
    as the model translated them; ``digest`` names the test set's content. Computed once per
    server at a place of the decode queue, one sentence at a time, ``progress(done, total)``."""
    def compute() -> FaithfulnessTable:
        translator = load_translator(run.name, settings)
        pairs = [(t.source_ids, t.target_ids) for t in run.traces[:limit]]
        with QueuedSlot(settings)():
            return faithfulness_table(translator.model, run.name, pairs, expand_methods(translator.model, methods),
                                      progress=progress)

    return result_store(FAITHFULNESS_TABLES).get_or_compute((run.name, digest, methods, limit), compute)
