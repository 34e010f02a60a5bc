"""The errors a user can cause, one type per condition.

Command lines and pages catch these and show their message (which names the file, value or
setting and what is wrong with it); anything else, a ValueError from deep inside torch say,
stays a bug with a traceback instead of passing for bad input.
"""
from __future__ import annotations


class UserError(Exception):
    """Something a user supplied or asked for cannot be used; the message says what and where.

    ``UserError("{name}: the file is empty", name=name)`` keeps the message's template and its
    values apart, so that a page can show the template in the reader's language
    (``viz.i18n.error_text``; Babel extracts the literal templates from ``model/``).
    """

    def __init__(self, message: str, **params):
        self.template, self.params = message, params
        super().__init__(message.format(**params) if params else message)


class CheckpointError(UserError):
    """A checkpoint folder that cannot be loaded (missing files, not our format, bad tensors)."""


class DataError(UserError):
    """A corpus, test set, upload or text that cannot be used (unreadable, not UTF-8, malformed)."""


class TraceError(DataError):
    """A trace's JSON (``python -m model.translate --json``) that does not follow the trace schema:
    another schema version, a missing or ill-typed field, a ragged or misshapen matrix."""


class ConfigError(UserError):
    """A configuration value, override or decoding setting that is unknown or out of range."""


class NoHypothesisError(UserError):
    """Search found no output: a forced prefix or banned tokens rule out every hypothesis."""


class ReplayError(UserError):
    """A probe log or a card's training replay that cannot be read."""


class CardError(CheckpointError):
    """A checkpoint's card.json whose fields do not have the types a card has."""
