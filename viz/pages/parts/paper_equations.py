"""The Paper page's first section: every equation of Section 3 / Appendix A, the function in
model/ that computes it, and its value for a sentence the reader types, at a step they pick."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import streamlit as st

from model.decoding.search import candidates
from model.decoding.step_by_step import Anatomy, StepAnatomy
from viz.figures.decoding_step import energies_bar, norms_bar, source_strip, topk_bar
from viz.figures.heatmap import display_token
from viz.pages.parts import nav, widgets
from viz.pages.parts.faithfulness_ui import attention_check_ui
from viz.pages.parts.canvas_charts import chart_ui
from viz.i18n import N_, _, ltr, ngettext
from viz.pages.parts.safe_text import MAX_INPUT_CHARS, cut_input, md
from viz.pages.parts.serving_ui import decode_one_for_page
from viz.serving import offered_models
from viz.serving.decodes import Decoded, Request
from viz.serving import decode_views
from viz.serving.settings import AppSettings


@dataclass(frozen=True)
class Equation:
    """One equation of the paper and the functions in model/ that compute it."""

    latex: str
    computed_by: tuple[tuple[str, str], ...]  # (module, qualified name), importable
    note: str = ""  # how, in a few words (marked with N_, shown translated)

    def caption(self) -> str:
        names = [f"{module.replace('.', '/')}.py · {name}" for module, name in self.computed_by]
        if len(names) == 1:
            if self.note:
                return _("Computed by `{name}` ({note})").format(name=names[0], note=_(self.note))
            return _("Computed by `{name}`").format(name=names[0])
        first, second = " and ".join(names[:-1]), names[-1]
        if self.note:
            return _("Computed by `{first} and {second}` ({note})").format(first=first, second=second,
                                                                           note=_(self.note))
        return _("Computed by `{first} and {second}`").format(first=first, second=second)


EQUATIONS = {
    "h": Equation(r"h_j = \left[\overrightarrow{h}_j \,;\, \overleftarrow{h}_j\right]",
                  (("model.network.encoder", "Encoder.forward"),), N_("a bidirectional GRU over E x_j")),
    "s0": Equation(r"s_0 = \tanh\left(W_s \overleftarrow{h}_1\right)", (("model.network.decoder", "Decoder.init_state"),)),
    "e": Equation(r"e_{ij} = v_a^\top \tanh\left(W_a s_{i-1} + U_a h_j\right)",
                  (("model.network.attention", "AdditiveAttention.energies"),), N_("U_a h_j once per sentence: .keys")),
    "alpha": Equation(r"\alpha_{ij} = \frac{\exp(e_{ij})}{\sum_{k=1}^{T_x} \exp(e_{ik})}",
                      (("model.network.attention", "Attention.forward"),), N_("padding masked before the softmax")),
    "c": Equation(r"c_i = \sum_{j=1}^{T_x} \alpha_{ij} h_j", (("model.network.decoder", "Decoder.context"),),
                  N_("when decoding, C c_i and C_o c_i as Σ_j α_ij C h_j and Σ_j α_ij C_o h_j: .prepare forms C h_j and "
                     "C_o h_j once per sentence")),
    "gates": Equation(r"r_i = \sigma\left(W_r E y_{i-1} + U_r s_{i-1} + C_r c_i\right), \quad "
                      r"z_i = \sigma\left(W_z E y_{i-1} + U_z s_{i-1} + C_z c_i\right)",
                      (("model.network.decoder", "Decoder.gates"),)),
    "s": Equation(r"s_i = (1 - z_i) \circ s_{i-1} + z_i \circ \tanh\left(W E y_{i-1} + U\left[r_i \circ s_{i-1}\right]"
                  r" + C c_i\right)", (("model.network.decoder", "Decoder.gates"), ("model.network.gru", "gru_update"))),
    "out": Equation(r"t_{i,k} = \max\left(\tilde t_{i,2k-1}, \tilde t_{i,2k}\right), \;\; \tilde t_i = U_o s_i + "
                    r"V_o E y_{i-1} + C_o c_i, \;\; p(y_i \mid y_{<i}, x) \propto \exp\left(y_i^\top W_o t_i\right)",
                    (("model.network.decoder", "Decoder.maxout_features"),), N_("then W_o t_i and a softmax")),
    "fixed": Equation(r"c = \left[\overrightarrow{h}_{T_x} \,;\, \overleftarrow{h}_1\right] \quad \text{at every step } i",
                      (("model.network.encoder", "Encoder.forward"), ("model.network.decoder", "Decoder.context")),
                      N_("the encoder's summary; the RNNencdec branch of the context")),
}


def anatomy_of(result: Decoded, settings: AppSettings) -> Anatomy:
    with st.spinner(_("Following the decode step by step...")):
        return decode_views.anatomy_of(result, settings)


def decode(name: str, text: str, settings: AppSettings) -> Decoded:
    """``text`` decoded by ``name`` with its card's default decoding, with the full trace."""
    return decode_one_for_page(Request(name, text, offered_models.info(name, settings).decoding), settings)


