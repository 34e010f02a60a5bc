"""Corpus scores via sacrebleu, always reported with their signatures."""
from __future__ import annotations

import json
from typing import Optional, Sequence

from sacrebleu.metrics import BLEU, CHRF
from sacrebleu.metrics.base import Metric, Score


def bleu(hyps: Sequence[str], refs: Sequence[str], lowercase: bool = False) -> tuple[float, str]:
    """Cased (default) or lowercased detokenised corpus BLEU and its signature."""
    metric = BLEU(lowercase=lowercase)
    return metric.corpus_score(list(hyps), [list(refs)]).score, str(metric.get_signature())


def chrf(hyps: Sequence[str], refs: Sequence[str]) -> tuple[float, str]:
    metric = CHRF()
    return metric.corpus_score(list(hyps), [list(refs)]).score, str(metric.get_signature())


def corpus_scores(hyps: Sequence[str], refs: Sequence[str]) -> dict:
    """BLEU (cased), BLEU (lowercased) and chrF with signatures, as one JSON-ready dict."""
    cased, cased_sig = bleu(hyps, refs)
    lower, lower_sig = bleu(hyps, refs, lowercase=True)
    chrf_score, chrf_sig = chrf(hyps, refs)
    return {"bleu": round(cased, 2), "bleu_signature": cased_sig,
            "bleu_lc": round(lower, 2), "bleu_lc_signature": lower_sig,
            "chrf": round(chrf_score, 2), "chrf_signature": chrf_sig, "sentences": len(hyps)}


def moses_bleu_lc(hyps: Sequence[str], refs: Sequence[str], lang: str) -> tuple[float, str]:
    """Lowercased BLEU on Moses-tokenised text (sacrebleu with ``tokenize="none"``): what
    ``multi-bleu.perl -lc`` reports, the convention of published Multi30k results, so a card can
    say how its sacreBLEU figures relate to theirs."""
    from sacremoses import (
        MosesTokenizer,  # here, not at the top: importing it takes 0.4 s, which every app start would pay
    )

    tokenizer = MosesTokenizer(lang=lang)
    tok = lambda lines: [tokenizer.tokenize(line, return_str=True, escape=False) for line in lines]  # noqa: E731
    metric = BLEU(lowercase=True, tokenize="none")
    return metric.corpus_score(tok(hyps), [tok(refs)]).score, str(metric.get_signature()) + "|moses-tokenised"


def bootstrap_interval(metric: Metric, score: Score) -> Optional[tuple[float, float]]:
    """(bootstrap mean, 95% half-interval) of a score that ``metric`` computed with
    ``n_bootstrap`` > 1, as sacreBLEU prints them ("μ = mean ± half"), read from its public JSON
    form; None when it reports no interval (one resample, or a mean of 0)."""
    data = json.loads(score.format(width=2, signature=str(metric.get_signature()), is_json=True))
    if "confidence_mean" not in data:
        return None
    return data["confidence_mean"], data["confidence_var"]
