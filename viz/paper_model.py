"""The Paper page's first section: every equation of Section 3 / Appendix A, the function in
model/ that computes it, and its value for a sentence the reader types, at a step they pick."""
from __future__ import annotations

import numpy as np
import streamlit as st

from model.anatomy import Anatomy, StepAnatomy, dissect

from . import common, nav
from .alignment import display_token
from .steps import energies_bar, norms_bar, source_strip, topk_bar

DEFAULT_SENTENCE = "She has a white cat and two small dogs."
EQUATIONS = {  # key: (LaTeX, where in model/ it is computed)
    "h": (r"h_j = \left[\overrightarrow{h}_j \,;\, \overleftarrow{h}_j\right]",
          "model/encoder.py · Encoder.forward (a bidirectional GRU over E x_j)"),
    "s0": (r"s_0 = \tanh\left(W_s \overleftarrow{h}_1\right)", "model/decoder.py · Decoder.init_state"),
    "e": (r"e_{ij} = v_a^\top \tanh\left(W_a s_{i-1} + U_a h_j\right)",
          "model/attention.py · AdditiveAttention.forward (U_a h_j once per sentence: .keys)"),
    "alpha": (r"\alpha_{ij} = \frac{\exp(e_{ij})}{\sum_{k=1}^{T_x} \exp(e_{ik})}",
              "model/attention.py · _normalise (padding masked before the softmax)"),
    "c": (r"c_i = \sum_{j=1}^{T_x} \alpha_{ij} h_j", "model/decoder.py · Decoder.context"),
    "gates": (r"r_i = \sigma\left(W_r E y_{i-1} + U_r s_{i-1} + C_r c_i\right), \quad "
              r"z_i = \sigma\left(W_z E y_{i-1} + U_z s_{i-1} + C_z c_i\right)", "model/decoder.py · Decoder.gates"),
    "s": (r"s_i = (1 - z_i) \circ s_{i-1} + z_i \circ \tanh\left(W E y_{i-1} + U\left[r_i \circ s_{i-1}\right]"
          r" + C c_i\right)", "model/decoder.py · Decoder.gates and Decoder.gru"),
    "out": (r"t_{i,k} = \max\left(\tilde t_{i,2k-1}, \tilde t_{i,2k}\right), \;\; \tilde t_i = U_o s_i + V_o E y_{i-1}"
            r" + C_o c_i, \;\; p(y_i \mid y_{<i}, x) \propto \exp\left(y_i^\top W_o t_i\right)",
            "model/decoder.py · Decoder.maxout_features and Decoder.readout"),
    "fixed": (r"c = \left[\overrightarrow{h}_{T_x} \,;\, \overleftarrow{h}_1\right] \quad \text{at every step } i",
              "model/encoder.py · Encoder.forward (its summary) and Decoder.context, RNNencdec branch"),
}


@st.cache_data(show_spinner="Following the decode step by step...", max_entries=64)
def _dissect(name: str, src_ids: tuple, out_ids: tuple) -> Anatomy:
    with common.QueuedSlot()():  # a forward pass like a decode, so it waits at the same gate (under the spinner)
        return dissect(common.load_translator(name).model, src_ids, out_ids)


def render(search: str, encdec: str) -> None:
    st.markdown("**The claim.** A fixed-length vector is a bottleneck. RNNsearch keeps one annotation h_j per "
                "source word and, before writing each target word, scores every annotation against its state "
                "(e_ij), turns the scores into weights (α_ij) and reads their weighted sum (c_i). RNNencdec "
                "differs in one equation: its c never changes.")
    text = st.text_input("A sentence to follow through the equations", DEFAULT_SENTENCE, key="paper_src",
                         max_chars=common.MAX_INPUT_CHARS)
    text, message = common.cut_input(text)
    if message:
        st.warning(message)
    if not text.strip():
        return
    if common.load_translator(search).arch != "rnnsearch":
        st.info("No RNNsearch checkpoint is installed, so there are no e_ij and α_ij to show.")
        return
    trace, _ = common.translate(search, text, {**common.card_decoding(search), "trace": True})
    if not trace.target_ids:
        return
    st.markdown(f"**{common.md(search)}** writes: {common.md(trace.translation)}")
    kind = common.load_translator(search).model.config.attention
    if kind != "additive":
        st.warning(f"{search} uses {kind} attention (Luong et al.), not the paper's additive e_ij below; pick the "
                   "additive RNNsearch as the left model of the default pair to follow the paper exactly.")
    step = st.slider("Decoder step i", 1, len(trace.target_ids), 1, key="paper_step") if len(trace.target_ids) > 1 else 1
    anatomy = _dissect(search, tuple(trace.source_ids), tuple(trace.target_ids))
    s = anatomy.steps[step - 1]
    st.caption(f"Step {step} writes “{display_token(trace.target_tokens[step - 1])}”.")
    equations_ui(anatomy, s, trace.source_tokens, common.load_translator(search).tgt_vocab)
    fixed_context_ui(encdec, text)
    st.page_link(nav.link("translate"), label="Step through this sentence on the Translate page",
                 query_params={"src": text, "tab": "steps", "step": str(step)}, icon=":material/arrow_forward:")


def equation(key: str):
    """LaTeX and its source on the left; returns the right-hand column for the values."""
    latex, where = EQUATIONS[key]
    left, right = st.columns([3, 2])
    with left:
        st.latex(latex)
        st.caption(f"Computed by `{where}`")
    return right


def equations_ui(anatomy: Anatomy, s: StepAnatomy, src_tokens: list[str], tgt_vocab) -> None:
    norms = np.linalg.norm(anatomy.annotations, axis=1)
    with equation("h"):
        st.plotly_chart(norms_bar(norms, src_tokens, "‖h_j‖ per source piece"), key="paper_h")
    with equation("s0"):
        st.markdown(f"‖s_0‖ = {np.linalg.norm(anatomy.s0):.3f}")
    with equation("e"):
        st.plotly_chart(energies_bar(s.energies, src_tokens, f"e_{s.step}j"), key="paper_e")
    with equation("alpha"):
        softmax = np.exp(s.energies - s.energies.max())
        softmax /= softmax.sum()
        st.plotly_chart(source_strip(s.alpha, src_tokens, f"α_{s.step}j"), key="paper_alpha")
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
        candidates = [{"token": tgt_vocab.pieces([int(i)])[0], "id": int(i), "prob": float(s.probs[i])} for i in best]
        st.plotly_chart(topk_bar(candidates, s.token_id, f"p(y_{s.step} | y_<{s.step}, x), top 5"), key="paper_out")


def fixed_context_ui(encdec: str, text: str) -> None:
    st.markdown(f"**RNNencdec** ({common.md(encdec)}) replaces the last four equations' c_i by one vector:")
    with equation("fixed"):
        if common.load_translator(encdec).arch != "rnnencdec":
            st.caption("The second model of the pair is not an RNNencdec.")
            return
        trace, _ = common.translate(encdec, text, {**common.card_decoding(encdec), "trace": True})
        if not trace.target_ids:
            return
        anatomy = _dissect(encdec, tuple(trace.source_ids), tuple(trace.target_ids))
        drift = max(np.abs(step.context - anatomy.summary).max() for step in anatomy.steps)
        st.markdown(f"‖c‖ = {np.linalg.norm(anatomy.summary):.3f} at all {len(anatomy.steps)} steps "
                    f"(largest change between steps: {drift:.1e}). It writes: {common.md(trace.translation)}")
