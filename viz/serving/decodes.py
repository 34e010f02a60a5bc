"""Decoding for the pages: shared models, a queue in front of the CPU, and shared results.

Every page decodes through here. Models load once per process (``load_translator``); at most
``AppSettings.decode_slots`` decodes run at once and the rest wait in line, told so
(``QueuedSlot``); several models decode side by side, one torch thread each
(``side_by_side``); and a finished decode is kept for every session (``shared_decodes``). A
page asks once per sentence (``decode_pair``): each model is loaded once and the sentence read
once per model, and the answer is a decode or a refusal with its reason (``Refused``).
What a page shows meanwhile (the "queued" line, progress bars drawn from worker threads) it
passes in as callbacks: nothing here draws.
"""
from __future__ import annotations

import contextlib
import contextvars
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Callable, ContextManager, Optional, Sequence, TypeVar

import torch

from model.core.errors import UserError
from model.decoding.search import SearchConfig
from model.decoding.trace import Trace
from model.decoding.translator import Translator
from viz.serving.admission import DecodeGate
from viz.serving.batching import Batcher
from viz.serving.hosting import resolve_checkpoint
from viz.serving.settings import AppSettings
from viz.serving.shared_cache import shared
from viz.serving.shared_results import TRANSLATIONS, result_store
from viz.i18n import N_, _, ngettext

T = TypeVar("T")
Carry = Callable[[Callable[[], T]], Callable[[], T]]  # see side_by_side


@dataclass(frozen=True)
class Decoded:
    """One model's decode of one sentence, with what the views need to read it."""

    trace: Trace
    seconds: float  # decoding time, without time spent queued
    translator: Translator  # the shared, read-only model and vocabularies that produced it

    @property
    def name(self) -> str:
        return self.translator.name


@dataclass(frozen=True)
class Refused:
    """A model that could not translate a sentence, and why: its checkpoint did not load
    (``loading``), or it cannot read the sentence (a word outside a vocabulary without <unk>)."""

    name: str
    error: UserError
    loading: bool


@dataclass(frozen=True)
class QueueNotice:
    """How a page tells its user that a request waits in line: ``show(text)`` whenever the
    number ahead changes, ``clear()`` once the request is admitted."""

    show: Callable[[str], None]
    clear: Callable[[], None]


def load_translator(name: str, settings: AppSettings) -> Translator:
    """The shared Translator for ``name`` (see hosting.resolve_checkpoint). The name is checked
    on every call, before the cache, so a path accepted once can never be served from it
    unchecked. Raises CheckpointNameError or CheckpointError."""
    return _checkpoint(name, settings)[1]


def _checkpoint(name: str, settings: AppSettings) -> tuple[Path, Translator, tuple]:
    """The folder ``name`` resolves to, its shared Translator under ``name`` (``load_translator``)
    and the folder's stamp that Translator was read at. A folder replaced since it was last read
    is read again, and what was decoded with its old model is forgotten; a folder removed raises
    its CheckpointError."""
    path = resolve_checkpoint(name, settings)
    stamp = folder_stamp(path)
    with _STAMPS_LOCK:
        seen = _STAMPS.get(path)
        _STAMPS[path] = stamp
    if seen is not None and seen != stamp:
        result_store(TRANSLATIONS).discard(lambda request: request.name == name)
    return path, _named(_translator_of_folder(path, stamp), name), stamp


_STAMPS: dict = {}  # folder -> its stamp when last read
_STAMPS_LOCK = threading.Lock()


def folder_stamp(path: Path) -> tuple:
    """What changes when a checkpoint folder's model is replaced: its config's and weights' modification
    times and sizes (None for a file that is missing)."""
    def stat(name: str):
        try:
            found = (path / name).stat()
            return found.st_mtime_ns, found.st_size
        except OSError:
            return None
    return stat("config.json"), stat("model.safetensors")


@shared(max_entries=16)
def _translator_of_folder(path: Path, stamp: tuple = ()) -> Translator:
    """One shared, read-only Translator per checkpoint folder (as ``stamp`` finds it) and process."""
    return Translator.from_checkpoint(path)


