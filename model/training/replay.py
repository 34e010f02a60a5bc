"""Training replay: what a few fixed probe sentences turn into as a model trains.

At update 0 and after every validation, training decodes each probe sentence greedily and
keeps the output and, for RNNsearch, the attention matrix alpha (rounded): one ``Snapshot``
per point, one JSON line each in the run folder's ``probes.jsonl``, and all of them in the
model card's ``replay``. Played back in order, the snapshots show attention learning to
align (Bahdanau et al. 2015, Figure 3) and RNNencdec's output improving without any.

Each language pair has default probes (``DEFAULT_PROBES``): sentences whose word order changes
in translation (for German also a separable verb, whose two halves the attention must join) and
one long sentence. ``train.probes`` replaces them.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from model.corpus.vocab import Vocab
from model.decoding.search import SearchConfig, beam_search
from model.core.errors import ConfigError, ReplayError
from model.network.nmt_model import NMTModel

PROBES_FILE = "probes.jsonl"
DECIMALS = 2  # attention weights are stored rounded to this many decimals (a heatmap needs no more)
MAX_PROBES = 8  # probes are decoded at every validation and stored in the card: keep them few
MAX_PROBE_CHARS = 400

DEFAULT_PROBES: dict[tuple[str, str], tuple[str, ...]] = {
    ("en", "fr"): (
        "The little black cat is sleeping on the red chair.",  # adjectives move behind the noun
        "I gave it to him yesterday.",  # object pronouns move before the verb
        "A man in a blue shirt is standing on a ladder while two women in white dresses are talking "
        "near the old wooden door of the house.",  # long
    ),
    ("fr", "en"): (
        "Le petit chat noir dort sur la chaise rouge.",  # adjectives move in front of the noun
        "Je le lui ai donné hier.",  # object pronouns move behind the verb
        "Un homme en chemise bleue est debout sur une échelle pendant que deux femmes en robes blanches "
        "parlent près de la vieille porte en bois de la maison.",  # long
    ),
    ("de", "en"): (
        "Ein Mann, der einen roten Hut trägt, steht vor dem Gebäude.",  # verb-final relative clause
        "Zwei Kinder haben im Park mit einem großen Hund gespielt.",  # participle at the end
        "Ein junger Mann in einem blauen Hemd und eine ältere Frau mit einer Sonnenbrille sitzen auf einer "
        "Bank, während drei kleine Kinder im Hintergrund auf dem Rasen Fußball spielen.",  # long, verb-final
        "Eine Frau mit einem schwarzen Hut steigt aus dem alten Bus aus.",  # separable verb: "steigt ... aus"
    ),
}


@dataclass(frozen=True)
class ProbeRecord:
    """One probe sentence at one point of training."""

    source: str
    source_tokens: tuple[str, ...]  # the pieces the model read
    output: str  # its greedy translation then
    target_tokens: tuple[str, ...]  # the output pieces, ending with </s> when emitted
    attention: Optional[np.ndarray]  # (len(target_tokens), len(source_tokens)) alpha; None for RNNencdec


@dataclass(frozen=True)
class Snapshot:
    """Every probe at one update: update 0 (before training) or a validation."""

    step: int
    epoch: float
    val_bleu: Optional[float]  # None at update 0, which is not validated
    probes: tuple[ProbeRecord, ...]


def probe_sentences(src_lang: str, tgt_lang: str, configured: Sequence[str] = ()) -> list[str]:
    """The probes of a run: ``configured`` (``train.probes``) if any, else the pair's defaults
    (none for a pair without defaults)."""
    probes = list(configured) or list(DEFAULT_PROBES.get((src_lang, tgt_lang), ()))
    if len(probes) > MAX_PROBES:
        raise ConfigError(f"train.probes: at most {MAX_PROBES} probe sentences, got {len(probes)}")
    for probe in probes:
        if not isinstance(probe, str) or not probe.strip() or len(probe) > MAX_PROBE_CHARS:
            raise ConfigError(f"train.probes: each probe must be a non-empty sentence of at most "
                             f"{MAX_PROBE_CHARS} characters, got {probe!r:.60}")
    return probes


def take_snapshot(model: NMTModel, vocabs: tuple[Vocab, Vocab], sources: Sequence[str], step: int,
                  epoch: float, val_bleu: Optional[float]) -> Snapshot:
    """Greedy-decode every probe (beam 1, with its trace) and keep outputs and attention.
    Leaves the model in training mode when it found it there."""
    training = model.training
    traces = beam_search(model, vocabs, [vocabs[0].encode(s) for s in sources],
                         SearchConfig(beam=1, topk=1, trace=True))
    model.train(training)
    probes = tuple(ProbeRecord(source, tuple(t.source_tokens), t.translation, tuple(t.target_tokens),
                               None if t.attention is None else np.round(t.attention, DECIMALS))
                   for source, t in zip(sources, traces))
    return Snapshot(step, round(float(epoch), 3), None if val_bleu is None else round(float(val_bleu), 2), probes)


def snapshot_to_json(snapshot: Snapshot) -> dict:
    return {"step": snapshot.step, "epoch": snapshot.epoch, "val_bleu": snapshot.val_bleu,
            "probes": [{"source": p.source, "source_tokens": list(p.source_tokens), "output": p.output,
                        "target_tokens": list(p.target_tokens),
                        "attention": None if p.attention is None else
                        [[round(float(v), DECIMALS) for v in row] for row in p.attention]}
                       for p in snapshot.probes]}


def append_snapshot(run_dir: Path, snapshot: Snapshot) -> None:
    """Add ``snapshot`` to the run's probe log, replacing any earlier one of the same update
    (a round repeated after resuming is recorded once)."""
    kept = [s for s in read_probe_log(run_dir) if s.step < snapshot.step]
    write_probe_log(run_dir, [*kept, snapshot])


def truncate_probe_log(run_dir: Path, step: int) -> None:
    """Drop snapshots after update ``step`` (resuming from a state saved before them)."""
    snapshots = read_probe_log(run_dir)
    if any(s.step > step for s in snapshots):
        write_probe_log(run_dir, [s for s in snapshots if s.step <= step])


def write_probe_log(run_dir: Path, snapshots: Sequence[Snapshot]) -> None:
    path = Path(run_dir) / PROBES_FILE
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(json.dumps(snapshot_to_json(s), ensure_ascii=False) + "\n" for s in snapshots),
                   encoding="utf-8")
    tmp.replace(path)


def read_probe_log(run_dir: Path) -> list[Snapshot]:
    """The snapshots of a run folder's ``probes.jsonl`` (none when there is no such file)."""
    path = Path(run_dir) / PROBES_FILE
    if not path.is_file():
        return []
    items = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        try:
            items.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise ReplayError(f"{path}: line {number} is not JSON ({exc})") from None
    return parse_snapshots(items, str(path))


