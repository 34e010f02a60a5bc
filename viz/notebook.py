"""Inside attention NMT in a notebook (Jupyter, JupyterLab, VS Code): translations that show
themselves.
    from viz.notebook import load, compare
    search = load("everyday-rnnsearch-en-fr")          # a shipped model, or a checkpoint folder
    t = search.translate("I would like a cup of coffee, please.")
    t                                                  # the translation, its heatmap, a beam summary
    t.show("beam")                                     # also "alignment", "steps", "saliency", "explanations"
    t.show("heads")                                    # a Transformer: every layer's every head; also
    t.show("alignment", layer=2, head=3, shifted=True) # one head, or a layer's mean (head=None)
    t.explain("integrated_gradients").shares()        # each output word's share on the source and on the prefix
    t.explain("alti_plus")                             # a Transformer of this project: also value_zeroing, rollout
    t.logit_lens()                                     # a Transformer: each decoder layer's reading of every word
    compare(search, load("everyday-rnnencdec-en-fr"), "She has a white cat.")
    mine = from_tutorial("pytorch", encoder, decoder, input_lang, output_lang)   # a tutorial's model, live
    mine.teacher_forcing("Je suis content.", "I am happy.")   # its choices given the reference, and its own
    models = lab("reverse", seconds=60)                # train both models on a toy task (docs/lab.md)
    models["rnnsearch"].translate("3 14 15 9 26")      # every view of a model you just trained

Figures are plotly; the first one shown in a kernel embeds plotly.js, so notebooks work offline.
"""
from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence, Union

import numpy as np

from model.explaining import registry
from model.explaining.explanation import Explanation
from model.explaining.faithfulness import Comprehensiveness, attention_check, heatmap_check, measure
from model.explaining.logit_lens import LogitLens, logit_lens
from model.explaining.registry import explain
from model.explaining.saliency import saliency
from model.decoding.cross_attention import HeadChoice, default_choice, every_head, shifted_cross_attention, view_matrix
from model.decoding.search import SearchConfig
from model.decoding.teacher_forcing import teacher_forcing
from model.decoding.trace import Trace
from model.foreign.tutorials.family import write_tutorial
from model.decoding.translator import Translator
from model.foreign.tutorials.tutorials import TutorialImport, from_live_objects, live_model
from viz.figures.beam_tree import beam_tree_figure
from viz.figures.download_config import plotly_config
from viz.figures.faithfulness_curves import faithfulness_curves
from viz.figures.heatmap import alignment_heatmap, merge_to_words
from viz.html_report import ATTENDED, SALIENT, check_note, check_sentence, steps_table
from viz.serving.settings import default_checkpoint_root

VIEWS = ("alignment", "beam", "steps", "saliency", "explanations", "neighbours", "heads")
NEIGHBOURS = 10  # training sentences listed by show("neighbours")
_PLOTLY_SHOWN = [False]  # plotly.js goes into the first figure a kernel shows


class UnknownView(ValueError):
    """``show`` was asked for a view that does not exist."""


@dataclass(frozen=True)
class HTML:
    """A piece of HTML that a notebook displays as it is."""

    html: str

    def _repr_html_(self) -> str:
        return self.html


def _figure(fig, name: str) -> str:
    """``fig`` as HTML; its camera button downloads a PNG file named after ``name``."""
    out = fig.to_html(include_plotlyjs=not _PLOTLY_SHOWN[0], full_html=False, config=plotly_config(name=name))
    _PLOTLY_SHOWN[0] = True
    return out


class _Escaped(Sequence[str]):
    """``texts`` HTML-escaped as they are read: a map draws a few thousand of a sample's 20,000."""

    def __init__(self, texts: Sequence[str]):
        self.texts = texts

    def __len__(self) -> int:
        return len(self.texts)

    def __getitem__(self, i):
        return [html.escape(t) for t in self.texts[i]] if isinstance(i, slice) else html.escape(self.texts[i])