def _named(translator: Translator, name: str) -> Translator:
    """``translator`` under the name a page used for it: itself when the names agree, else the
    same shared model renamed (a typed path, say)."""
    if translator.name == name:
        return translator
    return Translator(translator.model, translator.src_vocab, translator.tgt_vocab, name)


@shared()
def decode_gate(limit: int) -> DecodeGate:
    """The process's limit on decodes running at once (``AppSettings.decode_slots``; each decode
    runs on one torch thread, see ``side_by_side``)."""
    return DecodeGate(limit)


class QueuedSlot:
    """A ``slot`` for ``Translator.translate`` and ``run_model``: one place at the decode gate of
    ``settings``, ``notice`` telling the user while queued and ``admitted`` called once let in
    (a QueueNotice's ``show`` and ``clear``), and the seconds spent queued added up (so a page
    reports decoding speed, not other users' load)."""

    def __init__(self, settings: AppSettings, notice: Optional[Callable[[str], None]] = None,
                 admitted: Optional[Callable[[], None]] = None):
        self.gate, self.notice, self.admitted, self.waited = decode_gate(settings.decode_slots), notice, admitted, 0.0

    @contextlib.contextmanager
    def __call__(self):
        gate = self.gate
        report = None if self.notice is None else (lambda n: self.notice(queued_text(n, gate.limit)))
        with gate.slot(report) as waited:
            self.waited += waited
            if self.admitted is not None:
                self.admitted()
            yield


def queued_text(ahead: int, limit: int) -> str:
    """The "queued" line: ``ahead`` requests must finish first; ``limit`` decode at once."""
    return ngettext("Queued: {n} request ahead of yours; this server decodes {limit} at a time.",
                    "Queued: {n} requests ahead of yours; this server decodes {limit} at a time.",
                    ahead).format(n=ahead, limit=limit)


def side_by_side(calls: list[Callable[[], T]], carry: Optional[Carry] = None) -> list[T]:
    """The calls' results, run at the same time, one thread each, with one torch thread each.
    On 2 cores a second torch thread barely speeds up one interactive decode (beam 5, one
    sentence: 0.27 s either way), while two decodes side by side finish in the time of one.
    ``carry`` wraps each call, in the calling thread, into what its worker thread runs: a page
    passes one that carries its script run's context, so the calls may update elements it made
    (progress bars). Each call runs in a copy of the calling thread's context variables, so the
    text it writes (the "queued" line) is in the language of the page that asked. The first
    failure, in call order, is raised."""
    carried = [call if carry is None else carry(call) for call in calls]

    def run(call):
        torch.set_num_threads(1)
        return call()

    if len(carried) <= 1:
        return [run(call) for call in carried]
    with ThreadPoolExecutor(len(carried)) as pool:
        futures = [pool.submit(contextvars.copy_context().run, run, call) for call in carried]
    return [future.result() for future in futures]


@dataclass(frozen=True)
class Request:
    """One decode a page asks for: the key of its shared result."""

    name: str  # checkpoint name
    text: str
    search: SearchConfig
    prefix: Optional[tuple[int, ...]] = None  # what-if: output ids forced at the start
    attend: Optional[tuple[int, int]] = None  # what-if: (step, source position) given all the attention
    # the text's source ids, whether they were cut (Translator.source_ids) and the stamp of the folder
    # whose vocabulary read them, once the serving layer has read it: not part of the request's
    # identity, so equal requests still share one result; a batch decoding another stamp reads again
    encoded: Optional[tuple[tuple[int, ...], bool, tuple]] = field(default=None, compare=False)

    @property
    def weight(self) -> int:
        """What the request weighs in a batch (``batching.MAX_BATCH_TOKENS``): source tokens times beam."""
        return len(self.encoded[0]) * self.search.beam


def shared_decode(request: Request, settings: AppSettings,
              on_queued: Optional[Callable[[], QueueNotice]] = None) -> Decoded:
    """One sentence with one model (see ``shared_decodes``)."""
    return shared_decodes([request], settings, on_queued)[0]


