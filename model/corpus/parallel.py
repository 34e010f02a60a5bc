"""Parallel corpora: reading plain or gzip text, filtering, length augmentation and bucketing.

Two file layouts are read: line-aligned files (``train.en`` / ``train.fr``, Multi30k) and
tab-separated pair files (``English<TAB>French[<TAB>attribution]``, Tatoeba). Also
``python -m model.data download-multi30k DIR`` and ``download-tatoeba DIR`` for users with
network access.
"""
from __future__ import annotations

import gzip
import itertools
import random
import urllib.request
import zipfile
from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path
from typing import Callable, Iterable, Iterator, Optional, Sequence

import torch

from model.corpus.textfile import MAX_FILE_BYTES, read_text
from model.corpus.vocab import BOS, EOS, PAD
from model.core.errors import DataError


@dataclass
class Corpus:
    """Line-aligned sentence pairs plus what was dropped on the way."""

    src: list[str]
    tgt: list[str]
    empty_skipped: int = 0  # pairs where either side was blank
    notes: list[str] = field(default_factory=list)  # human-readable report lines


def read_parallel(src_path: str | Path, tgt_path: str | Path, max_bytes: int = MAX_FILE_BYTES) -> Corpus:
    """Read two line-aligned files, skipping (and counting) pairs with an empty side."""
    src = read_text(src_path, max_bytes=max_bytes).splitlines()
    tgt = read_text(tgt_path, max_bytes=max_bytes).splitlines()
    if len(src) != len(tgt):
        raise DataError(f"line counts differ: {src_path} has {len(src)} lines, "
                        f"{tgt_path} has {len(tgt)}")
    pairs = [(s.strip(), t.strip()) for s, t in zip(src, tgt)]
    kept = [(s, t) for s, t in pairs if s and t]
    corpus = Corpus([s for s, _ in kept], [t for _, t in kept], len(pairs) - len(kept))
    corpus.notes.append(f"read {len(pairs)} pairs from {src_path} / {tgt_path}; "
                        f"skipped {corpus.empty_skipped} with an empty side")
    return corpus


def read_pair_file(path: str | Path, max_bytes: int = MAX_FILE_BYTES) -> Corpus:
    """Pairs from a tab-separated file (plain or ``.gz``): ``source<TAB>target``, with an optional
    third column (Tatoeba's attribution) that is ignored. Pairs with an empty side are skipped
    and counted; any other line shape raises DataError naming the file and line."""
    src, tgt, empty = [], [], 0
    for number, line in enumerate(read_text(path, max_bytes=max_bytes).splitlines(), start=1):
        if not line.strip():
            continue
        columns = line.split("\t")
        if len(columns) not in (2, 3):
            raise DataError(f"{path}, line {number}: expected 2 or 3 tab-separated columns, "
                            f"found {len(columns)}")
        s, t = columns[0].strip(), columns[1].strip()
        if not (s and t):
            empty += 1
            continue
        src.append(s)
        tgt.append(t)
    if not src:
        raise DataError(f"{path}: no sentence pairs")
    corpus = Corpus(src, tgt, empty)
    corpus.notes.append(f"read {len(src) + empty} pairs from {path}; skipped {empty} with an empty side")
    return corpus


def find_split(data_dir: str | Path, prefix: str, lang: str) -> Path:
    """``DIR/prefix.lang.gz`` or ``DIR/prefix.lang``, whichever exists."""
    for name in (f"{prefix}.{lang}.gz", f"{prefix}.{lang}"):
        if (Path(data_dir) / name).is_file():
            return Path(data_dir) / name
    raise DataError(f"{data_dir}: no {prefix}.{lang}.gz or {prefix}.{lang}")


def filter_by_length(src_ids: list[list[int]], tgt_ids: list[list[int]], max_len: int):
    """Keep pairs whose both sides have 1..max_len tokens; returns (src, tgt, dropped)."""
    keep = [i for i, (s, t) in enumerate(zip(src_ids, tgt_ids)) if 0 < len(s) <= max_len and 0 < len(t) <= max_len]
    return [src_ids[i] for i in keep], [tgt_ids[i] for i in keep], len(src_ids) - len(keep)


