"""What the project knows about the corpora it trains on: what each one is, its licence and the
attribution a model trained on it must carry, and where the download commands put it.

Model cards (``model/cards/builder.py``) read their data section from here, by ``CorpusSpec.name``.
"""
from __future__ import annotations

from dataclasses import dataclass

LANGUAGES = {"en": "English", "fr": "French", "de": "German"}


@dataclass(frozen=True)
class CorpusFacts:
    """One corpus, as a model card describes it."""

    description: str
    licence: str
    attribution: str
    download: str  # the command that fetches it for a user with network access
    path: str  # where that command writes it (what a card's training command names)


MULTI30K_ATTRIBUTION = ("Elliott, Frank, Sima'an, Specia (2016), Multi30K: Multilingual English-German Image "
                        "Descriptions; French data: Elliott et al. (2017), Findings of the Second Shared Task on "
                        "Multimodal Machine Translation and Multilingual Image Description")


def corpus_facts(name: str, src_lang: str, tgt_lang: str) -> CorpusFacts:
    """The facts a card gives for corpus ``name`` read as ``src_lang`` -> ``tgt_lang``; a corpus
    the catalogue does not know is described by its name, licence unknown."""
    src, tgt = LANGUAGES.get(src_lang, src_lang), LANGUAGES.get(tgt_lang, tgt_lang)
    if name == "tatoeba":
        return CorpusFacts(
            description=f"Tatoeba English-French sentence pairs (short everyday sentences, about 6 words on average) "
                        f"from the manythings.org fra-eng release of 2019-04-07, read {src} to {tgt}",
            licence="CC-BY 2.0 (France)", attribution="Tatoeba Project (tatoeba.org), via www.manythings.org/anki",
            download="python -m model.data download-tatoeba data/tatoeba", path="data/tatoeba/eng-fra.tsv.gz")
    if name == "multi30k":
        return CorpusFacts(
            description=f"Multi30k task 1: image captions (Flickr30k, about 13 words on average) written in English "
                        f"and translated into German and French, read {src} to {tgt}",
            licence="research use; cite the dataset papers", attribution=MULTI30K_ATTRIBUTION,
            download="python -m model.data download-multi30k data/multi30k", path="data/multi30k")
    return CorpusFacts(description=name, licence="unknown", attribution="", download="", path="")
