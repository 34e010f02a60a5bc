"""A statistical word aligner beside the attention: eflomal (Östling & Tiedemann 2016, the
``eflomal`` package), trained on a parallel corpus plus the sentences to align, run in both
directions and symmetrised with grow-diag-final-and.

It knows nothing of the neural models: it is the yardstick the attention is compared with. What it
learns from besides the gold sentences is the models' training text (``training_corpus``).
"""
from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence

from model.checkpoints.families import describe_folder
from model.core.config import CorpusSpec
from model.core.errors import UserError
from model.corpus.corpora import corpus_specs, is_pair_file, load_split, located_spec
from model.corpus.parallel import read_pair_file
from model.scoring.word_alignment import GoldSet, Link, grow_diag_final_and, parse_links

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


def eflomal_gold_links(gold: GoldSet, corpus: Sequence[tuple[str, str]]) -> list[set]:
    return eflomal_links([s.src for s in gold.sentences], [s.tgt for s in gold.sentences], corpus)


@dataclass(frozen=True)
class AlignerText:
    """What the statistical aligner learnt from besides the gold sentences."""

    used: tuple[tuple[str, int], ...]  # (corpus, pairs) read
    missing: tuple[str, ...]  # corpus paths not found, so not used

    @property
    def note(self) -> str:
        """In words (the command line's and the JSON report's; pages word it themselves)."""
        used = [f"{name} ({pairs:,} pairs)" for name, pairs in self.used]
        note = "the gold sentences" + (" plus " + ", ".join(used) if used else " alone")
        return note + ("; not found, so not used: " + ", ".join(self.missing) if self.missing else "")


def training_corpus(checkpoints: Sequence[Path], extra: Sequence[str], src_lang: str,
                    tgt_lang: str, root: Optional[Path] = None) -> tuple[list[tuple[str, str]], AlignerText]:
    """The parallel text the statistical aligner learns from: ``extra`` paths if given (a pair
    file whole, source column first; a folder's train files), else the training split of the
    checkpoints' corpora (once each), in the gold's direction; and what it
    was, including what could not be read. Relative corpus paths in the checkpoints' configs
    are read from ``root`` (default: the working directory)."""
    specs = [CorpusSpec(name=Path(p).name, path=p, columns=f"{src_lang}-{tgt_lang}") for p in extra]
    if not extra:
        for folder in checkpoints:
            train = describe_folder(folder).train  # imports name no corpus
            if train is not None:
                found = [located_spec(s, Path(root or ".")) for s in corpus_specs(train)]
                specs += [s for s in found if s.path not in {x.path for x in specs}]
    pairs, used, missing = [], [], []
    for spec in specs:
        if not (Path(spec.path).is_dir() or is_pair_file(spec.path)):
            missing.append(spec.path)
            continue
        if spec.path in extra and is_pair_file(spec.path):  # a user's own pair file: all of it, source first
            corpus = read_pair_file(spec.path)
        else:  # a folder's train files, or the part of a pair file a model trained on
            corpus = load_split(spec, "train", src_lang, tgt_lang)
        pairs += list(zip(corpus.src, corpus.tgt))
        used.append((spec.name or spec.path, len(corpus.src)))
    return pairs, AlignerText(tuple(used), tuple(missing))
