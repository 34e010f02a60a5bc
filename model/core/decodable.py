"""What search, traces, saliency and the pages need from a model: the decoding interface.

Any attention encoder-decoder (or one without attention) that implements ``Decodable`` and
comes with two ``Vocabulary`` objects gets beam search with full traces (model/decoding/search.py),
saliency (model/explaining/saliency.py), alignment scores (model/scoring/attention_alignment.py) and every page of the app.
The project's own ``NMTModel`` implements it, and so does the Joey NMT adapter
(model/foreign/joey/joey.py); docs/own-model.md shows a model written against it in about 40 lines.

The shape contract, for a batch of B rows (sentences, or sentences x beam slots):

- token ids follow the project's convention (model/corpus/vocab.py): 0 <pad>, 1 <unk>, 2 <s>,
  3 </s>; a model with other ids maps them at its boundary (the Joey adapter swaps 0 and 1);
- every tensor search, saliency and the pages hand a model is on the device of its weights
  (model/decoding/device.py · ``device_of``); a model that needs one elsewhere (lengths on the CPU
  for ``pack_padded_sequence``, say) moves it itself;
- ``encode(src (B, S) long, src_len (B,) long)`` -> a ``Memory``: whatever the decoder reads
  about the source, with ``mask`` (B, S) True at real tokens and ``select(index)`` giving the
  rows ``index`` (to copy a sentence for each beam slot, or to drop finished sentences);
- ``init_state(memory)`` -> the decoder state before the first output token (opaque to search);
- optionally ``beam_memory(memory, k)`` -> the memory for k decoder rows per sentence (a beam
  search's hypotheses, sentence-major); the default copies each row k times with ``select``, and
  a model that shares one row among its k hypotheses selects whole beams of rows afterwards
  (``whole_beams``). Beam search takes its first step on ``encode``'s memory and ``init_state``'s
  state, one row per sentence, and only then spreads them to the k rows;
- ``step(y_prev (B,) long, state, memory)`` -> ``Step``: log-probabilities (B, V) of the next
  token, the new state, and the attention weights (B, S) that produced them (rows sum to 1
  over real tokens), or None for a model without attention; pre-softmax energies (B, S) if the
  model has them, else None;
- ``reorder(state, index (B',) long)`` -> the state of rows ``index`` (beam search calls it
  every step with the surviving hypotheses' parents, and after its first step with each
  sentence's row repeated k times; B' may exceed B);
- optionally ``output_length`` -> an ``OutputLength``: how long the model's outputs may be and
  how they stop at that cap, in place of the search settings' cap (an imported Joey NMT model
  states Joey's); None (the default) leaves the cap to ``SearchConfig``;
- optionally ``beam_rule`` -> a ``BeamRule``: how the model's own beam search ranks and ends
  hypotheses (an imported Hugging Face model states ``generate``'s), in place of this project's;
- optionally faster paths with defaults built on ``step``: ``teacher_forced`` (a whole target at
  once), ``forced_logprobs`` (a few ids' log-probabilities per position) and ``advance`` /
  ``read_out`` (the output layer only where it is read);
- for a model with several attentions (a Transformer's cross-attention: a layer of heads in every
  decoder layer), which one a view shows: ``attention_layers`` (0, the default: one attention),
  ``alignment_layer`` (the layer whose heads' mean ``Step.alpha`` is, by default the last:
  ``default_attention`` is that rule, written once), ``forced_cross_attention`` (every layer's
  every head over a teacher-forced target) and ``supports_attention_edit`` (whether ``step``
  honours ``alpha_override`` and ``alpha_fn``). model/decoding/cross_attention.py turns a trace
  and a ``HeadChoice`` into the matrix a view draws;
- optionally, for a Transformer that can take itself apart (``supports_anatomy``): ``anatomy``
  (every attention block of a teacher-forced pass, model/core/anatomy.py), ``attention_heads``
  and ``with_heads_masked``, which the layer-wise explanations read.

A model without attention returns ``alpha=None``: it still gets beam trees, step tables and
saliency, which only needs ``embed_source`` and ``encode(..., embedded=...)``.
"""
from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional, Protocol

import torch

if TYPE_CHECKING:
    from model.core.anatomy import Anatomy, HeadMask

OWN_ORIGIN = "this project"


