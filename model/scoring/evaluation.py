"""Evaluate checkpoints on a test set: corpus BLEU/chrF with bootstrap intervals, a paired
significance test, BLEU by source length (the paper's Figure 2) and a per-sentence table.

    python -m model.evaluate --src test.en --ref test.fr --checkpoint A [--checkpoint B] --out REPORT_DIR

writes ``hyps.<model>.txt``, ``sentences.csv`` and ``scores.json`` (every score with its sacrebleu
signature; ``stress.json`` too with ``--stress``). The charts are drawn from those files by the
figure layer: ``python -m viz.commands.length_chart REPORT_DIR`` (model/ never imports plotly or viz).
"""
from __future__ import annotations

import contextlib
import csv
import io
import os
import dataclasses
import json
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, ContextManager, Optional, Sequence

import numpy as np
from sacrebleu.metrics import BLEU, CHRF
from sacrebleu.significance import PairedTest

from model.corpus.test_sets import EvalSet, join_consecutive
from model.decoding.search import SearchConfig
from model.decoding.trace import Trace
from model.decoding.translator import Translator
from model.explaining.attention_ablation import Ablation
from model.scoring.metrics import bootstrap_interval, corpus_scores

N_BOOTSTRAP = 1000
STRESS_K = (1, 2, 3, 4)  # the length stress test joins k consecutive test sentences, for each of these k


@dataclass
class ModelRun:
    """One model's outputs on a test set."""

    name: str
    arch: str
    traces: list[Trace]
    seconds: float

    @property
    def hyps(self) -> list[str]:
        return [t.translation for t in self.traces]


def run_model(translator: Translator, test: EvalSet, cfg: SearchConfig,
              progress: Optional[Callable[[int], None]] = None, batch_size: int = 64,
              keep_beam: bool = False, slot: Callable[[], ContextManager] = contextlib.nullcontext) -> ModelRun:
    """Translate a test set. Beam trees are dropped unless ``keep_beam`` (they dwarf the rest:
    thousands of nodes per sentence); attention, energies and top-k along the output stay.
    ``slot``: entered around each batch's decode (see ``Translator.translate``)."""
    start = time.perf_counter()
    traces = translator.translate(test.src, cfg, batch_size=batch_size, progress=progress, slot=slot)
    if not keep_beam:
        drop_beams(traces)
    return ModelRun(translator.name, translator.arch, traces, time.perf_counter() - start)


def drop_beams(traces: Sequence[Trace]) -> None:
    """Empty each trace's beam tree, in place (a run keeps attention, energies and top-k: see ``run_model``)."""
    for trace in traces:
        trace.beam = []


def ablation_runs(translator: Translator, test: EvalSet, cfg: SearchConfig, kinds: Sequence[str],
                  progress: Optional[Callable[[int], None]] = None) -> list[ModelRun]:
    """The same model on the same test set with its attention weights replaced (model/explaining/attention_ablation.py),
    one run per kind, named ``model+kind``."""
    runs = []
    for kind in kinds:
        run = run_model(translator, test, replace(cfg, ablation=Ablation(kind)), progress)
        runs.append(dataclasses.replace(run, name=f"{translator.name}+{kind}"))
    return runs


def with_interval(hyps: Sequence[str], refs: Sequence[str], n_bootstrap: int = N_BOOTSTRAP) -> dict:
    """Corpus scores plus bootstrap mean and 95% half-interval for BLEU and chrF."""
    scores = corpus_scores(hyps, refs)
    for key, metric in (("bleu", BLEU()), ("chrf", CHRF())):
        try:
            interval = bootstrap_interval(metric, metric.corpus_score(list(hyps), [list(refs)], n_bootstrap=n_bootstrap))
        except TypeError:  # sacreBLEU 2.x's chrF resampling mixes float32 and float in statistics.mean when
            interval = None  # some resamples score 0: the score stands, without an interval
        scores[f"{key}_mean"], scores[f"{key}_ci95"] = (None, None) if interval is None else \
            (round(interval[0], 2), round(interval[1], 2))
    return scores