@dataclass(frozen=True)
class Translation:
    """One sentence translated by one model, with everything the decode recorded (``trace``)."""

    model: str  # the checkpoint's name
    trace: Trace
    translator: Translator
    words: bool = False  # heatmaps over whole words instead of subword pieces
    folder: Optional[Path] = None  # the checkpoint folder (what it trained on, for "neighbours")

    @property
    def text(self) -> str:
        return self.trace.translation

    def _repr_html_(self) -> str:
        return self._header() + self.show("alignment").html + self._beam_summary()

    def show(self, view: str = "alignment", layer: Optional[int] = None, head: Optional[int] = None,
             shifted: bool = False) -> HTML:
        """One view of this translation: ``alignment`` (attention heatmap), ``beam`` (the search
        tree), ``steps`` (a table per output piece), ``saliency`` (gradient x input),
        ``explanations`` (the methods' source maps and how faithful each is),
        ``neighbours`` (the source among the model's training sentences: docs/sentence-space.md;
        the first call per model encodes 20,000 of them, about half a minute on 2 cores) or, for
        a Transformer, ``heads`` (every layer's every head). For a Transformer, ``alignment``
        takes ``layer`` (1-based; default the one its card names), ``head`` (1-based; default
        the mean of the layer's heads) and ``shifted`` (each word's row read where it is the
        decoder's input)."""
        if view not in VIEWS:
            raise UnknownView(f"no view {view!r}; choose one of: {', '.join(VIEWS)}")
        trace = self.trace
        if view == "heads" or (view == "alignment" and (layer or head or shifted)):
            return HTML(self._heads(view == "heads", layer, head, shifted))
        if view == "neighbours":
            return HTML(self._neighbours())
        if view == "beam":
            return HTML(_figure(beam_tree_figure([n.to_json() for n in trace.beam], f"{self.model}: beam search"),
                                f"{self.model}_beam_search"))
        if view == "steps":
            return HTML(steps_table(trace))
        if view == "explanations":
            return HTML(self._explanations())
        if view == "saliency":
            matrix = saliency(self.translator.model, trace.source_ids, trace.target_ids)
            check = self._check(matrix)
            return HTML(self._heatmap(matrix, f"{self.model}: saliency (gradient × input)", f"{self.model}_saliency")
                        + ("" if check is None else check_note(check, SALIENT)))
        if trace.attention is None:
            return HTML("<p>An RNNencdec model has no attention: it reads the whole sentence into one fixed vector. "
                        "Try <code>show(\"saliency\")</code>.</p>")
        return HTML(self._heatmap(trace.attention, f"{self.model}: attention α", f"{self.model}_attention")
                    + self._attention_check())

    def _heads(self, every: bool, layer: Optional[int], head: Optional[int], shifted: bool) -> str:
        trace = self.trace
        if trace.cross_attention is None:
            raise UnknownView(f"{self.model} has one attention, not layers and heads: use show(\"alignment\")")
        layers, heads = trace.cross_attention.shape[:2]
        if every:
            cross = shifted_cross_attention(self.translator.model, trace.source_ids, trace.target_ids) if shifted \
                else trace.cross_attention
            return "".join(self._heatmap(matrix, f"{self.model}: {choice.label()}",
                                         f"{self.model}_layer{choice.layer + 1}_head{choice.head + 1}")
                           for choice, matrix in every_head(cross, None, shifted))
        layer = default_choice(trace).layer + 1 if layer is None else layer
        if not 1 <= layer <= layers or (head is not None and not 1 <= head <= heads):
            raise UnknownView(f"{self.model} has layers 1..{layers} of heads 1..{heads}")
        choice = HeadChoice(layer - 1, None if head is None else head - 1, shifted)
        matrix = view_matrix(trace, choice, self.translator.model)
        check = self._check(matrix)
        return (self._heatmap(matrix, f"{self.model}: {choice.label()}", f"{self.model}_{choice.label()}")
                + ("" if check is None else check_note(check)))

    def _attention_check(self) -> str:
        """How faithful the heatmap is for this sentence (docs/explanations.md, "Under every attention heatmap")."""
        check = attention_check(self.translator.model, self.trace)
        return "" if check is None else check_note(check)

    def _check(self, matrix: np.ndarray) -> Optional[Comprehensiveness]:
        """How faithful the heatmap ``matrix`` (output x source) of this translation is."""
        return heatmap_check(self.translator.model, self.trace.source_ids, self.trace.target_ids, matrix)

    def explain(self, method: str = "integrated_gradients", contrast: Optional[Sequence[int]] = None) -> Explanation:
        """This translation's output explained by ``method`` (model/explaining/methods.py: one of
        model/explaining/registry.py · ``names()``): ``.source`` (output x source) and ``.prefix`` (output x output) scores,
        ``.normalised()``, ``.shares()``; ``contrast``: an id per output position, to explain
        log p(output) - log p(contrast)."""
        if method not in registry.names():
            raise UnknownView(f"no method {method!r}; choose one of: {', '.join(registry.names())}")
        model = self.translator.model
        if registry.needs_anatomy(method) and not model.supports_anatomy:
            raise UnknownView(f"{self.model} cannot use {method}, which {registry.UNSUPPORTED}; choose one of: "
                              f"{', '.join(registry.applicable(model.has_attention))}")
        found = explain(model, self.trace.source_ids, self.trace.target_ids, [method], contrast)
        if method not in found:
            raise UnknownView(f"{self.model} has no attention; choose one of: "
                              f"{', '.join(registry.applicable(False))}")
        return found[method]

    def logit_lens(self) -> LensTable:
        """Each decoder layer of this translation's Transformer read as if it were the last
        (model/explaining/logit_lens.py): ``.lens`` holds the written words' ranks and
        probabilities per layer and each layer's first choices; a notebook shows it as a table.
        Only this project's Transformers can be read so."""
        model, trace = self.translator.model, self.trace
        if not model.supports_anatomy:
            raise UnknownView(f"{self.model} has no logit lens: it {registry.UNSUPPORTED}")
        lens = logit_lens(model, trace.source_ids, trace.target_ids)
        pieces = self.translator.tgt_vocab.pieces
        tops = tuple(tuple(tuple(pieces(ids)) for ids in layer) for layer in lens.top_ids)
        return LensTable(self.model, lens, tuple(trace.target_tokens), tops)

    def _explanations(self) -> str:
        model, trace = self.translator.model, self.trace
        src, out = trace.source_ids, trace.target_ids
        found = explain(model, src, out, registry.defaults())
        measured = measure(model, src, out, found)
        rows, parts = [], []
        for method, explanation in found.items():
            rows.append((method, float(explanation.shares()[:, 0].mean()), measured.methods[method]))
            if len(parts) < 2:
                parts.append(_figure(alignment_heatmap(explanation.normalised()[0], trace.source_tokens,
                                                       trace.target_tokens,
                                                       title=html.escape(f"{self.model}: {method}, source"),
                                                       grayscale=True, value_name="share"), f"{self.model}_{method}"))
        rows.sort(key=lambda r: r[2].deletion_area)
        r = measured.random
        cells = "".join(f"<tr><td>{m}</td><td>{share:.3f}</td><td>{f.deletion_area:.3f}</td><td>{f.insertion_area:.3f}</td>"
                        f"<td>{f.comprehensiveness:.3f}</td><td>{f.sufficiency:.3f}</td></tr>" for m, share, f in rows)
        cells += (f"<tr><td>random order</td><td></td><td>{r.deletion_area:.3f}</td><td>{r.insertion_area:.3f}</td>"
                  f"<td>{r.comprehensiveness:.3f}</td><td>{r.sufficiency:.3f}</td></tr>")
        parts.append(_figure(faithfulness_curves(measured.curves, measured.random_curves, {},
                                                 html.escape(f"{self.model}: faithfulness curves")),
                             f"{self.model}_faithfulness_curves"))
        return ("".join(parts) + "<p>How faithful each explanation is (remove the source words it ranks first and "
                "re-score the same output; python -m model.explain adds integrated gradients):</p><table><tr><th>method"
                "</th><th>source share</th><th>deletion (lower is better)</th><th>insertion (higher is better)</th>"
                f"<th>comprehensiveness</th><th>sufficiency</th></tr>{cells}</table>")

    def save(self, path: str | Path, view: str = "alignment") -> Path:
        """The paper-style figure of ``view`` ("alignment" or "saliency": Figure 3's grayscale
        matrix) as a PDF, SVG or PNG file, by the path's suffix, with how faithful it is under it."""
        from viz.figures.print_figures import alignment_figure, save

        if view not in ("alignment", "saliency"):
            raise UnknownView(f"files are drawn for 'alignment' and 'saliency', not {view!r}")
        trace = self.trace
        matrix = trace.attention if view == "alignment" else saliency(self.translator.model, trace.source_ids,
                                                                       trace.target_ids)
        if matrix is None:
            raise UnknownView(f"{self.model} has no attention; save(path, 'saliency') draws what it depends on")
        check = self._check(matrix)  # of the pieces the model read, before any merging to words
        note = "" if check is None else check_sentence(check, SALIENT if view == "saliency" else ATTENDED)
        src, tgt = trace.source_tokens, trace.target_tokens
        if self.words:
            matrix, src, tgt = merge_to_words(matrix, src, tgt)
        return save(alignment_figure(matrix, src, tgt, note=note), path)

    def _heatmap(self, matrix, title: str, name: str) -> str:
        src, tgt = self.trace.source_tokens, self.trace.target_tokens
        if self.words:
            matrix, src, tgt = merge_to_words(matrix, src, tgt)
        return _figure(alignment_heatmap(matrix, src, tgt, title=html.escape(title), grayscale=True), name)

    def _neighbours(self) -> str:
        from viz.figures.sentence_space import sentence_map
        from viz.serving.sentence_space import space_of_folder

        if self.folder is None:
            raise UnknownView("neighbours needs the checkpoint folder: load the model with load()")
        space = space_of_folder(self.folder, self.translator)  # built once per kernel, again when its files change
        vector = space.embed(self.translator, self.trace.source)
        found = space.nearest(vector, NEIGHBOURS)
        rows = "".join(f"<tr><td>{n.similarity:.3f}</td><td>{html.escape(n.text)}</td></tr>" for n in found)
        fig = sentence_map(space.points, _Escaped(space.sentences), space.project(vector),
                           html.escape(self.trace.source), [n.index for n in found], html.escape(f"{self.model}: {space.kind}"))
        return (_figure(fig, f"{self.model}_sentence_space") + f"<p>The training sentences whose {space.kind} is nearest "
                f"to this sentence's:</p><table><tr><th>similarity</th><th>training sentence</th></tr>{rows}</table>")

    def _header(self) -> str:
        return (f"<p><b>{html.escape(self.model)}</b> ({html.escape(self.trace.model)}): "
                f"<span style='font-size:1.2em'>{html.escape(self.trace.translation)}</span></p>")

    def _beam_summary(self) -> str:
        extended = {n.parent for n in self.trace.beam}  # a finished hypothesis (</s>, or cut at a cap) has no children
        finished = sorted((n for n in self.trace.beam if n.status in ("finished", "best") and n.id not in extended),
                          key=lambda n: -n.norm_score)[:3]
        decode = self.translator.tgt_vocab.decode
        lines = "".join(f"<li>{html.escape(decode([p.token_id for p in self.trace.path(n.id)])[:200])} "
                        f"(score {n.norm_score:.3f})</li>" for n in finished)
        return (f"<p>Beam search: {len(self.trace.beam)} hypotheses scored; the best finished ones:</p><ol>{lines}</ol>"
                if lines else "")


