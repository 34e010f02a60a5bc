"""The evaluation sets a server offers without an upload: the held-out splits of the corpora
its models were trained on (where they exist on this server), plus the files of the folder
``app.py --data-dir`` names."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Optional

from model.core.config import CorpusSpec
from model.corpus.corpora import corpus_specs, held_out_split_names, load_split, locate_corpus
from model.corpus.test_sets import EvalSet, build_eval_set
from viz.serving import offered_models
from viz.serving.settings import REPO, AppSettings
from viz.serving.shared_cache import shared


@dataclass(frozen=True)
class BuiltinSet:
    """One held-out split of a corpus, in one language direction."""

    label: str  # "corpus/split", what pickers and links show
    spec: CorpusSpec  # the corpus, its path made absolute
    split: str
    src_lang: str
    tgt_lang: str


def builtin_sets(settings: AppSettings, direction: Optional[tuple[str, str]] = None) -> dict[str, BuiltinSet]:
    """{label: BuiltinSet} of every offered model's corpora, or of those of ``direction`` only."""
    found = _builtin_sets(tuple(m.name for m in offered_models.offered(settings)), settings)
    return {k: v for k, v in found.items() if direction is None or (v.src_lang, v.tgt_lang) == tuple(direction)}


@shared(max_entries=64, ttl_s=offered_models.LISTING_TTL_S)
def _builtin_sets(names: tuple, settings: AppSettings) -> dict[str, BuiltinSet]:
    extra = settings.data_dir
    specs = [("data", CorpusSpec("data", str(extra)), *offered_models.DEFAULT_DIRECTION)] if extra else []
    for model in filter(None, (offered_models.info(name, settings) for name in names)):
        if model.train is not None:
            specs += [(spec.name, spec, model.src_lang, model.tgt_lang) for spec in corpus_specs(model.train)]
    found: dict[str, BuiltinSet] = {}
    for label, spec, src, tgt in specs:
        spec = CorpusSpec(spec.name, locate_corpus(spec.path, REPO), columns=spec.columns)
        suffix = "" if (src, tgt) == offered_models.DEFAULT_DIRECTION else f" ({src}→{tgt})"
        for split in held_out_split_names(spec, src):
            found.setdefault(f"{label}/{split}{suffix}", BuiltinSet(f"{label}/{split}{suffix}", spec, split, src, tgt))
    return found


@shared(max_entries=8, key=dataclasses.astuple)
def load_builtin_set(entry: BuiltinSet) -> EvalSet:
    """The sentences of ``entry``, read once per server (shared: never mutated)."""
    corpus = load_split(entry.spec, entry.split, entry.src_lang, entry.tgt_lang)
    return build_eval_set(corpus.src, corpus.tgt, entry.label)