def paired_significance(runs: Sequence[ModelRun], refs: Sequence[str], n_samples: int = N_BOOTSTRAP) -> dict:
    """sacrebleu's paired bootstrap test of runs[1:] against runs[0] (BLEU)."""
    test = PairedTest([(r.name, r.hyps) for r in runs], {"BLEU": BLEU()}, references=[list(refs)],
                      test_type="bs", n_samples=n_samples)
    signatures, results = test()
    return {"baseline": runs[0].name, "signature": str(signatures["BLEU"]),
            "systems": [{"name": name, "bleu": round(float(res.score), 2),
                         "p_value": None if res.p_value is None else float(res.p_value)}
                        for name, res in zip(results["System"], results["BLEU"])]}


def length_bucket(n_words: int, width: int) -> tuple[int, int]:
    """[lo, hi] word range of the bucket holding ``n_words``: 1-10, 11-20, ... for width 10."""
    lo = (max(n_words, 1) - 1) // width * width + 1
    return lo, lo + width - 1


def bleu_by_length(src: Sequence[str], refs: Sequence[str], runs: Sequence[ModelRun], width: int = 10,
                   n_bootstrap: int = 200) -> list[dict]:
    """One row per (model, non-empty bucket of source length in words): BLEU, count and a
    bootstrap 95% interval, computed by sacrebleu on exactly that subset."""
    buckets: dict[tuple[int, int], list[int]] = {}
    for i, sentence in enumerate(src):
        buckets.setdefault(length_bucket(len(sentence.split()), width), []).append(i)
    rows = []
    for run in runs:
        for (lo, hi), index in sorted(buckets.items()):
            hyps, subset = [run.hyps[i] for i in index], [refs[i] for i in index]
            metric = BLEU()
            score = metric.corpus_score(hyps, [subset], n_bootstrap=n_bootstrap if len(index) > 1 else 1)
            interval = bootstrap_interval(metric, score) if len(index) > 1 else None
            ci = None if interval is None else interval[1]
            rows.append({"model": run.name, "lo": lo, "hi": hi, "label": f"{lo}-{hi}", "count": len(index),
                         "bleu": round(float(score.score), 2), "ci95": None if ci is None else round(float(ci), 2)})
    return rows


def attention_stats(trace: Trace) -> tuple[Optional[float], Optional[float]]:
    """(coverage, entropy) of an attention matrix, None without attention.

    coverage: mean over source tokens of min(1, total attention received), 1 = every source
    token fully attended at some point; entropy: mean over output steps of -sum alpha log alpha
    (nats), 0 = each step attends to one token.
    """
    if trace.attention is None or not len(trace.attention):
        return None, None
    att = np.asarray(trace.attention, dtype=float)
    coverage = float(np.minimum(att.sum(0), 1.0).mean())
    entropy = float(-(att * np.log(np.clip(att, 1e-12, None))).sum(1).mean())
    return round(coverage, 4), round(entropy, 4)


def sentence_rows(test: EvalSet, runs: Sequence[ModelRun]) -> list[dict]:
    """The per-sentence table: texts, each model's output and sentence BLEU, difference,
    source length, and attention coverage/entropy for models with attention."""
    metric = BLEU(effective_order=True)
    rows = []
    for i, (src, ref) in enumerate(zip(test.src, test.ref)):
        row = {"id": i, "source": src, "reference": ref, "source_words": len(src.split())}
        for run in runs:
            trace = run.traces[i]
            row[f"{run.name}"] = trace.translation
            row[f"{run.name} BLEU"] = round(metric.sentence_score(trace.translation, [ref]).score, 2)
            coverage, entropy = attention_stats(trace)
            if coverage is not None:
                row[f"{run.name} coverage"], row[f"{run.name} entropy"] = coverage, entropy
        if len(runs) >= 2:
            row["BLEU difference"] = round(row[f"{runs[0].name} BLEU"] - row[f"{runs[1].name} BLEU"], 2)
        rows.append(row)
    return rows


