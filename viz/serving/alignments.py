"""The Alignment page's work on the server: gold sets read (built-in ones once per server, uploads
through the same reader), what the models' cards record for a gold set, and the measurement,
once per server for the same gold set, models and sources (model/scoring/attention_alignment.py),
and how faithful each drawn sentence's matrix is to its model."""
from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from model.cards.schema import AlignmentScore
from model.core.errors import DataError
from model.corpus.corpora import corpus_specs
from model.explaining import registry
from model.explaining.faithfulness import Comprehensiveness
from model.scoring.attention_alignment import MODEL_METHODS, PAIRED, Row, ScoredModel, both_directions_rows, diagonal_rows, eflomal_row, gold_digest, opposite_pairs, score_model
from model.scoring.statistical_aligner import AlignerText, eflomal_gold_links, training_corpus
from model.scoring.forced_matrices import Unscored, word_matrix_check
from model.scoring.word_alignment import BOTH_DIRECTIONS, EXTRACTIONS, GoldSet, read_gold
from viz.serving import hosting, offered_models
from viz.serving.decodes import QueuedSlot, QueueNotice, load_translator
from viz.serving.explanations import matrix_digest
from viz.serving.settings import REPO, AppSettings
from viz.serving.shared_cache import shared
from viz.serving.shared_results import ALIGNMENTS, ATTENTION_CHECKS, result_store

ALIGN_LANGS = ("en", "fr")  # the languages of the gold sets (source, target)
BASELINES = ("eflomal", "diagonal")


@dataclass(frozen=True)
class Measured:
    """Everything the page shows for one gold set and choice of models and sources."""

    rows: tuple[Row, ...]  # every extraction for the models; eflomal and the diagonal once
    unscored: tuple[Unscored, ...]
    matrices: dict  # model name -> its WordMatrices per sentence (None where unscored)
    eflomal: Optional[tuple]  # eflomal's links per sentence
    eflomal_corpus: Optional[AlignerText]  # what eflomal learnt from, when it ran


def builtin_gold(settings: AppSettings) -> dict[str, tuple[Path, Path, Path]]:
    """{name: (English file, French file, links file)} of the gold sets in the folder
    ``--align-dir`` names (NAME.en, NAME.fr and NAME.wa side by side)."""
    folder = settings.align_dir
    if not folder.is_dir():
        return {}
    return {wa.stem: (wa.with_suffix(".en"), wa.with_suffix(".fr"), wa) for wa in sorted(folder.glob("*.wa"))
            if wa.with_suffix(".en").is_file() and wa.with_suffix(".fr").is_file()}


@dataclass(frozen=True)
class Recorded:
    """The results the chosen models' cards record for this gold set (the same sentences, by
    digest), and what they do not record."""

    rows: tuple[AlignmentScore, ...]
    provenance: tuple[str, ...]  # how the recorded rows were measured: the commands, deduplicated
    missing_models: tuple[str, ...]  # chosen models whose rows are not all recorded
    missing_baselines: tuple[str, ...]

    @property
    def complete(self) -> bool:
        return bool(self.rows) and not self.missing_models and not self.missing_baselines


