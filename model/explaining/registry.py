"""The table of explanation methods: each method's name, what it needs of a model, and how it
computes (model/explaining/methods.py). Every list of methods in the app, the notebook and the
command lines reads this table, so a new method is a row here (``register``), its function, and
its label (viz/figures/method_labels.py) — nothing else.

    from model.explaining.registry import Method, register, explain
    register(Method("my_method", my_function))           # my_function(model, src_ids, out_ids, contrast)
    explain(model, src_ids, out_ids, ["attention", "my_method"])   # {name: Explanation}

A Transformer's single layers (``attention_layer_K``) and ``LAYERS`` (all of them) are not rows:
they are named by the model's shape (``methods.expand_methods``) and read from one pass.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from model.core.decodable import Decodable
from model.explaining import contributions
from model.explaining import methods as m
from model.explaining.explanation import Explanation, layer_of

Pairs = Sequence[tuple[Sequence[int], Sequence[int]]]


@dataclass(frozen=True)
class Method:
    """One row of the table."""

    name: str
    # (model, src_ids, out_ids, contrast or None) -> Explanation, or None where it does not apply
    compute: Callable[[Decodable, Sequence[int], Sequence[int], Optional[Sequence[int]]], Optional[Explanation]]
    needs_attention: bool = False  # only for a model with attention (``Decodable.has_attention``)
    # only for a model that can take itself apart layer by layer (``Decodable.supports_anatomy``:
    # this project's Transformers); the others are told why (``UNSUPPORTED``)
    needs_anatomy: bool = False
    contrastive: bool = True  # explains log p(y_i) - log p(contrast_i) too; without: skipped under a contrast
    # several pairs at once, sharing batches: (model, pairs) -> [{name: Explanation} per pair]; rows
    # with the same ``many`` (the attention and its norm-weighted form) share one call
    many: Optional[Callable[[Decodable, Pairs], list]] = None
    default: bool = False  # chosen from the start in the app's method pickers
    # computed in a fraction of a second (a reading of the weights, no gradient or re-scoring per
    # word): the Explanations tab shows these first and the others as they finish
    instant: bool = False


TABLE: dict[str, Method] = {}


def register(method: Method) -> Method:
    """Add ``method`` to the table (a name already there is replaced)."""
    TABLE[method.name] = method
    return method


def unregister(name: str) -> None:
    """Take ``name`` out of the table (what a test registered)."""
    TABLE.pop(name, None)


def names() -> tuple[str, ...]:
    """Every method in the table, in the order registered."""
    return tuple(TABLE)


def defaults() -> tuple[str, ...]:
    """The methods chosen from the start."""
    return tuple(name for name, row in TABLE.items() if row.default)


def needs_attention(name: str) -> bool:
    """Whether ``name`` needs a model with attention (a layer of a Transformer does too)."""
    return bool(layer_of(name)) or (name in TABLE and TABLE[name].needs_attention)


def instant(name: str) -> bool:
    """Whether ``name`` is a quick reading (a layer's attention is one)."""
    return bool(layer_of(name)) or (name in TABLE and TABLE[name].instant)


def needs_anatomy(name: str) -> bool:
    """Whether ``name`` reads a model layer by layer (``Decodable.supports_anatomy``)."""
    return name in TABLE and TABLE[name].needs_anatomy


UNSUPPORTED = ("reads a Transformer layer by layer: this project's Transformers and pre-norm Joey NMT ones can be taken "
               "apart so; recurrent models have no layers of heads to follow, post-norm Joey NMT ones would need each "
               "LayerNorm split over its inputs, and imported Hugging Face models are not taken apart here")


def applicable(has_attention: bool, anatomy: bool = False) -> tuple[str, ...]:
    """The methods of the table a model with (or without) attention, and able (or not) to be
    taken apart layer by layer, gets."""
    return tuple(name for name in TABLE if (has_attention or not needs_attention(name))
                 and (anatomy or not needs_anatomy(name)))


def applies(model: Decodable, name: str) -> bool:
    """Whether the table's ``name`` applies to ``model``."""
    row = TABLE.get(name)
    return row is not None and (model.has_attention or not row.needs_attention) and (
        model.supports_anatomy or not row.needs_anatomy)


def _attention_of(norm: bool):
    def compute(model, src_ids, out_ids, contrast):
        return None if contrast is not None else m.attention(model, src_ids, out_ids, norm)
    return compute


def _gradient_x_input_many(model, pairs):
    return [{"gradient_x_input": found} for found in m.gradient_x_input_many(model, pairs)]


for _row in (
    Method("attention", _attention_of(False), needs_attention=True, contrastive=False,
           many=m.attention_many, default=True, instant=True),
    Method("attention_norm", _attention_of(True), needs_attention=True, contrastive=False,
           many=m.attention_many, default=True, instant=True),
    Method("gradient_x_input", m.gradient_x_input, many=_gradient_x_input_many, default=True),
    Method("integrated_gradients", m.integrated_gradients),
    Method("occlusion", m.occlusion, default=True),
    Method(contributions.ALTI_PLUS, contributions.method_of(contributions.ALTI_PLUS), needs_attention=True,
           contrastive=False, needs_anatomy=True, instant=True, default=True),
    Method(contributions.VALUE_ZEROING, contributions.method_of(contributions.VALUE_ZEROING), needs_attention=True,
           contrastive=False, needs_anatomy=True, instant=True),
    Method(contributions.ROLLOUT, contributions.method_of(contributions.ROLLOUT), needs_attention=True,
           contrastive=False, needs_anatomy=True, instant=True),
):
    register(_row)


def explain(model: Decodable, src_ids: Sequence[int], out_ids: Sequence[int], methods: Sequence[str],
            contrast: Optional[Sequence[int]] = None) -> dict[str, Explanation]:
    """The explanations ``methods`` give, in the order asked for (those that apply to the model:
    attention needs attention; under a ``contrast``, only contrastive ones)."""
    found = {}
    for name in methods:
        row = TABLE.get(name)
        if row is None or not applies(model, name) or (contrast is not None and not row.contrastive):
            continue
        found[name] = row.compute(model, src_ids, out_ids, contrast)
    layers = [layer_of(x) for x in methods if layer_of(x) and x in m.layer_methods(model)]
    if layers and contrast is None:  # every layer asked for from one teacher-forced pass
        found.update(m.layer_attentions(model, src_ids, out_ids, layers))
    return {name: found[name] for name in methods if found.get(name) is not None}


def explain_many(model: Decodable, pairs: Pairs, methods: Sequence[str]) -> list[dict[str, Explanation]]:
    """``explain`` of each pair; a method with a batched form (``Method.many``: gradient x input,
    reading attention) takes all the pairs at once, the others run pair by pair."""
    batched = [name for name in dict.fromkeys(methods) if name in TABLE and TABLE[name].many is not None
               and applies(model, name)]
    readers = list(dict.fromkeys(TABLE[name].many for name in batched))  # each batched reader called once
    together = [reader(model, pairs) for reader in readers]
    rest = [x for x in methods if x not in batched]
    out = []
    for k, (src_ids, out_ids) in enumerate(pairs):
        found = explain(model, src_ids, out_ids, rest)
        for got in together:
            found.update({name: e for name, e in got[k].items() if name in batched})
        out.append({name: found[name] for name in methods if found.get(name) is not None})  # in the order asked for
    return out
