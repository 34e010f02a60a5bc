"""Every page and tab in Arabic (``lang=ar``), walked with AppTest: no English sentence that the
catalog knows is left on screen, and the app's own text (titles, labels, help, notices, prose,
table headers, chart titles) carries no run of English words outside the left-to-right
isolates that mark data."""
import json
import re
from collections.abc import Sequence
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ..conftest import start_app, write_corpus, make_pairs

babel = pytest.importorskip("babel", reason="needs Babel (the test extra)")
from babel.messages.pofile import read_po  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
PO = REPO / "viz" / "locale" / "ar" / "LC_MESSAGES" / "messages.po"
ISOLATED = re.compile("\u2066[^\u2069]*\u2069")  # data inside the app's text (viz.pages.parts.language.ltr)
CODE = re.compile(r"`[^`]*`|\$[^$]*\$|\]\([^)]*\)|https?://\S+|:material/\w+:|:[a-z]+\[|\{[^{}]*\}")
WORDS = re.compile(r"[A-Za-z][A-Za-z'’-]+(?:\s+[A-Za-z][A-Za-z'’-]+){3,}")  # four English words in a row
PROSE_FIELDS = {"body", "label", "help", "placeholder", "caption", "title", "text"}
EN, FR = "a dog runs\nthe small cat\nthe red ball\n", "un chien court\nle petit chat\nla balle rouge\n"
WA = "1 1 1 S\n1 2 2 S\n1 3 3 S\n2 1 1 S\n2 2 2 P\n2 3 3 S\n3 1 1 S\n3 2 3 S\n3 3 2 S\n"


def _script(settings, page):
    import importlib

    from viz.pages import menu
    from viz.pages.parts.language import language_ui

    language_ui()
    menu.all_pages(settings)  # registers the pages that links name, as app.py does
    importlib.import_module(f"viz.pages.{page}").render(settings)


@pytest.fixture(scope="module")
def settings(checkpoint_dir, tmp_path_factory):
    folder = tmp_path_factory.mktemp("arabic")
    for suffix, text in ((".en", EN), (".fr", FR), (".wa", WA)):
        (folder / f"toy{suffix}").write_text(text)
    data = folder / "data"
    write_corpus(data, "test_2016_flickr", make_pairs(12, seed=5), gz=False)
    with pytest.MonkeyPatch.context() as patch:
        yield start_app(patch, "--checkpoints", checkpoint_dir, "--align-dir", folder, "--data-dir", data)


@pytest.fixture(scope="module")
def english_sentences():
    """Fixed stretches of three or more English words of every message in the catalog."""
    with open(PO, "rb") as po:
        catalog = read_po(po, locale="ar")
    found = set()
    for entry in catalog:
        for message in ([entry.id] if isinstance(entry.id, str) else list(entry.id)):
            for piece in re.split(r"\{[^{}]*\}|\*\*|`|\n", message or ""):
                piece = piece.strip(" .,:;()·*")
                if len(piece.split()) >= 3 and re.fullmatch(r"[A-Za-z0-9 ,.'’()-]+", piece):
                    found.add(piece)
    return found


def _strings(node, field=""):
    """(field, text) for every string of a proto message, recursively."""
    from google.protobuf.message import Message

    if isinstance(node, Message):
        for desc, value in node.ListFields():
            for item in (value if isinstance(value, Sequence) and not isinstance(value, str) else [value]):
                yield from _strings(item, desc.name)
    elif isinstance(node, str):
        yield field, node


def _chart_text(spec: str):
    layout = json.loads(spec).get("layout", {})
    for key, value in layout.items():
        if key == "title" or key.startswith(("xaxis", "yaxis", "legend", "coloraxis")):
            for found in re.findall(r'"text": "((?:[^"\\]|\\.)*)"', json.dumps(value, ensure_ascii=False)):
                yield "title", found


def _canvas_text(data: str):
    """The app's own words in a chart drawn on a canvas (viz/pages/parts/canvas_charts.py)."""
    found = json.loads(data)
    for key in ("title", "subtitle", "x_title", "y_title", "value_name", "value_title", "hint"):
        if found.get(key):
            yield "title", found[key]
    for item in found.get("layers", []) + found.get("links", []) + found.get("lines", []):
        yield "title", item["name"]
        yield from (("title", text) for text in item.get("hovers", []))
    yield from (("title", name) for name in found.get("names", []))  # stacked bars' series
    yield from (("title", style[3]) for style in found.get("styles", []))  # a beam tree's legend
    yield from (("title", text) for text in found.get("hovers", []) if isinstance(text, str))
    yield from (("title", name) for name in found.get("hover", {}).values())
    yield "label", found["download"]["label"]


