"""The app's settings: every flag parsed into one AppSettings, bad values refused with argparse's
words, Streamlit's own arguments left alone, and no module reading the environment instead."""
import ast
import dataclasses
import os
import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from viz.serving.settings import (
    REPO,
    AppSettings,
    SettingsError,
    default_align_dir,
    default_checkpoint_root,
    parse_settings,
)

APP = str(REPO / "viz" / "pages" / "main.py")
DEFAULTS = AppSettings()


def test_the_defaults_stay_inside_the_repository():
    assert DEFAULTS.checkpoints == REPO / "checkpoints" == default_checkpoint_root()
    assert DEFAULTS.align_dir == default_align_dir() and REPO in DEFAULTS.align_dir.parents
    assert DEFAULTS.data_dir is None and DEFAULTS.production is False and DEFAULTS.server_address == ""
    assert DEFAULTS.decode_slots == (os.cpu_count() or 1)
    assert parse_settings([]) == DEFAULTS


@pytest.mark.parametrize("argv, changed", [
    (["--checkpoints", "/srv/models"], {"checkpoints": Path("/srv/models")}),
    (["--checkpoints=/srv/models"], {"checkpoints": Path("/srv/models")}),
    (["--checkpoints", "~/runs"], {"checkpoints": Path("~/runs").expanduser()}),
    (["--production"], {"production": True}),
    (["--decode-slots", "3"], {"decode_slots": 3}),
    (["--decode-slots=1"], {"decode_slots": 1}),
    (["--data-dir", "/srv/tests"], {"data_dir": Path("/srv/tests")}),
    (["--align-dir", "/srv/gold"], {"align_dir": Path("/srv/gold")}),
    (["--align-dir", "/srv/gold", "--decode-slots", "7", "--production", "--checkpoints", "/m", "--data-dir", "/t"],
     {"align_dir": Path("/srv/gold"), "decode_slots": 7, "production": True, "checkpoints": Path("/m"),
      "data_dir": Path("/t")}),
    # what is not the app's (Streamlit's options, stray words) is left alone
    (["--server.port", "8502", "--decode-slots", "2", "stray", "--theme.base=dark"], {"decode_slots": 2}),
    (["--check", "/elsewhere", "--prod"], {}),  # abbreviations are not the flags: never a surprise match
])
def test_each_flag_sets_its_field_and_nothing_else(argv, changed):
    assert parse_settings(argv) == dataclasses.replace(DEFAULTS, **changed)


@pytest.mark.parametrize("argv, says", [
    (["--decode-slots", "0"], "argument --decode-slots: must be at least 1, got 0"),
    (["--decode-slots", "-4"], "argument --decode-slots: must be at least 1, got -4"),
    (["--decode-slots", "two"], "argument --decode-slots: invalid int value: 'two'"),
    (["--decode-slots", "2.5"], "argument --decode-slots: invalid int value: '2.5'"),
    (["--decode-slots"], "argument --decode-slots: expected one argument"),
    (["--checkpoints"], "argument --checkpoints: expected one argument"),
    (["--checkpoints", ""], "argument --checkpoints: an empty path"),
    (["--data-dir", " "], "argument --data-dir: an empty path"),
    (["--align-dir"], "argument --align-dir: expected one argument"),
])
def test_a_bad_value_is_refused_with_argparses_usage_and_error(argv, says):
    with pytest.raises(SettingsError) as refused:
        parse_settings(argv)
    message = str(refused.value)
    assert message.startswith("usage: streamlit run app.py --") and f"streamlit run app.py --: error: {says}" in message


@pytest.mark.parametrize("slots", [0, -1])
def test_settings_made_in_code_need_a_decode_slot_too(slots):
    with pytest.raises(SettingsError, match="at least 1"):
        AppSettings(decode_slots=slots)


def test_settings_are_one_frozen_hashable_value():
    """Caches are keyed by them, so they cannot change under a key."""
    settings = parse_settings(["--checkpoints", "/m", "--decode-slots", "2"], server_address="0.0.0.0")
    assert hash(settings) == hash(parse_settings(["--decode-slots", "2", "--checkpoints", "/m"], "0.0.0.0"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.production = True


def test_the_environment_is_not_read(monkeypatch, tmp_path):
    for name in ("NMT_CHECKPOINTS", "NMT_PRODUCTION", "NMT_DECODE_SLOTS", "NMT_DATA_DIR", "NMT_ALIGN_DIR"):
        monkeypatch.setenv(name, "5" if name == "NMT_DECODE_SLOTS" else str(tmp_path))
    assert parse_settings([]) == DEFAULTS


def test_the_app_shows_a_bad_flag_and_stops(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["app.py", "--decode-slots", "none"])  # start_app would refuse it first
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception
    assert [e.value for e in at.error] == ["The app's flags could not be read:"]
    assert "argument --decode-slots: invalid int value: 'none'" in at.code[0].value
    assert [s.key for s in at.get("selectbox")] == ["lang"]  # no page ran: only the language menu, drawn first


# ---------------------------------------------------------------- nothing reads NMT_ settings from the environment


def environment_reads(source: str) -> list[str]:
    """What a module's code reads from the environment: ``os.environ``, ``os.getenv`` and
    ``environ`` imported from os, plus any string naming an ``NMT_`` variable."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "os" \
                and node.attr in ("environ", "getenv", "putenv", "environb", "getenvb"):
            found.append(f"os.{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            found += [f"from os import {a.name}" for a in node.names if a.name in ("environ", "getenv", "environb")]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "NMT_" in node.value:
            found.append(repr(node.value[:40]))
    return found


APP_MODULES = [REPO / "app.py", *sorted((REPO / "viz").rglob("*.py"))]
# model/ may read what torchrun sets (WORLD_SIZE, LOCAL_RANK); no NMT_ names
MODEL_MODULES = sorted((REPO / "model").rglob("*.py"))


@pytest.mark.parametrize("path", APP_MODULES, ids=lambda p: str(p.relative_to(REPO)))
def test_no_app_module_reads_the_environment(path):
    assert environment_reads(path.read_text()) == []


@pytest.mark.parametrize("path", MODEL_MODULES, ids=lambda p: str(p.relative_to(REPO)))
def test_no_model_module_names_an_nmt_variable(path):
    assert [r for r in environment_reads(path.read_text()) if "NMT_" in r] == []


@pytest.mark.parametrize("source", [
    'import os\nroot = os.environ.get("NMT_CHECKPOINTS", "x")',
    'import os\nslots = os.getenv("NMT_DECODE_SLOTS")',
    'from os import environ\ndef f():\n    return environ["NMT_DATA_DIR"]',
    'import os\nif os.environ.get("FLAG"):\n    pass',
])
def test_the_checker_finds_environment_reads(source):
    assert environment_reads(source)
