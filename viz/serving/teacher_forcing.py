"""The Translate page's teacher-forcing view on the server: one model, one sentence and its
reference (model/decoding/teacher_forcing.py), computed at a place of the decode queue and kept
for every session."""
from __future__ import annotations

from model.decoding.teacher_forcing import TeacherForcing, teacher_forcing
from viz.serving.decodes import QueuedSlot, load_translator
from viz.serving.settings import AppSettings
from viz.serving.shared_results import TEACHER_FORCING, result_store


def compare_prefixes(name: str, text: str, reference: str, settings: AppSettings) -> TeacherForcing:
    """``name``'s predictions given ``reference``'s prefix beside its greedy decode of ``text``
    (DataError for a blank or unreadable sentence or reference)."""
    translator = load_translator(name, settings)

    def compute() -> TeacherForcing:
        with QueuedSlot(settings)():
            return teacher_forcing(translator, text, reference)

    return result_store(TEACHER_FORCING).get_or_compute((name, str(translator.name), text, reference), compute)