@dataclass(frozen=True)
class ModelDescription:
    """What a model is, for pickers, traces and the Paper page (a card-like summary)."""

    arch: str  # "rnnsearch" / "rnnencdec" (this project's), or e.g. "joey-rnn"
    has_attention: bool  # step() returns attention weights
    attention: str = ""  # the alignment model's name ("additive", "luong", ...); "" without attention
    origin: str = OWN_ORIGIN  # who built and trained it, e.g. "Joey NMT 2.3.0 (imported)"
    summary: str = ""  # one line: encoder, decoder, attention
    # How its equations differ from the paper's RNNsearch (Bahdanau et al. 2015, Appendix A);
    # empty for this project's RNNsearch. The Paper page lists these instead of wrong equations.
    differences: tuple[str, ...] = ()


@dataclass(frozen=True)
class OutputLength:
    """How long a model's outputs may be, and how they stop there.

    A sentence's cap is ``int(ratio * source length) + extra`` tokens, </s> counted, where the
    source length counts every source id (a final </s> too). At the cap an output that has not
    ended either ends with </s> as its last allowed token (``cut_at_cap`` False: this project's
    search, whose outputs always end with </s>) or stops there without one (``cut_at_cap`` True:
    Joey NMT's search). Before ``min_tokens`` tokens </s> is never chosen.
    """

    ratio: float = 0.0  # tokens per source token
    extra: int = 0  # tokens added to the cap
    cut_at_cap: bool = False  # True: an output at the cap stops without </s>; False: its last token is </s>
    min_tokens: int = 0  # </s> is not chosen at steps 0 .. min_tokens-1

    def __post_init__(self):
        if not (self.ratio >= 0 and self.extra >= 0 and self.min_tokens >= 0):
            raise ValueError(f"output length limits must not be negative: {self}")

    def caps(self, src_len: torch.Tensor) -> torch.Tensor:
        """(batch,) long: each sentence's cap, from its source length (batch,)."""
        return (src_len.float() * self.ratio).long() + self.extra


STOP_WHEN_FULL, STOP_HEURISTIC, STOP_NEVER, STOP_JOEY = "full", "heuristic", "never", "joey"


@dataclass(frozen=True)
class BeamRule:
    """How a beam search of ``beam`` > 1 ends a sentence, and the length normalisation a model
    is decoded with unless a user sets another.

    Every rule ranks a finished output by logprob / length**λ (length: its tokens, </s>
    counted) and keeps ``beam`` open hypotheses. ``stopping`` says when a sentence is done once
    ``beam`` outputs have finished:

    - ``"full"`` (this project's, and Hugging Face's ``early_stopping=True``): at once;
    - ``"heuristic"`` (Hugging Face's default ``early_stopping=False``): when the best open
      hypothesis, normalised by its current length, no longer beats the ``beam``-th best
      finished one;
    - ``"never"`` (Hugging Face's ``early_stopping="never"``): as ``"heuristic"``, but with λ > 0
      the open hypothesis is normalised by the longest length allowed.

    ``"joey"`` is Joey NMT 2.3's beam search instead (model/decoding/search.py · ``joey_beam``):
    ``beam`` hypotheses, ended ones included, stay in the beam and keep growing; a beam slot
    that has held an ended one counts as done, and the sentence ends when every slot has; a
    finished output is ranked by logprob / ((5 + length) / 6)**λ when λ > 0 (Wu et al. 2016),
    by its log-probability otherwise.
    """

    length_norm: float = 1.0  # λ, the default when a user sets none
    stopping: str = STOP_WHEN_FULL

    def __post_init__(self):
        if self.stopping not in (STOP_WHEN_FULL, STOP_HEURISTIC, STOP_NEVER, STOP_JOEY):
            raise ValueError(f"stopping={self.stopping!r} is not one of full, heuristic, never, joey")


@dataclass
class Step:
    """One decoder step's outputs (batch rows as in the input)."""

    logprobs: torch.Tensor  # (batch, tgt_vocab) log p(y_i | y_<i, x)
    state: Any  # the new decoder state (s_i for this project's models)
    alpha: Optional[torch.Tensor]  # (batch, src_len) attention, None without attention
    energies: Optional[torch.Tensor]  # (batch, src_len) e_ij before the softmax, None when not available
    # every layer's and head's attention over the source, for a model with several (a
    # Transformer's cross-attention); None for one attention per step. ``alpha`` is then the
    # model's stated default among them (its description says which).
    cross_attention: Optional[torch.Tensor] = None  # (batch, layers, heads, src_len)


