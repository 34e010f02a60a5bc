"""The Paper page's first section: every equation of Section 3 / Appendix A, the function in
model/ that computes it, and its value for a sentence the reader types, at a step they pick."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import streamlit as st

from model.decoding.search import candidates
from model.decoding.step_by_step import Anatomy, StepAnatomy, dissect
from viz.figures.decoding_step import energies_bar, norms_bar, source_strip, topk_bar
from viz.figures.heatmap import display_token
from viz.pages import nav, widgets
from viz.pages.safe_text import MAX_INPUT_CHARS, cut_input, md
from viz.pages.serving_ui import translate
from viz.serving import offered_models
from viz.serving.decodes import Decoded, QueuedSlot, Request
from viz.serving.settings import AppSettings


@dataclass(frozen=True)
class Equation:
    """One equation of the paper and the functions in model/ that compute it."""

    latex: str
    computed_by: tuple[tuple[str, str], ...]  # (module, qualified name), importable
    note: str = ""  # how, in a few words

    def caption(self) -> str:
        names = " and ".join(f"{module.replace('.', '/')}.py · {name}" for module, name in self.computed_by)
        return f"Computed by `{names}`" + (f" ({self.note})" if self.note else "")


EQUATIONS = {
    "h": Equation(r"h_j = \left[\overrightarrow{h}_j \,;\, \overleftarrow{h}_j\right]",
                  (("model.network.encoder", "Encoder.forward"),), "a bidirectional GRU over E x_j"),
    "s0": Equation(r"s_0 = \tanh\left(W_s \overleftarrow{h}_1\right)", (("model.network.decoder", "Decoder.init_state"),)),
    "e": Equation(r"e_{ij} = v_a^\top \tanh\left(W_a s_{i-1} + U_a h_j\right)",
                  (("model.network.attention", "AdditiveAttention.forward"),), "U_a h_j once per sentence: .keys"),
    "alpha": Equation(r"\alpha_{ij} = \frac{\exp(e_{ij})}{\sum_{k=1}^{T_x} \exp(e_{ik})}",
                      (("model.network.attention", "_normalise"),), "padding masked before the softmax"),
    "c": Equation(r"c_i = \sum_{j=1}^{T_x} \alpha_{ij} h_j", (("model.network.decoder", "Decoder.context"),)),
    "gates": Equation(r"r_i = \sigma\left(W_r E y_{i-1} + U_r s_{i-1} + C_r c_i\right), \quad "
                      r"z_i = \sigma\left(W_z E y_{i-1} + U_z s_{i-1} + C_z c_i\right)",
                      (("model.network.decoder", "Decoder.gates"),)),
    "s": Equation(r"s_i = (1 - z_i) \circ s_{i-1} + z_i \circ \tanh\left(W E y_{i-1} + U\left[r_i \circ s_{i-1}\right]"
                  r" + C c_i\right)", (("model.network.decoder", "Decoder.gates"), ("model.network.gru", "gru_update"))),
    "out": Equation(r"t_{i,k} = \max\left(\tilde t_{i,2k-1}, \tilde t_{i,2k}\right), \;\; \tilde t_i = U_o s_i + "
                    r"V_o E y_{i-1} + C_o c_i, \;\; p(y_i \mid y_{<i}, x) \propto \exp\left(y_i^\top W_o t_i\right)",
                    (("model.network.decoder", "Decoder.maxout_features"),), "then W_o t_i and a softmax"),
    "fixed": Equation(r"c = \left[\overrightarrow{h}_{T_x} \,;\, \overleftarrow{h}_1\right] \quad \text{at every step } i",
                      (("model.network.encoder", "Encoder.forward"), ("model.network.decoder", "Decoder.context")),
                      "the encoder's summary; the RNNencdec branch of the context"),
}


@st.cache_data(show_spinner="Following the decode step by step...", max_entries=64)
def _dissect(name: str, src_ids: tuple, out_ids: tuple, _result: Decoded, _settings: AppSettings) -> Anatomy:
    with QueuedSlot(_settings)():  # a forward pass like a decode, so it waits at the same gate (under the spinner)
        return dissect(_result.translator.model, src_ids, out_ids)


def anatomy_of(result: Decoded, settings: AppSettings) -> Anatomy:
    return _dissect(result.name, tuple(result.trace.source_ids), tuple(result.trace.target_ids), result, settings)


def decode(name: str, text: str, settings: AppSettings) -> Decoded:
    """``text`` decoded by ``name`` with its card's default decoding, with the full trace."""
    return translate(Request(name, text, offered_models.info(name, settings).decoding), settings)


