"""Named corpora: where a split of each comes from, and how several mix in one epoch.

A corpus (``config.CorpusSpec``) is either
- a folder of line-aligned files ``{prefix}.{lang}[.gz]`` (Multi30k), whose splits are files, or
- one tab-separated pair file (Tatoeba), whose validation and test splits are carved from it
  by ``carve_splits``: deterministic, and grouped by the first column's sentence so that no
  English sentence is both trained on and tested (Tatoeba translates many sentences twice).
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import random
from pathlib import Path
from typing import Sequence

from model.core.config import CorpusSpec, TrainConfig
from model.corpus.parallel import Corpus, find_split, read_pair_file, read_parallel
from model.core.errors import ConfigError, DataError

SPLIT_PAIRS = {"test": 3000, "val": 2000}  # pairs carved from a pair file, in this order; the rest trains
MAX_HELD_OUT = 0.1  # a small pair file gives each held-out split at most this share of its pairs
SPLIT_SEED = "tatoeba-2019-04-07"  # changes which sentences are held out; part of every card


def is_pair_file(path: str | Path) -> bool:
    return Path(path).is_file() and any(str(path).endswith(ext) for ext in (".tsv", ".tsv.gz", ".txt", ".txt.gz"))


def _group_key(sentence: str) -> str:
    """Sentences that differ only in case or spacing are one group."""
    return " ".join(sentence.lower().split())


def carve_splits(corpus: Corpus, sizes: dict[str, int] = SPLIT_PAIRS, seed: str = SPLIT_SEED) -> dict[str, Corpus]:
    """Split pairs into ``sizes``' splits (at least that many pairs each, whole groups only, at
    most ``MAX_HELD_OUT`` of the corpus each) and "train" (the rest). Groups are ordered by a
    hash of (seed, group key), so the result does not depend on the order of lines in the
    file, only on their content."""
    sizes = {name: min(size, int(len(corpus.src) * MAX_HELD_OUT)) for name, size in sizes.items()}
    groups: dict[str, list[int]] = {}
    for i, sentence in enumerate(corpus.src):
        groups.setdefault(_group_key(sentence), []).append(i)
    order = sorted(groups, key=lambda key: hashlib.sha256(f"{seed}\t{key}".encode()).digest())
    splits: dict[str, list[int]] = {name: [] for name in (*sizes, "train")}
    names = iter(sizes)
    current = next(names, "train")
    for key in order:
        while current != "train" and len(splits[current]) >= max(sizes[current], 1):
            current = next(names, "train")
        splits[current].extend(groups[key])
    return {name: Corpus([corpus.src[i] for i in sorted(idx)], [corpus.tgt[i] for i in sorted(idx)])
            for name, idx in splits.items()}


def load_split(spec: CorpusSpec, split: str, src_lang: str, tgt_lang: str,
               prefixes: dict[str, str] | None = None, max_bytes: int = 2**29) -> Corpus:
    """One split ("train", "val", "test" or a folder's file stem such as "test_2016_flickr")
    of ``spec``, source and target in the requested languages."""
    if is_pair_file(spec.path):
        langs = tuple(spec.columns.split("-"))
        if {src_lang, tgt_lang} != set(langs):
            raise DataError(f"{spec.path}: holds {spec.columns} pairs, not {src_lang}-{tgt_lang}")
        splits = _carved(str(spec.path), max_bytes)
        if split not in splits:
            raise DataError(f"{spec.path}: a pair file has splits {', '.join(splits)}, not {split!r}")
        part = splits[split]
        return part if langs == (src_lang, tgt_lang) else Corpus(part.tgt, part.src)
    if not Path(spec.path).is_dir():
        raise DataError(f"{spec.path}: no such folder of {{split}}.{{lang}} files, and not a .tsv[.gz] pair file")
    prefix = (prefixes or {}).get(split, split)
    return read_parallel(find_split(spec.path, prefix, src_lang), find_split(spec.path, prefix, tgt_lang), max_bytes)


def held_out_split_names(spec: CorpusSpec, src_lang: str) -> list[str]:
    """The test splits ``spec`` has on disk: "test" for a pair file, the ``test*`` file stems of
    a folder; none when the path does not exist."""
    if is_pair_file(spec.path):
        return ["test"]
    if not Path(spec.path).is_dir():
        return []
    return sorted({p.name.split(".")[0] for p in Path(spec.path).glob(f"test*.{src_lang}*")})


@functools.lru_cache(maxsize=4)
def _carved(path: str, max_bytes: int) -> dict[str, Corpus]:
    return carve_splits(read_pair_file(path, max_bytes))


def locate_corpus(path: str, root: Path) -> str:
    """Where a corpus a config names is on this machine: ``path`` (relative to ``root``) when it
    exists, else the same corpus under ``root/data/`` where the download commands write it
    (a config written elsewhere may name ``../shared/data/multi30k``; a user has
    ``data/multi30k``), else ``path`` as given."""
    given = Path(path) if Path(path).is_absolute() else root / path
    if given.exists():
        return str(given)
    parts = Path(path).parts
    if "data" in parts:
        downloaded = root.joinpath("data", *parts[len(parts) - parts[::-1].index("data"):])
        if downloaded.exists():
            return str(downloaded)
    return str(given)


def located_spec(spec: CorpusSpec, root: Path) -> CorpusSpec:
    """``spec`` with its path where it is on this machine (``locate_corpus`` from ``root``)."""
    return dataclasses.replace(spec, path=locate_corpus(spec.path, root))


def corpus_specs(t: TrainConfig) -> list[CorpusSpec]:
    """The corpora a training config names: ``corpora``, or the one folder ``data_dir``."""
    specs = list(t.corpora) or [CorpusSpec(name=Path(t.data_dir).name or "data", path=t.data_dir)]
    names = [spec.name for spec in specs]
    if len(set(names)) != len(names) or not all(names):
        raise ConfigError(f"corpora need distinct, non-empty names, got {names}")
    if any(spec.weight < 0 for spec in specs) or not any(spec.weight > 0 for spec in specs):
        raise ConfigError("corpus weights must be >= 0, and at least one > 0")
    return specs


def mix_indices(sizes: Sequence[int], weights: Sequence[float], rng: random.Random) -> list[int]:
    """Example indices of one epoch over corpora concatenated in order (corpus c holds
    ``sizes[c]`` examples): every example ``floor(weight)`` times, plus a random
    ``frac(weight)`` share of them once more."""
    out, start = [], 0
    for size, weight in zip(sizes, weights):
        whole, frac = int(weight), weight - int(weight)
        indices = range(start, start + size)
        out.extend(i for _ in range(whole) for i in indices)
        out.extend(rng.sample(indices, round(frac * size)))
        start += size
    return out
