"""The Lab's trainings on one server, shared by every session.

- At most ``--lab-slots`` trainings run at once (one torch thread each, at the lowest priority,
  so translations keep their speed); the others wait in a queue, first come first
  served, and each session sees its place in it.
- A session has one training at a time: asking for another while its own waits or runs is
  refused with a reason (``LabBusy``).
- An experiment trains once: its settings' key names it, so thirty students pressing Train on
  the teacher's settings share one training and all see its progress and result at once.
- Stop ends a training early; what the models learnt so far is kept and tested.

``LabQueue`` takes the training function as an argument (``run_lab`` by default), so the tests
drive it with one that waits on events instead of training.
"""
from __future__ import annotations

import collections
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from model.core.errors import UserError
from model.corpus.corpora import corpus_specs, located_spec
from model.decoding.search import SearchConfig
from model.decoding.trace import Trace
from model.experiments import lab_checkpoint
from model.experiments.lab_run import LabResult, LabSettings, TrainedModel, run_lab
from model.experiments.tasks import Lengths, held_out_pairs, make_task, source_text
from viz.serving.hosting import LAB_PREFIX

PROBE_EVERY_S = 2.0  # seconds of training between two decodes of the probe input
KEPT = 32  # finished experiments kept for sessions that ask for them again


class LabBusy(UserError):
    """A session asked for a second training while its first still waits or runs."""


@dataclass
class Job:
    """One experiment on the server: its state and what its trainings have shown so far."""

    key: str
    settings: LabSettings
    owner: str  # the session that asked for it first
    state: str = "queued"  # queued, running, done, stopped, failed
    models: dict = field(default_factory=dict)  # arch -> TrainedModel while training (curve, updates)
    probes: dict = field(default_factory=dict)  # arch -> Trace of the probe input, from the latest decode
    probe_text: str = ""  # the input decoded while training
    seed_now: int = 0  # the seed of the model training now (a sweep trains several)
    result: Optional[LabResult] = None
    error: str = ""
    saved: dict = field(default_factory=dict)  # arch -> the checkpoint name the pages open it by (LAB_PREFIX...)
    stop_event: threading.Event = field(default_factory=threading.Event)
    version: int = 0  # grows with every change, for pages that redraw only on news

    @property
    def active(self) -> bool:
        return self.state in ("queued", "running")


Runner = Callable[..., LabResult]