def render(search: str, encdec: str, sentence: str, settings: AppSettings, choices: Sequence[str] = ()) -> None:
    """The equations followed for one sentence with ``search`` (or, when ``choices`` offers more
    attention models, the one picked); an imported model gets the list of how its equations differ."""
    st.markdown(_("**The claim.** A fixed-length vector is a bottleneck. RNNsearch keeps one annotation h_j per "
                  "source word and, before writing each target word, scores every annotation against its state "
                  "(e_ij), turns the scores into weights (α_ij) and reads their weighted sum (c_i). RNNencdec "
                  "differs in one equation: its c never changes."))
    text = st.text_input(_("A sentence to follow through the equations"), sentence, key="paper_src",
                         max_chars=MAX_INPUT_CHARS)
    text, message = cut_input(text)
    if message:
        st.warning(message)
    if not text.strip():
        return
    if len(choices) > 1:
        labels = {name: (found.label if (found := offered_models.info(name, settings)) else name) for name in choices}
        search = st.selectbox(_("Follow the equations with"), list(choices), key="paper_model_choice",
                              format_func=labels.get)
    model = offered_models.info(search, settings)
    if model is not None and model.imported:
        differences_ui(model)
        return
    if model is None or model.arch != "rnnsearch":
        st.info(_("No RNNsearch checkpoint is installed for this language pair, so there are no e_ij and α_ij to "
                  "show."))
        return
    result = decode(search, text, settings)
    trace = result.trace
    if not trace.target_ids:
        return
    st.markdown(_("**{model}** writes: {translation}").format(model=ltr(md(search)),
                                                               translation=ltr(md(trace.translation))))
    kind = model.attention
    if kind != "additive":
        st.warning(_("{model} uses {kind} attention (Luong et al.), not the paper's additive e_ij below; pick the "
                     "additive RNNsearch as the left model of the default pair to follow the paper exactly.").format(
                         model=ltr(search), kind=ltr(kind)))
    step = st.slider(_("Decoder step i"), 1, len(trace.target_ids), 1, key="paper_step") if len(trace.target_ids) > 1 else 1
    anatomy = anatomy_of(result, settings)
    s = anatomy.steps[step - 1]
    token = display_token(trace.target_tokens[step - 1])
    st.caption(_("Step {step} writes “{token}”.").format(step=step, token=ltr(token)))
    equations_ui(anatomy, s, trace.source_tokens, result.translator.tgt_vocab,
                 lambda: attention_check_ui(search, result.translator, trace, settings, short=True))
    fixed_context_ui(encdec, text, settings)
    st.page_link(nav.link("translate"), label=_("Step through this sentence on the Translate page"),
                 query_params={"src": text, "tab": "steps", "step": str(step), **widgets.app_params()},
                 icon=":material/arrow_forward:")


def differences_ui(model: offered_models.ModelInfo) -> None:
    """An imported model's own account of how it differs from RNNsearch, instead of equations
    it does not compute."""
    st.info(_("**{model}** comes from {origin}: {summary}. This tab follows RNNsearch's equations, which this model "
              "does not compute, so they are not shown for it. How it differs from the paper:").format(
                  model=ltr(md(model.name)), origin=ltr(md(model.description.origin)),
                  summary=ltr(md(model.description.summary))))
    st.markdown("\n".join(f"- {md(line)}" for line in model.description.differences)
                or "- " + _("(its description lists none)"))
    st.caption(_("Its attention, beam tree, saliency and step table are on the Translate page, as for any model."))