def stress_report(test: EvalSet, runs: dict[int, list[ModelRun]], width: int = 10) -> tuple[list[dict], list[dict]]:
    """Length stress test from runs on k-joined versions of ``test`` ({k: runs}):
    BLEU by source length over all versions together (the paper's Figure 2), and per (k, model)
    corpus BLEU and output/reference length ratio."""
    joined = {k: join_consecutive(test, k) if k > 1 else test for k in runs}
    src = [s for t in joined.values() for s in t.src]
    ref = [r for t in joined.values() for r in t.ref]
    merged = [ModelRun(group[0].name, group[0].arch, [tr for k in runs for tr in runs[k][j].traces], 0.0)
              for j, group in enumerate(zip(*runs.values()))]
    summary = [{"k": k, "model": r.name, "items": len(joined[k].src),
                "bleu": corpus_scores(r.hyps, joined[k].ref)["bleu"],
                "length_ratio": round(sum(len(h.split()) for h in r.hyps) /
                                      max(1, sum(len(x.split()) for x in joined[k].ref)), 3)}
               for k, group in runs.items() for r in group]
    return bleu_by_length(src, ref, merged, width), summary


def report(test: EvalSet, runs: Sequence[ModelRun], cfg: SearchConfig, width: int = 10) -> dict:
    """Everything ``scores.json`` holds."""
    out = {"test_set": test.name, "sentences": len(test.src), "notes": test.notes,
           "decoding": {"beam": cfg.beam, "length_norm": cfg.length_norm, "max_len_ratio": cfg.max_len_ratio},
           "models": {r.name: {"arch": r.arch, "seconds": round(r.seconds, 2),
                               "sentences_per_s": round(len(test.src) / max(r.seconds, 1e-9), 1),
                               **with_interval(r.hyps, test.ref)} for r in runs},
           "bleu_by_length": bleu_by_length(test.src, test.ref, runs, width)}
    if len(runs) >= 2:
        out["paired_bootstrap"] = paired_significance(runs, test.ref)
    return out


def write_report(out_dir: Path, test: EvalSet, runs: Sequence[ModelRun], scores: dict) -> list[Path]:
    """Hypotheses, CSV, JSON and the length chart into ``out_dir``; returns what was written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for run in runs:
        path = out_dir / f"hyps.{run.name}.txt"
        write_whole(path, "\n".join(run.hyps) + "\n")
        written.append(path)
    rows = sentence_rows(test, runs)
    table = io.StringIO(newline="")
    writer = csv.DictWriter(table, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    write_whole(out_dir / "sentences.csv", table.getvalue())
    write_whole(out_dir / "scores.json", json.dumps(scores, indent=2, ensure_ascii=False) + "\n")
    return written + [out_dir / "sentences.csv", out_dir / "scores.json"]


def write_whole(path: Path, text: str) -> None:
    """``text`` into ``path`` through a temporary file renamed over it: a process stopped while
    writing (SIGTERM, a full disk) leaves the old file or none, never half of one."""
    temporary = path.with_name(f".{path.name}.part")
    try:
        with open(temporary, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def write_stress(out_dir: Path, test: EvalSet, translators: Sequence[Translator], runs: Sequence[ModelRun],
                 cfg: SearchConfig, width: int) -> list[Path]:
    """Decode the k-joined versions (STRESS_K) with the same models; write stress.json."""
    by_k = {1: list(runs)}
    for k in (k for k in STRESS_K[1:] if len(test.src) >= k):  # a k longer than the test set has no items
        by_k[k] = [run_model(t, join_consecutive(test, k), cfg) for t in translators]
    rows, summary = stress_report(test, by_k, width)
    write_whole(out_dir / "stress.json", json.dumps({"bleu_by_length": rows, "summary": summary}, indent=2) + "\n")
    return [out_dir / "stress.json"]


def load_translators(paths: Sequence[str]) -> list[Translator]:
    """Translators named after their folders; clashing names get their parent folder prefixed."""
    translators = [Translator.from_checkpoint(path) for path in paths]
    names = [t.name for t in translators]
    for translator, path in zip(translators, paths):
        if names.count(translator.name) > 1:
            translator.name = f"{Path(path).resolve().parent.name}-{translator.name}"
    return translators
