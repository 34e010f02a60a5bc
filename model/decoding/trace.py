"""The evidence a decode returns, its versioned JSON form, and that form's one validating reader.

JSON schema (``TRACE_SCHEMA_VERSION`` 2), one object per sentence:

- ``schema``: 2
- ``model``: the architecture of the model that decoded it (``ModelDescription.arch``,
  model/core/decodable.py): "rnnsearch" or "rnnencdec" for this project's models, "joey-rnn"
  for an imported Joey NMT model, a registered family's own name for any other (a non-empty string)
- ``alignment_model``: its alignment model (``ModelDescription.attention``: "additive",
  "dot-product", ...); "" for a model without attention
- ``origin``: who built and trained it (``ModelDescription.origin``: "this project",
  "Joey NMT 2.3.0 (imported)", ...)
- ``source``: the input text; ``source_tokens``: its subword pieces (list of str);
  ``source_ids``: their vocabulary ids (what the model read, same length)
- ``target_tokens``: output pieces, ending with "</s>" when the model emitted it;
  ``target_ids``: their vocabulary ids (same length)
- ``translation``: detokenised output text
- ``score``: length-normalised log-probability, ``logprob``: total log-probability
- ``step_logprobs``: log p of each target token (same length as ``target_tokens``; empty when the
  decode recorded no evidence: greedy decoding without a trace, or a blank input line)
- ``attention``: list of rows, one per target token, each over ``source_tokens`` and
  summing to 1; null for a model without attention (RNNencdec) or a decode without evidence
- ``energies``: the alignment energies e_ij before the softmax, same shape; null also for a
  model whose attention has no energies
- ``cross_attention`` (optional: absent or null for a model with one attention per step): for a
  model with several layers and heads of attention over the source (a Transformer's
  cross-attention), every one of them as ``[layer][head][i][j]``, each row over
  ``source_tokens`` summing to 1; ``attention`` is then the model's stated default among them:
  the mean over the heads of layer ``alignment_layer`` (0-based; absent in older traces: the last)
- ``topk``: per step (as ``step_logprobs``), a list of ``{"token", "id", "prob"}`` candidates
  (``Candidate``), most likely first
- ``beam``: every node of the search tree, node ``id`` at position ``id``: ``{"id", "parent",
  "step", "token", "token_id", "score", "norm_score", "status", "attention"}``; ``parent`` is null
  for the root (<s>, step 0) and a smaller id for every other node, whose ``step`` is one more
  than its parent's; ``status`` is one of kept / pruned / finished / best (best marks the chosen
  hypothesis's whole path); ``attention`` is the α over ``source_tokens`` of the step that chose
  the node's token, null for the root and for a model without attention
- ``truncated``: true when the input was cut to the model's maximum input length

Numbers are rounded to 6 decimals, and null stands for a number that is not finite (JSON has
none): ``Trace.from_json`` reads it back as -inf (probability 0, the only one search makes). A
trace read back therefore equals the one written field by field: strings, ids and flags exactly,
finite numbers within 1e-6, -inf as -inf.

``Trace.from_json`` (and ``Trace.loads`` for one line of text) is the one reader: another schema
version, a missing or ill-typed field or a ragged or misshapen matrix raise ``TraceError``
naming the field. Unknown fields are ignored.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from model.core.errors import TraceError

TRACE_SCHEMA_VERSION = 2
STATUSES = ("kept", "pruned", "finished", "best")


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
                "token_id": self.token_id, "score": _num(self.score), "norm_score": _num(self.norm_score),
                "status": self.status, "attention": _vector(self.attention)}


@dataclass
class Trace:
    """Everything one decode of one sentence produced."""

    model: str  # the decoding model's ModelDescription.arch: "rnnsearch", "rnnencdec", "joey-rnn", ...
    source: str  # input text as decoded (after any truncation)
    source_tokens: list[str]  # subword pieces of the source
    source_ids: list[int]  # their vocabulary ids (what the model read)
    target_ids: list[int]  # output ids, ending with </s> when emitted
    target_tokens: list[str]  # output pieces
    translation: str  # detokenised output
    score: float  # length-normalised log-probability of the output
    logprob: float  # total log-probability
    step_logprobs: list[float]  # log p per output token
    attention: Optional[np.ndarray]  # (tgt_len, src_len), None without attention
    energies: Optional[np.ndarray]  # (tgt_len, src_len) pre-softmax energies, None without them
    topk: list[list[Candidate]] = field(default_factory=list)  # per step, most likely first
    beam: list[BeamNode] = field(default_factory=list)  # the whole search tree
    truncated: bool = False  # the input was cut to the maximum input length
    alignment_model: str = ""  # ModelDescription.attention: "additive", ...; "" without attention
    origin: str = ""  # ModelDescription.origin: who built and trained the model
    cross_attention: Optional[np.ndarray] = None  # (layers, heads, tgt_len, src_len); None: one attention only
    alignment_layer: Optional[int] = None  # with cross_attention: the 0-based layer whose heads' mean is ``attention``

    def to_json(self) -> dict:
        return {
            "schema": TRACE_SCHEMA_VERSION, "model": self.model, "alignment_model": self.alignment_model,
            "origin": self.origin, "source": self.source, "source_tokens": self.source_tokens,
            "source_ids": self.source_ids, "target_tokens": self.target_tokens, "target_ids": self.target_ids,
            "translation": self.translation, "score": _num(self.score), "logprob": _num(self.logprob),
            "step_logprobs": [_num(x) for x in self.step_logprobs],
            "attention": _matrix(self.attention), "energies": _matrix(self.energies),
            "topk": [[c.to_json() for c in step] for step in self.topk], "beam": [node.to_json() for node in self.beam],
            "truncated": self.truncated,
            **({} if self.cross_attention is None else {"cross_attention": [[_matrix(head) for head in layer]
                                                                             for layer in self.cross_attention],
                                                          "alignment_layer": self.alignment_layer}),
        }

    def dumps(self) -> str:
        return json.dumps(self.to_json(), ensure_ascii=False)

    @classmethod
    def from_json(cls, data: Any, where: str = "trace") -> "Trace":
        """The Trace of a JSON object written by ``to_json`` (schema in the module docstring);
        ``TraceError`` naming ``where`` and the field for anything else."""
        fields = _Fields(data, where)
        version = fields.get("schema")
        if version != TRACE_SCHEMA_VERSION:
            raise TraceError(f"{where}: trace schema {_show(version)}, this reader reads schema {TRACE_SCHEMA_VERSION} "
                             "(write it again with this version's python -m model.translate --json)")
        model = fields.text("model")
        if not model:
            raise TraceError(f"{where}: field 'model' is empty; it names the model's architecture")
        source_tokens, target_tokens = fields.texts("source_tokens"), fields.texts("target_tokens")
        n_src, n_tgt = len(source_tokens), len(target_tokens)
        steps = fields.numbers("step_logprobs")
        topk = [_candidates(fields, i, step) for i, step in enumerate(fields.items("topk"))]
        for name, values in (("step_logprobs", steps), ("topk", topk)):
            if len(values) not in (0, n_tgt):
                raise TraceError(f"{where}: field {name!r} has {len(values)} steps; expected one per target token "
                                 f"({n_tgt}) or none")
        trace = cls(
            model=model, source=fields.text("source"), source_tokens=source_tokens,
            source_ids=fields.ids("source_ids", n_src), target_ids=fields.ids("target_ids", n_tgt),
            target_tokens=target_tokens, translation=fields.text("translation"), score=fields.number("score"),
            logprob=fields.number("logprob"), step_logprobs=steps,
            attention=fields.matrix("attention", (n_tgt, n_src)), energies=fields.matrix("energies", (n_tgt, n_src)),
            topk=topk, beam=[], truncated=fields.flag("truncated"), alignment_model=fields.text("alignment_model"),
            origin=fields.text("origin"))
        trace.cross_attention = fields.layers_of_heads("cross_attention", (n_tgt, n_src))
        if trace.cross_attention is not None:
            layer = fields.integer("alignment_layer", optional=True) if "alignment_layer" in fields.data else None
            if layer is not None and not 0 <= layer < trace.cross_attention.shape[0]:
                raise TraceError(f"{where}: field 'alignment_layer' is {layer}; the trace has "
                                 f"{trace.cross_attention.shape[0]} layers (0-based)")
            trace.alignment_layer = trace.cross_attention.shape[0] - 1 if layer is None else layer
        for k, node in enumerate(fields.items("beam")):
            trace.beam.append(_node(_Fields(node, f"{where}: beam[{k}]"), trace.beam, n_src))
        return trace

    @classmethod
    def loads(cls, text: str, where: str = "trace") -> "Trace":
        """``from_json`` of one line of ``python -m model.translate --json``'s output."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise TraceError(f"{where}: not JSON ({exc})") from None
        return cls.from_json(data, where)

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