def join_examples(src_ids: Sequence[list[int]], tgt_ids: Sequence[list[int]], prob: float,
                  max_join: int, rng: random.Random) -> tuple[list[list[int]], list[list[int]], list[int]]:
    """Length augmentation: walk the pairs in a random order; at each position,
    with probability ``prob`` the next k (2..max_join) pairs become one example, sources
    joined with sources and targets with targets in the same order; otherwise the pair
    stays alone. Every pair is used exactly once, so an epoch keeps its size.
    Returns (sources, targets, pairs joined in each example)."""
    order = list(range(len(src_ids)))
    rng.shuffle(order)
    out_src, out_tgt, sizes, i = [], [], [], 0
    while i < len(order):
        k = rng.randint(2, max_join) if prob > 0 and rng.random() < prob else 1
        group = order[i:i + k]
        out_src.append([tok for j in group for tok in src_ids[j]])
        out_tgt.append([tok for j in group for tok in tgt_ids[j]])
        sizes.append(len(group))
        i += k
    return out_src, out_tgt, sizes


@dataclass
class Batch:
    """Padded tensors for one minibatch. Target input starts with <s>, output ends with </s>."""

    src: torch.Tensor  # (batch, src_len) token ids, PAD-padded
    src_len: torch.Tensor  # (batch,) real lengths
    tgt_in: torch.Tensor  # (batch, tgt_len) <s> y_1 .. y_{T-1}
    tgt_out: torch.Tensor  # (batch, tgt_len) y_1 .. y_T </s>, PAD-padded
    index: list[int]  # positions of these examples in the corpus

    @property
    def n_tgt_tokens(self) -> int:
        return int((self.tgt_out != PAD).sum())

    def to(self, device) -> "Batch":
        """The same batch on ``device`` (lengths stay on the CPU, as packing wants them)."""
        return Batch(self.src.to(device), self.src_len, self.tgt_in.to(device), self.tgt_out.to(device), self.index)


def pad(seqs: Sequence[Sequence[int]], prefix: list[int] = (), suffix: list[int] = ()) -> torch.Tensor:
    """(len(seqs), longest) LongTensor with PAD after each sequence."""
    seqs = [list(prefix) + list(s) + list(suffix) for s in seqs]
    out = torch.full((len(seqs), max(len(s) for s in seqs)), PAD, dtype=torch.long)
    for row, seq in enumerate(seqs):
        out[row, : len(seq)] = torch.tensor(seq, dtype=torch.long)
    return out


def make_batch(src_ids, tgt_ids, index: list[int]) -> Batch:
    src = [src_ids[i] for i in index]
    tgt = [tgt_ids[i] for i in index]
    return Batch(src=pad(src), src_len=torch.tensor([len(s) for s in src]),
                 tgt_in=pad(tgt, prefix=[BOS]), tgt_out=pad(tgt, suffix=[EOS]), index=list(index))


def bucket_batches(src_ids, tgt_ids, batch_size: int, pool_batches: int, rng: random.Random,
                   sizes: Optional[Sequence[int]] = None) -> list[list[int]]:
    """Shuffle, then sort each pool of ``pool_batches`` batches by length and cut it into
    batches (paper, Appendix B); finally shuffle the batch order. Returns index lists.

    A batch holds at most ``batch_size`` training pairs, an example counting the ``sizes[i]``
    pairs it joins (default 1): length augmentation then keeps the tokens per update and the
    updates per epoch of plain training instead of making fewer, bigger updates."""
    sizes = sizes or [1] * len(src_ids)
    order = list(range(len(src_ids)))
    rng.shuffle(order)
    pool = batch_size * pool_batches
    batches = []
    for start in range(0, len(order), pool):
        chunk = sorted(order[start:start + pool], key=lambda i: (len(src_ids[i]), len(tgt_ids[i])))
        batch, pairs = [], 0
        for i in chunk:
            if batch and pairs + sizes[i] > batch_size:
                batches.append(batch)
                batch, pairs = [], 0
            batch.append(i)
            pairs += sizes[i]
        batches.append(batch)
    rng.shuffle(batches)
    return batches


def epoch_rng(seed: int, epoch: int) -> random.Random:
    """The random generator of one epoch's data order: a pure function of (seed, epoch), so a
    resumed run replays exactly the same order."""
    return random.Random(seed * 1_000_003 + epoch)


def epoch_batches(src_ids, tgt_ids, epoch: int, seed: int, batch_size: int, pool_batches: int,
                  join_prob: float = 0.0, join_max: int = 4) -> tuple[list, list, list[list[int]]]:
    """The examples and batch order of one epoch, a pure function of (seed, epoch) so a
    resumed run replays exactly the same data order."""
    rng = epoch_rng(seed, epoch)
    src, tgt, sizes = join_examples(src_ids, tgt_ids, join_prob, join_max, rng)
    return src, tgt, bucket_batches(src, tgt, batch_size, pool_batches, rng, sizes)


