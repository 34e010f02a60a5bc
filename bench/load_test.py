"""Load test: N concurrent sessions against a local ``streamlit run app.py``.

    python bench/load_test.py [--sessions 30] [--client protocol|browser] [--checkpoints DIR] [--repo DIR]
                              [--replicas N]

A class of N students on one server. Each session is either a client speaking Streamlit's own
websocket protocol (``--client protocol``, the default: ``bench/st_client.py``, so the server
has the machine's cores to itself, as it would with the students' browsers on their own
laptops) or a Chromium context in one browser (``--client browser``: what a user sees, but on
this machine the 30 browsers take most of the CPU). Three phases that every session enters
together:
1. open the Translate page (``--open-at-once`` pages load at a time: 30 browsers loading the app
   together would measure this machine's 2 cores running Chromium, not the server);
2. translate two sentences of its own (no two sessions share one, so nothing comes from the
   shared cache), all sessions pressing Ctrl+Enter at once;
3. upload a 5-line test set of its own on the Evaluate page and wait for the length chart.
Each time runs from the action to the end of the script run it starts (protocol) or to the
new text or chart on the page (browser).
Prints JSON: errors (must be 0), p50/p95 latency of each action, how many translations showed
the "Queued" line, the server's CPU seconds over the run (with browsers, the rest of the
machine's went to them) and its peak RSS (VmHWM). The server starts as docs/hosting.md starts a
class server (no source file watcher). ``--repo`` runs another checkout (an
older commit, for "before" figures). ``--replicas N`` starts N servers behind HAProxy configured
as ``deploy/haproxy.cfg`` (sticky sessions by cookie) and drives the sessions through the
balancer; the JSON then also says how many sessions each server held (by the balancer's
``X-Served-By`` header on every response a session got) and how many moved between servers
(protocol clients only). Traffic goes only to 127.0.0.1; the run is bounded by --timeout.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Sequence

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from bench.common import free_port, percentiles, streamlit_server, wait_healthy  # noqa: E402
from bench.st_client import StreamlitSession  # noqa: E402

BALANCER_CONFIG = REPO / "deploy" / "haproxy.cfg"

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SUBJECTS = ["A black dog is", "Two children are", "A young woman is", "An old man is", "Three girls are",
            "A boy in a red shirt is", "A man with a hat is", "Two women are", "A small cat is", "Some people are"]
ACTIONS = ["running through the snow", "playing with a ball in the park", "reading a book on a bench",
           "walking down a busy street", "sitting at a table outside"]
TEST_SRC = "A man rides a bike.\nA woman is reading a book.\nThree dogs run on the beach.\nA boy jumps.\nPeople walk.\n"
TEST_REF = ("Un homme fait du vélo.\nUne femme lit un livre.\nTrois chiens courent sur la plage.\n"
            "Un garçon saute.\nDes gens marchent.\n")


def sentences_of(i: int) -> list[str]:
    """Session ``i``'s two sentences: different from every other session's (up to 25 sessions
    by subject and action; beyond that, by a time of day)."""
    pairs = [(s, a) for a in ACTIONS for s in SUBJECTS]
    out = []
    for j in (2 * i, 2 * i + 1):
        subject, action = pairs[j % len(pairs)]
        suffix = f" at {j // len(pairs) + 6} o'clock" if j >= len(pairs) else ""
        out.append(f"{subject} {action}{suffix}.")
    return out


class Phases:
    """Lets sessions enter each phase together: ``reach(name)`` returns when every session still
    running has reached it; a session that failed calls ``leave(reached)`` with the phases it had
    reached, so nobody waits for it and nobody counts it twice."""

    def __init__(self, sessions: int):
        self.waiting_for, self.arrived, self.open = sessions, {}, {}

    async def reach(self, name: str) -> None:
        self.arrived[name] = self.arrived.get(name, 0) + 1
        event = self.open.setdefault(name, asyncio.Event())
        self._release()
        await event.wait()

    def leave(self, reached: list[str]) -> None:
        self.waiting_for -= 1
        for name in reached:
            self.arrived[name] -= 1
        self._release()

    def _release(self) -> None:
        for name, event in self.open.items():
            if self.arrived.get(name, 0) >= self.waiting_for and not event.is_set():
                print(f"{time.strftime('%H:%M:%S')} phase {name}: {self.arrived[name]} sessions go", file=sys.stderr,
                      flush=True)
                event.set()


def start_server(repo: Path, checkpoints: Path, port: int, app_flags: Sequence[str] = ()) -> subprocess.Popen:
    """A class server (no source file watcher) on ``port``, once it answers healthy (killed if it
    does not within two minutes); ``app_flags`` go to the app after ``--checkpoints``."""
    server = streamlit_server(repo, checkpoints, port, ["--server.fileWatcherType", "none"], app_flags)
    wait_healthy(f"http://127.0.0.1:{port}", server, timeout=120, pause=0.5, kill=True)
    return server


def balancer_config(template: str, front: int, ports: list[int]) -> str:
    """``deploy/haproxy.cfg`` (``template``) listening on 127.0.0.1:``front``, with one server line
    per port in place of its own (where its first one stood, with its indent)."""
    lines = template.splitlines(keepends=True)
    at = [i for i, line in enumerate(lines) if line.strip().startswith("server ")]
    if not at:
        raise ValueError("the balancer's configuration has no server line to replace")
    first = lines[at[0]]
    indent = first[:len(first) - len(first.lstrip())]
    ours = [f"{indent}server app{k} 127.0.0.1:{port} check cookie app{k}\n" for k, port in enumerate(ports, 1)]
    text = "".join(lines[:at[0]] + ours + [line for i, line in enumerate(lines) if i > at[0] and i not in at])
    return re.sub(r"(?m)^(\s*)bind .*$", lambda m: f"{m.group(1)}bind 127.0.0.1:{front}", text)


def start_balancer(ports: list[int], folder: Path) -> tuple[subprocess.Popen, int]:
    """HAProxy in front of the servers on ``ports``: (its process, the port it listens on)."""
    if shutil.which("haproxy") is None:
        raise SystemExit("--replicas needs HAProxy (Debian: apt-get install haproxy)")
    front = free_port()
    config = folder / "haproxy.cfg"
    config.write_text(balancer_config(BALANCER_CONFIG.read_text(), front, ports))
    balancer = subprocess.Popen(["haproxy", "-db", "-f", str(config)], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
    wait_healthy(f"http://127.0.0.1:{front}", balancer, timeout=120, pause=0.5, kill=True)
    return balancer, front


def replica_report(served: list[set[str]]) -> dict:
    """From the servers that answered each session: how many sessions each server held (those
    answered by one server only), how many moved between servers, and how many gave no answer
    naming a server."""
    per_server: dict[str, int] = {}
    for servers in served:
        if len(servers) == 1:
            (name,) = servers
            per_server[name] = per_server.get(name, 0) + 1
    return {"sessions_per_server": dict(sorted(per_server.items())),
            "sessions_moved": sum(len(s) > 1 for s in served), "sessions_unnamed": sum(not s for s in served)}


def cpu_seconds(pid: int) -> float:
    """User + system CPU time the process has used (/proc/PID/stat), to tell the server's share
    of the machine from the browsers'."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


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