def _vector(v: Optional[np.ndarray]):
    return None if v is None else [_num(x) for x in np.asarray(v, dtype=np.float64)]


def _matrix(m: Optional[np.ndarray]):
    if m is None:
        return None
    return [[_num(v) for v in row] for row in np.asarray(m, dtype=np.float64)]


# ---------------------------------------------------------------- reading


def _candidates(trace: "_Fields", i: int, step: Any) -> list[Candidate]:
    """Step ``i``'s candidates (``step``, a list of objects) of ``trace``'s top-k."""
    where = f"{trace.where}: topk[{i}]"
    candidates = [_Fields(c, f"{where}[{j}]") for j, c in enumerate(trace.items(f"topk[{i}]", step))]
    return [Candidate(c.text("token"), c.integer("id"), c.number("prob")) for c in candidates]


def _node(fields: "_Fields", earlier: list[BeamNode], n_src: int) -> BeamNode:
    """The node after ``earlier`` ones: its id is its position, its parent an earlier node (None
    only for the root, at step 0), and its step one more than its parent's."""
    position = len(earlier)
    node_id, parent = fields.integer("id"), fields.integer("parent", optional=True)
    if node_id != position:
        raise TraceError(f"{fields.where}: field 'id' is {node_id}; a node's id is its position ({position})")
    if (parent is None) != (position == 0) or (parent is not None and not 0 <= parent < position):
        raise TraceError(f"{fields.where}: field 'parent' is {_show(parent)}; the root (node 0) has none and "
                         "every other node's parent is an earlier node")
    step = fields.integer("step")
    if step != (0 if parent is None else earlier[parent].step + 1):
        raise TraceError(f"{fields.where}: field 'step' is {step}; the root is at step 0 and every other node "
                         "one step after its parent")
    status = fields.text("status")
    if status not in STATUSES:
        raise TraceError(f"{fields.where}: field 'status' is {_show(status)}; expected one of {', '.join(STATUSES)}")
    return BeamNode(id=node_id, parent=parent, step=step, token=fields.text("token"),
                    token_id=fields.integer("token_id"), score=fields.number("score"),
                    norm_score=fields.number("norm_score"), status=status, attention=fields.vector("attention", n_src))


