"""User text made safe for a page: escaped for markdown, cleaned and capped before decoding."""
from __future__ import annotations

from typing import Optional

from viz.i18n import _, ngettext

# Longest typed input the pages accept, in characters; longer text is cut, with a message.
MAX_INPUT_CHARS = 2000
MARKDOWN_SPECIAL = set("\\`*_{}[]()#+-.!|$~<>&:")


def md(text: str) -> str:
    """``text`` safe inside st.markdown: each markdown / HTML special character backslash-escaped,
    so uploaded or typed text can never become a link, an image, math or markup."""
    return "".join("\\" + ch if ch in MARKDOWN_SPECIAL else ch for ch in str(text))


def _clean_char(ch: str) -> str:
    if ch.isprintable() or ch == "\t":
        return ch
    # line breaks keep words apart; NUL, other controls, format characters and lone surrogates
    # go (SentencePiece raises a RuntimeError on a surrogate, and reads NUL as <unk>)
    return " " if ch.isspace() else ""


def cut_input(text: str) -> tuple[str, Optional[str]]:
    """Text cut to MAX_INPUT_CHARS, line breaks made spaces, other non-printable characters
    dropped; (text, message or None): the message says what was dropped or cut."""
    cleaned = "".join(map(_clean_char, text))
    notes = []
    dropped = sum(not ch.isprintable() and not ch.isspace() for ch in text)
    if dropped:
        notes.append(ngettext("{n:,} control or invisible character (such as NUL) was removed.",
                              "{n:,} control or invisible characters (such as NUL) were removed.", dropped)
                     .format(n=dropped))
    if len(cleaned) > MAX_INPUT_CHARS:
        notes.append(_("Input was {n:,} characters; only the first {limit:,} are translated.")
                     .format(n=len(cleaned), limit=MAX_INPUT_CHARS))
        cleaned = cleaned[:MAX_INPUT_CHARS]
    return cleaned, " ".join(notes) or None
