"""The load test's websocket client (bench/st_client.py) drives the real server as a browser
does: its figures are only worth something if its actions do what the user's clicks do."""
import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest

from bench.st_client import StreamlitSession

pytestmark = pytest.mark.e2e

SRC = "a dog runs in the park\nthe small cat sits\na man eats a red ball\n"
REF = "un chien court dans le parc\nle petit chat assis\nun homme mange une balle rouge\n"


def test_protocol_client_translates_uploads_and_evaluates(app_url, tmp_path):
    (tmp_path / "test.en").write_text(SRC)
    (tmp_path / "test.fr").write_text(REF)

    async def drive() -> dict:
        client, seen = StreamlitSession(app_url), {}
        try:
            await asyncio.wait_for(client.open(""), 120)
            seen["first"] = list(client.texts)
            await asyncio.wait_for(client.rerun(source="a dog runs in the park"), 120)
            seen["typed"] = list(client.texts)
            await client.goto("evaluate")
            seen["before_upload"] = "eval_run" in client.ids  # the button appears once both files are in
            await client.upload("eval_src", tmp_path / "test.en")
            await client.upload("eval_ref", tmp_path / "test.fr")
            await asyncio.wait_for(client.rerun(trigger="eval_run"), 120)
            seen["evaluated"], seen["exceptions"] = client.kinds, client.exceptions
        finally:
            await client.close()
        return seen

    with ThreadPoolExecutor(1) as pool:  # a thread of its own: Playwright's sync API keeps a loop in this one
        seen = pool.submit(lambda: asyncio.run(drive())).result()
    assert seen["first"] and seen["typed"] and seen["typed"] != seen["first"]  # the typed sentence was translated
    assert not seen["before_upload"]
    assert "chart:lines" in seen["evaluated"] and seen["exceptions"] == 0  # the length chart
