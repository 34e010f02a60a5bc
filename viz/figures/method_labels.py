"""How the explanation methods of model/explaining/registry.py are shown: a label in the
reader's language and a colour, the same on every page, the notebook and the report. A new
method adds its label here (and a colour, or it takes one of ``OTHERS``)."""
from __future__ import annotations

from model.explaining.explanation import LAYERS, layer_of
from viz.i18n import N_, _

LABELS = {  # shown through _()
    "attention": N_("attention α"),
    "attention_norm": N_("norm-weighted attention"),
    "gradient_x_input": N_("gradient × input"),
    "integrated_gradients": N_("integrated gradients"),
    "occlusion": N_("occlusion"),
    "alti_plus": N_("ALTI+ (through every layer)"),
    "value_zeroing": N_("value zeroing"),
    "rollout": N_("attention rollout"),
    LAYERS: N_("each layer's attention (mean of its heads)"),
}
COLOURS = {"attention": "#1f77b4", "attention_norm": "#ff7f0e", "gradient_x_input": "#2ca02c",
           "integrated_gradients": "#9467bd", "occlusion": "#d62728",
           "alti_plus": "#8c564b", "value_zeroing": "#e377c2", "rollout": "#17becf"}
OTHERS = ("#bcbd22", "#7f7f7f", "#aec7e8")  # methods without a colour of their own take these in turn
# Why a model cannot use the layer-wise methods (model/explaining/registry.py · ``UNSUPPORTED``),
# marked for the catalog: pages show _(registry.UNSUPPORTED); a test keeps the two texts equal.
UNSUPPORTED = N_("reads a Transformer layer by layer: this project's Transformers and pre-norm Joey NMT ones can be taken "
                  "apart so; recurrent models have no layers of heads to follow, post-norm Joey NMT ones would need each "
                  "LayerNorm split over its inputs, and imported Hugging Face models are not taken apart here")


def method_label(method: str) -> str:
    """An explanation method's name in the reader's language (a layer's attention by its number;
    a method without a label by its name)."""
    if layer_of(method):
        return _("attention, layer {layer}").format(layer=layer_of(method))
    return _(LABELS[method]) if method in LABELS else method


def method_colour(method: str, index: int) -> str:
    """``method``'s colour; one without its own takes ``OTHERS[index]`` (cycling)."""
    return COLOURS.get(method, OTHERS[index % len(OTHERS)])