@dataclass(frozen=True)
class LensTable:
    """The logit lens of one translation: a row per decoder layer, a column per written piece;
    each cell is the layer's first choice there, with the written piece's rank and probability
    (shaded where the layer already ranks it first)."""

    model: str
    lens: LogitLens
    tokens: tuple[str, ...]  # (T,) the pieces written
    top_tokens: tuple[tuple[tuple[str, ...], ...], ...]  # (L, T, TOP) each layer's first choices, as pieces

    def _repr_html_(self) -> str:
        lens, esc = self.lens, html.escape
        shaded = ' style="background:#d9f0d3"'
        head = "".join(f"<th>{esc(t)}</th>" for t in self.tokens)
        rows = ""
        for layer in range(lens.layers):
            cells = "".join(
                f"<td{shaded if lens.ranks[layer, i] == 1 else ''}>"
                f"{esc(self.top_tokens[layer][i][0])}<br><small>rank {lens.ranks[layer, i]} · "
                f"p {lens.probs[layer, i]:.2f}</small></td>" for i in range(len(self.tokens)))
            rows += f"<tr><th>layer {layer + 1}</th>{cells}</tr>"
        settled = "".join(f"<td>{k or '–'}</td>" for k in lens.first_layer())
        return (f"<p><b>{esc(self.model)}</b>: each decoder layer read as if it were the last (the logit lens). "
                "A cell is that layer's first choice, with the rank and probability of the piece written. The "
                "layers before the last were never trained to be read this way: an early rank 1 is evidence, a "
                "high rank no proof.</p>"
                f"<table><tr><th></th>{head}</tr>{rows}<tr><th>first choice from layer</th>{settled}</tr></table>")