def parse_snapshots(items, where: str) -> list[Snapshot]:
    """Snapshots from their JSON form (a probe log's lines, or a card's ``replay``), checked:
    steps increasing, one attention row per output token and one column per source token."""
    if not isinstance(items, list):
        raise ReplayError(f"{where}: expected a list of snapshots")
    snapshots = [_parse_snapshot(item, f"{where}, snapshot {i + 1}") for i, item in enumerate(items)]
    steps = [s.step for s in snapshots]
    if steps != sorted(set(steps)):
        raise ReplayError(f"{where}: snapshot updates must increase, got {steps}")
    return snapshots


def _parse_snapshot(item, where: str) -> Snapshot:
    try:
        step, epoch, val_bleu, probes = int(item["step"]), float(item["epoch"]), item["val_bleu"], item["probes"]
        if val_bleu is not None:
            val_bleu = float(val_bleu)
        if not isinstance(probes, list):
            raise TypeError("probes must be a list")
        return Snapshot(step, epoch, val_bleu, tuple(_parse_probe(p, f"{where}, probe {i + 1}")
                                                    for i, p in enumerate(probes)))
    except ReplayError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise ReplayError(f"{where}: malformed ({exc!r})") from None


def _parse_probe(item: dict, where: str) -> ProbeRecord:
    source_tokens = tuple(str(t) for t in item["source_tokens"])
    target_tokens = tuple(str(t) for t in item["target_tokens"])
    attention = item["attention"]
    if attention is not None:
        attention = np.asarray(attention, dtype=float)
        if attention.shape != (len(target_tokens), len(source_tokens)):
            raise ReplayError(f"{where}: attention has shape {attention.shape}, expected "
                              f"({len(target_tokens)}, {len(source_tokens)})")
    return ProbeRecord(str(item["source"]), source_tokens, str(item["output"]), target_tokens, attention)
