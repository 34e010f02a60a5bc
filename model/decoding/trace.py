"""The evidence a decode returns, and its versioned JSON form.

JSON schema (``TRACE_SCHEMA_VERSION`` 1), one object per sentence:

- ``schema``: 1
- ``model``: "rnnsearch" | "rnnencdec"
- ``source``: the input text; ``source_tokens``: its subword pieces (list of str)
- ``target_tokens``: output pieces, ending with "</s>" when the model emitted it
- ``translation``: detokenised output text
- ``score``: length-normalised log-probability, ``logprob``: total log-probability
- ``step_logprobs``: log p of each target token (same length as ``target_tokens``)
- ``attention``: list of rows, one per target token, each over ``source_tokens`` and
  summing to 1; null for RNNencdec (it has no attention)
- ``energies``: the alignment energies e_ij before the softmax, same shape; null for RNNencdec
- ``topk``: per step, a list of ``{"token", "id", "prob"}`` candidates (``Candidate``), most likely first
- ``beam``: every node of the search tree: ``{"id", "parent", "step", "token", "score",
  "norm_score", "status"}``; ``parent`` is null for the root (<s>); ``status`` is one of
  kept / pruned / finished / best (best marks the chosen hypothesis's whole path)
- ``truncated``: true when the input was cut to the model's maximum input length
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

TRACE_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Candidate:
    """One of the most likely next tokens at a decoding step."""

    token: str  # the subword piece
    id: int  # its vocabulary id
    prob: float  # p(token | prefix, source)

    def to_json(self) -> dict:
        return {"token": self.token, "id": self.id, "prob": self.prob}


@dataclass
class BeamNode:
    """One hypothesis ever considered by the search."""

    id: int  # position in Trace.beam
    parent: Optional[int]  # id of the hypothesis it extends; None for the root
    step: int  # number of tokens after <s> (root: 0)
    token: str  # the subword piece this node appends
    token_id: int  # its vocabulary id
    score: float  # cumulative log-probability
    norm_score: float  # score / length**length_norm
    status: str  # kept | pruned | finished | best
    attention: Optional[np.ndarray] = None  # (src_len,) alpha used to choose this token

    def to_json(self) -> dict:
        return {"id": self.id, "parent": self.parent, "step": self.step, "token": self.token,
                "score": _num(self.score), "norm_score": _num(self.norm_score), "status": self.status}


@dataclass
class Trace:
    """Everything one decode of one sentence produced."""

    model: str  # "rnnsearch" or "rnnencdec"
    source: str  # input text as decoded (after any truncation)
    source_tokens: list[str]  # subword pieces of the source
    source_ids: list[int]  # their vocabulary ids (what the model read)
    target_ids: list[int]  # output ids, ending with </s> when emitted
    target_tokens: list[str]  # output pieces
    translation: str  # detokenised output
    score: float  # length-normalised log-probability of the output
    logprob: float  # total log-probability
    step_logprobs: list[float]  # log p per output token
    attention: Optional[np.ndarray]  # (tgt_len, src_len), None for RNNencdec
    energies: Optional[np.ndarray]  # (tgt_len, src_len) pre-softmax energies, None for RNNencdec
    topk: list[list[Candidate]] = field(default_factory=list)  # per step, most likely first
    beam: list[BeamNode] = field(default_factory=list)  # the whole search tree
    truncated: bool = False  # the input was cut to the maximum input length

    def to_json(self) -> dict:
        return {
            "schema": TRACE_SCHEMA_VERSION, "model": self.model, "source": self.source,
            "source_tokens": self.source_tokens, "target_tokens": self.target_tokens,
            "translation": self.translation, "score": _num(self.score), "logprob": _num(self.logprob),
            "step_logprobs": [_num(x) for x in self.step_logprobs],
            "attention": _matrix(self.attention), "energies": _matrix(self.energies),
            "topk": [[c.to_json() for c in step] for step in self.topk], "beam": [node.to_json() for node in self.beam],
            "truncated": self.truncated,
        }

    def dumps(self) -> str:
        return json.dumps(self.to_json(), ensure_ascii=False)

    def path(self, node_id: int) -> list[BeamNode]:
        """Root-to-node chain of beam nodes for ``node_id``."""
        chain = []
        while node_id is not None:
            chain.append(self.beam[node_id])
            node_id = self.beam[node_id].parent
        return chain[::-1]


def _num(x: float):
    """JSON has no -inf: report it as null."""
    return None if x is None or not np.isfinite(x) else round(float(x), 6)


def _matrix(m: Optional[np.ndarray]):
    if m is None:
        return None
    return [[_num(v) for v in row] for row in np.asarray(m, dtype=np.float64)]
