"""A statistical word aligner beside the attention: eflomal (Östling & Tiedemann 2016, the
``eflomal`` package), trained on a parallel corpus plus the sentences to align, run in both
directions and symmetrised with grow-diag-final-and.

It knows nothing of the neural models: it is the yardstick the attention is compared with.
"""
from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Callable, Sequence

from model.core.errors import UserError
from model.scoring.word_alignment import Link, grow_diag_final_and, parse_links

TOKEN = re.compile(r"\w+|[^\w\s]")  # words and single punctuation marks
# eflomal's samplers averaged: on the Golden Collection with 188,005 training pairs, 1, 2 and 3
# samplers all score AER 0.21, in 8.8, 15.5 and 20.4 s
SAMPLERS = 1


class AlignerUnavailable(UserError):
    """The eflomal package is not installed."""


def tokenise(sentence: str) -> list[str]:
    """Lowercased words and punctuation marks: how corpus text is prepared for the aligner
    (gold sentences come tokenised already)."""
    return TOKEN.findall(sentence.lower())


def split_words(sentence: str) -> list[str]:
    """Lowercased words as spaces separate them (punctuation stays on its word), the way the
    app's word-level heatmaps cut a sentence."""
    return sentence.lower().split()


def eflomal_links(src: Sequence[Sequence[str]], tgt: Sequence[Sequence[str]],
                  corpus: Sequence[tuple[str, str]] = (), split: Callable[[str], list[str]] = tokenise,
                  samplers: int = SAMPLERS) -> list[set[Link]]:
    """Symmetrised links (source i, target j) for each tokenised pair of ``src``/``tgt``,
    learnt from those pairs plus ``corpus`` (raw sentence pairs, cut into words by ``split``,
    which should cut them as ``src`` and ``tgt`` were). eflomal samples: two runs may differ
    in a few links; ``samplers`` independent samplers are averaged."""
    try:
        from eflomal import Aligner
    except ImportError:
        raise AlignerUnavailable("the statistical aligner needs the eflomal package: pip install eflomal") from None
    src_lines = [" ".join(w.lower() for w in s) for s in src] + [" ".join(split(s)) for s, _ in corpus]
    tgt_lines = [" ".join(w.lower() for w in t) for t in tgt] + [" ".join(split(t)) for _, t in corpus]
    keep = [bool(s.strip()) and bool(t.strip()) for s, t in zip(src_lines, tgt_lines)]
    keep[:len(src)] = [True] * len(src)  # the sentences to align stay, in order
    src_lines = [line + "\n" for line, k in zip(src_lines, keep) if k]
    tgt_lines = [line + "\n" for line, k in zip(tgt_lines, keep) if k]
    with tempfile.TemporaryDirectory() as tmp:
        fwd, rev = Path(tmp) / "fwd", Path(tmp) / "rev"
        Aligner(n_samplers=samplers).align(src_lines, tgt_lines, links_filename_fwd=str(fwd),
                                           links_filename_rev=str(rev), quiet=True)
        forward = fwd.read_text(encoding="utf-8").split("\n")[:len(src)]
        backward = rev.read_text(encoding="utf-8").split("\n")[:len(src)]
    return [grow_diag_final_and(parse_links(f, "eflomal forward"), parse_links(b, "eflomal reverse"))
            for f, b in zip(forward, backward)]

