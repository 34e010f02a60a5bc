"""Evaluate checkpoints on a test set: corpus BLEU/chrF with bootstrap intervals, a paired
significance test, BLEU by source length (the paper's Figure 2) and a per-sentence table.

    python -m model.evaluate --src test.en --ref test.fr --checkpoint A [--checkpoint B] --out REPORT_DIR

writes ``hyps.<model>.txt``, ``sentences.csv`` and ``scores.json`` (every score with its sacrebleu
signature; ``stress.json`` too with ``--stress``). The charts are drawn from those files by the
figure layer: ``python -m viz.length_chart REPORT_DIR`` (model/ never imports plotly or viz).
"""
from __future__ import annotations

import argparse
import contextlib
import csv
import gzip
import io
import itertools
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, ContextManager, Optional, Sequence

import numpy as np
from sacrebleu.metrics import BLEU, CHRF
from sacrebleu.significance import PairedTest

from .checkpoint import CheckpointError
from .cli import int_range
from .data import DataError, decode_text
from .metrics import corpus_scores
from .search import SearchConfig
from .trace import Trace
from .translate import MAX_BEAM, Translator

MAX_LINES = 10_000  # default cap on test-set size (UI and CLI)
MAX_TEST_BYTES = 64 * 2**20  # test-set files (decompressed) above this are refused; 10,000 lines need far less
MAX_LINE_CHARS = 1_000  # longer lines are cut, and the cut lines counted
N_BOOTSTRAP = 1000


@dataclass
class TestSet:
    """Validated source/reference pairs and what validation changed."""

    src: list[str]
    ref: list[str]
    name: str = "test set"
    notes: list[str] = field(default_factory=list)


def read_upload(raw: bytes, name: str, max_bytes: int = MAX_TEST_BYTES) -> str:
    """Text of an uploaded file (plain or gzip, detected by its magic bytes), size-capped."""
    if raw[:2] == b"\x1f\x8b":
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(raw)) as handle:
                raw = handle.read(max_bytes + 1)  # stop past the cap: gzip bombs stay bounded
        except (OSError, EOFError) as exc:
            raise DataError(f"{name}: broken gzip file ({exc})") from None
    if len(raw) > max_bytes:
        raise DataError(f"{name}: more than {max_bytes // 2**20} MiB of text; test sets are capped at "
                        f"{MAX_LINES:,} lines, split the file")
    return decode_text(raw, name)