def stream_pairs(src_path: str | Path, tgt_path: str | Path) -> Iterator[tuple[str, str]]:
    """Line-aligned pairs with both sides non-empty, read lazily (plain or .gz): memory does
    not grow with the corpus. Raises DataError on bad UTF-8 or when one file runs out first."""
    openers = [gzip.open if Path(p).suffix == ".gz" else open for p in (src_path, tgt_path)]
    number = 0
    try:
        with openers[0](src_path, "rt", encoding="utf-8") as src, openers[1](tgt_path, "rt", encoding="utf-8") as tgt:
            for number, (s, t) in enumerate(itertools.zip_longest(src, tgt), start=1):
                if s is None or t is None:
                    longer = src_path if t is None else tgt_path
                    raise DataError(f"line counts differ: {longer} has more lines (from line {number}) "
                                    f"than {tgt_path if t is None else src_path}")
                if s.strip() and t.strip():
                    yield s.strip(), t.strip()
    except UnicodeDecodeError:
        raise DataError(f"{src_path} / {tgt_path}: not valid UTF-8 near line {number + 1}") from None
    except (OSError, EOFError) as exc:
        raise DataError(f"{src_path} / {tgt_path}: cannot read ({exc})") from None


def reservoir_sample(pairs: Iterator[tuple[str, str]], n: int, seed: int) -> list[tuple[str, str]]:
    """A uniform random sample of ``n`` pairs from a stream of unknown length (Algorithm R)."""
    rng, sample = random.Random(seed), []
    for seen, pair in enumerate(pairs):
        if seen < n:
            sample.append(pair)
        elif (j := rng.randrange(seen + 1)) < n:
            sample[j] = pair
    return sample


def iter_chunks(items: Iterable, size: int) -> Iterator[list]:
    """Consecutive lists of at most ``size`` elements from any iterable (a list or a stream)."""
    iterator = iter(items)
    while chunk := list(itertools.islice(iterator, size)):
        yield chunk


# ---------------------------------------------------------------------------- download

MULTI30K_URL = "https://raw.githubusercontent.com/multi30k/dataset/master/data/task1/raw/{name}"
MULTI30K_LINES = {"train": 29000, "val": 1014, "test_2016_flickr": 1000,
                  "test_2017_flickr": 1000, "test_2017_mscoco": 461}


def download_multi30k(out_dir: str | Path, langs: Sequence[str] = ("en", "fr", "de"),
                      opener: Callable = urllib.request.urlopen, base_url: str = MULTI30K_URL) -> list[Path]:
    """Fetch Multi30k task-1 raw files into ``out_dir`` and check every line count."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for split, expected in MULTI30K_LINES.items():
        for lang in langs:
            name = f"{split}.{lang}.gz"
            with opener(base_url.format(name=name)) as response:
                raw = response.read(MAX_FILE_BYTES)
            target = out_dir / name
            target.write_bytes(raw)
            got = len(read_text(target).splitlines())
            if got != expected:
                target.unlink()
                raise DataError(f"{name}: expected {expected} lines, downloaded file has {got}")
            print(f"wrote {target} ({got} lines)")
            written.append(target)
    return written


TATOEBA_URL = "http://www.manythings.org/anki/fra-eng.zip"
TATOEBA_FILE = "eng-fra.tsv.gz"


def download_tatoeba(out_dir: str | Path, opener: Callable = urllib.request.urlopen,
                     url: str = TATOEBA_URL) -> Path:
    """Fetch manythings.org's Tatoeba English-French release (a zip holding ``fra.txt``) and
    write it as ``out_dir/eng-fra.tsv.gz``, checked to read as a pair file."""
    request = urllib.request.Request(url, headers={"User-Agent": "bahdanau-nmt-explorer"})
    with opener(request) as response:
        raw = response.read(MAX_FILE_BYTES)
    try:
        with zipfile.ZipFile(BytesIO(raw)) as archive:
            text = archive.read("fra.txt")
    except (zipfile.BadZipFile, KeyError) as exc:
        raise DataError(f"{url}: not the expected zip with fra.txt ({exc})") from None
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / TATOEBA_FILE
    target.write_bytes(gzip.compress(text))
    try:
        corpus = read_pair_file(target)
    except DataError:
        target.unlink()
        raise
    print(f"wrote {target} ({len(corpus.src)} pairs)")
    return target
