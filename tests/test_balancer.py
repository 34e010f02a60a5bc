"""More than one server: the load balancer's configuration (deploy/haproxy.cfg) and what the load
test's replica mode reports from the servers that answered each session."""
import shutil
import subprocess
from pathlib import Path

import pytest

from bench.load_test import BALANCER_CONFIG, balancer_config, replica_report

needs_haproxy = pytest.mark.skipif(shutil.which("haproxy") is None, reason="HAProxy is not installed")


def haproxy_check(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["haproxy", "-c", "-f", str(path)], capture_output=True, text=True, timeout=60)


@needs_haproxy
def test_the_shipped_configuration_parses():
    result = haproxy_check(BALANCER_CONFIG)
    assert result.returncode == 0, result.stdout + result.stderr


@needs_haproxy
@pytest.mark.parametrize("ports", [[8601], [8601, 8602, 8603], [8601, 8602, 8603, 8604, 8605]])
def test_a_configuration_for_n_servers_parses_and_names_each_once(tmp_path, ports):
    text = balancer_config(BALANCER_CONFIG.read_text(), 8600, ports)
    (tmp_path / "haproxy.cfg").write_text(text)
    result = haproxy_check(tmp_path / "haproxy.cfg")
    assert result.returncode == 0, result.stdout + result.stderr
    servers = [line.split() for line in text.splitlines() if line.strip().startswith("server ")]
    assert [(s[1], s[2], s[-1]) for s in servers] == [(f"app{k}", f"127.0.0.1:{p}", f"app{k}")
                                                      for k, p in enumerate(ports, 1)]
    assert "bind 127.0.0.1:8600" in text


def test_sessions_are_pinned_by_a_cookie_that_every_server_line_sets():
    """Without stickiness a session's uploads reach a process that does not hold it."""
    text = BALANCER_CONFIG.read_text()
    cookie = next(line.split()[1] for line in text.splitlines() if line.strip().startswith("cookie "))
    servers = [line.split() for line in text.splitlines() if line.strip().startswith("server ")]
    assert cookie and servers and all(s[-2] == "cookie" and s[-1] == s[1] for s in servers)
    assert "timeout tunnel" in text  # open websockets are not cut after the client timeout


@pytest.mark.parametrize("served, expected", [
    ([{"app1"}, {"app2"}, {"app1"}], {"sessions_per_server": {"app1": 2, "app2": 1}, "sessions_moved": 0,
                                      "sessions_unnamed": 0}),
    ([{"app1", "app2"}, {"app2"}], {"sessions_per_server": {"app2": 1}, "sessions_moved": 1, "sessions_unnamed": 0}),
    ([set(), {"app3"}, set()], {"sessions_per_server": {"app3": 1}, "sessions_moved": 0, "sessions_unnamed": 2}),
    ([], {"sessions_per_server": {}, "sessions_moved": 0, "sessions_unnamed": 0}),
])
def test_the_replica_report_counts_sessions_per_server_and_moves(served, expected):
    assert replica_report(served) == expected


@needs_haproxy
def test_a_dead_servers_sessions_go_to_a_live_one(tmp_path):
    """deploy/haproxy.cfg's redispatch: a browser whose cookie names a process that died is answered
    by another one, on its very next request (two stand-in servers answering the health check)."""
    import os
    import signal
    import socket
    import sys
    import time
    import urllib.request

    def free_port() -> int:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            return sock.getsockname()[1]

    (tmp_path / "_stcore").mkdir()
    (tmp_path / "_stcore" / "health").write_text("ok")
    ports = [free_port(), free_port()]
    servers = [subprocess.Popen([sys.executable, "-m", "http.server", str(p), "--bind", "127.0.0.1"], cwd=tmp_path,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for p in ports]
    front = free_port()
    (tmp_path / "haproxy.cfg").write_text(balancer_config(BALANCER_CONFIG.read_text(), front, ports))
    balancer = subprocess.Popen(["haproxy", "-db", "-f", str(tmp_path / "haproxy.cfg")], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)

    def served_by(cookie: str) -> str:
        request = urllib.request.Request(f"http://127.0.0.1:{front}/_stcore/health",
                                         headers={"Cookie": f"NMT_SERVER={cookie}"})
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.headers["X-Served-By"]

    try:
        deadline = time.monotonic() + 30
        while True:  # until both stand-ins answer through the balancer
            try:
                if {served_by("app1"), served_by("app2")} == {"app1", "app2"}:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, "the balancer did not start"
            time.sleep(0.2)
        os.kill(servers[0].pid, signal.SIGKILL)
        servers[0].wait(timeout=10)
        assert served_by("app1") == "app2"  # at once: redispatched, no error
        assert served_by("app2") == "app2"
    finally:
        balancer.terminate()
        for server in servers:
            server.kill()
        balancer.wait(timeout=20)