def read_test_file(path: str | Path, max_bytes: int = MAX_TEST_BYTES) -> str:
    """Like ``read_upload`` for a file on disk, reading at most ``max_bytes + 1`` bytes of it."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: no such file")
    with open(path, "rb") as handle:
        raw = handle.read(max_bytes + 1)
    if len(raw) > max_bytes and raw[:2] != b"\x1f\x8b":
        raise DataError(f"{path}: more than {max_bytes // 2**20} MiB; test sets are capped at {MAX_LINES:,} lines")
    return read_upload(raw, str(path), max_bytes)


def split_lines(text: str, name: str, max_lines: int = MAX_LINES, take_first: bool = False) -> list[str]:
    """Lines of ``text``; more than ``max_lines`` are refused (or cut, with ``take_first``)
    before the whole text is split, so a huge upload never becomes millions of strings."""
    if text.count("\n", 0, len(text) - 1) + 1 <= max_lines:
        return text.splitlines()
    if not take_first:
        raise DataError(f"{name}: more than {max_lines:,} lines, the limit; evaluate the first {max_lines:,} instead")
    # one line more than the cap, so build_test_set sees the excess, cuts it, and says so
    return [line.rstrip("\r") for line in text.split("\n", max_lines + 1)[:max_lines + 1]]


def parse_table(text: str, name: str, max_lines: int = MAX_LINES, take_first: bool = False) -> tuple[list[str], list[str]]:
    """Source and reference columns of a TSV or CSV (tab if the first line has one). A header
    naming ``source``/``reference`` (or src/ref) picks columns; otherwise the first two."""
    if not text.strip():
        raise DataError(f"{name}: the file is empty")
    dialect = "excel-tab" if "\t" in text.split("\n", 1)[0] else "excel"
    rows = list(itertools.islice(csv.reader(io.StringIO(text), dialect=dialect), max_lines + 2))
    if len(rows) > max_lines + 1 and not take_first:
        raise DataError(f"{name}: more than {max_lines:,} rows, the limit; evaluate the first {max_lines:,} instead")
    header = [cell.strip().lower() for cell in rows[0]]
    src_col = next((header.index(h) for h in ("source", "src") if h in header), None)
    ref_col = next((header.index(h) for h in ("reference", "ref", "target") if h in header), None)
    if src_col is not None and ref_col is not None:
        rows = rows[1:]
    else:
        src_col, ref_col = 0, 1
    for number, row in enumerate(rows, start=1):
        if len(row) <= max(src_col, ref_col):
            raise DataError(f"{name}: row {number} has {len(row)} column(s); need source and reference columns")
    return [r[src_col] for r in rows], [r[ref_col] for r in rows]


def build_test_set(src: Sequence[str], ref: Sequence[str], name: str = "test set", src_name: str = "source",
                   ref_name: str = "reference", max_lines: int = MAX_LINES, take_first: bool = False) -> TestSet:
    """Validate line-aligned texts: empty, mismatched, too many lines, over-long lines."""
    if not src or not any(s.strip() for s in src):
        raise DataError(f"{src_name}: the file is empty")
    if not ref or not any(r.strip() for r in ref):
        raise DataError(f"{ref_name}: the file is empty")
    if len(src) != len(ref):
        raise DataError(f"line counts differ: {src_name} has {len(src)} lines, {ref_name} has {len(ref)}")
    notes = []
    if len(src) > max_lines:
        if not take_first:
            raise DataError(f"{src_name}: {len(src):,} lines, more than the limit of {max_lines:,}; "
                            f"evaluate the first {max_lines:,} instead")
        src, ref = src[:max_lines], ref[:max_lines]
        notes.append(f"evaluating the first {max_lines:,} lines only")
    long_lines = sum(len(s) > MAX_LINE_CHARS for s in src)
    if long_lines:
        notes.append(f"{long_lines} source line(s) longer than {MAX_LINE_CHARS} characters were cut")
    return TestSet([s[:MAX_LINE_CHARS].strip() for s in src], [r.strip() for r in ref], name, notes)


def load_test_files(src_path: str | Path, ref_path: str | Path, **kwargs) -> TestSet:
    max_lines, take_first = kwargs.get("max_lines", MAX_LINES), kwargs.get("take_first", False)
    src = split_lines(read_test_file(src_path), str(src_path), max_lines, take_first)
    ref = split_lines(read_test_file(ref_path), str(ref_path), max_lines, take_first)
    return build_test_set(src, ref, Path(src_path).name, str(src_path), str(ref_path), **kwargs)


def join_consecutive(test: TestSet, k: int) -> TestSet:
    """Length stress test (issue 10): items that join k consecutive lines, sources and
    references alike; a last group shorter than k is dropped."""
    if len(test.src) < k:  # no items at all: scoring nothing would fail far from here
        raise DataError(f"{test.name}: {len(test.src)} line(s), fewer than the {k} to join into one item")
    n = len(test.src) // k * k
    src = [" ".join(test.src[i:i + k]) for i in range(0, n, k)]
    ref = [" ".join(test.ref[i:i + k]) for i in range(0, n, k)]
    return TestSet(src, ref, f"{test.name} (k={k})", [f"{n // k} items of {k} joined lines"])


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


def run_model(translator: Translator, test: TestSet, cfg: SearchConfig,
              progress: Optional[Callable[[int], None]] = None, batch_size: int = 64,
              keep_beam: bool = False, slot: Callable[[], ContextManager] = contextlib.nullcontext) -> ModelRun:
    """Translate a test set. Beam trees are dropped unless ``keep_beam`` (they dwarf the rest:
    thousands of nodes per sentence); attention, energies and top-k along the output stay.
    ``slot``: entered around each batch's decode (see ``Translator.translate``)."""
    start = time.perf_counter()
    traces = translator.translate(test.src, cfg, batch_size=batch_size, progress=progress, slot=slot)
    if not keep_beam:
        for trace in traces:
            trace.beam = []
    return ModelRun(translator.name, translator.arch, traces, time.perf_counter() - start)


def with_interval(hyps: Sequence[str], refs: Sequence[str], n_bootstrap: int = N_BOOTSTRAP) -> dict:
    """Corpus scores plus bootstrap mean and 95% half-interval for BLEU and chrF."""
    scores = corpus_scores(hyps, refs)
    for key, metric in (("bleu", BLEU()), ("chrf", CHRF())):
        result = metric.corpus_score(list(hyps), [list(refs)], n_bootstrap=n_bootstrap)
        scores[f"{key}_mean"], scores[f"{key}_ci95"] = round(float(result._mean), 2), round(float(result._ci), 2)
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
            score = BLEU().corpus_score(hyps, [subset], n_bootstrap=n_bootstrap if len(index) > 1 else 1)
            ci = getattr(score, "_ci", None) if len(index) > 1 else None
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


