"""Translate page: two models side by side, alignments, step-by-step decoding, beam trees,
what-if re-decoding and saliency. Widgets here; figures in viz/*; decoding in model/*."""
from __future__ import annotations

import json
import time

import numpy as np
import streamlit as st

from model.saliency import saliency
from model.trace import Trace

from . import common
from .alignment import alignment_heatmap, display_token, merge_to_words, pharaoh
from .beam_tree import beam_tree_figure
from .steps import energies_bar, source_strip, topk_bar

EXAMPLES = [  # image-caption style, like the shipped models' training data (Multi30k)
    "A man in a blue shirt is standing on a ladder cleaning windows.",
    "Two young children are playing with a ball in the park.",
    "A woman with a red umbrella walks down a busy street in the rain.",
    "A group of people are sitting at a table in a restaurant.",
    "A black dog is running through the snow.",
    "A little girl in a pink dress is climbing the stairs of a wooden playhouse while her "
    "father watches from a bench and a brown dog sleeps in the grass next to them.",
]


def render() -> None:
    names = common.list_checkpoints()
    if not names:
        st.error(common.no_checkpoints_text("Train one with `python -m model.train` or set NMT_CHECKPOINTS "
                                            "to a folder of checkpoints."))
        return
    pair = model_pair_ui(names)
    settings = common.search_settings_ui()
    text = source_ui()
    if not text.strip():
        st.info("Type an English sentence above (or pick an example in the sidebar) to translate it.")
        return
    results = translate_pair(pair, text, settings)
    if results is None:
        return
    outputs_ui(results)
    tabs = st.tabs(["Alignment", "Step by step", "Beam tree", "What if", "Saliency", "Downloads"])
    with tabs[0]:
        alignment_tab(results)
    with tabs[1]:
        step_tab(results)
    with tabs[2]:
        beam_tab(results)
    with tabs[3]:
        what_if_tab(results, text, settings)
    with tabs[4]:
        saliency_tab(results)
    with tabs[5]:
        downloads_tab(results)


def model_pair_ui(names: list[str]) -> list[str]:
    st.sidebar.subheader("Models")
    first, second = common.default_pair(names)
    left = st.sidebar.selectbox("Left model", names, index=names.index(first), key="model_left")
    right = st.sidebar.selectbox("Right model", names, index=names.index(second), key="model_right")
    return [left] if right == left else [left, right]


def source_ui() -> str:
    example = st.sidebar.selectbox("Example sentences", EXAMPLES, key="example",
                                   on_change=lambda: st.session_state.update(source=st.session_state.example))
    st.session_state.setdefault("source", example)
    raw = st.text_area("English sentence", key="source", height=90,
                       help="One sentence; line breaks are treated as spaces.")
    text, message = common.cut_input(raw)
    if message:
        st.warning(message)
    reference = st.session_state.get("reference")
    if reference and st.session_state.get("reference_for") == raw:  # set by the Evaluate page
        st.caption("Reference (from the Evaluate page):")
        st.text(reference)
    return text


def translate_pair(pair: list[str], text: str, settings: dict):
    """{name: (trace, seconds)}, or None after showing an error for a broken checkpoint."""
    results = {}
    for name in pair:
        try:
            results[name] = common.translate(name, text, settings)
        except ValueError as exc:  # CheckpointError is a ValueError; its text names server paths
            st.error(f"Could not use checkpoint {common.md(name)}: "
                     f"{common.error_text(exc, 'it does not load on this server.')}")
            return None
    return results


def outputs_ui(results: dict) -> None:
    columns = st.columns(len(results))
    for column, (name, (trace, seconds)) in zip(columns, results.items()):
        with column:
            st.markdown(f"**{common.md(name)}** ({trace.model})")
            st.text(trace.translation)  # st.text never interprets markup
            st.caption(f"score {trace.score:.3f} (log p {trace.logprob:.2f}, {len(trace.target_ids)} tokens) · "
                       f"{seconds * 1000:.0f} ms")
            if trace.truncated:
                st.warning("The input was longer than 200 subword tokens; only the first 200 were translated.")


