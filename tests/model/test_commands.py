"""The command lines: each console script in pyproject.toml runs the same ``main`` as its
``python -m model.X`` module, and an installed one answers ``--help``."""
import importlib
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]


def test_every_model_command_has_a_console_script():
    modules = {target.split(":")[0] for target in SCRIPTS.values()}
    commands = {f"model.{p.stem}" for p in (REPO / "model").glob("*.py")
                if "__main__" in p.read_text() and p.stem != "__init__"}
    assert commands == modules


@pytest.mark.parametrize("script, target", sorted(SCRIPTS.items()))
def test_a_console_script_runs_the_modules_main(script, target):
    module_name, function = target.split(":")
    module = importlib.import_module(module_name)
    main = getattr(module, function)
    assert callable(main)
    assert script == "nmt-" + module_name.split(".")[-1]
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
