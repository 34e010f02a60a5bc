"""A statistical aligner's word links for the Translate page's heatmap: eflomal trained on a
sample of the model's own training text plus the sentence on screen (model/scoring/statistical_aligner.py),
so the attention can be read against an aligner that learnt from the same data."""
from __future__ import annotations

import random
from typing import Optional, Sequence

from model.scoring.statistical_aligner import training_corpus
from model.scoring.statistical_aligner import eflomal_links, split_words
from viz.serving import hosting, offered_models
from viz.serving.decodes import QueuedSlot
from viz.serving.shared_results import STATISTICAL_LINKS, result_store
from viz.serving.settings import REPO, AppSettings
from viz.serving.shared_cache import shared

SAMPLE_PAIRS = 20_000  # training pairs eflomal learns from: about 2 s per sentence on one core (3.3 s at 50,000)


def available() -> bool:
    try:
        import eflomal  # noqa: F401
    except ImportError:
        return False
    return True


@shared(max_entries=8)
def training_sample(name: str, settings: AppSettings) -> tuple[tuple[str, str], ...]:
    """Up to SAMPLE_PAIRS training pairs of checkpoint ``name``'s corpora found on this server
    (a fixed sample, read once per server); empty when none is."""
    model = offered_models.info(name, settings)
    if model is None or model.train is None:
        return ()
    pairs, _ = training_corpus([hosting.resolve_checkpoint(name, settings)], [], model.src_lang, model.tgt_lang,
                               root=REPO)
    return tuple(random.Random(0).sample(pairs, min(SAMPLE_PAIRS, len(pairs))))


def statistical_links(name: str, settings: AppSettings, src_words: Sequence[str],
                      tgt_words: Sequence[str]) -> Optional[set]:
    """eflomal's symmetrised links (source word i, target word j) for one sentence pair, once per
    server; None when the model's training text is not on this server."""
    corpus = training_sample(name, settings)
    if not corpus:
        return None
    key = (name, tuple(src_words), tuple(tgt_words))
    store = result_store(STATISTICAL_LINKS)
    found = store.get(key)
    if found is None:
        with QueuedSlot(settings)():
            found = eflomal_links([list(src_words)], [list(tgt_words)], corpus, split=split_words)[0]
        store.put(key, found)
    return found