def alignment_tab(results: dict) -> None:
    words = st.toggle("Whole words instead of subword pieces", key="align_words",
                      help="Source pieces of a word are summed; target pieces of a word are averaged, "
                           "so each row still sums to 1.")
    gray = st.toggle("Grayscale (the paper's Figure 3 look)", value=True, key="align_gray")
    for name, (trace, _) in results.items():
        if trace.attention is None:
            st.info(f"{name} is an RNNencdec model: it has no attention. It reads the whole sentence "
                    "into one fixed vector. See the Saliency tab for what its output depends on.")
    attended = {name: trace for name, (trace, _) in results.items() if trace.attention is not None}
    for column, (name, trace) in zip(st.columns(max(len(attended), 1)), attended.items()):
        with column:  # one heatmap gets the full width: long sentences stay readable
            matrix, src, tgt = trace.attention, trace.source_tokens, trace.target_tokens
            if words:
                matrix, src, tgt = merge_to_words(matrix, src, tgt)
            st.plotly_chart(alignment_heatmap(matrix, src, tgt, title=f"{name}: attention", grayscale=gray),
                            key=f"heatmap_{name}")


def _step_controls(key: str, n_steps: int) -> int:
    """Slider over steps with previous / next / play buttons (buttons change the slider's state)."""
    st.session_state.setdefault(key, 1)
    if f"{key}_pending" in st.session_state:  # set by playback on the previous run
        st.session_state[key] = st.session_state.pop(f"{key}_pending")
    st.session_state[key] = min(max(1, st.session_state[key]), n_steps)
    move = lambda d: st.session_state.update({key: min(max(1, st.session_state[key] + d), n_steps)})  # noqa: E731
    play = lambda: st.session_state.update({key: 1, f"{key}_playing": True})  # noqa: E731
    prev_col, next_col, play_col, _ = st.columns([1, 1, 1, 5])
    prev_col.button("◀ Previous", key=f"{key}_prev", on_click=move, args=(-1,))
    next_col.button("Next ▶", key=f"{key}_next", on_click=move, args=(1,))
    play_col.button("Play ▶▶", key=f"{key}_play", on_click=play, help="Step through the whole decode")
    if n_steps == 1:
        return 1
    return st.slider("Decoding step", 1, n_steps, key=key)


def _advance_playback(key: str, n_steps: int) -> None:
    """While playing, show each step for a moment, then rerun on the next one."""
    if not st.session_state.get(f"{key}_playing"):
        return
    if st.session_state[key] >= n_steps:
        st.session_state[f"{key}_playing"] = False
        return
    time.sleep(0.6)
    st.session_state[f"{key}_pending"] = st.session_state[key] + 1  # the slider exists: set it next run
    st.rerun()


def step_tab(results: dict) -> None:
    name = st.radio("Model", list(results), horizontal=True, key="step_model")
    trace = results[name][0]
    if not trace.target_ids:
        return
    step = _step_controls("step", len(trace.target_ids))
    i = step - 1
    chosen = display_token(trace.target_tokens[i])
    st.markdown("**Partial translation:** " + common.md(_partial(trace, step)))
    st.caption(f"Step {step} of {len(trace.target_ids)} chose “{chosen}” with p = {np.exp(trace.step_logprobs[i]):.3f}")
    if trace.attention is None:
        st.info("RNNencdec has no attention: every step sees the same fixed summary of the source. "
                "What it does have is a distribution over next tokens:")
    else:
        st.plotly_chart(source_strip(trace.attention[i], trace.source_tokens, f"attention α at step {step}"),
                        key="step_strip")
        st.plotly_chart(energies_bar(trace.energies[i], trace.source_tokens), key="step_energies")
    st.plotly_chart(topk_bar(trace.topk[i], trace.target_ids[i]), key="step_topk")
    _advance_playback("step", len(trace.target_ids))


def _partial(trace: Trace, step: int) -> str:
    pieces = trace.target_tokens[:step]
    return "".join(p for p in pieces if p != "</s>").replace("\u2581", " ").strip()


def beam_tab(results: dict) -> None:
    name = st.radio("Model", list(results), horizontal=True, key="beam_model")
    trace = results[name][0]
    nodes = [n.to_json() for n in trace.beam]
    pruned = st.toggle("Show pruned candidates", value=True, key="beam_pruned",
                       help="Hide them for a compact tree of what the beam kept")
    shown = nodes if pruned else [n for n in nodes if n["status"] != "pruned"]
    st.caption(f"{len(nodes)} hypotheses ({len(shown)} shown). Click a node to see its text and attention.")
    event = st.plotly_chart(beam_tree_figure(shown, f"{name}: beam search"), key=f"beam_tree_{name}",
                            on_select="rerun", selection_mode="points")
    picked = _clicked_node(event)
    if picked is not None:  # a click moves the number box (its value lives under its key)
        st.session_state[f"beam_node_{name}"] = picked
    node_id = st.number_input("Node id", 0, max(len(nodes) - 1, 0), key=f"beam_node_{name}")
    _show_hypothesis(trace, int(node_id))