class Memory(Protocol):
    """What a model keeps about the encoded source, row-aligned with the decoder's batch (or
    shared by each sentence's beam rows, ``Decodable.beam_memory``)."""

    mask: torch.Tensor  # (batch, src_len) True at real source tokens

    def select(self, index: torch.Tensor) -> "Memory":
        """Rows ``index`` (batch',) of every tensor."""


@dataclass
class EncoderStates:
    """A ``Memory`` that is an encoder's outputs and nothing more (what the imported Transformers'
    decoders read: model/foreign/hf/seq2seq.py, model/foreign/joey/transformer.py)."""

    states: torch.Tensor  # (batch, src_len, d_model) the encoder's outputs
    mask: torch.Tensor  # (batch, src_len) True at real source tokens

    def select(self, index: torch.Tensor) -> "EncoderStates":
        return EncoderStates(self.states.index_select(0, index), self.mask.index_select(0, index))

    @property
    def annotations(self) -> torch.Tensor:
        """(batch, src_len, d_model): the encoder's output for each source word, zeros at padding."""
        return self.states * self.mask.unsqueeze(-1)

    @property
    def summary(self) -> torch.Tensor:
        """(batch, d_model): the mean encoder output over the real words (the sentence space's vector)."""
        mask = self.mask.unsqueeze(-1).to(self.states.dtype)
        return (self.states * mask).sum(1) / mask.sum(1)


class Vocabulary(Protocol):
    """Text <-> ids for one side of a model, ids as in the module docstring."""

    def __len__(self) -> int: ...

    def encode(self, text: str) -> list[int]:
        """The ids the model reads for ``text`` (no <s>; a source side may end with </s>)."""

    def pieces(self, ids: Iterable[int]) -> list[str]:
        """The token string of each id (subword pieces, or words)."""

    def decode(self, ids: Iterable[int]) -> str:
        """Detokenised text of output ids; <pad>, <s> and </s> are dropped."""


AlphaFn = Callable[[torch.Tensor], torch.Tensor]


