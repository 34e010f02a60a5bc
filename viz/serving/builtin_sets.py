"""The evaluation sets a server offers without an upload: the held-out splits of the corpora
its models were trained on (where they exist on this server), plus the files of
$NMT_DATA_DIR (``app.py --data-dir``)."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import streamlit as st

from model.config import CorpusSpec
from model.corpus.corpora import corpus_specs, held_out_split_names, load_split, locate_corpus
from model.corpus.test_sets import EvalSet, build_eval_set
from viz.serving import offered_models


@dataclass(frozen=True)
class BuiltinSet:
    """One held-out split of a corpus, in one language direction."""

    label: str  # "corpus/split", what pickers and links show
    spec: CorpusSpec  # the corpus, its path made absolute
    split: str
    src_lang: str
    tgt_lang: str


def builtin_sets(direction: Optional[tuple[str, str]] = None) -> dict[str, BuiltinSet]:
    """{label: BuiltinSet} of every offered model's corpora, or of those of ``direction`` only."""
    found = _builtin_sets(tuple(m.name for m in offered_models.offered()), os.environ.get("NMT_DATA_DIR"))
    return {k: v for k, v in found.items() if direction is None or (v.src_lang, v.tgt_lang) == tuple(direction)}


@st.cache_data(show_spinner=False, ttl=300)
def _builtin_sets(names: tuple, extra: Optional[str]) -> dict[str, BuiltinSet]:
    specs = [("data", CorpusSpec("data", extra), *offered_models.DEFAULT_DIRECTION)] if extra else []
    for model in filter(None, map(offered_models.info, names)):
        if model.train is not None:
            specs += [(spec.name, spec, model.src_lang, model.tgt_lang) for spec in corpus_specs(model.train)]
    found: dict[str, BuiltinSet] = {}
    for label, spec, src, tgt in specs:
        spec = CorpusSpec(spec.name, locate_corpus(spec.path, offered_models.REPO), columns=spec.columns)
        suffix = "" if (src, tgt) == offered_models.DEFAULT_DIRECTION else f" ({src}→{tgt})"
        for split in held_out_split_names(spec, src):
            found.setdefault(f"{label}/{split}{suffix}", BuiltinSet(f"{label}/{split}{suffix}", spec, split, src, tgt))
    return found


@st.cache_data(show_spinner="Reading the test set...", max_entries=8)
def load_builtin_set(entry: BuiltinSet) -> EvalSet:
    """The sentences of ``entry``, read once per server."""
    corpus = load_split(entry.spec, entry.split, entry.src_lang, entry.tgt_lang)
    return build_eval_set(corpus.src, corpus.tgt, entry.label)