def shared_decodes(requests: list[Request], settings: AppSettings,
                  on_queued: Optional[Callable[[], QueueNotice]] = None, carry: Optional[Carry] = None) -> list[Decoded]:
    """``decode_pair`` for callers that need every decode (``every_decoded``)."""
    return every_decoded(decode_pair(requests, settings, on_queued, carry))


def every_decoded(outcomes: list) -> list[Decoded]:
    """``decode_pair``'s outcomes when all are decodes; else the first refusal's error is raised
    (a broken checkpoint's CheckpointError, a sentence a model cannot read)."""
    for outcome in outcomes:
        if isinstance(outcome, Refused):
            raise outcome.error
    return outcomes


def decode_pair(requests: list[Request], settings: AppSettings, on_queued: Optional[Callable[[], QueueNotice]] = None,
                carry: Optional[Carry] = None, loading: Callable[[], ContextManager] = contextlib.nullcontext
                ) -> list:
    """The requests' outcomes, in order: a ``Decoded``, or a ``Refused`` with its reason. Each
    model is loaded once (inside ``loading()``, a page's spinner) and each text read once per
    model, before anything waits in line; each decode is made once per process and kept for every
    session, the missing ones side by side, each in a batch with the other sessions' requests for
    the same model and settings (``batching.Batcher``). When some must be decoded, ``on_queued()``
    gives the notice that tells the user while other sessions' decodes run; a session that queued
    behind the same request (a class opening the page at once) gets its result. ``carry``: see
    ``side_by_side`` (the notice may be updated from its worker threads)."""
    checkpoints: dict = {}
    with loading():  # each name resolved and loaded once, in request order: a refusal names its model
        for name in dict.fromkeys(r.name for r in requests):
            try:
                checkpoints[name] = _checkpoint(name, settings)
            except UserError as exc:  # CheckpointError, CheckpointNameError
                checkpoints[name] = Refused(name, exc, loading=True)
    store = result_store(TRANSLATIONS)
    requests, results = list(requests), [None] * len(requests)
    for i, request in enumerate(requests):
        found = checkpoints[request.name]
        if isinstance(found, Refused):
            results[i] = found
            continue
        results[i] = store.get(request)
        if results[i] is None and request.encoded is None:  # read once, here: the batch decodes these ids
            try:
                requests[i] = replace(request, encoded=_encoded(found[1], request.text, found[2]))
            except UserError as exc:  # DataError: a word outside a vocabulary without <unk>
                results[i] = Refused(request.name, exc, loading=False)
    missing = [i for i, found in enumerate(results) if found is None]
    if not missing:
        return results
    notice = on_queued() if on_queued is not None else None
    admitted = QueuedSlot(settings, notice and notice.show, notice and notice.clear)
    together = _(TOGETHER)  # in the page's own thread and language

    def batched(i: int) -> Decoded:
        request = requests[i]
        found = store.get(request)  # decoded meanwhile for another session
        if found is None:
            path = checkpoints[request.name][0]
            batcher = _batcher(path, request.search, request.attend, request.prefix is not None)
            found = batcher.decode(request, request.weight, admitted, notice and partial(notice.show, together))
        return found

    for i, result in zip(missing, side_by_side([partial(batched, i) for i in missing], carry)):
        results[i] = result
    if notice is not None:
        notice.clear()
    return results


TOGETHER = N_("Queued: decoding together with requests from other sessions.")
EVALUATION_CHUNK = 64  # a test set's sentences join the line this many at a time