_ABSENT = object()  # no value given: read the field


class _Fields:
    """One JSON object's fields, each read with its type checked; errors name ``where`` and the field."""

    def __init__(self, data: Any, where: str):
        if not isinstance(data, dict):
            raise TraceError(f"{where}: expected a JSON object, got {_kind(data)}")
        self.data, self.where = data, where

    def get(self, key: str) -> Any:
        if key not in self.data:
            raise TraceError(f"{self.where}: missing field {key!r}")
        return self.data[key]

    def _wrong(self, key: str, expected: str, value: Any) -> TraceError:
        return TraceError(f"{self.where}: field {key!r} must be {expected}, got {_kind(value)}")

    def text(self, key: str) -> str:
        value = self.get(key)
        if not isinstance(value, str):
            raise self._wrong(key, "a string", value)
        return value

    def flag(self, key: str) -> bool:
        value = self.get(key)
        if not isinstance(value, bool):
            raise self._wrong(key, "true or false", value)
        return value

    def integer(self, key: str, optional: bool = False) -> Optional[int]:
        value = self.get(key)
        if optional and value is None:
            return None
        if not _is_int(value):
            raise self._wrong(key, "an integer" + (" or null" if optional else ""), value)
        return value

    def number(self, key: str) -> float:
        value = self.get(key)
        if not _is_number(value):
            raise self._wrong(key, "a number or null", value)
        return _float(value)

    def items(self, key: str, value: Any = _ABSENT) -> list:
        """A list field; ``value``, when given, is the list itself (a nested one, named ``key``)."""
        value = self.get(key) if value is _ABSENT else value
        if not isinstance(value, list):
            raise self._wrong(key, "a list", value)
        return value

    def texts(self, key: str) -> list[str]:
        values = self.items(key)
        if not all(isinstance(v, str) for v in values):
            raise self._wrong(key, "a list of strings", next(v for v in values if not isinstance(v, str)))
        return list(values)

    def ids(self, key: str, length: int) -> list[int]:
        """A list of ``length`` integers (the ids of as many tokens)."""
        values = self.items(key)
        if not all(_is_int(v) for v in values):
            raise self._wrong(key, "a list of integers", next(v for v in values if not _is_int(v)))
        if len(values) != length:
            raise TraceError(f"{self.where}: field {key!r} has {len(values)} ids for {length} tokens")
        return list(values)

    def numbers(self, key: str, value: Any = _ABSENT) -> list[float]:
        values = self.items(key, value)
        if not all(_is_number(v) for v in values):
            raise self._wrong(key, "a list of numbers", next(v for v in values if not _is_number(v)))
        return [_float(v) for v in values]

    def vector(self, key: str, length: int) -> Optional[np.ndarray]:
        """Null, or ``length`` numbers as a float32 array (length,)."""
        value = self.get(key)
        if value is None:
            return None
        values = self.numbers(key, value)
        if len(values) != length:
            raise TraceError(f"{self.where}: field {key!r} has {len(values)} values; expected {length}, "
                             "one per source token")
        return np.asarray(values, dtype=np.float32)

    def layers_of_heads(self, key: str, shape: tuple[int, int]) -> Optional[np.ndarray]:
        """Absent or null, or a list of layers, each a list of heads, each a matrix of ``shape``,
        with as many heads in every layer: a float32 array (layers, heads, *shape)."""
        value = self.data.get(key)
        if value is None:
            return None
        layers = self.items(key, value)
        heads = [self.items(f"{key}[{i}]", layer) for i, layer in enumerate(layers)]
        counts = sorted({len(layer) for layer in heads})
        if not layers or counts[0] == 0 or len(counts) > 1:
            raise TraceError(f"{self.where}: field {key!r} must hold at least one layer, each with the same "
                             f"number of heads (at least one); got {[len(layer) for layer in heads][:8]}")
        nested = _Fields({f"{key}[{i}][{h}]": head for i, layer in enumerate(heads) for h, head in enumerate(layer)},
                         self.where)
        matrices = [nested.matrix(f"{key}[{i}][{h}]", shape) for i, layer in enumerate(heads) for h in range(len(layer))]
        return np.stack(matrices).reshape(len(layers), counts[0], *shape)

    def matrix(self, key: str, shape: tuple[int, int]) -> Optional[np.ndarray]:
        """Null, or rows of numbers of ``shape`` (target tokens, source tokens) as a float32 array."""
        value = self.get(key)
        if value is None:
            return None
        rows = [self.numbers(f"{key}[{i}]", row) for i, row in enumerate(self.items(key, value))]
        widths = sorted({len(row) for row in rows})
        if len(widths) > 1:
            raise TraceError(f"{self.where}: field {key!r} is ragged: its rows have {widths} values")
        found = (len(rows), widths[0] if widths else shape[1])
        if found != shape:
            raise TraceError(f"{self.where}: field {key!r} is {found[0]} x {found[1]}; "
                             f"expected {shape[0]} x {shape[1]} (target tokens x source tokens)")
        return np.asarray(rows, dtype=np.float32).reshape(shape)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))


def _float(value: Optional[float]) -> float:
    """A JSON number; null is a number that was not finite: -inf (probability 0)."""
    return float("-inf") if value is None else float(value)


def _kind(value: Any) -> str:
    names = {type(None): "null", bool: "true/false", int: "an integer", float: "a number", str: "a string",
             list: "a list", dict: "an object"}
    return names.get(type(value), type(value).__name__)


def _show(value: Any) -> str:
    """A value for an error message, cut short."""
    return repr(value)[:40]