def equation(key: str):
    """LaTeX and its source on the left; returns the right-hand column for the values."""
    eq = EQUATIONS[key]
    left, right = st.columns([3, 2])
    with left:
        st.latex(eq.latex)
        st.caption(eq.caption())
    return right


def equations_ui(anatomy: Anatomy, s: StepAnatomy, src_tokens: list[str], tgt_vocab,
                 under_alpha: Callable[[], None] = lambda: None) -> None:
    """Each equation beside its values at step ``s``; ``under_alpha`` draws what goes under α (the
    faithfulness check of the sentence's attention)."""
    norms = np.linalg.norm(anatomy.annotations, axis=1)
    with equation("h"):
        chart_ui(norms_bar(norms, src_tokens, _("{norm} per source piece").format(norm=ltr("‖h_j‖"))), key="paper_h")
    with equation("s0"):
        st.markdown(f"‖s_0‖ = {np.linalg.norm(anatomy.s0):.3f}")
    with equation("e"):
        chart_ui(energies_bar(s.energies, src_tokens, f"e_{s.step}j"), key="paper_e")
    with equation("alpha"):
        softmax = np.exp(s.energies - s.energies.max())
        softmax /= softmax.sum()
        chart_ui(source_strip(s.alpha, src_tokens, f"α_{s.step}j"), key="paper_alpha")
        st.markdown(f"Σ_j α_{s.step}j = {s.alpha.sum():.4f} · max_j |softmax(e_{s.step})_j − α_{s.step}j| = "
                    f"{np.abs(softmax - s.alpha).max():.1e}")
        under_alpha()
    with equation("c"):
        top = np.argsort(-s.alpha)[:3]
        weights = ", ".join(f"“{display_token(src_tokens[j])}” ({s.alpha[j]:.2f})" for j in top)
        st.markdown(_("{norm}; most of its weight: {weights}").format(
            norm=ltr(f"‖c_{s.step}‖ = {np.linalg.norm(s.context):.3f}"), weights=ltr(weights)))
    with equation("gates"):
        gate = _("{gate}: mean {mean:.3f} (min {low:.2f}, max {high:.2f})")
        st.markdown(" · ".join(gate.format(gate=ltr(f"{name}_{s.step}"), mean=values.mean(), low=values.min(),
                                           high=values.max()) for name, values in (("r", s.reset), ("z", s.update))))
    with equation("s"):
        st.markdown(f"‖s_{s.step}‖ = {np.linalg.norm(s.state):.3f}; ‖s_{s.step} − s_{s.step - 1}‖ = "
                    f"{np.linalg.norm(s.state - s.s_prev):.3f}")
    with equation("out"):
        best = np.argsort(-s.probs)[:5]
        top = candidates(tgt_vocab, s.probs[best], best)
        title = _("{probability}, top 5").format(probability=ltr(f"p(y_{s.step} | y_<{s.step}, x)"))
        chart_ui(topk_bar(top, s.token_id, title), key="paper_out")


def fixed_context_ui(encdec: str, text: str, settings: AppSettings) -> None:
    st.markdown(_("**RNNencdec** ({model}) replaces the last four equations' c_i by one vector:").format(
        model=ltr(md(encdec))))
    with equation("fixed"):
        model = offered_models.info(encdec, settings)
        if model is None or model.arch != "rnnencdec":
            st.caption(_("The second model of the pair is not an RNNencdec."))
            return
        result = decode(encdec, text, settings)
        trace = result.trace
        if not trace.target_ids:
            return
        anatomy = anatomy_of(result, settings)
        drift = max(np.abs(step.context - anatomy.summary).max() for step in anatomy.steps)
        n, norm = len(anatomy.steps), ltr(f"‖c‖ = {np.linalg.norm(anatomy.summary):.3f}")
        st.markdown(ngettext("{norm} at {n} step (largest change between steps: {drift:.1e}). It writes: {translation}",
                             "{norm} at all {n} steps (largest change between steps: {drift:.1e}). It writes: "
                             "{translation}", n).format(norm=norm, n=n, drift=drift,
                                                        translation=ltr(md(trace.translation))))