class Decodable(ABC):
    """The decoding interface (module docstring). Subclass it next to ``nn.Module``:
    ``class MyModel(nn.Module, Decodable)``."""

    @property
    @abstractmethod
    def description(self) -> ModelDescription:
        """What this model is (architecture, origin, how it differs from the paper)."""

    @property
    def has_attention(self) -> bool:
        return self.description.has_attention

    @abstractmethod
    def embed_source(self, src: torch.Tensor) -> torch.Tensor:
        """src (batch, src_len) -> source embeddings (batch, src_len, m), the input saliency
        differentiates against."""

    @abstractmethod
    def encode(self, src: torch.Tensor, src_len: torch.Tensor, embedded: Optional[torch.Tensor] = None) -> Memory:
        """src (batch, src_len), src_len (batch,) -> Memory; ``embedded`` (batch, src_len, m),
        when given, is used instead of ``embed_source(src)`` (saliency's gradients flow through it)."""

    @abstractmethod
    def init_state(self, memory: Memory) -> Any:
        """The decoder state before the first output token."""

    @abstractmethod
    def step(self, y_prev: torch.Tensor, state: Any, memory: Memory, alpha_override: Optional[torch.Tensor] = None,
             alpha_fn: Optional[AlphaFn] = None) -> Step:
        """One output token. ``alpha_override`` (batch, src_len) replaces the attention weights (the
        app's what-if); ``alpha_fn`` maps the computed weights to the ones used (model/explaining/attention_ablation.py).
        Models without attention ignore both."""

    @abstractmethod
    def reorder(self, state: Any, index: torch.Tensor) -> Any:
        """The state of rows ``index`` (batch',)."""

    def beam_memory(self, memory: Memory, beam: int) -> Memory:
        """The memory for ``beam`` decoder rows per sentence, sentence-major (rows b * beam ..
        b * beam + beam - 1 are sentence b's hypotheses). This default copies each row ``beam``
        times; a model may share one row among them instead, as long as its ``select`` then
        takes whole beams (beam search drops only whole sentences)."""
        n = memory.mask.size(0)
        return memory.select(torch.arange(n, device=memory.mask.device).repeat_interleave(beam))

    def advance(self, y_prev: torch.Tensor, state: Any, memory: Memory) -> tuple[Any, Any]:
        """``step`` without its output layer: (the new state, what the output layer reads), for
        callers that need log-probabilities at a few rows only (an explanation reads one output
        position per row, model/explaining/forced_scoring.py). The default runs the whole
        ``step`` and hands its log-probabilities (batch, V) on; a model may defer its output
        layer to ``read_out`` instead."""
        out = self.step(y_prev, state, memory)
        return out.state, out.logprobs

    def read_out(self, readout: Any, rows: torch.Tensor) -> torch.Tensor:
        """Log-probabilities (len(rows), V) of rows ``rows`` (long) of ``advance``'s readout;
        the same values ``step`` gives those rows."""
        return readout.index_select(0, rows)

    @property
    def output_length(self) -> Optional[OutputLength]:
        """The model's own output length limits, or None (the default): the search settings'
        cap (``SearchConfig.max_len_ratio`` and ``max_len_extra``), ending with </s>."""
        return None

    @property
    def beam_rule(self) -> Optional[BeamRule]:
        """The model's own beam search rule, or None (the default): this project's (a sentence
        is done once ``beam`` outputs finished; λ from the search settings)."""
        return None

    @property
    def target_embedding(self) -> Optional["torch.nn.Module"]:
        """The module ``step`` embeds y_{i-1} with (called with ids (batch,), returning
        (batch, m)), so that explanations can weigh the words already written
        (model/explaining/); None (the default): they weigh the source only."""
        return None

    @property
    def attention_layers(self) -> int:
        """How many decoder layers attend to the source with several heads, each readable through
        ``forced_cross_attention``; 0 (the default): the model has one attention, ``Step.alpha``."""
        return 0

    @property
    def alignment_layer(self) -> int:
        """The 0-based layer whose heads' mean is ``Step.alpha``, the matrix views show unless a
        reader picks another; by default the last."""
        return max(self.attention_layers - 1, 0)

    @property
    def supports_attention_edit(self) -> bool:
        """Whether ``step`` honours ``alpha_override`` and ``alpha_fn`` (the what-if view, attention
        ablations); True by default for a model with attention."""
        return self.has_attention

    def default_attention(self, cross: torch.Tensor) -> torch.Tensor:
        """The one matrix views show by default, from every layer's every head: cross
        (batch, layers, heads, ...) -> the mean over heads of ``alignment_layer`` (batch, ...),
        for one step (..., src) or a whole target (..., tgt, src)."""
        return cross[:, self.alignment_layer].mean(1)

    def forced_cross_attention(self, memory: Memory, tgt_in: torch.Tensor) -> torch.Tensor:
        """Every layer's every head of cross-attention (batch, layers, heads, T, src_len) reading
        tgt_in (batch, T) with teacher forcing; only for a model with ``attention_layers``."""
        raise NotImplementedError(f"{type(self).__name__} has one attention, not layers of heads")

    @property
    def supports_anatomy(self) -> bool:
        """Whether ``anatomy`` and ``with_heads_masked`` work: a Transformer that can take itself
        apart for the layer-wise explanations (ALTI+, value zeroing, rollout, the logit lens, head
        importance). False by default."""
        return False

    @property
    def attention_heads(self) -> dict:
        """{kind: (layers, heads)} of each attention ``anatomy`` reads (model/core/anatomy.py
        ``KINDS``); empty for a model without ``supports_anatomy``."""
        return {}

    def anatomy(self, src: torch.Tensor, tgt_in: torch.Tensor) -> "Anatomy":
        """One sentence pair taken apart (model/core/anatomy.py): src (S,) and tgt_in (T,) long
        (<s> y_1 .. y_{T-1}), read with teacher forcing; only with ``supports_anatomy``."""
        raise NotImplementedError(f"{type(self).__name__} cannot be taken apart layer by layer")

    def with_heads_masked(self, mask: "HeadMask") -> "Decodable":
        """A copy of the model whose heads in ``mask`` are switched off (this one unchanged, so
        other readers of it are not affected); only with ``supports_anatomy``."""
        raise NotImplementedError(f"{type(self).__name__} cannot switch heads off")

    def num_parameters(self) -> int:
        """Number of weights (cards and ``python -m model.checkpoint check`` print it); this
        default counts the parameters of an ``nn.Module``."""
        return sum(p.numel() for p in self.parameters())

    def teacher_forced(self, memory: Memory, tgt_in: torch.Tensor, input_scale: Optional[torch.Tensor] = None
                       ) -> tuple[torch.Tensor, Optional[torch.Tensor]]:
        """Log-probabilities (batch, T, V) and attention (batch, T, src_len) | None of reading
        tgt_in (batch, T) (<s> y_1 .. y_{T-1}, then <pad>) one step at a time. Positions after a
        row's end hold whatever the model computes there. ``input_scale`` (batch, T), when given,
        scales each decoder input's embedding (the output of ``target_embedding``; ignored by a
        model without one): the variants explanations re-score. Models with a faster
        whole-sentence path override this."""
        state, logprobs, alphas = self.init_state(memory), [], []
        scale = _InputScale(self.target_embedding, input_scale)
        with scale:
            for t in range(tgt_in.size(1)):
                scale.column = t
                out = self.step(tgt_in[:, t], state, memory)
                state = out.state
                logprobs.append(out.logprobs)
                alphas.append(out.alpha)
        alpha = None if alphas and alphas[0] is None else torch.stack(alphas, dim=1)
        return torch.stack(logprobs, dim=1), alpha

    def forced_logprobs(self, memory: Memory, tgt_in: torch.Tensor, picks: torch.Tensor,
                        input_scale: Optional[torch.Tensor] = None) -> torch.Tensor:
        """log p of a few ids per position, read as ``teacher_forced`` reads tgt_in: picks
        (batch, T, K) ids -> (batch, T, K), for callers that need no whole distribution (the
        explanations' re-scorings). This default gathers them from ``teacher_forced``; a model
        may skip writing out the (batch, T, V) distribution."""
        logprobs, _ = self.teacher_forced(memory, tgt_in, input_scale)
        return logprobs.gather(-1, picks)


