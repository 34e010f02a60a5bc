"""Fault test: a class behind the balancer loses a server; does anyone lose what they typed?

    python bench/fault_test.py [--fault kill|restart] [--processes 2] [--sessions 8]
                               [--checkpoints checkpoints] [--timeout 120]

Starts ``--processes`` app servers as docs/hosting.md starts a class (no file watcher) behind
HAProxy configured as ``deploy/haproxy.cfg``, and ``--sessions`` Chromium sessions through the
balancer, each translating a first sentence of its own. Then the fault:

- ``kill``: every session types a second sentence and presses Ctrl+Enter, and at once the
  server holding the first session is killed (SIGKILL), under the victim's sessions' requests
  (``--typed after``: the kill first, then the typing, into pages whose server is gone);
- ``restart``: the same with one server (``--processes 1``), started again on its port after
  the kill (the sessions type meanwhile);
- ``remove``: no server dies; the checkpoint folder of the model every session shows on the right
  (``--remove``) is taken out of the served folder (a folder of links to ``--checkpoints``' entries)
  as the sessions send their second sentence. The left model's translation should come back, with
  one clear line about the removed one and no exception;
- ``full-cache``: the servers' cache folder (``--cache-dir``) is a small filesystem filled to the
  last byte (a tmpfs: needs root) from the start, so no sentence space can be kept on disk. After
  the second sentence, each session opens the Sentence space page and types a sentence: its maps
  should come (built in memory) with no error shown, and nothing half-written may stay in the
  folder. Each row also says whether the maps came and when.

Prints one JSON line per session (its server before and after, whether its second sentence came
back translated without retyping, the seconds from the fault to its translation, error messages
shown) and a summary. Traffic goes only to 127.0.0.1.
"""
from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from bench.common import free_port  # noqa: E402
from bench.load_test import CHROMIUM_ARGS, start_balancer, start_server  # noqa: E402
from viz.pages.parts.first_paint import SETTLED_JS  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
FIRST = ["a dog runs in the park", "the cat sleeps on the bed", "i like green tea", "we are going home now",
         "she reads a book", "the children play outside", "he drinks coffee every morning", "it is very cold today",
         "my brother is a doctor", "the train leaves at noon", "they live in paris", "i lost my keys"]
SECOND = ["two men are walking in the street", "a woman is cooking dinner", "the boy kicks the red ball",
          "we will see you tomorrow", "the old man sits on a bench", "the sun is shining again",
          "i want to learn french", "the shop is closed on sunday", "a girl is singing a song",
          "the birds fly over the lake", "he forgot his umbrella", "the soup is too hot"]
ERRORS_JS = "() => document.querySelectorAll('[data-testid=stException], [data-testid=stAlertContentError]').length"
EXCEPTIONS_JS = "() => document.querySelectorAll('[data-testid=stException]').length"
ERROR_TEXT_JS = "() => [...document.querySelectorAll('[data-testid=stAlertContentError]')].map(e => e.innerText)"
WARNING_TEXT_JS = "() => [...document.querySelectorAll('[data-testid=stAlertContentWarning]')].map(e => e.innerText)"
OUTPUT_JS = "() => { const e = document.querySelector('[data-testid=stText]'); return e ? e.innerText : ''; }"
STATE_JS = "() => { const a = document.querySelector('[data-testid=stApp]'); " \
           "return a ? `${a.dataset.testConnectionState} ${a.dataset.testScriptState}` : ''; }"
BOX_JS = "() => { const e = document.querySelector('textarea'); return e ? e.value : null; }"


def server_of(context) -> str:
    """The balancer's cookie naming the server that holds a session ("" before it has one)."""
    return next((c["value"] for c in context.cookies() if c["name"] == "NMT_SERVER"), "")


def settle(page, timeout_ms: int) -> None:
    page.wait_for_function(SETTLED_JS, timeout=timeout_ms)


FILLER = "filler"  # the file that fills the full-cache fault's disk


