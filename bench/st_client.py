"""A minimal Streamlit client speaking the app's own websocket protocol, for load tests.

The browser's JavaScript talks to the server in protobuf messages over one websocket
(``/_stcore/stream``): it sends ``BackMsg``s (rerun the script with these widget values, give
me upload URLs) and receives ``ForwardMsg``s (elements to draw, script finished). This client
sends the same messages, so a load test can put 30 sessions on the server without 30 Chromiums
taking the machine's cores from it. It draws nothing: it only keeps the widget ids it was
sent (to set values by the widgets' ``key=``), notes exceptions and the decode queue's
"Queued:" line, and tells when a script run has finished.
"""
from __future__ import annotations

import asyncio
import json
import urllib.request
import uuid
from http.cookies import SimpleCookie
from pathlib import Path

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.Common_pb2 import UploadedFileInfo
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

XSRF_COOKIE = "_streamlit_xsrf"
FINISHED = {ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_WITH_COMPILE_ERROR}


class StreamlitSession:
    """One user's session: ``await s.open(page)``, then ``await s.rerun(key=value)`` per action.
    ``exceptions`` counts exception elements drawn; ``queued`` tells whether the last run showed
    the "Queued:" line, ``texts`` holds its ``st.text`` outputs (where translations appear) and
    ``kinds`` the kinds of element it drew ("text", "bidi_component", ...; "chart:lines" for a
    line chart drawn on a canvas, viz/pages/parts/canvas_charts.py)."""

    def __init__(self, base_url: str):
        self.base_url, self.ws = base_url.rstrip("/"), None
        self.session_id, self.page = "", ""
        self.ids: dict[str, str] = {}  # widget key -> widget id, from the elements the server drew
        self.values: dict[str, WidgetState] = {}  # widget id -> the value this client set
        self.exceptions, self.queued, self.texts, self.kinds = 0, False, [], set()
        self._finished: asyncio.Queue = asyncio.Queue()
        self._uploads: dict[str, asyncio.Future] = {}
        self._xsrf = ""
        self.cookies: dict[str, str] = {}
        self.served_by: set[str] = set()  # the servers that answered, behind a load balancer

    def _fetch_cookies(self) -> None:
        """The cookies of the browser's first request (the health endpoint's XSRF cookie, which
        uploads must echo in a header; a load balancer's cookie naming the server), kept and sent
        with every later request as a browser does."""
        with urllib.request.urlopen(self.base_url + "/_stcore/health", timeout=60) as response:
            self._note_server(response.headers)
            cookie = SimpleCookie()
            for header in response.headers.get_all("Set-Cookie") or []:
                cookie.load(header)
        self.cookies.update({name: morsel.value for name, morsel in cookie.items()})
        self._xsrf = self.cookies.get(XSRF_COOKIE, "")

    def _cookie_header(self) -> str:
        return "; ".join(f"{name}={value}" for name, value in self.cookies.items())

    def _note_server(self, headers) -> None:
        """A load balancer's ``X-Served-By`` (deploy/haproxy.cfg): which server answered."""
        if headers.get("X-Served-By"):
            self.served_by.add(headers["X-Served-By"])

    async def open(self, page: str = "", query: str = "") -> None:
        """Connect and run the script for ``page`` (its URL path, "" for the first page) with the
        link's ``query`` string (``a=1&b=2``)."""
        self.query = query
        await asyncio.to_thread(self._fetch_cookies)
        url = self.base_url.replace("http", "ws", 1) + "/_stcore/stream"
        self.ws = await websockets.connect(url, subprotocols=["streamlit", self._xsrf or "none"],
                                           additional_headers={"Cookie": self._cookie_header()},
                                           max_size=None, open_timeout=600,
                                           ping_interval=None)  # a server busy decoding answers pings late
        self._note_server(self.ws.response.headers)
        self._reader = asyncio.create_task(self._read())
        await self.goto(page)

    async def goto(self, page: str) -> None:
        """Switch to another page, as clicking its link does; widget values start afresh."""
        self.page, self.values, self.ids = page, {}, {}
        await self.rerun()

    async def rerun(self, trigger: str = "", **values) -> None:
        """Set the widgets with these keys (str: text, bool, int or float; a list of str: a
        multiselect's or select slider's options, a list of float: a slider's values) and, with
        ``trigger``, press that button; then wait until the script run has finished."""
        for key, value in values.items():
            self.values[self.ids[key]] = self._state(self.ids[key], value)
        states = list(self.values.values())
        if trigger:
            states.append(WidgetState(id=self.ids[trigger], trigger_value=True))
        msg = BackMsg()
        msg.rerun_script.page_name = self.page
        msg.rerun_script.query_string = getattr(self, "query", "")
        msg.rerun_script.widget_states.widgets.extend(states)
        self.queued, self.texts, self.kinds = False, [], set()
        await self.ws.send(msg.SerializeToString())
        if await self._finished.get() is None:
            raise ConnectionError("the server closed the connection before the run finished")

    @staticmethod
    def _state(widget_id: str, value) -> WidgetState:
        if isinstance(value, bool):
            return WidgetState(id=widget_id, bool_value=value)
        if isinstance(value, int):
            return WidgetState(id=widget_id, int_value=value)
        if isinstance(value, float):
            return WidgetState(id=widget_id, double_value=value)
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            state = WidgetState(id=widget_id)
            state.string_array_value.data.extend(value)
            return state
        if isinstance(value, list):
            state = WidgetState(id=widget_id)
            state.double_array_value.data.extend(float(v) for v in value)
            return state
        return WidgetState(id=widget_id, string_value=value)

    async def upload(self, key: str, path: Path) -> None:
        """Upload ``path`` into the file uploader ``key``, as dropping the file on it does;
        the run that follows is awaited."""
        request_id = uuid.uuid4().hex
        answer = self._uploads[request_id] = asyncio.get_running_loop().create_future()
        msg = BackMsg()
        msg.file_urls_request.request_id = request_id
        msg.file_urls_request.session_id = self.session_id
        msg.file_urls_request.file_names.append(path.name)
        await self.ws.send(msg.SerializeToString())
        urls = (await answer).file_urls[0]
        await asyncio.to_thread(self._put, urls.upload_url, path)
        state = WidgetState(id=self.ids[key])
        state.file_uploader_state_value.uploaded_file_info.append(UploadedFileInfo(
            name=path.name, size=path.stat().st_size, file_id=urls.file_id, file_urls=urls))
        self.values[state.id] = state
        await self.rerun()

    def _put(self, upload_url: str, path: Path) -> None:
        boundary = uuid.uuid4().hex
        body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{path.name}\"\r\n"
                f"Content-Type: application/octet-stream\r\n\r\n").encode() + path.read_bytes() + \
            f"\r\n--{boundary}--\r\n".encode()
        url = upload_url if upload_url.startswith("http") else self.base_url + upload_url
        request = urllib.request.Request(url, data=body, method="PUT", headers={
            "Content-Type": f"multipart/form-data; boundary={boundary}", "X-Xsrftoken": self._xsrf,
            "Cookie": self._cookie_header()})
        with urllib.request.urlopen(request, timeout=600) as response:
            self._note_server(response.headers)
            response.read()

    async def _read(self) -> None:
        try:
            await self._read_all()
        finally:  # wake whoever waits, so a closed connection is an error, not a hang
            self._finished.put_nowait(None)
            for answer in self._uploads.values():
                answer.cancel()

    async def _read_all(self) -> None:
        async for raw in self.ws:
            msg = ForwardMsg()
            msg.ParseFromString(raw)
            kind = msg.WhichOneof("type")
            if kind == "new_session":
                self.session_id = msg.new_session.initialize.session_id
            elif kind == "delta":
                self._note(msg.delta, raw)
            elif kind == "file_urls_response":
                self._uploads.pop(msg.file_urls_response.response_id).set_result(msg.file_urls_response)
            elif kind == "script_finished" and msg.script_finished in FINISHED:
                self._finished.put_nowait(msg.script_finished)

    def _note(self, delta, raw: bytes) -> None:
        element = delta.new_element
        kind = element.WhichOneof("type")
        if kind is None:
            return
        self.exceptions += kind == "exception"
        self.kinds.add(kind)
        if kind == "bidi_component" and element.bidi_component.json:  # a chart the page's script draws
            data = json.loads(element.bidi_component.json)
            if isinstance(data, dict) and "kind" in data:
                self.kinds.add(f"chart:{data['kind']}")
        if kind == "text":
            self.texts.append(element.text.body)
        self.queued = self.queued or b"Queued:" in raw
        widget_id = getattr(getattr(element, kind), "id", "")
        if isinstance(widget_id, str) and widget_id.startswith("$$ID-"):
            self.ids[widget_id.split("-", 2)[2]] = widget_id

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
            self._reader.cancel()
