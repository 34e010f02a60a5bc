"""The README's screenshot of the Translate page, taken in headless Chromium.

    python bench/screenshot.py [--out docs/translate.png] [--checkpoints DIR] [--width 1280] [--height 1000]
                               [--lang ar]

Starts ``streamlit run app.py --server.headless true`` on a free localhost port, opens the
landing page (the Translate page translating its first example with the default pair), waits
for both translations and the alignment heatmap, makes the window tall enough to hold the
first heatmap whole (``--height`` is the least height), and saves it as a palette PNG
(256 colours, optimised), which keeps it small enough to commit. Needs Debian's Chromium at
/usr/bin/chromium and the ``playwright`` package (``pip install -e ".[test]"``).
"""
from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from bench.common import CHECKPOINTS  # noqa: E402
from bench.page_speed import CHART, app_server, wait_idle  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]


def capture(url: str, width: int, height: int) -> bytes:
    """The page at ``url`` once it shows two translations and a heatmap and has finished its run."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            page.goto(url, wait_until="domcontentloaded")
            page.wait_for_function("() => document.querySelectorAll('[data-testid=stText]').length >= 2",
                                   timeout=180_000)
            heatmap = page.locator(CHART).first  # the Alignment tab's heatmap, drawn on a canvas
            heatmap.wait_for(timeout=180_000)
            wait_idle(page)
            box = heatmap.bounding_box()
            bottom = int(box["y"] + box["height"]) + 24 if box else height
            if bottom > height:  # make the window tall enough to hold the first heatmap whole
                page.set_viewport_size({"width": width, "height": bottom})
            page.wait_for_timeout(1500)  # Streamlit's fade-in after the run
            return page.screenshot(full_page=False)
        finally:
            browser.close()


def small_png(png: bytes) -> bytes:
    """``png`` as a 256-colour palette PNG, optimised (a screenshot of a page has few colours)."""
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    out = io.BytesIO()
    image.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(out, "PNG",
                                                                                               optimize=True)
    return out.getvalue()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python bench/screenshot.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(REPO / "docs" / "translate.png"), help="PNG to write")
    parser.add_argument("--checkpoints", default=str(CHECKPOINTS), help="folder of checkpoint folders")
    parser.add_argument("--width", type=int, default=1280, help="browser window width in pixels")
    parser.add_argument("--height", type=int, default=1000, help="least browser window height in pixels")
    parser.add_argument("--lang", default="en", help="the app's language (the URL's lang), e.g. ar")
    args = parser.parse_args(argv)
    if not Path(CHROMIUM).exists():
        print(f"error: {CHROMIUM} not found (apt-get install chromium)", file=sys.stderr)
        return 2
    with app_server(REPO, Path(args.checkpoints), 2, []) as (url, _):
        png = small_png(capture(url + (f"/?lang={args.lang}" if args.lang != "en" else ""), args.width, args.height))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(png)
    print(f"wrote {out} ({len(png) / 1024:.0f} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