def render(search: str, encdec: str, sentence: str, settings: AppSettings, choices: Sequence[str] = ()) -> None:
    """The equations followed for one sentence with ``search`` (or, when ``choices`` offers more
    attention models, the one picked); an imported model gets the list of how its equations differ."""
    st.markdown("**The claim.** A fixed-length vector is a bottleneck. RNNsearch keeps one annotation h_j per "
                "source word and, before writing each target word, scores every annotation against its state "
                "(e_ij), turns the scores into weights (α_ij) and reads their weighted sum (c_i). RNNencdec "
                "differs in one equation: its c never changes.")
    text = st.text_input("A sentence to follow through the equations", sentence, key="paper_src",
                         max_chars=MAX_INPUT_CHARS)
    text, message = cut_input(text)
    if message:
        st.warning(message)
    if not text.strip():
        return
    if len(choices) > 1:
        labels = {name: (found.label if (found := offered_models.info(name, settings)) else name) for name in choices}
        search = st.selectbox("Follow the equations with", list(choices), key="paper_model_choice",
                              format_func=labels.get)
    model = offered_models.info(search, settings)
    if model is not None and model.imported:
        differences_ui(model)
        return
    if model is None or model.arch != "rnnsearch":
        st.info("No RNNsearch checkpoint is installed for this language pair, so there are no e_ij and α_ij to show.")
        return
    result = decode(search, text, settings)
    trace = result.trace
    if not trace.target_ids:
        return
    st.markdown(f"**{md(search)}** writes: {md(trace.translation)}")
    kind = model.attention
    if kind != "additive":
        st.warning(f"{search} uses {kind} attention (Luong et al.), not the paper's additive e_ij below; pick the "
                   "additive RNNsearch as the left model of the default pair to follow the paper exactly.")
    step = st.slider("Decoder step i", 1, len(trace.target_ids), 1, key="paper_step") if len(trace.target_ids) > 1 else 1
    anatomy = anatomy_of(result, settings)
    s = anatomy.steps[step - 1]
    st.caption(f"Step {step} writes “{display_token(trace.target_tokens[step - 1])}”.")
    equations_ui(anatomy, s, trace.source_tokens, result.translator.tgt_vocab)
    fixed_context_ui(encdec, text, settings)
    st.page_link(nav.link("translate"), label="Step through this sentence on the Translate page",
                 query_params={"src": text, "tab": "steps", "step": str(step)}, icon=":material/arrow_forward:")


def differences_ui(model: offered_models.ModelInfo) -> None:
    """An imported model's own account of how it differs from RNNsearch, instead of equations
    it does not compute."""
    st.info(f"**{md(model.name)}** comes from {md(model.description.origin)}: {md(model.description.summary)}. "
            "This tab follows RNNsearch's equations, which this model does not compute, so they are not "
            "shown for it. How it differs from the paper:")
    st.markdown("\n".join(f"- {md(line)}" for line in model.description.differences) or "- (its description lists none)")
    st.caption("Its attention, beam tree, saliency and step table are on the Translate page, as for any model.")


def equation(key: str):
    """LaTeX and its source on the left; returns the right-hand column for the values."""
    eq = EQUATIONS[key]
    left, right = st.columns([3, 2])
    with left:
        st.latex(eq.latex)
        st.caption(eq.caption())
    return right


def equations_ui(anatomy: Anatomy, s: StepAnatomy, src_tokens: list[str], tgt_vocab) -> None:
    norms = np.linalg.norm(anatomy.annotations, axis=1)
    with equation("h"):
        widgets.show_chart(norms_bar(norms, src_tokens, "‖h_j‖ per source piece"), key="paper_h")
    with equation("s0"):
        st.markdown(f"‖s_0‖ = {np.linalg.norm(anatomy.s0):.3f}")
    with equation("e"):
        widgets.show_chart(energies_bar(s.energies, src_tokens, f"e_{s.step}j"), key="paper_e")
    with equation("alpha"):
        softmax = np.exp(s.energies - s.energies.max())
        softmax /= softmax.sum()
        widgets.show_chart(source_strip(s.alpha, src_tokens, f"α_{s.step}j"), key="paper_alpha")
        st.markdown(f"Σ_j α_{s.step}j = {s.alpha.sum():.4f} · max_j |softmax(e_{s.step})_j − α_{s.step}j| = "
                    f"{np.abs(softmax - s.alpha).max():.1e}")
    with equation("c"):
        top = np.argsort(-s.alpha)[:3]
        st.markdown(f"‖c_{s.step}‖ = {np.linalg.norm(s.context):.3f}; most of its weight: " +
                    ", ".join(f"“{display_token(src_tokens[j])}” ({s.alpha[j]:.2f})" for j in top))
    with equation("gates"):
        st.markdown(f"r_{s.step}: mean {s.reset.mean():.3f} (min {s.reset.min():.2f}, max {s.reset.max():.2f}) · "
                    f"z_{s.step}: mean {s.update.mean():.3f} (min {s.update.min():.2f}, max {s.update.max():.2f})")
    with equation("s"):
        st.markdown(f"‖s_{s.step}‖ = {np.linalg.norm(s.state):.3f}; ‖s_{s.step} − s_{s.step - 1}‖ = "
                    f"{np.linalg.norm(s.state - s.s_prev):.3f}")
    with equation("out"):
        best = np.argsort(-s.probs)[:5]
        top = candidates(tgt_vocab, s.probs[best], best)
        widgets.show_chart(topk_bar(top, s.token_id, f"p(y_{s.step} | y_<{s.step}, x), top 5"), key="paper_out")


def fixed_context_ui(encdec: str, text: str, settings: AppSettings) -> None:
    st.markdown(f"**RNNencdec** ({md(encdec)}) replaces the last four equations' c_i by one vector:")
    with equation("fixed"):
        model = offered_models.info(encdec, settings)
        if model is None or model.arch != "rnnencdec":
            st.caption("The second model of the pair is not an RNNencdec.")
            return
        result = decode(encdec, text, settings)
        trace = result.trace
        if not trace.target_ids:
            return
        anatomy = anatomy_of(result, settings)
        drift = max(np.abs(step.context - anatomy.summary).max() for step in anatomy.steps)
        st.markdown(f"‖c‖ = {np.linalg.norm(anatomy.summary):.3f} at all {len(anatomy.steps)} steps "
                    f"(largest change between steps: {drift:.1e}). It writes: {md(trace.translation)}")