@dataclass(frozen=True)
class Comparison:
    """The same sentence translated by several models, side by side."""

    translations: tuple[Translation, ...]

    def _repr_html_(self) -> str:
        cells = "".join(f"<div style='flex:1;min-width:0'>{t._header()}{t.show('alignment').html}</div>"
                        for t in self.translations)
        return f"<div style='display:flex;gap:1em'>{cells}</div>"


@dataclass(frozen=True)
class Model:
    """A loaded checkpoint (or a tutorial's model from a running notebook), ready to translate."""

    name: str
    translator: Translator
    folder: Optional[Path] = None
    tutorial: Optional[TutorialImport] = None  # what from_tutorial read from the notebook's objects
    lab: Optional[object] = None  # a Lab model's training and test record (model/experiments/lab_run.py · TrainedModel)

    def teacher_forcing(self, text: str, reference: str) -> HTML:
        """What the model predicts given ``reference``'s prefix (teacher forcing, as in training)
        beside its own greedy decode of ``text``, step by step, with where they first differ and
        both attention matrices (model/decoding/teacher_forcing.py)."""
        found = teacher_forcing(self.translator, text, reference)
        top = lambda cands: ", ".join(f"{html.escape(c.token)} {c.prob:.2f}" for c in cands[:3])  # noqa: E731
        marked = ' style="background:#fde2e2"'
        rows = "".join(f"<tr{marked if found.diverges_at == i else ''}><td>{i + 1}</td>"
                       f"<td>{html.escape(s.reference or '')}</td><td>{top(s.forced)}</td>"
                       f"<td>{html.escape(s.free or '')}</td><td>{top(s.free_candidates)}</td></tr>"
                       for i, s in enumerate(found.steps))
        where = ("The decode follows the reference to its end." if found.diverges_at is None
                 else f"The decode leaves the reference at step {found.diverges_at + 1} (marked).")
        out = (f"<p>{where} Given the reference's prefix, the model ranks {found.forced_accuracy:.0%} of the "
               f"reference's tokens first.</p><table><tr><th>step</th><th>reference</th><th>given the reference's "
               f"prefix</th><th>decode</th><th>given its own prefix</th></tr>{rows}</table>")
        forced = [s.forced_attention for s in found.steps if s.forced_attention is not None]
        free = [s.free_attention for s in found.steps if s.free_attention is not None]
        for title, matrix, tokens in (("attention given the reference's prefix", forced, found.reference_tokens),
                                      ("attention given its own prefix", free, found.free.target_tokens)):
            if matrix:
                fig = alignment_heatmap(np.stack(matrix), found.source_tokens, tokens[:len(matrix)],
                                        title=html.escape(f"{self.name}: {title}"), grayscale=True)
                out += _figure(fig, f"{self.name}_teacher_forcing")
        return HTML(out)

    def save(self, folder: str | Path) -> Path:
        """A model made by ``from_tutorial`` as a checkpoint folder, which the app, the command
        lines and ``load`` then open (the folder must be new or empty)."""
        if self.tutorial is None:
            raise ValueError(f"{self.name} is already a checkpoint folder ({self.folder}); copy that folder instead")
        return write_tutorial(self.tutorial, folder)

    def translate(self, text: Union[str, Sequence[str]], beam: int = 5, words: bool = False):
        """A Translation of ``text``, or a list of them for a list of sentences."""
        sentences = [text] if isinstance(text, str) else list(text)
        traces = self.translator.translate(sentences, SearchConfig(beam=beam))
        out = [Translation(self.name, trace, self.translator, words, self.folder) for trace in traces]
        return out[0] if isinstance(text, str) else out