class LabQueue:
    """The server's Lab trainings (module docstring)."""

    def __init__(self, slots: int, runner: Runner = run_lab, lowest_priority: bool = True,
                 everyday_path: Optional[Path] = None, lab_dir: Optional[Path] = None):
        """``everyday_path``: the Tatoeba pair file the everyday task reads (``everyday_file``);
        ``lab_dir``: where finished experiments' models are kept as checkpoint folders, so that
        the Translate page opens them (None: not kept)."""
        self.slots, self.runner, self.lowest_priority = max(1, slots), runner, lowest_priority
        self.everyday_path, self.lab_dir = everyday_path, lab_dir
        self.lock = threading.Condition()
        self.jobs: "collections.OrderedDict[str, Job]" = collections.OrderedDict()
        self.waiting: collections.deque = collections.deque()
        self.running = 0

    def submit(self, settings: LabSettings, session: str) -> Job:
        """The experiment ``settings`` asks for: the one already waiting, running or done with the
        same key, else a new one in the queue. LabBusy when ``session`` has another one active."""
        settings.check()
        key = settings.key()
        with self.lock:
            found = self.jobs.get(key)
            if found is not None and found.state in ("queued", "running", "done"):
                self.jobs.move_to_end(key)
                return found
            mine = [j for j in self.jobs.values() if j.owner == session and j.active]
            if mine:
                raise LabBusy("your training is still {state}: stop it or wait for it to end before starting "
                              "another", state=mine[0].state)
            job = Job(key, settings, session)
            self.jobs[key] = job
            self.waiting.append(job)
            self._forget_old()
            self._start_waiting()
            return job

    def position(self, job: Job) -> int:
        """``job``'s place in the queue, 1 for the next to start; 0 once it is not waiting."""
        with self.lock:
            return self.waiting.index(job) + 1 if job in self.waiting else 0

    def stop(self, job: Job) -> None:
        """End ``job``'s training (keeping what was learnt), or take it out of the queue."""
        with self.lock:
            job.stop_event.set()
            if job in self.waiting:
                self.waiting.remove(job)
                self._change(job, state="stopped")

    def wait_for(self, predicate: Callable[[], bool], timeout: float) -> bool:
        """Until ``predicate()`` holds (checked at every change), at most ``timeout`` seconds."""
        with self.lock:
            return self.lock.wait_for(predicate, timeout)

    # ---- inside

    def _change(self, job: Job, **values) -> None:
        for name, value in values.items():
            setattr(job, name, value)
        job.version += 1
        self.lock.notify_all()

    def _start_waiting(self) -> None:
        while self.waiting and self.running < self.slots:
            job = self.waiting.popleft()
            self.running += 1
            self._change(job, state="running")
            threading.Thread(target=self._train, args=(job,), daemon=True, name=f"lab-{job.key}").start()

    def _forget_old(self) -> None:
        finished = [k for k, j in self.jobs.items() if not j.active]
        for key in finished[:max(0, len(finished) - KEPT)]:
            del self.jobs[key]

    def _train(self, job: Job) -> None:
        if self.lowest_priority:
            try:  # this thread only: Linux gives each thread its own nice value
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
            except (AttributeError, OSError):
                pass
        try:
            probe = _probe_text(job.settings)
            with self.lock:
                job.probe_text = probe
            last_probe = [0.0]

            def progress(arch: str, trained: TrainedModel) -> None:
                trace = None
                if time.monotonic() - last_probe[0] >= PROBE_EVERY_S and probe:
                    last_probe[0] = time.monotonic()
                    trace = _decode_probe(trained, probe)
                with self.lock:
                    job.models[arch] = trained
                    job.seed_now = trained.seed
                    if trace is not None:
                        job.probes[arch] = trace
                    self._change(job)

            result = self.runner(job.settings, stop=job.stop_event.is_set, progress=progress, threads=1,
                                 everyday_path=self.everyday_path)
            saved = self._keep(job.key, result)
            probes = {arch: _decode_probe(trained, probe) if probe else None
                      for arch, trained in result.models.items()}
            with self.lock:
                job.models.update(result.models)
                job.probes.update(probes)
                stopped = job.stop_event.is_set()
                self._end(job, result=result, saved=saved, state="stopped" if stopped else "done")
        except Exception as exc:  # a bug in a training must not take the queue down: the job says why
            with self.lock:
                self._end(job, state="failed", error=f"{type(exc).__name__}: {exc}"[:300])

    def _end(self, job: Job, **values) -> None:
        """``job`` ends with ``values``; its slot frees in the same step (under the lock), so no
        one sees an ended job whose slot is still taken."""
        self.running -= 1
        self._change(job, **values)
        self._start_waiting()


    def _keep(self, key: str, result: LabResult) -> dict:
        """Each trained model of a finished experiment as a checkpoint folder under ``lab_dir``:
        {arch: its name for the pages}; none where no folder can be written."""
        if self.lab_dir is None:
            return {}
        saved = {}
        for arch, trained in result.models.items():
            try:
                lab_checkpoint.save(trained, result.settings, self.lab_dir / key / arch)
                saved[arch] = lab_model_name(key, arch)
            except OSError:
                continue  # the experiment's results stay on its page; it only cannot be opened elsewhere
        return saved


def lab_model_name(key: str, arch: str) -> str:
    """The checkpoint name the pages open a kept Lab model by (hosting.resolve_checkpoint)."""
    return f"{LAB_PREFIX}{key}/{arch}"


def everyday_file(models: list, root: Path) -> Optional[Path]:
    """The Tatoeba pair file one of the offered ``models`` (``ModelInfo``) trained on, where it
    is on this machine (``locate_corpus`` from ``root``), or None."""
    for model in models:
        for spec in corpus_specs(model.train) if model.train is not None else ():
            if spec.name == "tatoeba":
                found = Path(located_spec(spec, root).path)
                if found.is_file():
                    return found
    return None


def _probe_text(settings: LabSettings) -> str:
    """The input decoded while training: a held-out input of the middle training length."""
    lengths = Lengths.parse(settings.train_lengths)
    task = make_task(settings.task) if settings.task != "everyday" else None
    if task is None:
        return ""
    middle = Lengths((lengths.low + lengths.high) // 2, lengths.high)
    found = held_out_pairs(task, middle, 1, settings.seed + 100)
    pairs = next((p for p in found.values() if p), [])
    if not pairs:
        return ""
    return source_text(settings.task, pairs[0][0])


def _decode_probe(trained: TrainedModel, text: str) -> Optional[Trace]:
    """The probe input's greedy decode with its attention, the model left as it was found."""
    model = trained.translator.model
    training = model.training
    try:
        return trained.translator.translate([text], SearchConfig(beam=1, topk=1))[0]
    finally:
        model.train(training)
