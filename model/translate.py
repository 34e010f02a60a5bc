"""``python -m model.translate`` (``nmt-translate``): translate text with a checkpoint.

    python -m model.translate --checkpoint checkpoints/rnnsearch-en-fr [--beam 5] [--json] \\
        [--device cpu|cuda|auto] < input.txt

One output line per input line, in order, blank lines included. A line the model cannot read
(a word outside the vocabulary of a model without an unknown-word entry, such as the PyTorch
tutorial's) gets an ``error:`` line on stderr and, in its place, an empty line (with ``--json``:
``{"error": ..., "line": N}``); the lines after it are translated. ``--json`` writes one
trace per line (schema in ``model/decoding/trace.py``; ``Trace.loads`` reads a line back).
``--reference FILE`` (line-aligned with stdin) shows instead, step by step, what the model predicts
given the reference's prefix (teacher forcing, what training showed it) beside its own greedy
decode, and where the two first differ. ``--device`` picks where the model decodes: the CPU by default, ``cuda`` for a GPU, ``auto``
for a GPU when there is one.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Sequence

import torch

from model.argtypes import int_range
from model.core.errors import DataError, UserError
from model.corpus.textfile import read_text
from model.decoding.device import DEVICE_CHOICES
from model.decoding.search import SearchConfig
from model.decoding.teacher_forcing import TeacherForcing, teacher_forcing
from model.decoding.translator import MAX_BEAM, MAX_STDIN_BYTES, Translator


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m model.translate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", required=True, help="checkpoint folder")
    parser.add_argument("--beam", type=int_range(1, MAX_BEAM), default=5, help=f"beam size 1..{MAX_BEAM} (default 5)")
    parser.add_argument("--length-norm", type=float, default=None,
                        help="length normalisation: score = log p / length^LENGTH_NORM (0: none; default: the "
                             "model's own, an imported Hugging Face model's length_penalty, else 1)")
    parser.add_argument("--forbid-unk", action="store_true", help="never output <unk>")
    parser.add_argument("--batch-size", type=int_range(1), default=64, help="sentences decoded together")
    parser.add_argument("--json", action="store_true", help="write one JSON trace per line")
    parser.add_argument("--threads", type=int_range(0), default=0, help="torch threads (0: default)")
    parser.add_argument("--device", choices=DEVICE_CHOICES, default="cpu",
                        help="where to decode: cpu (default), cuda, or auto (CUDA when there is one)")
    parser.add_argument("--reference", metavar="FILE",
                        help="reference translations, line-aligned with stdin: show, step by step, what the model "
                             "predicts given the reference's prefix (teacher forcing, as in training) beside its own "
                             "greedy decode, and where they first differ")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    try:
        translator = Translator.from_checkpoint(args.checkpoint, args.device)
        lines = read_text(sys.stdin.buffer, "stdin", MAX_STDIN_BYTES).splitlines()
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.reference:
        return compare_with_references(translator, lines, args.reference, args.json)
    rule = translator.model.beam_rule
    length_norm = args.length_norm if args.length_norm is not None else (rule.length_norm if rule else 1.0)
    cfg = SearchConfig(beam=args.beam, length_norm=length_norm, forbid_unk=args.forbid_unk, trace=args.json)
    refused = unreadable_lines(translator, lines)
    try:
        traces = iter(translator.translate([line for n, line in enumerate(lines) if n not in refused], cfg,
                                           batch_size=args.batch_size))
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for n in range(len(lines)):
        if n in refused:  # a line the model cannot read (a word outside a vocabulary without <unk>)
            print(f"error: line {n + 1}: {refused[n]}", file=sys.stderr)
            print(json.dumps({"error": str(refused[n]), "line": n + 1}, ensure_ascii=False) if args.json else "")
            continue
        trace = next(traces)
        print(trace.dumps() if args.json else trace.translation)
    return 0


def compare_with_references(translator: Translator, lines: Sequence[str], reference_file: str, as_json: bool) -> int:
    """``--reference``: each line's teacher-forcing comparison (model/decoding/teacher_forcing.py)."""
    try:
        references = read_text(reference_file, "reference file", MAX_STDIN_BYTES).splitlines()
    except (UserError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if len(references) != len(lines):
        print(f"error: {reference_file} has {len(references)} lines, stdin has {len(lines)}", file=sys.stderr)
        return 2
    for n, (source, reference) in enumerate(zip(lines, references)):
        try:
            found = teacher_forcing(translator, source, reference)
        except UserError as exc:
            print(f"error: line {n + 1}: {exc}", file=sys.stderr)
            print(json.dumps({"error": str(exc), "line": n + 1}, ensure_ascii=False) if as_json else "")
            continue
        print(json.dumps(found.to_json(), ensure_ascii=False) if as_json else prefix_table(found))
    return 0


def prefix_table(found: TeacherForcing) -> str:
    """A comparison as text: one row per step, the reference's prefix beside the model's own."""
    def top(cands) -> str:
        return ", ".join(f"{c.token} {c.prob:.2f}" for c in cands[:3])

    where = ("the decode follows the reference to its end" if found.diverges_at is None
             else f"the decode leaves the reference at step {found.diverges_at + 1}")
    lines = [f"source:    {' '.join(found.source_tokens)}", f"reference: {' '.join(found.reference_tokens)}",
             f"decode:    {' '.join(found.free.target_tokens)}",
             f"{where}; given the reference's prefix the model ranks {found.forced_accuracy:.0%} of its tokens first",
             f"{'step':>4}  {'reference':<14} {'given the reference (top 3)':<40} {'decode':<14} given its own prefix (top 3)"]
    for i, step in enumerate(found.steps):
        mark = "*" if found.diverges_at == i else " "
        lines.append(f"{i + 1:>3}{mark}  {step.reference or '':<14} {top(step.forced):<40} {step.free or '':<14} "
                     f"{top(step.free_candidates)}")
    return "\n".join(lines) + "\n"


def unreadable_lines(translator: Translator, lines: Sequence[str]) -> dict[int, DataError]:
    """{line index: why} for the lines the model's vocabulary cannot read (the PyTorch tutorial's
    models have no entry for unknown words); every other line is translated."""
    refused = {}
    for n, line in enumerate(lines):
        try:
            translator.source_ids(line)
        except DataError as exc:
            refused[n] = exc
    return refused


if __name__ == "__main__":
    raise SystemExit(main())
