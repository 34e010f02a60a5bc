"""Load test: N concurrent browser sessions against a local ``streamlit run app.py``.

    python bench/load_test.py [--sessions 30] [--checkpoints checkpoints] [--repo DIR]

A class of N students on one server: each session (its own Chromium context in one browser)
translates two sentences on the Translate page, then uploads a 5-line test set on the Evaluate
page and waits for the length chart; all start together. Prints JSON: errors (must be 0),
p50/p95 latency of each action (opening the page until its first translation shows, each
translation, the evaluation), how many translations showed the "Queued" line, and the
server's peak RSS (VmHWM). ``--repo`` runs another checkout (an older commit, for "before"
figures). Traffic goes only to 127.0.0.1; the run is bounded by --timeout.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from bench.common import percentiles  # noqa: E402

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SENTENCES = ["A black dog is running through the snow.", "Two children are playing with a ball in the park."]
TEST_SRC = "A man rides a bike.\nA woman is reading a book.\nThree dogs run on the beach.\nA boy jumps.\nPeople walk.\n"
TEST_REF = ("Un homme fait du vélo.\nUne femme lit un livre.\nTrois chiens courent sur la plage.\n"
            "Un garçon saute.\nDes gens marchent.\n")


def start_server(repo: Path, checkpoints: Path, port: int) -> subprocess.Popen:
    env = {**os.environ, "NMT_CHECKPOINTS": str(checkpoints)}
    server = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                               "--server.port", str(port), "--server.address", "127.0.0.1",
                               "--browser.gatherUsageStats", "false"],
                              cwd=repo, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(120):
        try:
            if urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2).read() == b"ok":
                return server
        except OSError:
            time.sleep(0.5)
    server.kill()
    raise RuntimeError("streamlit did not start")


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def wait_for_change(page, locator, before: str, timeout: float = 300.0) -> bool:
    """Poll until the element's text differs from ``before`` (the new translation arrived);
    returns whether the page showed the decode queue's "Queued" line meanwhile."""
    deadline, queued = time.perf_counter() + timeout, False
    while time.perf_counter() < deadline:
        if await locator.count() and (await locator.inner_text()) != before:
            return queued
        queued = queued or await page.get_by_text("Queued:").count() > 0
        await asyncio.sleep(0.1)
    raise TimeoutError("translation did not change")


async def session(browser, url: str, files: tuple[str, str], timings: dict, errors: list) -> None:
    context = await browser.new_context(viewport={"width": 1300, "height": 900})
    page = await context.new_page()
    try:
        start = time.perf_counter()
        await page.goto(url, wait_until="domcontentloaded", timeout=300_000)  # 30 browsers loading at once on 2 cores
        box = page.locator("textarea").first
        await box.wait_for(timeout=600_000)
        outputs = page.locator("[data-testid=stText]")
        await outputs.first.wait_for(timeout=600_000)
        timings["open"].append((time.perf_counter() - start) * 1000)
        for sentence in SENTENCES:
            before = await outputs.first.inner_text()
            start = time.perf_counter()
            await box.fill(sentence)
            await box.press("Control+Enter")
            timings["queued"].append(await wait_for_change(page, outputs.first, before))
            timings["translate"].append((time.perf_counter() - start) * 1000)
        await page.goto(f"{url}/evaluate", wait_until="domcontentloaded", timeout=300_000)
        inputs = page.locator("input[type=file]")
        await inputs.first.wait_for(state="attached", timeout=600_000)
        start = time.perf_counter()
        await inputs.nth(0).set_input_files(files[0])
        await inputs.nth(1).set_input_files(files[1])
        await page.get_by_text("ref.fr").first.wait_for(timeout=600_000)
        await page.get_by_role("button", name="Evaluate").click()
        await page.get_by_text("BLEU by source sentence length").first.wait_for(timeout=600_000)
        timings["evaluate"].append((time.perf_counter() - start) * 1000)
        if await page.locator("[data-testid=stException]").count():
            errors.append("exception shown on page")
    except Exception as exc:  # every failure counts; the run goes on
        errors.append(f"{type(exc).__name__}: {str(exc)[:200]}")
    finally:
        await context.close()


async def drive(url: str, sessions: int, files: tuple[str, str]) -> tuple[dict, list]:
    from playwright.async_api import async_playwright

    timings, errors = {"open": [], "translate": [], "evaluate": [], "queued": []}, []
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        await asyncio.gather(*(session(browser, url, files, timings, errors) for _ in range(sessions)))
        await browser.close()
    return timings, errors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=30)
    parser.add_argument("--checkpoints", default=str(REPO / "checkpoints"))
    parser.add_argument("--repo", default=str(REPO), help="checkout of the app to run")
    parser.add_argument("--timeout", type=float, default=1500, help="seconds before the whole run is abandoned")
    args = parser.parse_args()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    folder = Path(tempfile.mkdtemp())
    (folder / "src.en").write_text(TEST_SRC)
    (folder / "ref.fr").write_text(TEST_REF)
    server = start_server(Path(args.repo), Path(args.checkpoints), port)
    try:
        start = time.perf_counter()
        timings, errors = asyncio.run(asyncio.wait_for(
            drive(f"http://127.0.0.1:{port}", args.sessions, (str(folder / "src.en"), str(folder / "ref.fr"))),
            args.timeout))
        print(json.dumps({"repo": args.repo, "sessions": args.sessions, "errors": len(errors),
                          "error_messages": errors[:5], "translations_queued": sum(timings["queued"]),
                          "open_to_first_translation": percentiles(timings["open"]) | {"n": len(timings["open"])},
                          "translate": percentiles(timings["translate"]) | {"n": len(timings["translate"])},
                          "evaluate": percentiles(timings["evaluate"]) | {"n": len(timings["evaluate"])},
                          "wall_s": round(time.perf_counter() - start, 1),
                          "server_peak_rss_mb": round(peak_rss_mb(server.pid), 1)}))
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