async def session(i: int, browser, url: str, folder: Path, phases: Phases, loading: asyncio.Semaphore,
                  timings: dict, errors: list) -> None:
    context = await browser.new_context(viewport={"width": 1300, "height": 900})
    context.set_default_timeout(600_000)  # 30 browsers on 2 cores: Playwright's 30 s would time out the harness
    page, reached = await context.new_page(), []
    try:
        async with loading:
            start = time.perf_counter()
            await page.goto(url, wait_until="domcontentloaded", timeout=300_000)
            outputs = page.locator("[data-testid=stText]")
            await outputs.first.wait_for(timeout=600_000)
            timings["open"].append((time.perf_counter() - start) * 1000)
        reached.append("translate")
        await phases.reach("translate")
        box = page.locator("textarea").first
        for sentence in sentences_of(i):
            before = await outputs.first.inner_text()
            start = time.perf_counter()
            await box.fill(sentence)
            await box.press("Control+Enter")
            timings["queued"].append(await wait_for_change(page, outputs.first, before))
            timings["translate"].append((time.perf_counter() - start) * 1000)
        await evaluate(page, url, test_files(folder, i), phases, reached, timings)
        if await page.locator("[data-testid=stException]").count():
            errors.append("exception shown on page")
    except Exception as exc:  # every failure counts; the run goes on
        errors.append(f"{type(exc).__name__}: {str(exc)[:200]}")
        phases.leave(reached)
    finally:
        await context.close()


def test_files(folder: Path, i: int) -> tuple[str, str]:
    """A 5-line test set of session ``i``'s own (its first line names it), so no two
    sessions' evaluations share a cached result."""
    src, ref = folder / f"src{i}.en", folder / f"ref{i}.fr"
    src.write_text(f"Student {i} rides a bike.\n" + TEST_SRC.split("\n", 1)[1])
    ref.write_text(f"L'étudiant {i} fait du vélo.\n" + TEST_REF.split("\n", 1)[1])
    return str(src), str(ref)


async def evaluate(page, url: str, files: tuple[str, str], phases: Phases, reached: list, timings: dict) -> None:
    await page.goto(f"{url}/evaluate", wait_until="domcontentloaded", timeout=300_000)
    inputs = page.locator("input[type=file]")
    await inputs.first.wait_for(state="attached", timeout=600_000)
    await inputs.nth(0).set_input_files(files[0])
    await inputs.nth(1).set_input_files(files[1])
    await page.get_by_text(Path(files[1]).name).first.wait_for(timeout=600_000)
    reached.append("evaluate")
    await phases.reach("evaluate")
    start = time.perf_counter()
    await page.get_by_role("button", name="Evaluate").click()
    await page.get_by_text("BLEU by source sentence length").first.wait_for(timeout=600_000)
    timings["evaluate"].append((time.perf_counter() - start) * 1000)