def load(name_or_path: str | Path) -> Model:
    """A checkpoint folder by path, or a shipped model by name (from ``checkpoints/``, the app's
    default checkpoint root)."""
    path = Path(name_or_path)
    if not path.is_dir():
        path = default_checkpoint_root() / str(name_or_path)
    translator = Translator.from_checkpoint(path)
    return Model(path.name, translator, path)


def lab(task: str = "reverse", archs: Sequence[str] = ("rnnsearch", "rnnencdec"), seconds: float = 60.0,
        train_lengths: str = "1-20", test_lengths: str = "1-30", seed: int = 1, updates: Optional[int] = None,
        **sizes) -> dict[str, Model]:
    """A Lab experiment (docs/lab.md): each of ``archs`` trained on ``task`` for ``updates``
    updates (the Lab's default when None) or ``seconds``, whichever comes first, on one thread,
    tested by input length; {arch: Model} whose ``translate(...)`` show themselves, each with its
    ``lab`` record (updates, what ended the training, loss curve, exact match by length:
    ``model.lab.by_length``, ``model.lab.ended_by``). ``sizes``: ``emb``, ``hidden``, ``lr``."""
    from model.experiments.lab_run import LabSettings, run_lab

    budget = {} if updates is None else {"updates": int(updates)}
    result = run_lab(LabSettings(task=task, archs=tuple(archs), seconds=float(seconds), train_lengths=train_lengths,
                                 test_lengths=test_lengths, seed=seed, **budget, **sizes))
    return {arch: Model(f"lab-{task}-{arch}", trained.translator, None, lab=trained)
            for arch, trained in result.models.items()}


def from_tutorial(kind: str, *objects, name: str = "") -> Model:
    """A model a student trained in a tutorial, straight from the notebook's own objects, no files:

        from_tutorial("pytorch", encoder, decoder, input_lang, output_lang)   # PyTorch's tutorial
        from_tutorial("bentrevett", model, de_vocab, en_vocab)                # bentrevett's notebook
        from_tutorial("d2l", model, data)                                      # d2l's chapter

    It translates as ``python -m model.checkpoint import-tutorial`` and ``load`` would, with the
    tutorial's text handling and decoding (docs/own-model.md); ``.save(folder)`` writes it as a
    checkpoint folder for the app."""
    found = from_live_objects(kind, *objects)
    model, src_vocab, tgt_vocab = live_model(found)
    name = name or f"{kind}-tutorial"
    return Model(name, Translator(model, src_vocab, tgt_vocab, name), None, found)


def compare(first: Model, second: Model, text: str, beam: int = 5, words: bool = False) -> Comparison:
    """Both models on the same sentence, side by side (RNNsearch and RNNencdec, say)."""
    return Comparison(tuple(m.translate(text, beam, words) for m in (first, second)))
