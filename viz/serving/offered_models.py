"""Which checkpoints this server offers, under its rules (``hosting.py``), and what they are:
their cards, architectures and language directions, read once per server."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from model.cards.schema import Card, read_model_card
from model.checkpoints.families import describe_folder
from model.core.config import TrainConfig
from model.core.decodable import ModelDescription
from model.decoding.search import SearchConfig
from model.decoding.translator import MAX_BEAM
from model.core.errors import CheckpointError
from viz.serving import hosting
from viz.serving.settings import AppSettings
from viz.serving.shared_cache import shared
from viz.i18n import N_, _, ltr

LISTING_TTL_S = 300  # a checkpoint's listing is read again after this long (a folder replaced meanwhile)
DEFAULT_PAIR = "everyday"  # the card "pair" (models trained together) the app opens with
DEFAULT_DIRECTION = ("en", "fr")  # the language direction the app opens with
NOT_STATED = N_("training data not stated in its card")
# The architectures that can be taken apart layer by layer (``Decodable.supports_anatomy``), known
# from a checkpoint's config without loading it: this project's own Transformers.
ANATOMY_ARCHS = ("transformer",)


def list_checkpoints(settings: AppSettings) -> list[str]:
    """Names of sub-folders of the checkpoint root that contain a config.json, sorted; in
    production mode only those hosting.resolve_checkpoint accepts (no symlinks out of the root)."""
    root = settings.checkpoints
    if not root.is_dir():
        return []
    names = sorted(p.name for p in root.iterdir() if (p / "config.json").is_file())
    return [name for name in names if _accepted(name, settings)] if hosting.production(settings) else names


def _accepted(name: str, settings: AppSettings) -> bool:
    try:
        return bool(hosting.resolve_checkpoint(name, settings))
    except hosting.CheckpointNameError:
        return False


@dataclass(frozen=True)
class ModelInfo:
    """What the pickers and pages need to know about one offered checkpoint, without loading it."""

    name: str
    arch: str  # "rnnsearch" or "rnnencdec" (this project's); another family's name, e.g. "joey-rnn"
    attention: str  # the alignment model ("additive" is the paper's); "" without attention
    src_lang: str
    tgt_lang: str
    train: Optional[TrainConfig]  # how it was trained (its corpora), None when config.json does not say
    card: Optional[Card]  # None when it has none, or it is malformed (``card_problem`` says why)
    card_problem: Optional[CheckpointError] = None  # CardError, or card.json unreadable
    description: Optional[ModelDescription] = None  # what it is; its origin when not this project's
    imported: bool = False  # built and trained outside this project (config.json names another family)

    @property
    def has_attention(self) -> bool:
        return self.description.has_attention if self.description else self.arch == "rnnsearch"

    @property
    def has_heads(self) -> bool:
        """Several attentions per step (a Transformer's layers and heads of cross-attention)."""
        return self.arch == "transformer" or self.arch.startswith("hf-") or self.arch == "joey-transformer"

    @property
    def has_anatomy(self) -> bool:
        """Taken apart layer by layer for ALTI+, value zeroing, rollout and the logit lens
        (``Decodable.supports_anatomy``): this project's own Transformers."""
        return self.arch in ANATOMY_ARCHS

    @property
    def direction(self) -> tuple[str, str]:
        return self.src_lang, self.tgt_lang

    @property
    def trained_on(self) -> str:
        """What it learned from, in a few words, for pickers and captions."""
        if self.card and self.card.trained_on:
            return self.card.trained_on
        if self.imported:
            return _("from {origin}").format(origin=ltr(self.description.origin))
        return _(NOT_STATED)

    @property
    def label(self) -> str:
        return f"{self.name} · {self.trained_on}"

    @property
    def decoding(self) -> SearchConfig:
        """The decoding its card records as the default (chosen on validation), within the app's
        limits; else beam 5, length normalisation 1.0."""
        if self.card is None or not 1 <= self.card.decoding.beam <= MAX_BEAM or \
                not 0 <= self.card.decoding.length_norm <= 2:
            return SearchConfig()
        return SearchConfig(beam=self.card.decoding.beam, length_norm=round(self.card.decoding.length_norm, 1))


def info(name: str, settings: AppSettings) -> Optional[ModelInfo]:
    """The ModelInfo of ``name``, None when the name is refused or its config.json is unreadable."""
    try:
        return _info(hosting.resolve_checkpoint(name, settings), name)
    except hosting.CheckpointNameError:
        return None


@shared(max_entries=256, ttl_s=LISTING_TTL_S)
def _info(path: Path, name: str) -> Optional[ModelInfo]:
    """Shared by every session: read-only."""
    try:
        summary = describe_folder(path)
    except CheckpointError:
        return None
    try:
        card, problem = read_model_card(path), None
    except CheckpointError as exc:  # CardError included: the Models page words it in the reader's language
        card, problem = None, exc
    d = summary.description
    return ModelInfo(name, d.arch, d.attention, summary.src_lang, summary.tgt_lang, summary.train, card, problem, d,
                     summary.imported)


def offered(settings: AppSettings) -> list[ModelInfo]:
    """Every offered checkpoint whose config.json reads, by name."""
    return [i for i in (info(name, settings) for name in list_checkpoints(settings)) if i is not None]


def trained_on(name: str, settings: AppSettings) -> str:
    found = info(name, settings)
    return found.trained_on if found else _(NOT_STATED)


def default_pair(models: list[ModelInfo]) -> tuple[str, str]:
    """RNNsearch and RNNencdec of the default pair (cards with ``pair == DEFAULT_PAIR``) when both
    exist, else the first RNNsearch (the paper's additive attention first; else any model with
    attention, an imported one say) and RNNencdec, else the first two names."""
    if not models:
        raise ValueError("default_pair needs at least one model")
    preferred = [m for m in models if m.card and m.card.pair == DEFAULT_PAIR] or models
    rank = lambda m: (m.arch != "rnnsearch", m.attention != "additive")  # noqa: E731
    search = sorted((m for m in preferred if m.has_attention), key=rank) or \
        sorted((m for m in models if m.has_attention), key=rank)
    first = (search or models)[0].name
    encdec = [m for group in (preferred, models) for m in group if m.arch == "rnnencdec" and m.name != first]
    second = (encdec or [m for m in models if m.name != first] or models)[0].name
    return first, second


def default_models(models: list[ModelInfo]) -> list[str]:
    """What a page that compares any number of models opens with: ``default_pair``, and beside it
    a Transformer trained the same way (a card of the same pair), when there is one."""
    pair = list(dict.fromkeys(default_pair(models)))
    first = next(m for m in models if m.name == pair[0])
    same = first.card.pair if first.card else None
    transformers = [m.name for m in models if m.has_heads and m.name not in pair and m.card and same
                    and m.card.pair == same]
    return pair + transformers[:1]