def translate_lines(name: str, lines: Sequence[str], search: SearchConfig, settings: AppSettings,
                    progress: Optional[Callable[[int], None]] = None,
                    on_queued: Optional[Callable[[str], None]] = None) -> tuple[list[Trace], float]:
    """A test set's decodes (its traces, in order, and the seconds its batches spent decoding),
    through the same batchers and decode slots as the pages' translations: the sentences join
    their model's line ``EVALUATION_CHUNK`` at a time and fill batches beside other users'
    evaluations, so a class's evaluations share batches and take turns with each other.
    ``progress(done)`` after each chunk; ``on_queued(text)`` while waiting. Nothing is kept in the
    translations' shared store (a test set would push out what other users translated)."""
    path, translator, stamp = _checkpoint(name, settings)
    batcher = _evaluation_batcher(path, search)
    slot = QueuedSlot(settings, on_queued)
    traces, seconds = [], 0.0
    for start in range(0, len(lines), EVALUATION_CHUNK):
        chunk = [Request(name, text, search, encoded=_encoded(translator, text, stamp))
                 for text in lines[start:start + EVALUATION_CHUNK]]
        decoded = batcher.decode_many(chunk, [r.weight for r in chunk], slot, on_queued and partial(on_queued, _(TOGETHER)))
        traces += [d.trace for d in decoded]
        seconds += max(d.seconds for d in decoded)  # the batch that held the chunk (the last, if several)
        if progress is not None:
            progress(len(traces))
    return traces, seconds


def _encoded(translator: Translator, text: str, stamp: tuple) -> tuple[tuple[int, ...], bool, tuple]:
    """``text`` read once by ``translator`` (of the folder as ``stamp`` found it): its source ids,
    whether they were cut, and the stamp (``Request.encoded``)."""
    ids, cut = translator.source_ids(text)
    return tuple(ids), cut, stamp


@shared(max_entries=64)
def _batcher(path: Path, search: SearchConfig, attend: Optional[tuple[int, int]], with_prefix: bool) -> Batcher:
    """The process's Batcher of the pages' translations for one model and one set of decoding
    settings: requests decode together when they share the model, the search settings, the moved
    attention (``attend`` applies to every sentence of a decode) and whether a prefix is forced
    (forcing takes beam search's path even at beam 1). Their results are stored for every
    session (``_decode_and_store``)."""
    return Batcher(partial(_decode_and_store, path))


@shared(max_entries=64)
def _evaluation_batcher(path: Path, search: SearchConfig) -> Batcher:
    """The process's Batcher of test sets' sentences for one model and one set of decoding
    settings (``translate_lines``: no moved attention, no prefix), apart from the translations':
    its results are not stored for other sessions."""
    return Batcher(partial(decode_batch, path))


def _decode_and_store(path: Path, requests: list[Request]) -> list[Decoded]:
    """The requests' decodes: those another session's batch decoded meanwhile from the store,
    the others in one batch, then stored."""
    store = result_store(TRANSLATIONS)
    found = {r: store.get(r) for r in requests}
    todo = [r for r in requests if found[r] is None]
    for request, decoded in zip(todo, decode_batch(path, todo) if todo else []):
        store.put(request, decoded)
        found[request] = decoded
    return [found[r] for r in requests]


def decode_batch(path: Path, requests: list[Request]) -> list[Decoded]:
    """One decode of ``requests`` (one model's, with equal search settings, attend and prefix
    kind) as a single batch, from the source ids each request carries (read here for those
    without); each Decoded carries the batch's decoding time."""
    stamp = folder_stamp(path)
    translator, first = _translator_of_folder(path, stamp), requests[0]
    # ids read by this folder's vocabulary as it is now; a request read before the folder was
    # replaced is read again by the model that decodes it
    encoded = [(list(r.encoded[0]), r.encoded[1]) if r.encoded is not None and r.encoded[2] == stamp
               else translator.source_ids(r.text) for r in requests]
    start = time.perf_counter()
    traces = translator.translate([r.text for r in requests], first.search, batch_size=len(requests),
                                  encoded=encoded,
                                  prefixes=None if first.prefix is None else [list(r.prefix) for r in requests],
                                  attend=None if first.attend is None else dict([first.attend]))
    seconds = time.perf_counter() - start
    named = {name: _named(translator, name) for name in dict.fromkeys(r.name for r in requests)}
    return [Decoded(trace, seconds, named[r.name]) for trace, r in zip(traces, requests)]
