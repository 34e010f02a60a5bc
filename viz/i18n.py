"""The app's own text in the reader's language: gettext catalogs, English as the source.

Every sentence the app writes is wrapped where it is written: ``_("Beam size")`` translates
at once; ``N_("...")`` only marks a module-level constant for extraction, and the code that
shows it calls ``_`` on it; ``ngettext(singular, plural, n)`` picks a plural form (Arabic has
six). Placeholders are named and filled after translation: ``_("{n:,} sentences").format(n=n)``.

The catalogs live in ``viz/locale/<lang>/LC_MESSAGES/messages.po`` (compiled to ``.mo``
beside it) and are maintained with Babel (``docs/translating.md``). The language is chosen
once per script run with ``use(code)``; it is held per thread, so concurrent sessions each see
their own. Model outputs, sentences, scores and signatures are data and never go through here.
"""
from __future__ import annotations

import contextlib
import contextvars
import gettext
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterator

from model.core.errors import (CardError, CheckpointError, ConfigError, DataError, NoHypothesisError, ReplayError,
                          TraceError, UserError)

LOCALE_DIR = Path(__file__).parent / "locale"
DOMAIN = "messages"


@dataclass(frozen=True)
class Language:
    code: str  # the URL's lang value and the catalog's folder name
    name: str  # in its own language, as the language menu shows it
    rtl: bool  # written right to left


INTERFACE_LANGUAGES = {"en": Language("en", "English", False), "ar": Language("ar", "العربية", True)}
SOURCE = "en"  # the language the code is written in; it has no catalog

_current: contextvars.ContextVar[str] = contextvars.ContextVar("language", default=SOURCE)


class UnknownLanguage(ValueError):
    """A language code that the app has no catalog for."""


@lru_cache(maxsize=None)
def catalog(code: str) -> gettext.NullTranslations:
    """The compiled catalog of ``code`` (English: none, the text as written)."""
    if code == SOURCE:
        return gettext.NullTranslations()
    if code not in INTERFACE_LANGUAGES:
        raise UnknownLanguage(code)
    with open(LOCALE_DIR / code / "LC_MESSAGES" / f"{DOMAIN}.mo", "rb") as mo:
        return gettext.GNUTranslations(mo)


def use(code: str) -> None:
    """Make ``code`` the language of this thread's text from now on."""
    catalog(code)  # fails early on an unknown code
    _current.set(code)


@contextlib.contextmanager
def using(code: str) -> Iterator[None]:
    """``code`` as this thread's language inside the block, the one before it after (tests, and
    text made for a reader other than the page's)."""
    catalog(code)
    token = _current.set(code)
    try:
        yield
    finally:
        _current.reset(token)


def current() -> Language:
    """The language this thread's text is in."""
    return INTERFACE_LANGUAGES[_current.get()]


def _(message: str) -> str:
    """``message`` in the current language (itself when the catalog lacks it)."""
    return catalog(_current.get()).gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """The form of a message that suits the count ``n`` in the current language."""
    return catalog(_current.get()).ngettext(singular, plural, n)


# Unicode's bidirectional isolates: text between them is laid out left to right and does not
# move the right-to-left text around it (nor is moved by it).
LRI, PDI = "\u2066", "\u2069"


def ltr(text: str) -> str:
    """``text`` (a sentence, a token, a model's name, a path) isolated left to right, for a
    mention inside the app's own text; unchanged in a left-to-right language."""
    return f"{LRI}{text}{PDI}" if current().rtl else text


def error_text(exc: Exception) -> str:
    """What a page shows for an error from ``model/``: its message, which names the file, value
    or setting and what is wrong, in the reader's language when the catalog has its template
    (names and paths in it kept left to right); else, after a sentence in the reader's language
    saying what kind of problem it is, in English."""
    if _current.get() == SOURCE:
        return str(exc)
    template = getattr(exc, "template", None)
    if template is not None and _(template) != template:
        return _(template).format(**{k: ltr(v) if isinstance(v, str) else v for k, v in exc.params.items()})
    kind = next((text for cls, text in ERROR_KINDS if isinstance(exc, cls)), N_("Something went wrong."))
    return _("{kind} The details, in English: {details}").format(kind=_(kind), details=ltr(str(exc)))


def N_(message: str) -> str:
    """Marks ``message`` for the catalog without translating it (module-level constants; the
    code that shows it calls ``_``)."""
    return message


ERROR_KINDS = (  # most specific first
    (TraceError, N_("This trace file cannot be read.")),
    (CardError, N_("This model's card cannot be read.")),
    (CheckpointError, N_("This checkpoint cannot be used.")),
    (DataError, N_("This text, file or test set cannot be used.")),
    (ConfigError, N_("This setting is unknown or out of range.")),
    (NoHypothesisError, N_("The search found no output.")),
    (ReplayError, N_("This training replay cannot be read.")),
    (UserError, N_("This cannot be used.")),
)