def recorded_results(gold: GoldSet, digest: str, models: list[offered_models.ModelInfo], methods: tuple[str, ...],
                     how: str) -> Recorded:
    """What the cards of ``models`` record for ``gold`` (whose ``gold_digest`` is ``digest``) with
    extraction ``how``."""
    results = _card_results(gold, digest, models)
    rows, provenance, missing = [], [], []
    for m in models:
        wanted = [x for x in MODEL_METHODS if x in methods and (m.has_attention or not registry.needs_attention(x))
                  and (x != "heads" or m.has_heads) and (m.has_anatomy or not registry.needs_anatomy(x))]
        found = [r for r in results[m.name].rows if r.model == m.name and r.method in wanted and r.extraction == how] \
            if m.name in results else []
        if len(found) < len(wanted):
            missing.append(m.name)
            continue
        rows += found
        if found:
            provenance.append(results[m.name].command)
    if "attention" in methods:  # the two directions combined: recorded, else both models measured again
        for forward, backward in opposite_pairs([Side(m.name, m.direction == ALIGN_LANGS, corpora_of(m), m.has_attention)
                                                 for m in models]):
            name = f"{forward.name}{PAIRED}{backward.name}"
            found = [r for result in results.values() for r in result.rows if r.model == name]
            found = list({r.extraction: r for r in found}.values())  # each card of the two holds the rows
            if len(found) == len(BOTH_DIRECTIONS) and not {forward.name, backward.name} & set(missing):
                rows += found
            else:
                missing += [n for n in (forward.name, backward.name) if n not in missing]
    baselines = {}
    for result in results.values():
        for r in result.rows:
            if r.model is None and r.method in methods and r.method not in baselines:
                baselines[r.method] = r
                provenance.append(result.command)
    rows += [baselines[b] for b in BASELINES if b in baselines]
    missing_baselines = tuple(b for b in BASELINES if b in methods and b not in baselines)
    rows = [r for r in rows if r.model is None or r.model.split(PAIRED)[0] not in missing]  # measured again instead
    return Recorded(tuple(rows), tuple(dict.fromkeys(provenance)), tuple(missing), missing_baselines)


@dataclass(frozen=True)
class CardGoldSet:
    """One gold set as the models' cards record it, for a page that has not the gold set itself."""

    name: str
    sentences: int
    rows: tuple[AlignmentScore, ...]  # each model's rows, the combined directions' and the baselines, each once
    provenance: tuple[str, ...]  # the commands that measured them


def recorded_gold_sets(models: list[offered_models.ModelInfo]) -> tuple[CardGoldSet, ...]:
    """Every gold set the cards of ``models`` record, by name: each model's rows from its own card,
    the combined directions' ("A + B", in both models' cards) and the baselines' from the first card
    that has them. Where cards scored different sentences under one name (another digest or size),
    the sentences most cards scored are shown (the first model's on a tie), the others left out."""
    results = [(m.name, name, result) for m in models if m.card for name, result in m.card.alignment.items()]
    shown = []
    for gold in dict.fromkeys(name for _, name, _ in results):
        versions = [(r.sentences, r.gold_digest) for _, name, r in results if name == gold]
        which = max(dict.fromkeys(versions), key=versions.count)  # the first of the most frequent
        rows, commands = [], []
        for model, name, result in results:
            if name != gold or (result.sentences, result.gold_digest) != which:
                continue
            rows += [r for r in result.rows if r.model == model]
            rows += [r for r in result.rows if r.model is None or PAIRED in r.model
                     if all((o.model, o.method, o.extraction) != (r.model, r.method, r.extraction) for o in rows)]
            commands.append(result.command)
        shown.append(CardGoldSet(gold, which[0], tuple(rows), tuple(dict.fromkeys(c for c in commands if c))))
    return tuple(shown)


def _card_results(gold: GoldSet, digest: str, models: list[offered_models.ModelInfo]) -> dict:
    """{model name: its card's AlignmentResult for ``gold``}, only results of the same sentences:
    the card's digest, or for older cards the set's name and size."""
    results = {}
    for m in models:
        result = m.card.alignment.get(gold.name) if m.card else None
        if result is not None and result.sentences == len(gold.sentences) and result.gold_digest in ("", digest):
            results[m.name] = result
    return results


@dataclass(frozen=True)
class Side:
    """A model as ``opposite_pairs`` pairs it up, before any matrix is computed."""

    name: str
    forward: bool  # translates English into French
    corpora: tuple[str, ...]
    has_attention: bool


def corpora_of(model: offered_models.ModelInfo) -> tuple[str, ...]:
    """The names of the corpora a model trained on; empty when its config does not say."""
    return tuple(c.name for c in corpus_specs(model.train)) if model.train is not None else ()


@shared(max_entries=8)
def read_builtin_gold(en: Path, fr: Path, links: Path) -> tuple[GoldSet, str]:
    """A built-in gold set and its ``gold_digest``, read and fingerprinted once per set of files."""
    gold = read_gold(en, fr, links)
    return gold, gold_digest(gold)