def on_screen(at):
    """Every piece of text the app shows: (where, text)."""
    shown = []

    def walk(node):
        proto = getattr(node, "proto", None)
        kind = getattr(node, "type", "")
        if kind == "plotly_chart":
            shown.extend(_chart_text(proto.spec))
        elif kind == "bidi_component" and proto.json:
            from viz.pages.parts.canvas_charts import NAME

            if proto.component_name == NAME:  # the charts; the app's other components show no text
                shown.extend(_canvas_text(proto.json))
        elif kind == "arrow_data_frame" or kind == "dataframe":
            shown.extend(("title", str(c)) for c in node.value.columns)
        elif kind in ("text", "code", "json", "exception") or str(getattr(proto, "body", "")).startswith("<style>"):
            pass  # data, shown left to right (or a failure, which the test reports anyway); the stylesheet
        elif proto is not None:
            shown.extend((f, s) for f, s in _strings(proto) if f in PROSE_FIELDS or f == "options")
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return shown


def _ar(message: str) -> str:
    from viz import i18n

    return i18n.catalog("ar").gettext(message)


def _visits():
    """(name, page, what to do before looking): every page, every tab and the results views."""
    yield "translate", "translate", None
    for tab in ("steps", "beam", "whatif", "explanations", "teacher", "downloads"):
        yield f"translate:{tab}", "translate", tab
    from viz.pages.paper import SECTIONS

    for section in SECTIONS:
        yield f"paper:{section}", "paper", section
    yield "evaluate", "evaluate", "evaluate"
    yield "alignment", "alignment", "align"
    yield "sentence space", "sentence_space", None
    yield "lab", "lab", None
    yield "models", "models", None


def _open(settings, page, action):
    at = AppTest.from_function(_script, args=(settings, page), default_timeout=300)
    at.query_params["lang"] = "ar"
    if action == "evaluate":  # a built-in test set, as the Paper page links to one
        from viz.serving.builtin_sets import builtin_sets

        at.query_params["test"] = next(iter(builtin_sets(settings)))
    at.run()
    assert not at.exception, at.exception
    if page == "translate" and action:
        from viz.pages.translate import tabs

        at.session_state["tab"] = tabs.LABELS[action]  # English, as a link sets it
        at.run()
        assert at.session_state["tab"] == _ar(tabs.LABELS[action])  # that tab, in Arabic, is open
    elif page == "paper":
        from viz.pages.paper import SECTIONS

        at.session_state["paper_section"] = SECTIONS[action]
        at.run()
        assert at.session_state["paper_section"] == _ar(SECTIONS[action])
    elif action == "evaluate":
        at.button(key="eval_run").click().run()
    elif action == "align":
        at.button(key="align_run").click().run()
    assert not at.exception, at.exception
    return at


@pytest.mark.parametrize("name,page,action", list(_visits()), ids=[v[0] for v in _visits()])
def test_no_english_of_the_apps_own_is_left(settings, english_sentences, name, page, action):
    from viz import i18n

    with i18n.using("ar"):  # AppTest formats options in this thread too
        at = _open(settings, page, action)
    shown = on_screen(at)
    assert len(shown) > 5, shown
    left = sorted({f"{where}: {sentence!r} in {text[:120]!r}" for where, text in shown
                   for sentence in english_sentences if sentence in text})
    assert not left, f"{name}: English the catalog translates is on screen:\n" + "\n".join(left)
    untranslated = sorted({f"{where}: {text[:160]!r}" for where, text in shown if where != "options"
                           and WORDS.search(CODE.sub(" ", ISOLATED.sub(" ", text)))})
    assert not untranslated, f"{name}: English outside ltr() isolates:\n" + "\n".join(untranslated)
    # an empty box's prompt is Streamlit's English unless the page gives one (widgets.multiselect)
    assert all(box.proto.placeholder for box in at.multiselect), name


def _folder(root: Path, kind: str) -> Path:
    """A path typed on the Evaluate page that is no usable checkpoint, of one kind."""
    folder = root / kind
    if kind != "absent":
        folder.mkdir()
    if kind == "foreign-config":
        (folder / "config.json").write_text('{"format": "someone-elses"}')
    return folder


@pytest.mark.parametrize("kind, arabic, english", [
    ("absent", "ليس مجلد نقطة حفظ", "not a checkpoint folder"),
    ("empty", "غير موجود", "missing"),
    ("foreign-config", "ليس ملف إعدادات بصيغة", "config"),
])
def test_a_checkpoint_that_does_not_load_is_explained_in_arabic(settings, tmp_path, kind, arabic, english):
    """The engine's checkpoint errors keep their template and values apart, so the page words them
    in Arabic with the path isolated left to right, not behind an English sentence."""
    from viz import i18n
    from viz.pages.parts.safe_text import md
    from viz.serving.builtin_sets import builtin_sets

    folder = _folder(tmp_path, kind)
    with i18n.using("ar"):
        at = AppTest.from_function(_script, args=(settings, "evaluate"), default_timeout=300)
        at.query_params["lang"] = "ar"
        at.query_params["test"] = next(iter(builtin_sets(settings)))  # a test set first: then the models
        at.run()
        at.text_input(key="eval_extra").input(str(folder)).run()
    assert not at.exception, at.exception
    errors = [e.value for e in at.error]
    shown = next((e for e in errors if arabic in e), None)
    assert shown is not None, errors
    assert md(str(folder)) in shown.replace("\u2066", "").replace("\u2069", "")  # the path, markdown-escaped
    assert english not in ISOLATED.sub(" ", shown), shown  # only the path and values stay Latin
