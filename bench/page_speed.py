"""What a user waits for, timed in a real browser (headless Chromium) against ``streamlit run app.py``.

    python bench/page_speed.py [--repo DIR] [--checkpoints DIR] [--sentences 10] [--cold-starts 3] [--threads 2]
                               [--visitors 5] [--tab SLUG] [--align-dir DIR] [--space] [--space-cold]
                               [--floor-run 0.4] [--open-tabs N]

1. the floor: a Streamlit app holding one text area, served the same way; a new visitor (a fresh
   browser context, nothing cached) opens it, ``--visitors`` times: seconds to its text box (the
   first visitor comes as soon as the server answers, and is also timed from launching the server:
   the framework's own cold start); ``import torch`` in a fresh interpreter (median of three); and
   Ctrl+Enter on the same captions as in 4 in that app with a run that sleeps ``--floor-run``
   seconds (about the decode of both models) and then writes the text back: the framework's own
   cost around a run of that length;
2. cold start, ``--cold-starts`` times (a new server and a fresh browser context each): from
   launching ``streamlit run app.py`` to the first translation rendered (the first-launch
   example, both models), and on to its alignment heatmap drawn;
3. a new visitor on the warm server (after the first cold start and the Ctrl+Enter runs below:
   models loaded, the start-up work done), ``--visitors`` fresh browser contexts: seconds from opening the address to the text box,
   to the first translation and to the first chart;
4. per sentence: from pressing Ctrl+Enter on a 22-30-word test_2017_flickr caption to the page
   finishing its run (the new translation shown and Streamlit's "running" indicator gone), with
   the Translate page's ``--tab`` open (default the landing page's, alignment), and on to the
   faithfulness check under the heatmap, which the same run computes at its end; then ``--toggles``
   clicks on the Alignment tab's "Whole words" toggle, each to the heatmap redrawn (the tab reruns
   alone: a fragment); with each Ctrl+Enter, the decode's own time as the page reports it under
   the outputs (the longer of the two models', which decode side by side): Ctrl+Enter's median
   over theirs is ``ctrl_enter_over_decode``;
5. with ``--align-dir`` (the app's flag: a folder of gold alignments, e.g. ../shared/data/alignments):
   from clicking the Alignment page's link in the open app (and from opening its address) to its
   AER table on screen, for the first built-in gold set and the default models (null when no table
   shows within 30 s without pressing Measure);
6. with ``--open-tabs N``: N new visitors on the warm server each open the landing page, then click
   the Beam tree tab and then the Explanations tab: seconds from each click to that tab's charts
   drawn (the tree; both models' faithfulness curves) and the page settled, and for the
   Explanations tab also to its first method's heatmap on screen;
7. with ``--space``: the Sentence space page's first use, from opening its address to the first
   model's map drawn, (a) on a running server, once its background warm-up (started by the first
   visit) has kept the default pair's spaces in a fresh ``--cache-dir`` (also timed, from launch), and (b) on a restarted
   server reading that cache, opened as soon as it answers; ``--space-cold`` also times it on a
   server with neither (``--no-cache --no-warm``: the space is built on that first use).

8. the ratios of the waits to their floors, from the figures above: a new visitor's text box
   over the floor app's; server start to the first translation over the floor app's launch to its
   text box plus ``import torch``; Ctrl+Enter to the new translation on screen over the decode (as
   the page reports it) plus the floor app's own cost around a run; and to the page settled (the
   check under the heatmap shown, the run over) over the decode, the faithfulness check computed
   alone (RNNsearch, a fresh interpreter, the same captions) and that cost.

``--repo`` runs another checkout of the app (e.g. a worktree of an older commit) for "before"
figures; both use the same ``--checkpoints``. Prints one JSON object. Localhost only.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from bench.common import CHECKPOINTS, SHARED, free_port, streamlit_server, wait_healthy  # noqa: E402
from viz.pages.parts.first_paint import RUN_OVER_JS, SETTLED_JS  # noqa: E402

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
FALLBACK = ["A man in an orange hat starring at something while a young boy and a woman in a red dress walk "
            "down the busy street next to a parked bus."] * 5
CHART = ".canvas-chart[data-drawn], .js-plotly-plot"  # drawn by the page's own script, or by plotly


def long_captions(n: int) -> list[str]:
    """The first ``n`` test_2017_flickr captions of 22-30 words (without Multi30k, one long caption repeated)."""
    if not SHARED.is_dir():
        return FALLBACK[:n]
    from model.corpus.textfile import read_text

    lines = read_text(SHARED / "test_2017_flickr.en.gz").splitlines()
    return [s for s in lines if 22 <= len(s.split()) <= 30][:n]


def wait_idle(page, timeout_ms: int = 120_000) -> None:
    """Until the page has settled: its script run is over and no probe's rerun is coming
    (``first_paint.SETTLED_JS``)."""
    page.wait_for_function(SETTLED_JS, timeout=timeout_ms)


@contextlib.contextmanager
def app_server(repo: Path, checkpoints: Path, threads: int, flags: list[str]) -> Iterator[tuple[str, float]]:
    """A fresh ``streamlit run app.py`` on a free localhost port: (url, the moment it was launched)."""
    port = free_port()
    start = time.perf_counter()
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    server = streamlit_server(repo, checkpoints, port, app_flags=flags, env=env)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(url, server, timeout=120, pause=0.1)  # the server is stopped below either way
        yield url, start
    finally:
        server.terminate()
        server.wait(timeout=30)


def first_translation(page, url: str, start: float) -> dict:
    """Seconds from ``start`` to the first translation shown and to its alignment heatmap drawn."""
    page.goto(url, wait_until="domcontentloaded")
    page.locator("[data-testid=stText]").first.wait_for(timeout=180_000)
    translation = time.perf_counter() - start
    page.locator(CHART).first.wait_for(timeout=180_000)
    heatmap = time.perf_counter() - start
    wait_idle(page)
    return {"translation": round(translation, 2), "heatmap": round(heatmap, 2)}


FLOOR_APP = 'import streamlit as st\n\nst.text_area("Source")\n'


def text_box(page, url: str) -> float:
    """Seconds from opening ``url`` to its first text box on screen."""
    start = time.perf_counter()
    page.goto(url, wait_until="commit")
    page.locator("textarea").first.wait_for(timeout=120_000)
    return time.perf_counter() - start


FLOOR_RUN_APP = ('import time\nimport streamlit as st\n\ntext = st.text_area("Source")\nif text:\n'
                 '    time.sleep({seconds})\n    st.text(text[::-1])\n')


@dataclass(frozen=True)
class Floor:
    """What the one-text-area app costs (``floor``)."""

    text_box_s: list[float]  # each new visitor's seconds from opening the address to the text box
    launch_to_text_box_s: float  # the first visitor's, from launching the server (it opens as soon as it answers)
    ctrl_enter_s: list[float]  # Ctrl+Enter to the output shown and the run finished, a run sleeping ``run_s``


def floor(browser, threads: int, visitors: int, sentences: list[str], run_s: float) -> Floor:
    """A one-text-area app with this checkout's Streamlit settings: each new visitor's seconds to its text
    box (``visitors`` of them, at least one), the first also from the server's launch; and the same app
    whose run sleeps ``run_s`` seconds (as long as a decode) before writing the text back: seconds from
    Ctrl+Enter on each of ``sentences`` to its output shown and the run finished."""
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "app.py").write_text(FLOOR_APP)
        shutil.copytree(REPO / ".streamlit", Path(folder) / ".streamlit")
        with app_server(Path(folder), CHECKPOINTS, threads, []) as (url, start):
            box, launch = new_visitor(browser, url, lambda page: (text_box(page, url), time.perf_counter() - start))
            boxes = [box] + [new_visitor(browser, url, lambda page: text_box(page, url)) for _ in range(visitors - 1)]
        runs = []
        if sentences:
            (Path(folder) / "app.py").write_text(FLOOR_RUN_APP.format(seconds=run_s))
            with app_server(Path(folder), CHECKPOINTS, threads, []) as (url, _):
                runs = new_visitor(browser, url, lambda page: floor_runs(page, url, sentences))
    return Floor([round(b, 2) for b in boxes], round(launch, 2), runs)


def import_torch_s(times: int = 3) -> float:
    """Seconds a fresh interpreter takes to ``import torch`` (the median of ``times``)."""
    found = []
    for _ in range(times):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import torch"], check=True)
        found.append(time.perf_counter() - start)
    return round(statistics.median(found), 2)


def check_work_s(repo: Path, checkpoint: Path, sentences: list[str], threads: int) -> Optional[float]:
    """The faithfulness check under the heatmap computed alone, outside the app (a fresh
    interpreter with the server's threads): its median over ``sentences``; None without the model."""
    if not checkpoint.is_dir():
        return None
    ran = subprocess.run([sys.executable, str(REPO / "bench" / "check_work.py"), str(checkpoint), str(threads)],
                         input=json.dumps(sentences), capture_output=True, text=True, cwd=repo,
                         env={**os.environ, "PYTHONPATH": str(repo)})
    return round(float(ran.stdout.strip()), 3) if ran.returncode == 0 else None


def ratio(work: Optional[float], floor_s: Optional[float]) -> Optional[float]:
    return round(work / floor_s, 2) if work is not None and floor_s else None


def floor_runs(page, url: str, sentences: list[str]) -> list[float]:
    page.goto(url, wait_until="domcontentloaded")
    box = page.locator("textarea").first
    box.wait_for(timeout=120_000)
    wait_idle(page)
    found = []
    for sentence in sentences:
        box.fill(sentence)
        start = time.perf_counter()
        box.press("Control+Enter")
        page.wait_for_function("t => [...document.querySelectorAll('[data-testid=stText]')].some(e => e.innerText === t)",
                               arg=sentence[::-1], timeout=60_000)
        wait_idle(page)
        found.append(round(time.perf_counter() - start, 2))
    return found


def new_visitor(browser, url: str, visit):
    """``visit(page)`` in a fresh browser context (no cache, no cookies, a new Streamlit session)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        return visit(context.new_page())
    finally:
        context.close()


def visitor_on_warm_server(page, url: str) -> dict:
    """Seconds from opening ``url`` to the text box, the first translation and the first chart."""
    start = time.perf_counter()
    box = text_box(page, url)
    page.locator("[data-testid=stText]").first.wait_for(timeout=120_000)
    translation = time.perf_counter() - start
    page.locator(CHART).first.wait_for(timeout=120_000)
    chart = time.perf_counter() - start
    wait_idle(page)
    return {"text_box": round(box, 2), "translation": round(translation, 2), "chart": round(chart, 2)}


TAB_DRAWN = {  # a tab of the Translate page -> when its charts are drawn (by the page's script, or by plotly)
    "Beam tree": "() => !!document.querySelector('.canvas-chart[data-nodes], .js-plotly-plot .scatterlayer')",
    "Explanations": "() => document.querySelectorAll('.canvas-chart[data-lines]').length >= 4 || "  # two models'
                    "document.querySelectorAll('.js-plotly-plot .scatterlayer').length >= 2",  # deletion and insertion
}


TAB_FIRST = {  # a tab -> when its first reading is on screen: a heatmap drawn in the tab shown
    "Explanations": "() => [...document.querySelectorAll('[role=tabpanel]')].some((p) => p.offsetParent !== null && "
                    "!!p.querySelector('.canvas-chart[data-columns][data-drawn]'))",
}


def visitor_opens_tabs(page, url: str) -> dict:
    """A new visitor on the warm server opens the landing page, then each of ``TAB_DRAWN``'s tabs in
    turn: seconds from the click to its first reading on screen (``TAB_FIRST``: the Explanations
    tab's first method), to its charts drawn and the page settled."""
    text_box(page, url)
    page.locator(CHART).first.wait_for(timeout=120_000)
    wait_idle(page)
    found = {}
    for label, drawn in TAB_DRAWN.items():
        start = time.perf_counter()
        page.get_by_role("tab", name=label).click()
        if label in TAB_FIRST:
            page.wait_for_function(TAB_FIRST[label], timeout=120_000)
            found[f"{label} first reading"] = round(time.perf_counter() - start, 2)
        page.wait_for_function(drawn, timeout=120_000)
        wait_idle(page)
        found[label] = round(time.perf_counter() - start, 2)
    return found


CHECK_HELD, CHECK_SHOWN = "Measuring how faithful", "How faithful is this picture?"


DECODE_MS = re.compile(r"· (\d+) ms")  # what each output's caption says its model's decode took


SHOWN: list[float] = []  # seconds from each timed Ctrl+Enter to its translation on screen


def time_sentence(page, sentence: str) -> tuple[float, Optional[float], Optional[float]]:
    """Seconds from Ctrl+Enter to the run finished, and to the faithfulness check under the
    heatmap shown, which follows in the next run (None: the page shows no check); and the
    decode's own seconds, as the page reports them (the longer of its two models', which decode
    side by side)."""
    outputs = page.locator("[data-testid=stText]")
    before = outputs.first.inner_text()
    box = page.locator("textarea").first
    box.fill(sentence)
    start = time.perf_counter()
    box.press("Control+Enter")
    page.wait_for_function("([sel, old]) => { const e = document.querySelector(sel); return e && e.innerText !== old; }",
                           arg=["[data-testid=stText]", before], timeout=120_000)
    SHOWN.append(time.perf_counter() - start)  # the new translation on screen (a run shows what it draws at once)
    page.wait_for_function(RUN_OVER_JS, timeout=120_000)  # this run's end
    finished = time.perf_counter() - start
    reported = [int(ms) for ms in DECODE_MS.findall(page.inner_text("body"))][:2]  # under the two outputs
    decode = max(reported) / 1000 if reported else None
    text = "document.body.innerText"
    if not page.evaluate(f"([held, shown]) => {text}.includes(held) || {text}.includes(shown)", [CHECK_HELD, CHECK_SHOWN]):
        return finished, None, decode
    page.wait_for_function(f"([held, shown]) => !{text}.includes(held) && {text}.includes(shown)",
                           arg=[CHECK_HELD, CHECK_SHOWN], timeout=120_000)
    wait_idle(page)
    return finished, time.perf_counter() - start, decode


TICKS = ("() => document.querySelector('.canvas-chart[data-columns]')?.dataset.columns ?? "  # the page's own heatmap,
         "[...document.querySelectorAll('.js-plotly-plot .xtick text')].map(t => t.textContent).join('|')")  # or plotly's


def time_toggle(page) -> float:
    """Seconds from clicking the Alignment tab's "Whole words" toggle to the heatmap's columns
    changing (pieces to words, or back) and the run finished."""
    before = page.evaluate(TICKS)
    start = time.perf_counter()
    page.get_by_text("Whole words instead of subword pieces").click()
    page.wait_for_function(f"old => ({TICKS})() !== old", arg=before, timeout=120_000)
    wait_idle(page)
    return time.perf_counter() - start


def alignment_table(page, url: str) -> dict:
    """Seconds to the Alignment page's AER table on screen: from clicking its link in the open app,
    and from opening its address in a new tab (None where no table shows in 30 s)."""
    def shown(start: float):
        try:
            page.locator("[data-testid=stDataFrame]").first.wait_for(timeout=30_000)
        except Exception:  # playwright's TimeoutError: the page wants Measure pressed
            return None
        return round(time.perf_counter() - start, 2)

    start = time.perf_counter()
    page.get_by_role("link", name="Alignment").first.click()
    from_link = shown(start)
    page.goto(url, wait_until="domcontentloaded")  # away, then straight to the page's address
    page.locator("[data-testid=stText]").first.wait_for(timeout=180_000)
    wait_idle(page)
    start = time.perf_counter()
    page.goto(f"{url}/alignment", wait_until="domcontentloaded")
    return {"from_link": from_link, "from_address": shown(start)}




def space_map(page, url: str) -> float:
    """Seconds from opening the Sentence space page's address to its first map drawn."""
    start = time.perf_counter()
    page.goto(f"{url}/space", wait_until="domcontentloaded")
    page.locator(CHART).first.wait_for(timeout=300_000)
    return round(time.perf_counter() - start, 2)


def space_first_use(browser, repo: Path, checkpoints: Path, threads: int, cold: bool) -> dict:
    import tempfile

    found = {}
    with tempfile.TemporaryDirectory() as cache:
        flags = ["--cache-dir", cache]
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        with app_server(repo, checkpoints, threads, flags) as (url, start):
            context.new_page().goto(url, wait_until="domcontentloaded")  # a first visitor starts the warm-up
            while len(list(Path(cache).glob("*.npz"))) < 2:  # the default pair's spaces, kept by the warm-up
                time.sleep(0.5)
            found["warm_up_s"] = round(time.perf_counter() - start, 1)
            found["running_server_s"] = space_map(context.new_page(), url)
        with app_server(repo, checkpoints, threads, flags) as (url, start):
            found["restarted_server_s"] = space_map(context.new_page(), url)
            found["restarted_from_launch_s"] = round(time.perf_counter() - start, 2)
        if cold:
            with app_server(repo, checkpoints, threads, ["--no-cache", "--no-warm"]) as (url, start):
                found["no_cache_no_warm_s"] = space_map(context.new_page(), url)
        context.close()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", default=str(REPO), help="checkout of the app to run")
    parser.add_argument("--checkpoints", default=str(CHECKPOINTS))
    parser.add_argument("--sentences", type=int, default=10)
    parser.add_argument("--cold-starts", type=int, default=3, help="fresh servers to time from launch")
    parser.add_argument("--visitors", type=int, default=5, help="new visitors timed on the floor app and the warm server")
    parser.add_argument("--toggles", type=int, default=6, help="clicks on the Alignment tab's Whole words toggle to time")
    parser.add_argument("--open-tabs", type=int, default=0,
                        help="new visitors who open the Beam tree and Explanations tabs, each timed")
    parser.add_argument("--tab", default="alignment", help="the Translate page's tab open while Ctrl+Enter is timed")
    parser.add_argument("--threads", type=int, default=2, help="OMP_NUM_THREADS of the server")
    parser.add_argument("--align-dir", help="the app's --align-dir: also time the Alignment page's table")
    parser.add_argument("--space", action="store_true", help="also time the Sentence space page's first use")
    parser.add_argument("--app-flag", action="append", default=[], help="a flag for the app (repeatable), e.g. --no-warm")
    parser.add_argument("--space-cold", action="store_true", help="and on a server without cache or warm-up")
    parser.add_argument("--floor-run", type=float, default=0.4,
                        help="seconds the floor app's run sleeps after Ctrl+Enter (about a decode of both models)")
    args = parser.parse_args()
    flags = (["--align-dir", args.align_dir] if args.align_dir else []) + args.app_flag
    from playwright.sync_api import sync_playwright

    cold, runs, alignment, visitors, toggles, tabs = [], [], None, [], [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        floor_app = floor(browser, args.threads, args.visitors, long_captions(args.sentences), args.floor_run)
        torch_s = import_torch_s()
        for i in range(args.cold_starts):
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            page = context.new_page()
            with app_server(Path(args.repo), Path(args.checkpoints), args.threads, flags) as (url, start):
                cold.append(first_translation(page, url, start))
                if i == 0:
                    if args.tab != "alignment":
                        page.goto(f"{url}/?tab={args.tab}", wait_until="domcontentloaded")
                        page.locator("[data-testid=stText]").first.wait_for(timeout=120_000)
                        wait_idle(page)
                    runs = [time_sentence(page, s) for s in long_captions(args.sentences)]
                    toggles = [time_toggle(page) for _ in range(args.toggles)] if args.tab == "alignment" else []
                    visitors = [new_visitor(browser, url, lambda page: visitor_on_warm_server(page, url))
                                for _ in range(args.visitors)]
                    tabs = [new_visitor(browser, url, lambda page: visitor_opens_tabs(page, url))
                            for _ in range(args.open_tabs)]
                    if args.align_dir:
                        alignment = alignment_table(page, url)
            context.close()
        space = space_first_use(browser, Path(args.repo), Path(args.checkpoints), args.threads,
                                args.space_cold) if args.space or args.space_cold else None
        browser.close()
    def median(key: str):
        return statistics.median(v[key] for v in visitors) if visitors else None

    checks = [c for _, c, _ in runs if c is not None]
    decodes = [d for _, _, d in runs if d is not None]
    check_alone = check_work_s(Path(args.repo), Path(args.checkpoints) / "everyday-rnnsearch-en-fr",
                               long_captions(args.sentences), args.threads) if checks else None
    floor_box = statistics.median(floor_app.text_box_s) if floor_app.text_box_s else None
    overhead = (statistics.median(floor_app.ctrl_enter_s) - args.floor_run) if floor_app.ctrl_enter_s else 0.0
    decode = statistics.median(decodes) if decodes else None
    # each wait over the work it waits for, measured in this run (docs/performance.md keeps these)
    ratios = {
        "new_visitor_text_box": ratio(median("text_box"), floor_box),
        "server_start_to_first_translation": ratio(statistics.median(c["translation"] for c in cold) if cold else None,
                                                   (floor_app.launch_to_text_box_s or 0) + torch_s),
        "ctrl_enter_to_translation_shown": ratio(statistics.median(SHOWN) if SHOWN else None,
                                                 decode + overhead if decode is not None else None),
        "ctrl_enter_to_page_settled": ratio(statistics.median(checks) if checks else None,
                                            decode + check_alone + overhead if decode is not None and check_alone else None),
    }

    print(json.dumps({"repo": args.repo, "checkpoints": args.checkpoints,
                      "floor_text_box_s": floor_app.text_box_s,
                      "floor_text_box_median_s": statistics.median(floor_app.text_box_s) if floor_app.text_box_s else None,
                      "floor_launch_to_text_box_s": floor_app.launch_to_text_box_s, "import_torch_s": torch_s,
                      "floor_ctrl_enter_s": floor_app.ctrl_enter_s, "floor_run_sleeps_s": args.floor_run,
                      "floor_ctrl_enter_median_s": statistics.median(floor_app.ctrl_enter_s) if floor_app.ctrl_enter_s else None,
                      "new_visitor_on_warm_server_s": visitors,
                      "new_visitor_median_s": {k: median(k) for k in ("text_box", "translation", "chart")},
                      "tab_opened_s": tabs,
                      "tab_opened_median_s": {k: statistics.median(t[k] for t in tabs) for k in tabs[0]} if tabs else None,
                      "cold_starts_s": cold,
                      "cold_start_to_first_translation_median_s": statistics.median(c["translation"] for c in cold),
                      "cold_start_to_heatmap_median_s": statistics.median(c["heatmap"] for c in cold),
                      "ctrl_enter_to_translation_shown_s": [round(t, 2) for t in SHOWN],
                      "ctrl_enter_to_run_finished_s": [round(r, 2) for r, _, _ in runs],
                      "median_s": round(statistics.median(r for r, _, _ in runs), 2) if runs else None,
                      "decode_in_page_s": decodes,
                      "decode_in_page_median_s": statistics.median(decodes) if decodes else None,
                      "ctrl_enter_over_decode": round(statistics.median(r for r, _, _ in runs) / statistics.median(decodes), 2)
                      if decodes else None,
                      "ctrl_enter_to_faithfulness_check_s": [c if c is None else round(c, 2) for _, c, _ in runs],
                      "check_median_s": round(statistics.median(checks), 2) if checks else None,
                      "whole_words_toggle_s": [round(t, 2) for t in toggles],
                      "toggle_median_s": round(statistics.median(toggles), 2) if toggles else None,
                      "faithfulness_check_alone_median_s": check_alone,
                      "floor_overhead_around_a_run_s": round(overhead, 3),
                      "ratios": ratios,
                      "tab": args.tab, "threads": args.threads,
                      **({"alignment_table_s": alignment} if args.align_dir else {}),
                      **({"sentence_space_first_use": space} if space else {})}))


if __name__ == "__main__":
    main()
