"""The language choice: ``lang`` in the URL round-trips, a hostile value falls back to English
with an escaped notice, Arabic text comes from the catalog with its plural forms, and data in
Arabic prose is isolated left to right."""
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest


APP = str(Path(__file__).resolve().parents[2] / "viz" / "pages" / "main.py")
ARABIC = range(0x0600, 0x0700)


def _param(at, name):
    value = at.query_params.get(name)
    return value[0] if isinstance(value, list) else value


def _has_arabic(text: str) -> bool:
    return any(ord(ch) in ARABIC for ch in text)


@pytest.mark.parametrize("value,code,noticed", [
    (None, "en", False),
    ("en", "en", False),
    ("ar", "ar", False),
    ("AR", "en", True),  # codes are exact
    ("fr", "en", True),  # a language the app has no catalog for
    ("", "en", True),
    ("<script>alert(1)</script>", "en", True),
    ("ar\x00", "en", True),
    ("x" * 5000, "en", True),
])
def test_parse_language(value, code, noticed):
    from viz.pages.parts.language import parse_language

    got, notice = parse_language(value)
    assert got == code and (notice is not None) == noticed
    if notice:
        assert not re.search(r"(?<!\\)[<>]", notice) and "\x00" not in notice and len(notice) < 200  # escaped


def test_ltr_isolates_data_only_in_a_right_to_left_language():
    from viz import i18n
    from viz.i18n import LRI, PDI, ltr

    with i18n.using("en"):
        assert ltr("Le chat.") == "Le chat."
    with i18n.using("ar"):
        assert ltr("Le chat.") == f"{LRI}Le chat.{PDI}"


def test_an_unknown_language_is_refused_and_english_is_the_text_as_written():
    from viz import i18n

    with pytest.raises(i18n.UnknownLanguage):
        i18n.use("xx")
    i18n.use("en")
    assert i18n._("Beam size") == "Beam size" and not i18n.current().rtl


@pytest.mark.parametrize("n,form", [(0, 0), (1, 1), (2, 2), (3, 3), (10, 3), (11, 5), (99, 5), (100, 4), (102, 4),
                                    (103, 3), (111, 5)])
def test_arabic_plural_forms_follow_the_catalogs_rule(n, form):
    """The compiled catalog's Plural-Forms picks Arabic's six forms (zero, one, two, few, many,
    other) in the order the .po lists them."""
    from viz import i18n

    assert i18n.catalog("ar").plural(n) == form


def test_the_language_round_trips_through_the_url_and_english_leaves_it(app_env):
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["lang"] = "ar"
    at.run()
    assert not at.exception, at.exception
    assert at.selectbox(key="lang").value == "ar" and _param(at, "lang") == "ar"
    assert _has_arabic(at.title[0].value), at.title[0].value
    assert at.text_area(key="source").label and _has_arabic(at.text_area(key="source").label)
    params = {k: v for k, v in at.query_params.items()}
    again = AppTest.from_file(APP, default_timeout=120)
    for key, value in params.items():
        again.query_params[key] = value
    again.run()
    assert again.selectbox(key="lang").value == "ar" and not again.warning
    again.selectbox(key="lang").set_value("en").run()
    assert not again.exception and "lang" not in again.query_params
    assert not _has_arabic(again.title[0].value)


@pytest.mark.parametrize("hostile", ["<script>alert(1)</script>", "x" * 5000, "ar' onload='x", "ﻉ"])
def test_a_hostile_language_falls_back_to_english_with_an_escaped_notice(app_env, hostile):
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["lang"] = hostile
    at.run()
    assert not at.exception and at.selectbox(key="lang").value == "en"
    (notice,) = [w.value for w in at.warning if "language" in w.value]
    assert "showing English" in notice and not re.search(r"(?<!\\)[<>]", notice) and len(notice) < 200
    assert "lang" not in at.query_params  # the URL no longer carries it


@pytest.mark.parametrize("error,lead", [
    ("DataError", "لا يمكن استخدام هذا النص أو الملف أو مجموعة الاختبار."),
    ("CardError", "تتعذّر قراءة بطاقة هذا النموذج."),  # a CheckpointError, named by its own kind
    ("CheckpointError", "لا يمكن استخدام نقطة الحفظ هذه."),
    ("NoHypothesisError", "لم يجد البحث أي مخرَج."),
])
def test_an_engine_error_gets_a_sentence_in_arabic_before_its_english_details(error, lead):
    from model.core import errors
    from viz import i18n

    exc = getattr(errors, error)("test.fr has 4 lines, test.en has 2")
    with i18n.using("en"):
        assert i18n.error_text(exc) == "test.fr has 4 lines, test.en has 2"
    with i18n.using("ar"):
        text = i18n.error_text(exc)
    assert text.startswith(lead) and text.endswith("\u2066test.fr has 4 lines, test.en has 2\u2069")


def test_using_restores_the_language_before_it_even_after_an_error():
    from viz import i18n

    with i18n.using("ar"):
        with pytest.raises(ZeroDivisionError):
            with i18n.using("en"):
                assert not i18n.current().rtl
                1 / 0
        assert i18n.current().code == "ar"
    assert i18n.current().code == "en"


def test_an_engine_error_with_a_template_the_catalog_knows_reads_wholly_in_arabic():
    from model.core.errors import DataError
    from viz import i18n

    exc = DataError("line counts differ: {src} has {src_lines} lines, {ref} has {ref_lines}", src="test.en",
                    src_lines=4, ref="test.fr", ref_lines=2)
    assert str(exc) == "line counts differ: test.en has 4 lines, test.fr has 2"  # the command line's
    with i18n.using("ar"):
        text = i18n.error_text(exc)
    assert text.startswith("عدد الأسطر مختلف") and "\u2066test.en\u2069" in text and "\u2066test.fr\u2069" in text
    assert "differ" not in text and "4" in text and "2" in text
