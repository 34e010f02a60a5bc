"""Real-browser harness: start ``streamlit run app.py`` on a free port, drive Debian's Chromium."""
from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from viz.pages.parts.first_paint import SETTLED_JS

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def browser():
    """Chromium via Playwright; in CI a missing browser is a failure, not a skip."""
    playwright = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing in CI; .ci/run installs it with apt-get")
        pytest.skip(f"{CHROMIUM} not installed (apt-get install chromium)")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


ALIGN_GOLD = {".en": "a dog runs\nthe small cat\n", ".fr": "un chien court\nle petit chat\n",
              ".wa": "1 1 1 S\n1 2 2 S\n1 3 3 S\n2 1 1 S\n2 2 2 P\n2 3 3 S\n"}


@pytest.fixture(scope="session")
def align_dir(tmp_path_factory) -> Path:
    """A toy gold set, the only built-in one the Alignment page offers in these tests."""
    folder = tmp_path_factory.mktemp("gold")
    for suffix, text in ALIGN_GOLD.items():
        (folder / f"toy{suffix}").write_text(text)
    return folder


@contextlib.contextmanager
def served(checkpoints: Path, log: Path, *flags: str):
    """``streamlit run app.py --checkpoints CHECKPOINTS FLAGS`` on a free port, its URL while inside."""
    with served_process(checkpoints, log, *flags) as (url, _):
        yield url


@contextlib.contextmanager
def served_process(checkpoints: Path, log: Path, *flags: str):
    """As ``served``: (its URL, the server's process) while inside."""
    port = free_port()
    with open(log, "wb") as handle:
        server = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
             "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
             "--", "--checkpoints", str(checkpoints), *flags, "--no-warm"],
            cwd=REPO, stdout=handle, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 60
        while True:
            try:
                if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok":
                    break
            except OSError:
                if time.time() > deadline or server.poll() is not None:
                    pytest.fail(f"streamlit did not start: {log.read_text()[-2000:]}")
                time.sleep(0.5)
        yield url, server
    finally:
        server.terminate()
        server.wait(timeout=20)


@pytest.fixture(scope="session")
def app_url(checkpoint_dir, align_dir, tmp_path_factory):
    with served(checkpoint_dir, tmp_path_factory.mktemp("server") / "streamlit.log", "--align-dir",
                str(align_dir)) as url:
        yield url


@pytest.fixture
def page(browser, app_url):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    yield page
    context.close()


def wait_idle(page, timeout: int = 60_000) -> None:
    """Until the page has settled (``first_paint.SETTLED_JS``): its script run is over and no rerun
    is about to start. (Streamlit's status widget is no sign: it shows only once a run has lasted a
    while, and a run that holds its charts back is followed by the probe's rerun half a second later.)"""
    page.wait_for_function(SETTLED_JS, timeout=timeout)
