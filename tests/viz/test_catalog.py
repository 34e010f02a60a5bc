"""The Arabic catalog is complete and compiled: every message the code marks has a translation
that keeps its placeholders, and the committed .mo is the .po compiled. Fails when a new
English string lacks its translation (docs/translating.md says how to add one)."""
import io
import re
from pathlib import Path

import pytest

babel = pytest.importorskip("babel", reason="needs Babel (the test extra)")
from babel.messages.extract import extract_from_dir  # noqa: E402
from babel.messages.mofile import read_mo, write_mo  # noqa: E402
from babel.messages.pofile import read_po  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
PO = REPO / "viz" / "locale" / "ar" / "LC_MESSAGES" / "messages.po"
MO = PO.with_suffix(".mo")
# what docs/translating.md's pybabel command extracts: the app's text, and the literal templates of
# the engine's errors a page shows (model/core/errors.py · UserError)
KEYWORDS = {"_": None, "N_": None, "ngettext": (1, 2), **{error: None for error in (
    "DataError", "AlignmentFormatError", "SpaceError", "NoHypothesisError", "AlignerUnavailable",
    "CheckpointError", "CardError")}}
PLACEHOLDER = re.compile(r"\{[^{}]*\}")


def _source_messages() -> dict[str, tuple]:
    """Every message the code marks, by msgid, with (where, msgid or (singular, plural))."""
    found = {}
    with open(REPO / "babel.cfg") as cfg:
        from babel.messages.frontend import parse_mapping_cfg

        method_map, options_map = parse_mapping_cfg(cfg)
    for filename, lineno, message, _comments, _context in extract_from_dir(
            str(REPO), method_map, options_map, keywords=KEYWORDS):
        key = message if isinstance(message, str) else message[0]
        found.setdefault(key, (f"{filename}:{lineno}", message))
    return found


@pytest.fixture(scope="module")
def catalog():
    with open(PO, "rb") as po:
        return read_po(po, locale="ar")


def test_the_code_marks_the_apps_text():
    assert len(_source_messages()) > 300  # the pages' text, not an empty extraction


def test_every_message_has_an_arabic_translation(catalog):
    missing = []
    for key, (where, message) in _source_messages().items():
        entry = catalog.get(key)
        forms = [] if entry is None else ([entry.string] if isinstance(entry.string, str) else list(entry.string))
        if entry is None or entry.fuzzy or not forms or not all(forms):
            missing.append(f"{where}: {key!r}")
        elif not isinstance(message, str) and (entry.id[1] != message[1] or len(forms) != catalog.num_plurals):
            missing.append(f"{where}: {key!r} (plural forms)")
    assert not missing, "untranslated:\n" + "\n".join(missing)


def test_translations_keep_their_placeholders_and_nothing_is_left_over(catalog):
    wrong = []
    sources = _source_messages()
    for entry in catalog:
        if not entry.id:
            continue
        key = entry.id if isinstance(entry.id, str) else entry.id[0]
        if key not in sources and not getattr(entry, "obsolete", False):  # Babel lists obsolete ones apart
            wrong.append(f"not in the code any more: {key!r}")
        ids = [entry.id] if isinstance(entry.id, str) else list(entry.id)
        forms = [entry.string] if isinstance(entry.string, str) else list(entry.string)
        wanted = set().union(*(PLACEHOLDER.findall(i) for i in ids))
        for form in forms:
            got = set(PLACEHOLDER.findall(form))
            if (got != wanted) if isinstance(entry.id, str) else not got <= wanted:
                wrong.append(f"{key!r}: {sorted(got)} vs {sorted(wanted)}")
    assert not wrong, "\n".join(wrong)


def _messages(catalog) -> dict:
    """What a compiled catalog says: each msgid (or plural pair) and its translation, without the
    header, whose `Generated-By` and dates change with the Babel version that wrote it."""
    as_key = lambda value: tuple(value) if isinstance(value, (list, tuple)) else value  # noqa: E731 (plural forms)
    return {as_key(entry.id): as_key(entry.string) for entry in catalog if entry.id and not entry.fuzzy}


def _compiled(catalog, generator: str | None = None):
    """The catalog compiled to .mo and read back; `generator` plants another tool's header."""
    if generator is not None:
        catalog = read_po(io.BytesIO(PO.read_bytes()), locale="ar")
        catalog.mime_headers = [(k, generator if k == "Generated-By" else v) for k, v in catalog.mime_headers]
    compiled = io.BytesIO()
    write_mo(compiled, catalog)
    compiled.seek(0)
    return read_mo(compiled)


def test_the_compiled_catalog_is_up_to_date(catalog):
    with open(MO, "rb") as mo:
        shipped = read_mo(mo)
    assert _messages(shipped) == _messages(_compiled(catalog)), "run: pybabel compile -d viz/locale"


def test_the_comparison_ignores_the_tool_version_and_sees_a_lost_translation(catalog):
    """A catalog compiled by another Babel differs in its header only, and passes; one whose
    message lost its translation does not."""
    other_babel = _compiled(catalog, generator="Babel 9.99.0")
    assert _messages(other_babel) == _messages(_compiled(catalog))
    lost = _compiled(catalog)
    first = next(entry for entry in lost if entry.id and isinstance(entry.id, str))
    first.string = ""
    assert _messages(lost) != _messages(_compiled(catalog))
