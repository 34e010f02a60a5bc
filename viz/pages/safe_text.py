"""User text made safe for a page: escaped for markdown, cleaned and capped before decoding."""
from __future__ import annotations

from typing import Optional

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
        notes.append(f"{dropped:,} control or invisible character{'s' if dropped != 1 else ''} (such as NUL) "
                     f"{'were' if dropped != 1 else 'was'} removed.")
    if len(cleaned) > MAX_INPUT_CHARS:
        notes.append(f"Input was {len(cleaned):,} characters; only the first {MAX_INPUT_CHARS:,} are translated.")
        cleaned = cleaned[:MAX_INPUT_CHARS]
    return cleaned, " ".join(notes) or None