def sentence_rows(test: TestSet, runs: Sequence[ModelRun]) -> list[dict]:
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


def stress_report(test: TestSet, runs: dict[int, list[ModelRun]], width: int = 10) -> tuple[list[dict], list[dict]]:
    """Length stress test (issue 10) from runs on k-joined versions of ``test`` ({k: runs}):
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


def report(test: TestSet, runs: Sequence[ModelRun], cfg: SearchConfig, width: int = 10) -> dict:
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


def write_report(out_dir: Path, test: TestSet, runs: Sequence[ModelRun], scores: dict) -> list[Path]:
    """Hypotheses, CSV, JSON and the length chart into ``out_dir``; returns what was written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for run in runs:
        path = out_dir / f"hyps.{run.name}.txt"
        path.write_text("\n".join(run.hyps) + "\n", encoding="utf-8")
        written.append(path)
    rows = sentence_rows(test, runs)
    with open(out_dir / "sentences.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    (out_dir / "scores.json").write_text(json.dumps(scores, indent=2, ensure_ascii=False) + "\n")
    return written + [out_dir / "sentences.csv", out_dir / "scores.json"]


def write_stress(out_dir: Path, test: TestSet, translators: Sequence[Translator], runs: Sequence[ModelRun],
                 cfg: SearchConfig, width: int) -> list[Path]:
    """Decode k = 2..4 joined versions with the same models; write stress.json."""
    by_k = {1: list(runs)}
    for k in (k for k in (2, 3, 4) if len(test.src) >= k):  # a k longer than the test set has no items
        by_k[k] = [run_model(t, join_consecutive(test, k), cfg) for t in translators]
    rows, summary = stress_report(test, by_k, width)
    (out_dir / "stress.json").write_text(json.dumps({"bleu_by_length": rows, "summary": summary}, indent=2) + "\n")
    return [out_dir / "stress.json"]


def load_translators(paths: Sequence[str]) -> list[Translator]:
    """Translators named after their folders; clashing names get their parent folder prefixed."""
    translators = [Translator.from_checkpoint(path) for path in paths]
    names = [t.name for t in translators]
    for translator, path in zip(translators, paths):
        if names.count(translator.name) > 1:
            translator.name = f"{Path(path).resolve().parent.name}-{translator.name}"
    return translators


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m model.evaluate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--src", required=True, help="source sentences, one per line (plain or .gz)")
    parser.add_argument("--ref", required=True, help="reference translations, line-aligned with --src")
    parser.add_argument("--checkpoint", action="append", required=True, help="checkpoint folder (repeatable)")
    parser.add_argument("--out", required=True, help="report folder")
    parser.add_argument("--beam", type=int_range(1, MAX_BEAM), default=5, help=f"beam size 1..{MAX_BEAM}")
    parser.add_argument("--length-norm", type=float, default=1.0,
                        help="length normalisation: score = log p / length^LENGTH_NORM (0: none)")
    parser.add_argument("--bucket-width", type=int_range(1), default=10, help="words per length bucket")
    parser.add_argument("--max-lines", type=int_range(1), default=MAX_LINES, help="refuse larger test sets")
    parser.add_argument("--first", action="store_true", help="evaluate only the first --max-lines lines")
    parser.add_argument("--join", type=int_range(1), default=1, help="join k consecutive lines before evaluating")
    parser.add_argument("--stress", action="store_true",
                        help="also run the length stress test (k = 1..4 joined lines) into stress.json")
    args = parser.parse_args(argv)
    try:
        test = load_test_files(args.src, args.ref, max_lines=args.max_lines, take_first=args.first)
        if args.join > 1:
            test = join_consecutive(test, args.join)
        cfg = SearchConfig(beam=args.beam, length_norm=args.length_norm, trace=True)
        translators = load_translators(args.checkpoint)
        runs = [run_model(translator, test, cfg) for translator in translators]
    except (DataError, CheckpointError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    scores = report(test, runs, cfg, args.bucket_width)
    for path in write_report(Path(args.out), test, runs, scores):
        print(f"wrote {path}")
    if args.stress:
        for path in write_stress(Path(args.out), test, translators, runs, cfg, args.bucket_width):
            print(f"wrote {path}")
    for name, s in scores["models"].items():
        print(f"{name}: BLEU {s['bleu']} ± {s['bleu_ci95']} ({s['bleu_signature']}), chrF {s['chrf']}, "
              f"{s['sentences_per_s']} sentences/s")
    print(f"charts: python -m viz.length_chart {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