def within(action, seconds: float = 600.0):
    """An action that fails after ``seconds`` (as long as the browsers' actions may wait)."""
    return asyncio.wait_for(action, seconds)


async def protocol_session(i: int, url: str, folder: Path, phases: Phases, loading: asyncio.Semaphore,
                           timings: dict, errors: list) -> None:
    """``session``'s actions, sent as the browser's websocket messages (``StreamlitSession``)."""
    client, reached = StreamlitSession(url), []
    timings["served"].append(client.served_by)  # filled in as the session goes
    try:
        async with loading:
            start = time.perf_counter()
            await within(client.open(""))
            timings["open"].append((time.perf_counter() - start) * 1000)
        reached.append("translate")
        await phases.reach("translate")
        for sentence in sentences_of(i):
            start = time.perf_counter()
            await within(client.rerun(source=sentence))
            if not client.texts:
                raise RuntimeError("no translation drawn")
            timings["translate"].append((time.perf_counter() - start) * 1000)
            timings["queued"].append(client.queued)
        await within(client.goto("evaluate"))
        for key, path in zip(("eval_src", "eval_ref"), test_files(folder, i)):
            await within(client.upload(key, Path(path)))
        reached.append("evaluate")
        await phases.reach("evaluate")
        start = time.perf_counter()
        await within(client.rerun(trigger="eval_run"))
        if "chart:lines" not in client.kinds:
            raise RuntimeError("no length chart drawn")
        timings["evaluate"].append((time.perf_counter() - start) * 1000)
        if client.exceptions:
            errors.append(f"{client.exceptions} exception(s) drawn")
    except Exception as exc:  # every failure counts; the run goes on
        errors.append(f"{type(exc).__name__}: {str(exc)[:200]}")
        phases.leave(reached)
    finally:
        await client.close()


async def drive(url: str, sessions: int, folder: Path, open_at_once: int, client: str) -> tuple[dict, list]:
    timings, errors = {"open": [], "translate": [], "evaluate": [], "queued": [], "served": []}, []
    phases, loading = Phases(sessions), asyncio.Semaphore(open_at_once)
    if client == "protocol":
        await asyncio.gather(*(protocol_session(i, url, folder, phases, loading, timings, errors)
                               for i in range(sessions)))
        return timings, errors
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        await asyncio.gather(*(session(i, browser, url, folder, phases, loading, timings, errors)
                               for i in range(sessions)))
        await browser.close()
    return timings, errors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=30)
    parser.add_argument("--client", choices=["protocol", "browser"], default="protocol",
                        help="websocket clients (the server's view) or Chromium contexts (the user's)")
    parser.add_argument("--checkpoints", default=str(REPO / "checkpoints"))
    parser.add_argument("--repo", default=str(REPO), help="checkout of the app to run")
    parser.add_argument("--open-at-once", type=int, default=4, help="pages loading at the same time in phase 1")
    parser.add_argument("--timeout", type=float, default=1500, help="seconds before the whole run is abandoned")
    parser.add_argument("--replicas", type=int, default=0,
                        help="N servers behind HAProxy (deploy/haproxy.cfg) instead of one server alone")
    args = parser.parse_args()
    if args.replicas and args.client != "protocol":
        parser.error("--replicas counts sessions per server from the protocol clients' responses")
    folder = Path(tempfile.mkdtemp())
    ports = [free_port() for _ in range(max(args.replicas, 1))]
    servers, balancer = [], None
    try:
        servers = [start_server(Path(args.repo), Path(args.checkpoints), port) for port in ports]
        if args.replicas:
            balancer, front = start_balancer(ports, folder)
        url = f"http://127.0.0.1:{front if args.replicas else ports[0]}"
        start, cpu_start = time.perf_counter(), sum(cpu_seconds(s.pid) for s in servers)
        timings, errors = asyncio.run(asyncio.wait_for(
            drive(url, args.sessions, folder, args.open_at_once, args.client), args.timeout))
        report = {"repo": args.repo, "client": args.client, "sessions": args.sessions, "errors": len(errors),
                  "error_messages": errors[:5], "translations_queued": sum(timings["queued"]),
                  "open_to_first_translation": percentiles(timings["open"]) | {"n": len(timings["open"])},
                  "translate": percentiles(timings["translate"]) | {"n": len(timings["translate"])},
                  "evaluate": percentiles(timings["evaluate"]) | {"n": len(timings["evaluate"])},
                  "wall_s": round(time.perf_counter() - start, 1),
                  "server_cpu_s": round(sum(cpu_seconds(s.pid) for s in servers) - cpu_start, 1),
                  "server_peak_rss_mb": [round(peak_rss_mb(s.pid), 1) for s in servers]}
        if args.replicas:
            report |= {"replicas": args.replicas} | replica_report(timings["served"])
        print(json.dumps(report))
    finally:
        for process in ([balancer] if balancer else []) + servers:
            process.terminate()
            process.wait(timeout=30)


if __name__ == "__main__":
    main()