def _clicked_node(event):
    points = (event or {}).get("selection", {}).get("points", []) if isinstance(event, dict) else \
        getattr(getattr(event, "selection", None), "points", [])
    for point in points:
        data = point.get("customdata")
        if data:
            return int(data[0])
    return None


def _show_hypothesis(trace: Trace, node_id: int) -> None:
    path = trace.path(node_id)[1:]
    pieces = [n.token for n in path]
    text = "".join(p for p in pieces if p != "</s>").replace("\u2581", " ").strip()
    node = trace.beam[node_id]
    st.markdown(f"**Hypothesis {node_id}** ({node.status}): {common.md(text) or '(empty)'}")
    st.caption(f"log p {node.score:.3f}, normalised {node.norm_score:.3f}, {node.step} tokens")
    if path and path[0].attention is not None:
        st.plotly_chart(alignment_heatmap(np.stack([n.attention for n in path]), trace.source_tokens, pieces,
                                          title="attention along this hypothesis"), key="beam_node_heatmap")


def what_if_tab(results: dict, text: str, settings: dict) -> None:
    name = st.radio("Model", list(results), horizontal=True, key="whatif_model")
    trace = results[name][0]
    if not trace.topk:
        return
    step = st.number_input("At step", 1, len(trace.topk), 1, key="whatif_step")
    i = int(step) - 1
    options = {f"{c['token']} (p={c['prob']:.3f})": c["id"] for c in trace.topk[i] if c["prob"] > 0}
    mode = st.radio("Change", ["the token", "the attention"], horizontal=True, key="whatif_mode",
                    disabled=trace.attention is None)
    try:
        if mode == "the token" or trace.attention is None:
            choice = st.selectbox("Force this token instead", list(options), key="whatif_token")
            new, _ = common.translate(name, text, settings, prefix=tuple(trace.target_ids[:i] + [options[choice]]))
        else:
            labels = [f"{j}: {t}" for j, t in enumerate(trace.source_tokens)]
            j = st.selectbox("Put all attention on", range(len(labels)), format_func=labels.__getitem__,
                             key="whatif_source")
            new, _ = common.translate(name, text, settings, attend=(i, int(j)))
    except ValueError as exc:
        st.warning(f"No translation under that change: {exc}")
        return
    _compare(trace, new)


def _compare(old: Trace, new: Trace) -> None:
    for column, (label, trace) in zip(st.columns(2), (("Original", old), ("What if", new))):
        with column:
            st.markdown(f"**{label}** · score {trace.score:.3f}")
            st.text(trace.translation)
            if trace.attention is not None:
                st.plotly_chart(alignment_heatmap(trace.attention, trace.source_tokens, trace.target_tokens),
                                key=f"whatif_heatmap_{label}")


def saliency_tab(results: dict) -> None:
    st.caption("Gradient × input on the source embeddings: how much each source token moves the "
               "log-probability of each output token (rows normalised to 1). Compare 'where it looks' "
               "(attention) with 'what matters' (saliency).")
    for column, (name, (trace, _)) in zip(st.columns(len(results)), results.items()):
        with column:
            sal = _saliency(name, tuple(trace.source_ids), tuple(trace.target_ids))
            st.plotly_chart(alignment_heatmap(sal, trace.source_tokens, trace.target_tokens,
                                              title=f"{name}: saliency", value_name="saliency"),
                            key=f"saliency_{name}")


@st.cache_data(show_spinner="Computing saliency...", max_entries=256)
def _saliency(name: str, src_ids: tuple, out_ids: tuple) -> np.ndarray:
    return saliency(common.load_translator(name).model, src_ids, out_ids)


def downloads_tab(results: dict) -> None:
    st.caption("Figures: use the camera icon in each chart's toolbar for PNG.")
    for name, (trace, _) in results.items():
        st.download_button(f"{name}: trace (JSON)", json.dumps(trace.to_json(), ensure_ascii=False, indent=1),
                           file_name=f"{name}-trace.json", mime="application/json", key=f"dl_trace_{name}")
        if trace.attention is not None:
            st.download_button(f"{name}: alignment (Pharaoh i-j)", pharaoh(trace.attention) + "\n",
                               file_name=f"{name}.align", key=f"dl_align_{name}")
