"""The command lines: each console script in pyproject.toml runs the same ``main`` as its
``python -m model.X`` or ``python -m viz.commands.X`` module, an installed one answers ``--help``,
and no module outside those places parses arguments."""
import importlib
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]


# where the command lines live: model/'s top level and viz/commands/
COMMAND_PLACES = (("model", "*.py"), ("viz/commands", "*.py"))


def command_modules() -> set[str]:
    return {".".join(p.relative_to(REPO).with_suffix("").parts)
            for folder, pattern in COMMAND_PLACES for p in (REPO / folder).glob(pattern)
            if "__main__" in p.read_text() and p.stem != "__init__"}


def test_every_command_has_a_console_script():
    modules = {target.split(":")[0] for target in SCRIPTS.values()}
    assert command_modules() == modules


def parses_arguments(path: Path) -> bool:
    return any(word in path.read_text(encoding="utf-8") for word in ("import argparse", "ArgumentParser(", "sys.argv"))


# the app's own flags (streamlit run app.py -- --production ...), parsed once into AppSettings
APP_FLAGS = REPO / "viz" / "serving" / "settings.py"


def test_only_the_commands_parse_arguments():
    places = {REPO / folder / p.name for folder, pattern in COMMAND_PLACES for p in (REPO / folder).glob(pattern)}
    libraries = [p for package in ("model", "viz") for p in (REPO / package).rglob("*.py")
                 if p not in places and p != APP_FLAGS]
    parsing = [str(p.relative_to(REPO)) for p in libraries if parses_arguments(p)]
    assert not parsing, f"argument parsing outside model/*.py and viz/commands/: {parsing}"


def test_the_argument_check_sees_a_parser(tmp_path):
    planted = tmp_path / "library.py"
    planted.write_text("import argparse\nparser = argparse.ArgumentParser()\n")
    assert parses_arguments(planted) and not parses_arguments(REPO / "model" / "core" / "errors.py")


@pytest.mark.parametrize("script, target", sorted(SCRIPTS.items()))
def test_a_console_script_runs_the_modules_main(script, target):
    module_name, function = target.split(":")
    module = importlib.import_module(module_name)
    main = getattr(module, function)
    assert callable(main)
    assert script == "nmt-" + module_name.split(".")[-1].replace("_", "-")
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0


def test_the_installed_scripts_point_at_those_mains():
    """What ``pip install`` made of pyproject.toml: one entry point per script, each naming the
    module's ``main`` (checked without starting 7 interpreters; one of them is run below)."""
    from importlib.metadata import entry_points

    installed = {ep.name: ep.value for ep in entry_points(group="console_scripts") if ep.name in SCRIPTS}
    if not installed:
        pytest.skip("the console scripts are not installed (pip install -e . installs them)")
    assert installed == SCRIPTS


def test_an_installed_script_and_python_m_print_the_same_help():
    script = "nmt-translate"
    path = shutil.which(script)
    if path is None:
        pytest.skip(f"{script} is not installed (pip install -e . installs it)")
    module = SCRIPTS[script].split(":")[0]
    installed = subprocess.run([path, "--help"], capture_output=True, text=True, timeout=120)
    as_module = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True, text=True,
                               timeout=120, cwd=REPO)
    assert installed.returncode == as_module.returncode == 0
    # argparse names the program after argv[0]; the options are the same
    assert installed.stdout.split("\n", 1)[1] == as_module.stdout.split("\n", 1)[1]
