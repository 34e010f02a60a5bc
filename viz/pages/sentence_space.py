"""Sentence space page: where each model puts a sentence among the sentences it trained on
(model/decoding/sentence_space.py), RNNencdec's one fixed vector c beside RNNsearch's s_0, with
the nearest training sentences and, for RNNsearch, each word's nearest words in context."""
from __future__ import annotations

from functools import partial

import pandas as pd
import streamlit as st

from model.decoding.sentence_space import SentenceSpace, SpaceError
from model.core.errors import UserError
from viz.figures.sentence_space import sentence_map_layers
from viz.pages.parts import first_paint, widgets
from viz.pages.parts.canvas_charts import chart_ui
from viz.i18n import N_, _, error_text, ltr
from viz.pages.parts.safe_text import md
from viz.pages.parts.serving_ui import load_builtin_set, queue_notice, translator_for_page
from viz.serving import hosting, offered_models
from viz.serving.decodes import QueuedSlot
from viz.serving.builtin_sets import builtin_sets
from viz.serving.sentence_space import MEASURED_SENTENCES, sentence_space, what_it_keeps
from viz.serving.settings import AppSettings

EXAMPLE = "Two young children are playing with a red ball in the park."
HOW_TO_READ = N_(
    "RNNencdec squeezes the whole sentence into one vector c, which its decoder reads at every step: the paper's "
    "bottleneck. RNNsearch's decoder starts from its own sentence vector s_0 and then looks back at every source "
    "word through attention. Each dot is one of the model's training sentences, placed by its vector (the two "
    "directions along which the sample's vectors vary most); the cross is your sentence. The table lists the "
    "training sentences whose vectors point most nearly the same way as yours (cosine similarity, 1 = the same "
    "direction): what the model treats as similar. For a long sentence, look at what its neighbours share with it: "
    "the first words, the last words, or the meaning.")
K_MAX = 20
K_DEFAULT = 10
MAX_TEXT = 2000


def parse_params(params: dict, names: list[str], default_models: list[str]) -> tuple[tuple[list[str], str, int], list[str]]:
    """(models, text, k) a link asks for, checked against what this server offers, and a notice
    for each value that was ignored (shown as markdown: the link's text escaped)."""
    notices = []
    models = [m for m in str(params.get("models", "")).split(",") if m]
    if params.get("models") is not None and (not models or len(models) > 2 or not set(models) <= set(names)):
        notices.append(_("The link's models are not all offered here; showing the default pair."))
        models = []
    text = str(params.get("text", EXAMPLE))
    if len(text) > MAX_TEXT or "\x00" in text:
        notices.append(_("The link's sentence is longer than {max_text:,} characters or holds a NUL; showing the "
                         "example.").format(max_text=MAX_TEXT))
        text = EXAMPLE
    raw_k = str(params.get("k", K_DEFAULT))
    k = int(raw_k) if raw_k.isdigit() and 1 <= int(raw_k) <= K_MAX else None
    if k is None:
        notices.append(_("The link's number of neighbours {value} is not 1 to {k_max}; showing {k_default}.").format(
            value=ltr(md(repr(raw_k[:20]))), k_max=K_MAX, k_default=K_DEFAULT))
        k = K_DEFAULT
    return (models or default_models, text, k), notices


def page(settings: AppSettings) -> st.Page:
    return st.Page(partial(render, settings), title=_("Sentence space"), url_path="space",
                   icon=":material/scatter_plot:")


def render(settings: AppSettings) -> None:
    st.title(_("Inside the fixed vector"))
    st.caption(_(HOW_TO_READ))
    models = offered_models.offered(settings)
    if not models:
        st.error(hosting.no_checkpoints_text(settings, _("The sentence space needs a model.")))
        return
    names = [m.name for m in models]
    labels = {m.name: m.label for m in models}
    if "space_text" not in st.session_state:  # a session's first run: the view a link carries
        view, notices = parse_params(dict(st.query_params), names, list(dict.fromkeys(offered_models.default_pair(models))))
        st.session_state.update(space_models=view[0], space_text=view[1], space_k=view[2])
        for notice in notices:
            st.info(notice)
    chosen = widgets.multiselect(_("Models"), names, format_func=labels.get, max_selections=2, key="space_models")
    text = st.text_input(_("Your sentence"), max_chars=MAX_TEXT, key="space_text")
    k = st.slider(_("Neighbours"), 1, K_MAX, key="space_k")
    st.query_params.from_dict({"models": ",".join(chosen), "text": text, "k": str(k),  # a link reproduces the view
                              **widgets.app_params()})
    if not chosen:
        st.info(_("Choose a model."))
        return
    for column, name in zip(st.columns(len(chosen)), chosen):
        with column:
            model_ui(name, text, k, settings)
    kept_ui(chosen, settings)