def fill_small_disk(folder: Path, size_kib: int = 256) -> Path:
    """``folder`` as a tmpfs of ``size_kib`` KiB holding one file that fills it (mounting needs root)."""
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kib}k", "tmpfs", str(folder)],
                             capture_output=True, text=True)
    if mounted.returncode:
        raise SystemExit(f"--fault full-cache mounts a small tmpfs and needs root: {mounted.stderr.strip()}")
    try:
        with open(folder / FILLER, "wb") as filler:
            while True:
                filler.write(b"\0" * 4096)
                filler.flush()
    except OSError:  # ENOSPC: full
        pass
    return folder


def space_page(page, url: str, sentence: str, timeout: float) -> dict:
    """Open the Sentence space page, place ``sentence``: did its maps come (and when), errors shown."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    start = time.monotonic()
    page.goto(f"{url}space", wait_until="domcontentloaded")
    box = page.get_by_label("Your sentence")
    box.wait_for(timeout=timeout * 1000)
    settle(page, int(timeout * 1000))
    box.fill(sentence)
    box.press("Enter")
    try:
        page.wait_for_function("() => document.querySelectorAll('.canvas-chart[data-drawn]').length >= 2",
                               timeout=timeout * 1000)
        drawn = True
    except PlaywrightTimeout:
        drawn = False
    return {"space_drawn": drawn, "space_s": round(time.monotonic() - start, 1) if drawn else None,
            "space_errors_shown": page.evaluate(ERRORS_JS)}


def open_session(browser, url: str, sentence: str, timeout_ms: int):
    """A new browser session on the balancer that translated ``sentence``: (context, page)."""
    context = browser.new_context()
    page = context.new_page()
    page.goto(url, wait_until="domcontentloaded")
    box = page.locator("textarea").first
    box.wait_for(timeout=timeout_ms)
    settle(page, timeout_ms)
    before = page.evaluate(OUTPUT_JS)
    box.fill(sentence)
    box.press("Control+Enter")
    page.wait_for_function("old => { const e = document.querySelector('[data-testid=stText]'); "
                           "return e && e.innerText !== old; }", arg=before, timeout=timeout_ms)
    settle(page, timeout_ms)
    return context, page


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fault", choices=["kill", "restart", "remove", "full-cache"], default="kill")
    parser.add_argument("--remove", default="everyday-rnnencdec-en-fr",
                        help="--fault remove: the checkpoint folder taken away (the default page's right-hand model)")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--checkpoints", type=Path, default=REPO / "checkpoints")
    parser.add_argument("--typed", choices=["before", "after"], default="before",
                        help="the sessions type their second sentence and press Ctrl+Enter just before the kill "
                             "(sent to a server that dies under it), or after it (into a page reconnecting)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds a session may wait for its translation")
    args = parser.parse_args()
    if args.fault == "restart":
        args.processes = 1
    if args.sessions > len(SECOND):
        parser.error(f"--sessions: at most {len(SECOND)}")
    from playwright.sync_api import sync_playwright

    ports = [free_port() for _ in range(args.processes)]
    with tempfile.TemporaryDirectory() as tmp:
        served = args.checkpoints
        if args.fault == "remove":  # a folder the fault can change without touching the checkpoints
            served = Path(tmp) / "checkpoints"
            served.mkdir()
            for entry in args.checkpoints.resolve().iterdir():
                (served / entry.name).symlink_to(entry)
            if not (served / args.remove).exists():
                parser.error(f"--remove: no {args.remove} in {args.checkpoints}")
            args.typed = "after"  # the folder goes first: a decode that ended before would show nothing
        cache = None
        if args.fault == "full-cache":
            cache = fill_small_disk(Path(tmp) / "cache")
            args.typed = "after"
        flags = ["--cache-dir", str(cache)] if cache else []  # full-cache: the sentence spaces' folder
        servers = {f"app{k}": start_server(REPO, served, port, flags) for k, port in enumerate(ports, 1)}
        balancer, front = start_balancer(ports, Path(tmp))
        url = f"http://127.0.0.1:{front}/"
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                sessions = [open_session(browser, url, FIRST[i], int(args.timeout * 1000)) for i in range(args.sessions)]
                before = [server_of(context) for context, _ in sessions]
                victim = before[0] or "app1"
                print(f"{len(sessions)} sessions translated their first sentence; servers {before}; the fault: "
                      f"{args.fault} {victim}", file=sys.stderr, flush=True)
                outputs = [page.evaluate(OUTPUT_JS) for _, page in sessions]

                def type_second() -> None:  # every student types at once, the victim's included
                    for i, (_, page) in enumerate(sessions):
                        box = page.locator("textarea").first
                        box.fill(SECOND[i])
                        box.press("Control+Enter")

                if args.typed == "before":
                    type_second()
                if args.fault == "remove":
                    (served / args.remove).unlink()
                    victim = "every server"
                elif args.fault == "full-cache":  # full from the start
                    victim = "every server"
                else:
                    servers[victim].send_signal(signal.SIGKILL)
                    servers[victim].wait()
                fault_at = time.monotonic()
                if args.typed == "after":
                    type_second()
                if args.fault == "restart":
                    servers[victim] = start_server(REPO, served, ports[0], flags)
                    print(f"restarted {victim} after {time.monotonic() - fault_at:.1f} s", file=sys.stderr, flush=True)
                done: dict[int, float] = {}
                connected: dict[int, float] = {}  # when each page was first connected again after the fault
                dropped: set[int] = set()  # pages seen disconnected since the fault
                while len(done) < len(sessions) and time.monotonic() - fault_at < args.timeout:
                    for i, (_, page) in enumerate(sessions):
                        if i in done:
                            continue
                        try:
                            if not page.evaluate(STATE_JS).startswith("CONNECTED "):
                                dropped.add(i)
                            elif i in dropped and i not in connected:
                                connected[i] = time.monotonic() - fault_at
                            typed = page.evaluate(BOX_JS) == SECOND[i]
                            shown = page.evaluate(OUTPUT_JS)
                            if typed and shown and shown != outputs[i] and page.evaluate(SETTLED_JS):
                                done[i] = time.monotonic() - fault_at
                        except Exception:  # a page in the middle of reconnecting
                            pass
                    time.sleep(0.2)
                rows = []
                for i, (context, page) in enumerate(sessions):
                    rows.append({"session": i, "server_before": before[i], "server_after": server_of(context),
                                 "on_victim": before[i] == victim or victim == "every server", "typed_kept": page.evaluate(BOX_JS) == SECOND[i],
                                 "translated": i in done, "seconds": round(done[i], 1) if i in done else None,
                                 "connected_s": round(connected[i], 1) if i in connected else None,
                                 "errors_shown": page.evaluate(ERRORS_JS),
                                 "exceptions_shown": page.evaluate(EXCEPTIONS_JS),
                                 "error_lines": [line[:120] for line in page.evaluate(ERROR_TEXT_JS)],
                                 "warning_lines": [line[:120] for line in page.evaluate(WARNING_TEXT_JS)],
                                 "shown": page.evaluate(OUTPUT_JS)[:60], "settled": page.evaluate(SETTLED_JS),
                                 "connection_and_run": page.evaluate(STATE_JS)})
                    if cache is not None:
                        rows[-1].update(space_page(page, url, FIRST[i], args.timeout))
                    print(json.dumps(rows[-1]), flush=True)
                hit = [r for r in rows if r["on_victim"]]
                summary = {"fault": args.fault, "typed": args.typed, "processes": args.processes, "sessions": len(rows),
                           "sessions_on_victim": len(hit), "translated": sum(r["translated"] for r in rows),
                           "victims_translated": sum(r["translated"] for r in hit),
                           "slowest_victim_s": max((r["seconds"] for r in hit if r["seconds"] is not None), default=None),
                           "slowest_s": max((r["seconds"] for r in rows if r["seconds"] is not None), default=None),
                           "errors_shown": sum(r["errors_shown"] for r in rows)}
                if cache is not None:
                    summary.update(spaces_drawn=sum(r["space_drawn"] for r in rows),
                                   slowest_space_s=max((r["space_s"] for r in rows if r["space_s"] is not None),
                                                       default=None),
                                   space_errors_shown=sum(r["space_errors_shown"] for r in rows),
                                   cache_files_left=sorted(f.name for f in cache.iterdir() if f.name != FILLER))
                print(json.dumps(summary), flush=True)
                browser.close()
        finally:
            balancer.terminate()
            for server in servers.values():
                if server.poll() is None:
                    server.terminate()
                    server.wait(timeout=30)
            if cache is not None:
                subprocess.run(["umount", str(cache)], check=False)


if __name__ == "__main__":
    main()