def whole_beams(rows: torch.Tensor, beam: int) -> torch.Tensor:
    """(rows / beam,) the sentence of each whole beam in decoder rows ``rows`` of a memory that
    shares one row among ``beam`` hypotheses (``Decodable.beam_memory``): rows beam * b ..
    beam * b + beam - 1 together, in order, are sentence b's. ValueError where ``rows`` splits a beam."""
    sentences = rows[::beam] // beam
    whole = (sentences * beam).unsqueeze(1) + torch.arange(beam, device=rows.device)  # (sentences, beam) their rows
    if not torch.equal(rows, whole.view(-1)):
        raise ValueError(f"a memory shared by {beam} beam rows selects whole beams, got rows {rows.tolist()}")
    return sentences


class _InputScale:
    """While inside, ``module``'s output rows are scaled by column ``column`` of ``scale``
    (batch, T); a no-op without a module or a scale."""

    def __init__(self, module: Optional["torch.nn.Module"], scale: Optional[torch.Tensor]):
        self.module, self.scale, self.column, self.handle = module, scale, 0, None

    def __enter__(self) -> "_InputScale":
        if self.module is not None and self.scale is not None:
            self.handle = own_thread_hook(self.module, self._hook)
        return self

    def _hook(self, _module, _inputs, output):
        factor = self.scale[:, self.column].to(output.dtype)
        return output * factor.view(-1, *([1] * (output.dim() - 1)))  # rows first, whatever else it holds

    def __exit__(self, *_exc) -> None:
        if self.handle is not None:
            self.handle.remove()


def own_thread_hook(module: "torch.nn.Module", hook: Callable, with_kwargs: bool = False) -> Any:
    """``module.register_forward_hook(hook, with_kwargs=with_kwargs)`` acting only on the forward
    passes of the thread that registers it: a server shares one model between its sessions, and
    other threads decode with it meanwhile. Returns the handle to remove."""
    owner = threading.get_ident()

    def guarded(mod, *inputs_and_output):
        return hook(mod, *inputs_and_output) if threading.get_ident() == owner else None

    return module.register_forward_hook(guarded, with_kwargs=with_kwargs)