def read_uploaded_gold(files: tuple[bytes, bytes, bytes], names: tuple[str, str, str]) -> GoldSet:
    """Uploads go through the same reader as files: written to a private folder under their
    own base names (a .wa links file is NAACL, any other Pharaoh), so errors name the user's
    files and never the server's folder."""
    safe = [f"{k}-{re.sub(r'[^A-Za-z0-9._-]', '_', Path(name).name)[-80:] or 'file'}" for k, name in enumerate(names)]
    with tempfile.TemporaryDirectory() as tmp:
        paths = [Path(tmp) / name for name in safe]
        for path, data in zip(paths, files):
            path.write_bytes(data)
        try:
            gold = read_gold(*paths)
        except DataError as exc:
            def theirs(value):  # the user's own file names for the private copies'
                if not isinstance(value, str):
                    return value
                value = value.replace(f"{tmp}/", "")
                for name, original in zip(safe, names):
                    value = value.replace(name, Path(original).name)
                return value
            raise DataError(theirs(exc.template), **{k: theirs(v) for k, v in exc.params.items()}) from None
    return GoldSet(Path(names[2]).stem, gold.sentences)


def measure(gold: GoldSet, names: tuple[str, ...], methods: tuple[str, ...], settings: AppSettings,
            on_queued: Optional[Callable[[], QueueNotice]] = None) -> Measured:
    """The measurement, once per server for the same gold set, models and sources, at one place
    of the decode queue; ``on_queued()`` gives the notice that tells the user while it waits."""
    store = result_store(ALIGNMENTS)
    key = (gold, names, methods, settings.checkpoints)
    found = store.get(key)
    if found is None:
        notice = on_queued() if on_queued is not None else None
        with QueuedSlot(settings, notice and notice.show, notice and notice.clear)():
            found = _measure(gold, names, methods, settings)
        store.put(key, found)
    return found


def _measure(gold: GoldSet, names: tuple[str, ...], methods: tuple[str, ...], settings: AppSettings) -> Measured:
    rows, unscored, matrices, scored = [], [], {}, []
    for name in names:
        info = offered_models.info(name, settings)
        found, missed, matrices[name] = score_model(name, load_translator(name, settings), info.direction, gold,
                                                    methods, EXTRACTIONS, *ALIGN_LANGS)
        rows, unscored = rows + found, unscored + missed
        scored.append(ScoredModel(name, info.direction == ALIGN_LANGS, corpora_of(info), tuple(matrices[name])))
    if "attention" in methods:  # an en->fr and a fr->en model of the same corpora, symmetrised
        for forward, backward in opposite_pairs(scored):
            rows += both_directions_rows(forward.name, forward.matrices, backward.name, backward.matrices, gold)
    links, note = None, None
    if "eflomal" in methods:
        folders = [hosting.resolve_checkpoint(n, settings) for n in names]
        corpus, note = training_corpus(folders, [], *ALIGN_LANGS, root=REPO)
        links = tuple(eflomal_gold_links(gold, corpus))
        rows.append(eflomal_row(gold, links))
    if "diagonal" in methods:
        rows += diagonal_rows(gold, ("target",))
    return Measured(tuple(rows), tuple(unscored), matrices, links, note)


def gold_check(name: str, gold: GoldSet, k: int, matrix: np.ndarray,
               settings: AppSettings) -> Optional[Comprehensiveness]:
    """How faithful model ``name``'s word matrix ``matrix`` of gold sentence ``k`` (0-based) is
    to that model forced to write the gold translation (``forced_matrices.word_matrix_check``);
    None when the sentence cannot be scored. Computed once per server at a place of the decode
    queue."""
    def run() -> Optional[Comprehensiveness]:
        reverse = offered_models.info(name, settings).direction != ALIGN_LANGS
        translator = load_translator(name, settings)
        sentence = gold.sentences[k]
        with QueuedSlot(settings)():
            return word_matrix_check(translator, sentence.src, sentence.tgt, matrix, reverse)

    return result_store(ATTENTION_CHECKS).get_or_compute(("gold", name, gold, k, matrix_digest(matrix), settings.checkpoints), run)
