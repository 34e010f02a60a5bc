"""The Translate page's view as URL query parameters, so a link reproduces what a user sees.

``parse`` turns untrusted parameters into a ``View``: the language pair first (an unknown one
falls back to the default pair), then the rest against that pair's models and defaults
(unknown models, wrong types, values out of range and over-long text fall back to defaults),
each ignored parameter with a short notice. ``to_params`` writes a view back, leaving out
what equals its pair's defaults so links stay short.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, fields, replace
from typing import Callable, Mapping, Optional
from urllib.parse import urlencode

from viz.i18n import _, ltr, ngettext
from viz.pages.parts.safe_text import md

MAX_PARAM_CHARS = 2000  # the longest sentence a link may carry (the page's input limit)
TABS = ("alignment", "steps", "beam", "whatif", "explanations", "teacher", "downloads")
OLD_TABS = {"saliency": "explanations"}  # slugs older links carry  # the tab slugs used in links


@dataclass(frozen=True)
class View:
    """Everything a shared link restores; field names are the query parameter names."""

    pair: str  # the language direction, e.g. "en-fr"
    src: str  # the source sentence
    left: str  # the first model's checkpoint name
    right: str  # the second model's checkpoint name
    beam: int  # beam size
    lp: float  # length normalisation lambda
    tab: str  # the open tab, one of TABS
    step: int  # the step shown in the step-by-step tab (1-based)
    heads: str = ""  # a Transformer's layer and heads in the Alignment tab: ``HeadsPick.param``; "" the default
    ref: str = ""  # a reference translation of ``src`` (a test set's, from the Evaluate page), shown under it


@dataclass(frozen=True)
class HeadsPick:
    """What the Alignment tab's layer and head picker asks for, for every model with several
    attentions on the page: ``layer`` 1-based (0: each model's own default, the one its card
    names), ``kind`` "mean" (of the layer's heads), "one" (head ``head``, 1-based) or "every"
    (every head side by side), and the reading (``shifted``: at the step where the word is the
    decoder's input)."""

    layer: int = 0
    kind: str = "mean"
    head: int = 1
    shifted: bool = False

    def param(self) -> str:
        """The link's ``heads`` value: "" for the default, else LAYER[.HEAD|.all][s], e.g. "2.3s"."""
        if self == HeadsPick():
            return ""
        what = {"mean": "", "one": f".{self.head}", "every": ".all"}[self.kind]
        return f"{self.layer}{what}{'s' if self.shifted else ''}"

    @classmethod
    def from_param(cls, text: str) -> Optional["HeadsPick"]:
        """The pick a link's ``heads`` value names; None when it is malformed."""
        if text == "":
            return cls()
        found = re.fullmatch(r"(\d{1,2})(?:\.(\d{1,2}|all))?(s?)", text)
        if not found:
            return None
        layer, what, shifted = int(found[1]), found[2], bool(found[3])
        if what is None:
            return cls(layer, "mean", 1, shifted)
        if what == "all":
            return cls(layer, "every", 1, shifted)
        return cls(layer, "one", int(what), shifted) if int(what) >= 1 else None


def parse(params: Mapping[str, str], pairs: Mapping[str, list[str]], defaults_for: Callable[[str], View],
          default_pair: str, max_beam: int) -> tuple[View, list[str]]:
    """The view ``params`` ask for, and one notice per parameter that was ignored.
    ``pairs`` maps each language pair to its models' names; ``defaults_for(pair)`` is the
    view a pair opens with."""
    notices = []
    pair = str(params.get("pair", default_pair))
    if pair not in pairs:  # the notice is shown as markdown: the link's text escaped
        notices.append(_("The link's language pair {pair} is not offered here; showing {default} instead.")
                       .format(pair=ltr(md(repr(pair[:20]))), default=ltr(md(default_pair))))
        pair = default_pair
    models = pairs[pair]
    checks = {
        "src": lambda v: v if len(v) <= MAX_PARAM_CHARS and "\x00" not in v else None,
        "ref": lambda v: v if len(v) <= MAX_PARAM_CHARS and "\x00" not in v else None,
        "left": lambda v: v if v in models else None,
        "right": lambda v: v if v in models else None,
        "beam": lambda v: _number(v, int, 1, max_beam),
        "lp": lambda v: _number(v, float, 0.0, 2.0),
        "tab": lambda v: OLD_TABS.get(v, v) if OLD_TABS.get(v, v) in TABS else None,
        "step": lambda v: _number(v, int, 1, 10_000),
        "heads": lambda v: v if HeadsPick.from_param(v) is not None else None,
    }
    values = {}
    for name, check in checks.items():
        raw = params.get(name)
        if raw is None:
            continue
        value = check(str(raw))
        if value is None:
            notices.append(_("The link's {name} value was not usable; showing the default instead.")
                           .format(name=ltr(repr(name))))
        else:
            values[name] = value
    unknown = sorted(set(params) - set(checks) - {"pair"})
    if unknown:
        notices.append(ngettext("Ignored {n} unknown link parameter.", "Ignored {n} unknown link parameters.",
                                len(unknown)).format(n=len(unknown)))
    return replace(defaults_for(pair), **values), notices


def _number(text: str, kind, lo, hi):
    try:
        value = kind(text)
    except ValueError:
        return None
    if kind is float:
        if not math.isfinite(value):
            return None
        value = round(value, 1)  # the slider's resolution
    return value if lo <= value <= hi else None


def to_params(view: View, defaults: View, default_pair: str) -> dict[str, str]:
    """Query parameters for ``view``: its pair unless that is ``default_pair``, then every field
    that differs from ``defaults`` (what ``view``'s pair opens with)."""
    params = {} if view.pair == default_pair else {"pair": view.pair}
    params.update({f.name: str(getattr(view, f.name)) for f in fields(View)
                   if f.name != "pair" and getattr(view, f.name) != getattr(defaults, f.name)})
    return params


def link(base_url: str, view: View, defaults: View, default_pair: str) -> str:
    """A URL that opens ``view`` on the page at ``base_url``."""
    params = to_params(view, defaults, default_pair)
    return base_url + ("?" + urlencode(params) if params else "")