def model_ui(name: str, text: str, k: int, settings: AppSettings) -> None:
    st.subheader(name)
    try:
        translator = translator_for_page(name, settings)
        space = space_ui(name, settings)
        vector = space.embed(translator, text)
    except SpaceError as exc:
        st.info(md(error_text(exc)))
        return
    except UserError as exc:
        st.error(hosting.error_text(exc, settings, _("{name} cannot be placed on this server.").format(name=ltr(name))))
        return
    found = space.nearest(vector, k)
    if space.kind == "c":
        what = _("Its vector: c, the encoder summary its decoder reads at every step. {n:,} training sentences.")
    elif space.kind == "mean":
        what = _("Its vector: the mean of its encoder's outputs over the source words (a Transformer has no single "
                 "vector its decoder reads). {n:,} training sentences.")
    else:
        what = _("Its vector: s_0, its decoder's first state. {n:,} training sentences.")
    st.caption(what.format(n=len(space.sentences)))
    chart_ui(sentence_map_layers(space.points, space.sentences, space.project(vector), text,  # no plotly: drawn
                                     [n.index for n in found], f"{name}: {space.kind}"),  # with the page's text
                 key=f"space_map_{name}")
    if not first_paint.ready():  # a new visitor: the maps come with the page's text, the tables in the next run
        first_paint.hold_ui(_("Drawing the tables..."))
        return
    st.dataframe(pd.DataFrame([{_("similarity"): round(n.similarity, 4), _("training sentence"): n.text}
                               for n in found]),
                 hide_index=True, key=f"space_table_{name}")
    if space.words is not None:
        words_ui(space, translator, text, name)


def space_ui(name: str, settings: AppSettings) -> SentenceSpace:
    """The model's space, built once per server (about half a minute on 2 cores) in a decode slot;
    a space kept already is read without waiting in line."""
    notice = queue_notice()
    with st.spinner(_("Encoding {name}'s training sentences (once per server)...").format(name=ltr(name))):
        return sentence_space(name, settings, QueuedSlot(settings, notice.show, notice.clear))


def words_ui(space: SentenceSpace, translator, text: str, name: str) -> None:
    st.markdown(_("**Each word in its context**: the training words whose annotation h_j is nearest to this word's."))
    rows = [{_("word"): piece, **{f"#{r + 1}": f"{n.word} ({n.similarity:.2f}): {n.text}" for r, n in enumerate(near)}}
            for piece, near in space.nearest_words(translator, text, 3)]
    st.dataframe(pd.DataFrame(rows), hide_index=True, key=f"space_words_{name}")


def kept_ui(names: list[str], settings: AppSettings) -> None:
    """The bottleneck made visible: what the nearest training sentences of test sentences share
    with them, by length, for each chosen model (docs/sentence-space.md)."""
    st.subheader(_("What the vector keeps"))
    st.caption(_("For each test sentence, its 5 nearest training sentences: how many start with its first two words, "
               "end with its last two words, and how many of its words they share (Jaccard overlap); beside them, "
               "5 random training sentences. A vector that holds the whole sentence keeps all three high however "
               "long the sentence is."))
    infos = {name: offered_models.info(name, settings) for name in names}
    directions = {info.direction for info in infos.values() if info}
    sets = {label: entry for d in directions for label, entry in builtin_sets(settings, d).items()}
    if not sets:
        st.caption(_("No test set of these models' corpora is on this server."))
        return
    label = st.selectbox(_("Test sentences"), list(sets), key="space_test")
    if not st.button(_("Measure on up to {n:,} of them").format(n=MEASURED_SENTENCES), key="space_measure"):
        return
    test = tuple(load_builtin_set(sets[label]).src)
    rows = []
    for name in names:
        if infos[name] is None or (sets[label].src_lang, sets[label].tgt_lang) != infos[name].direction:
            continue
        try:
            space = space_ui(name, settings)
            with st.spinner(_("Placing the test sentences in {name}'s space...").format(name=ltr(name))):
                found = what_it_keeps(name, test, settings)
        except UserError as exc:
            st.info(md(f"{ltr(name)}: {error_text(exc)}"))
            continue
        rows += [{_("model"): name, _("vector"): space.kind, _("source words"): r.lengths,
                  _("sentences"): r.sentences, _("first words"): round(r.first, 2), _("last words"): round(r.last, 2),
                  _("words shared"): round(r.words, 2), _("random: first"): round(r.random_first, 2),
                  _("random: last"): round(r.random_last, 2), _("random: words"): round(r.random_words, 2)}
                 for r in found]
    if rows:
        st.dataframe(pd.DataFrame(rows), hide_index=True, key="space_kept")
