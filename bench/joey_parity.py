"""Joey NMT models through this project against Joey's own search, token for token.

    python bench/joey_parity.py [--joey-dir JOEY_MODEL_DIR ...] [--sentences 60]

Without ``--joey-dir`` it trains the two tiny models of tests/model/joey_fixtures.py (GRU +
Bahdanau without input feeding, 2-layer LSTM + Luong with it) with Joey's training function,
a few seconds each. Each model is imported (``model.checkpoints.folder.import_joey``), then every
sentence is decoded by this project's search and by Joey's (``joeynmt.search.greedy`` and
``beam_search``, one sentence at a time, no length penalty, no minimum length). Prints one
JSON line per model and beam size: identical outputs, the largest per-token log-probability and
attention differences (greedy) or sentence log-probability difference (beam), and the
sentences whose outputs differ.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from model.checkpoints.folder import import_joey  # noqa: E402
from model.decoding.search import SearchConfig, _max_lengths  # noqa: E402
from model.decoding.translator import Translator  # noqa: E402
from tests.conftest import make_pairs  # noqa: E402
from tests.model.joey_fixtures import SETTINGS, joey_decode, train_joey  # noqa: E402


def compare(translator: Translator, sentences: list[str], beam: int) -> dict:
    cfg = SearchConfig(beam=beam, length_norm=0.0)
    same, logp, alpha, parted = 0, 0.0, 0.0, []
    for sentence, trace in zip(sentences, translator.translate(sentences, cfg)):
        cap = int(_max_lengths(torch.tensor([len(trace.source_ids)]), cfg)[0])
        ids, scores, att = joey_decode(translator.model.joey, trace.source_ids, beam, cap)
        if ids != trace.target_ids:
            parted.append(sentence)
            continue
        same += 1
        if beam == 1:
            logp = max(logp, float(np.abs(np.array(trace.step_logprobs) - scores[0][:len(ids)].numpy()).max()))
            alpha = max(alpha, float(np.abs(trace.attention - att[0][:len(ids)].numpy()).max()))
        else:
            logp = max(logp, abs(trace.logprob - float(scores[0][0])))
    return {"beam": beam, "sentences": len(sentences), "identical": same, "max_abs_logprob_diff": logp,
            "max_abs_attention_diff": alpha if beam == 1 else None, "differing": parted}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--joey-dir", action="append", default=[], help="a trained Joey model folder (repeatable)")
    parser.add_argument("--sentences", type=int, default=60, help="source sentences from the fixture task")
    args = parser.parse_args()
    torch.set_num_threads(1)
    work = Path(tempfile.mkdtemp(prefix="joey-parity-"))
    dirs = [Path(d) for d in args.joey_dir] or [train_joey(work / name, name) for name in sorted(SETTINGS)]
    sentences = [p[0] for p in make_pairs(args.sentences, seed=9)]
    for joey_dir in dirs:
        translator = Translator.from_checkpoint(import_joey(joey_dir, work / f"imported-{joey_dir.parent.name}"))
        for beam in (1, 5):
            print(json.dumps({"model": joey_dir.parent.name, "summary": translator.model.description.summary,
                              **compare(translator, sentences, beam)}))


if __name__ == "__main__":
    main()
