"""Slowloris against a real class server: a crowd of slow connections from one client leaves the others served.

The attack of issue 36, scripted over loopback: 1,100 connections from one
address (127.0.0.2: all of 127/8 is this machine), each sending a request
line and then a header now and then.  Another client (127.0.0.1) must still
get its answers, the server's log must stay small, and the slow connections
must be closed once their head is overdue.
"""

from __future__ import annotations

import http.client
import json
import resource
import select
import socket
import ssl
import subprocess
import sys
import time
from contextlib import closing
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from test_classroom_server import Server, call, make_class

ATTACKERS = 1100


def slow_connection(port: int) -> socket.socket:
    connection = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    connection.bind(("127.0.0.2", 0))
    connection.settimeout(10)
    connection.connect(("127.0.0.1", port))
    connection.sendall(b"GET /api/me HTTP/1.1\r\nHost: x\r\n")
    return connection


def answer_of(connection: socket.socket) -> bytes:
    """What the server wrote before closing (b"" when it closed without a word, or still nothing)."""
    connection.settimeout(0.5)
    try:
        return connection.recv(200)
    except (socket.timeout, ConnectionError):
        return b""


@pytest.mark.slow
def test_a_thousand_slow_connections_from_one_client_leave_another_client_served(tmp_path: Path) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < ATTACKERS + 200:
        pytest.skip(f"this test opens {ATTACKERS} connections; the hard limit on open files here is {hard}")
    tokens = make_class(tmp_path / "class", ["alice"], ["random"])
    # The server starts as on most machines, with a soft limit of 1024 open files (it raises its own);
    # this test then needs more than that for its crowd.
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(soft, 1024), hard))
    try:
        server = Server(tmp_path / "class")
    finally:
        crowd = 8192 if hard == resource.RLIM_INFINITY else min(hard, 8192)
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, crowd), hard))
    with closing(server):
        port = int(server.base.rsplit(":", 1)[1])
        log_before = sum(len(line) + 1 for line in server.lines)
        attackers = []
        try:
            for _ in range(ATTACKERS):
                try:
                    attackers.append(slow_connection(port))
                except OSError:
                    break  # refused outright: as good as closed
            # The crowd is in; a real student is still answered, at once.
            started = time.monotonic()
            status, body, _ = call(server.base, "/api/me", tokens["alice"])
            answered_in = time.monotonic() - started
            assert status == 200, body
            assert answered_in < 10, f"the student waited {answered_in:.1f} s behind the crowd"
            # Past the cap, the crowd's connections were answered 503 with Retry-After and closed.
            refused = [answer_of(c) for c in attackers[-50:]]
            assert all(a.startswith(b"HTTP/1.1 503") and b"Retry-After" in a for a in refused), refused[:3]
            # The ones let in keep dawdling: a header every second, until the head's deadline closes them
            # (read what the server said before writing again: a write after its close would reset the socket).
            held = attackers[:60]
            answers: dict[int, bytes] = {}
            deadline = time.monotonic() + 40
            while len(answers) < len(held) and time.monotonic() < deadline:
                readable, _, _ = select.select([c for c in held if c.fileno() not in answers], [], [], 1.0)
                for connection in readable:
                    answers[connection.fileno()] = answer_of(connection)
                for connection in held:
                    if connection.fileno() not in answers:
                        try:
                            connection.sendall(b"X-Slow: 1\r\n")
                        except OSError as exc:
                            answers[connection.fileno()] = f"{exc}".encode()
            assert len(answers) == len(held), f"{len(held) - len(answers)} slow connections still open after 40 s"
            assert all(a.startswith(b"HTTP/1.1 408") for a in answers.values()), set(answers.values())
            status, _, _ = call(server.base, "/api/me", tokens["alice"])
            assert status == 200
        finally:
            for connection in attackers:
                connection.close()
        server.stop()
        assert server.process.stdout is not None
        log_after = sum(len(line) + 1 for line in server.lines)
    # The server's own output while under attack: a few lines at most, never a line per connection.
    assert log_after - log_before < 4096


@pytest.mark.slow
def test_https_with_the_given_certificate_and_plain_http_refused(tmp_path: Path) -> None:
    """``--tls-cert``/``--tls-key``: the event loop's own TLS; the token's cookie marked Secure; plain HTTP refused."""
    certificate, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    made = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
                           "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key),
                           "-out", str(certificate)], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    tokens = make_class(tmp_path / "class", ["alice"], ["random"])
    with closing(Server(tmp_path / "class", "--tls-cert", str(certificate), "--tls-key", str(key))) as server:
        assert server.base.startswith("https://127.0.0.1:")
        trusting = ssl.create_default_context(cafile=str(certificate))
        request = urllib.request.Request(server.base + "/api/me", headers={"Authorization": f"Bearer {tokens['alice']}"})
        with urllib.request.urlopen(request, context=trusting, timeout=30) as response:
            assert response.status == 200 and json.loads(response.read())["id"] == "alice"

        class NoRedirect(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *args: object) -> None:
                return None

        opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=trusting), NoRedirect)
        try:
            opener.open(server.base + f"/?token={tokens['alice']}", timeout=30)
            raise AssertionError("the token's address should redirect")
        except urllib.error.HTTPError as redirect:
            assert redirect.code == 303
            cookie = redirect.headers["Set-Cookie"]
        assert "Secure" in cookie and "HttpOnly" in cookie
        # Plain HTTP to the TLS port: no answer an HTTP client could take for one.
        plain = "http://" + server.base.removeprefix("https://")
        with pytest.raises((urllib.error.URLError, ConnectionError, http.client.HTTPException)):
            urllib.request.urlopen(plain + "/api/me", timeout=30)
    # A certificate that does not load is named, before anything starts.
    result = subprocess.run([sys.executable, "-m", "othello_arena", "class", "serve", str(tmp_path / "class"),
                             "--port", "0", "--tls-cert", str(key), "--tls-key", str(key)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and f"--tls-cert {key}" in result.stderr and "cannot load" in result.stderr


def test_an_address_at_its_cap_is_refused_and_served_again_once_its_connections_close(tmp_path: Path) -> None:
    """The connections from an address are counted as they open and close: one past the cap is refused (503), and
    once they close the address is served again (a count that never went down would refuse it for good)."""
    from othello_arena.classroom.connections import PER_CLIENT

    tokens = make_class(tmp_path / "class", ["alice"], ["random"])
    with closing(Server(tmp_path / "class")) as server:
        port = int(server.base.rsplit(":", 1)[1])
        for _ in range(2):
            held = [slow_connection(port) for _ in range(PER_CLIENT)]
            try:
                one_more = slow_connection(port)
                assert answer_of(one_more).startswith(b"HTTP/1.1 503"), "one past the cap was let in"
                one_more.close()
                assert not any(answer_of(c) for c in held[:3])  # (the ones within it are held, not refused)
            finally:
                for connection in held:
                    connection.close()
            time.sleep(0.5)  # (the server sees them close)
            mine = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            mine.bind(("127.0.0.2", 0))
            mine.settimeout(10)
            mine.connect(("127.0.0.1", port))
            mine.sendall(b"GET /api/me HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + tokens["alice"].encode()
                         + b"\r\nConnection: close\r\n\r\n")
            assert mine.recv(100).startswith(b"HTTP/1.1 200"), "the address is refused after its connections closed"
            mine.close()
