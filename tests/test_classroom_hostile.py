"""The class server against a hostile student, over real HTTP to a real ``othello class serve`` (issue 36, items 6-8).

- bad input is a 4xx with a reason, never a 500: ids past 64 bits, JSON
  nested 100,000 deep, text that does not encode as UTF-8; a little fuzzing
  (hypothesis) of paths and bodies finds no 5xx either;
- what a student may see: another's version is 404 as a missing one; a
  game's record without the other side's command line, file names and the
  server's paths; file names with control or bidi characters refused;
  terminal escapes made visible in the build log and the served stderr;
- fair shares: 4 event streams a person (429, Retry-After), 320 for the
  students together (503), the instructor's never taken by the students';
- forwarded headers believed only from ``--trusted-proxy``, whose clients
  are then capped one by one (not all under the proxy's address).
"""

from __future__ import annotations

import json
import socket
import sqlite3
import time
import urllib.parse
from pathlib import Path
from typing import Any, Iterator, Optional

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from test_classroom_server import Server, call, make_class, send_files, version_status, wait_for

from othello_arena.classroom.submit import multipart
from othello_arena.protocol import WHITE, GameRecord, Result, Termination

CROWD = [f"s{i:02d}" for i in range(17)]  # enough students to open 65 event streams at 4 a person
PAST_64_BITS = str(1 << 64)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, dict[str, str], Path]]:
    folder = tmp_path_factory.mktemp("hostile") / "class"
    tokens = make_class(folder, ["alice", "bob", "carol", "dave", *CROWD], ["greedy"], submissions_per_hour=3)
    server = Server(folder, "-j", "1")
    try:
        yield server, tokens, folder
    finally:
        server.stop()


def json_call(base: str, path: str, token: str, body: bytes) -> tuple[int, Any]:
    status, data, _ = call(base, path, token, body, "application/json")
    return status, json.loads(data)


def add_game_with_record(folder: Path) -> int:
    """A finished game whose record holds what the referee keeps of each side: its command, files and paths."""
    db = sqlite3.connect(folder / "class.sqlite")
    try:
        builds = folder / "builds"
        record = GameRecord(white="alice", black="bob", result=Result(
            WHITE, Termination.CRASH, 2, 2, f"bob could not be started: cannot start './agent': no such program "
                                            f"(in {builds}/bob/fpb)"))
        record.extra["agents"] = {
            "alice": {"colour": "W", "kind": "command", "command": ["python3", "alice_secret_agent.py", "alice"],
                      "file_name": "alice-moves", "home": f"{builds}/alice/fpa", "directory": "alice",
                      "stderr_log": "alice.stderr.log", "seconds": 1.5},
            "bob": {"colour": "B", "kind": "command", "command": ["./bob_secret_binary"], "home": f"{builds}/bob/fpb",
                    "directory": "bob", "stderr_log": "bob.stderr.log", "start_error": f"no such program (in {builds}/bob/fpb)",
                    "warnings": [f"bob's files in {builds}/bob/fpb"], "seconds": 0.0}}
        record.extra["referee"] = {"warnings": [f"wrote {folder}/games/000001"], "sandbox": True}
        pair = db.execute("INSERT INTO pairs (a, b, kind, created_at) VALUES ('alice', 'bob', 'ladder', "
                          "'2026-01-01T00:00:00+00:00')").lastrowid
        game = db.execute(
            "INSERT INTO games (pair, game_index, white, white_fp, black, black_fp, seed, status, result, winner, "
            "termination, detail, white_points, plies, record, white_stderr, black_stderr, created_at) "
            "VALUES (?, 1, 'alice', 'fpa', 'bob', 'fpb', 1, 'finished', '1-0', 'W', 'crash', ?, 1.0, 0, ?, ?, '', "
            "'2026-01-01T00:00:00+00:00')",
            (pair, record.result.detail if record.result else "", record.to_json(),
             "alice's \x1b]0;pwned\x07\x1b[2J stderr")).lastrowid
        db.commit()
        return int(game or 0)
    finally:
        db.close()


def stopped_game(folder: Path) -> Path:
    """A game the server was playing when it was killed (its row running), its agent's stderr log in its folder."""
    db = sqlite3.connect(folder / "class.sqlite")
    try:
        pair = db.execute("INSERT INTO pairs (a, b, kind, created_at) VALUES ('p00', 'greedy', 'ladder', "
                          "'2026-01-01T00:00:00+00:00')").lastrowid
        game = db.execute("INSERT INTO games (pair, game_index, white, white_version, white_fp, black, black_fp, seed, "
                          "status, created_at) VALUES (?, 1, 'p00', NULL, 'x', 'greedy', 'y', 1, 'running', "
                          "'2026-01-01T00:00:00+00:00')", (pair,)).lastrowid
        db.commit()
    finally:
        db.close()
    log = folder / "games" / f"{game:06d}" / "p00.stderr.log"
    log.parent.mkdir(parents=True)
    log.write_text("p00's \x1b]0;pwned\x07 stderr\n", encoding="utf-8")
    return log


# -- no 500 for bad input (item 6) -----------------------------------------------------


@pytest.mark.parametrize("path", [f"/api/versions/{PAST_64_BITS}", f"/api/versions/{PAST_64_BITS}/files/a.py",
                                  f"/api/games/{PAST_64_BITS}", f"/api/games/{PAST_64_BITS}/log/alice",
                                  f"/games/{PAST_64_BITS}", f"/games/{PAST_64_BITS}/view",
                                  f"/games/{PAST_64_BITS}/view/events", "/api/games/-1", "/api/versions/%D9%A1"])  # an Arabic-Indic 1: int() would take it
def test_an_id_past_64_bits_names_no_row(served: tuple[Server, dict[str, str], Path], path: str) -> None:
    server, tokens, _ = served
    status, body, _ = call(server.base, path, tokens["alice"])
    assert status == 404 and b"no such" in body.lower(), (status, body[:200])


def test_json_nested_100000_deep_is_a_400(served: tuple[Server, dict[str, str], Path]) -> None:
    server, tokens, _ = served
    for body in (b"[" * 100_000 + b"]" * 100_000,
                 b'{"command": "x", "files": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"):
        status, data = json_call(server.base, "/api/submissions", tokens["alice"], body)
        assert status == 400 and "nested too deeply" in data["error"]


@pytest.mark.parametrize("field, body", [
    ("file name", b'{"command": "python3 a.py", "files": [{"name": "a\\ud800.py", "content": "x"}]}'),
    ("content", b'{"command": "python3 a.py", "files": [{"name": "a.py", "content": "\\ud800"}]}'),
    ("command", b'{"command": "python3 a.py \\ud800", "files": [{"name": "a.py", "content": "x"}]}'),
    ("build line", b'{"command": "python3 a.py", "build": "\\udfff", "files": [{"name": "a.py", "content": "x"}]}'),
])
def test_a_lone_surrogate_is_a_400_naming_where(served: tuple[Server, dict[str, str], Path], field: str,
                                                body: bytes) -> None:
    server, tokens, _ = served
    status, data = json_call(server.base, "/api/submissions", tokens["alice"], body)
    assert status == 400 and "not text" in data["error"] and ("\\ud800" in data["error"] or "\\udfff" in data["error"])
    assert field in data["error"]


def test_the_instructors_verdict_with_a_lone_surrogate_or_nested_deep_is_a_400(
        served: tuple[Server, dict[str, str], Path]) -> None:
    server, tokens, _ = served
    for body, words in ((b'{"action": "reject", "reason": "copied \\ud800"}', "lone surrogate"),
                        (b"[" * 8000 + b"]" * 8000, "not JSON")):  # (a verdict is 16 KB at most)
        status, data = json_call(server.base, "/api/versions/1/verdict", tokens["instructor"], body)
        assert status == 400 and words in data["error"], data


def test_a_multipart_field_that_is_not_utf8_is_a_400(served: tuple[Server, dict[str, str], Path]) -> None:
    server, tokens, _ = served
    body = (b"--b\r\nContent-Disposition: form-data; name=\"command\"\r\n\r\npython3 a.py \xff\r\n"
            b"--b\r\nContent-Disposition: form-data; name=\"files\"; filename=\"a.py\"\r\n\r\nx\r\n--b--\r\n")
    status, data, _ = call(server.base, "/api/submissions", tokens["alice"], body, "multipart/form-data; boundary=b")
    assert status == 400 and "not UTF-8" in json.loads(data)["error"]


SEGMENT = st.text(max_size=24)
JSON_VALUE = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
                          lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                          max_leaves=10)
SUBMISSION = st.fixed_dictionaries({}, optional={
    "command": JSON_VALUE, "build": JSON_VALUE,
    "files": st.lists(st.fixed_dictionaries({}, optional={"name": JSON_VALUE | st.text(), "content": JSON_VALUE}),
                      max_size=3) | JSON_VALUE})


def test_fuzzed_paths_and_bodies_get_no_5xx(served: tuple[Server, dict[str, str], Path]) -> None:
    """Hypothesis sends odd path segments to every route and odd JSON to the upload: every answer is below 500."""
    server, tokens, _ = served
    routes = ["/api/versions/{}", "/api/versions/1/files/{}", "/api/games/{}", "/api/games/1/log/{}", "/games/{}",
              "/games/{}/view", "/?token={}", "/final/results/{}", "/api/{}"]

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(st.sampled_from(routes), SEGMENT, st.sampled_from(["bob", "instructor"]))
    def paths(route: str, segment: str, who: str) -> None:
        path = route.format(urllib.parse.quote(segment.encode("utf-8", "surrogatepass"), safe=""))
        status, body, _ = call(server.base, path, tokens[who])
        assert status < 500, (path, status, body[:300])

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(SUBMISSION | JSON_VALUE)
    def bodies(value: Any) -> None:
        status, body, _ = call(server.base, "/api/submissions", tokens["dave"], json.dumps(value).encode(),
                               "application/json")
        assert status < 500, (value, status, body[:300])

    paths()
    bodies()


# -- what a student may see (item 7) -----------------------------------------------------


def test_another_students_version_is_answered_as_a_missing_one(served: tuple[Server, dict[str, str], Path]) -> None:
    server, tokens, _ = served
    status, version = send_files(server.base, tokens["bob"], [("agent.py", b"print()\n")], "python3 agent.py {name}")
    assert status == 201
    mine = f"/api/versions/{version['id']}"
    assert call(server.base, mine, tokens["bob"])[0] == 200
    assert call(server.base, mine, tokens["instructor"])[0] == 200
    theirs = [call(server.base, path, tokens["alice"]) for path in (mine, mine + "/files/agent.py")]
    missing = [call(server.base, path, tokens["alice"]) for path in ("/api/versions/999999", "/api/versions/999999/files/agent.py")]
    assert [(s, b) for s, b, _ in theirs] == [(s, b) for s, b, _ in missing]  # the same status, the same words
    assert {s for s, _, _ in theirs} == {404}


@pytest.mark.parametrize("name", ["agent\x7f.py", "agent\x9b.py", "agent\u202eyp.c", "agent\u2067.py", "a\x1b[2J.py"])
def test_file_names_with_control_or_bidi_characters_are_refused(served: tuple[Server, dict[str, str], Path],
                                                                  name: str) -> None:
    server, tokens, folder = served
    body, kind = multipart({"command": "python3 agent.py {name}", "build": ""}, [(name, b"print()\n")])
    status, data, _ = call(server.base, "/api/submissions", tokens["alice"], body, kind)
    reason = json.loads(data)["error"]
    assert status == 400 and ("control character" in reason or "bidi" in reason), reason
    assert not (folder / "submissions" / "alice").exists()  # nothing of it was kept


def test_a_game_record_hides_the_other_sides_command_files_and_the_servers_paths(
        served: tuple[Server, dict[str, str], Path]) -> None:
    server, tokens, folder = served
    game = add_game_with_record(folder)
    raw = {who: call(server.base, f"/api/games/{game}", tokens[who])[1].decode() for who in ("alice", "bob", "carol", "instructor")}
    agents = {who: json.loads(text)["record"]["agents"] for who, text in raw.items()}
    # the instructor: everything as the referee wrote it
    assert agents["instructor"]["bob"]["command"] == ["./bob_secret_binary"] and str(folder) in raw["instructor"]
    # a side's owner: their own command and files; of the other side, what a replay needs (colour, time) alone
    assert agents["alice"]["alice"]["command"] == ["python3", "alice_secret_agent.py", "alice"]
    assert agents["alice"]["alice"]["file_name"] == "alice-moves"
    assert agents["alice"]["bob"] == {"colour": "B", "kind": "command", "seconds": 0.0}
    assert "bob_secret" not in raw["alice"] and "alice_secret" not in raw["bob"]
    # a student who did not play: nobody's
    assert "secret" not in raw["carol"] and set(agents["carol"]["alice"]) == {"colour", "kind", "seconds"}
    for who in ("alice", "bob", "carol"):  # no student sees the server's paths, not even of their own side
        assert str(folder) not in raw[who], who
        assert json.loads(raw[who])["detail"].endswith("no such program (in …/builds/bob/fpb)")
    # the replay and the page say the same
    for path in (f"/games/{game}/view", f"/games/{game}", f"/games/{game}/view/events", "/", "/api/me"):
        for who in ("alice", "carol"):
            status, body, _ = call(server.base, path, tokens[who])
            assert status == 200 and str(folder).encode() not in body and b"secret" not in body, (path, who)
    status, body, _ = call(server.base, f"/games/{game}/view", tokens["instructor"])
    assert status == 200 and str(folder).encode() in body  # the instructor's replay keeps the detail whole


def test_a_stderr_is_served_with_its_escapes_visible(served: tuple[Server, dict[str, str], Path]) -> None:
    server, tokens, folder = served
    game = add_game_with_record(folder)
    status, body, _ = call(server.base, f"/api/games/{game}/log/alice", tokens["instructor"])
    assert status == 200 and b"\x1b" not in body and b"\x07" not in body
    assert body == b"alice's \\x1b]0;pwned\\x07\\x1b[2J stderr"


def test_a_builds_terminal_escapes_are_made_visible_in_its_log(served: tuple[Server, dict[str, str], Path]) -> None:
    server, tokens, folder = served
    build = r"printf 'compiling\033]0;pwned\007\033[2J\r\342\200\256done\n'"
    status, version = send_files(server.base, tokens["carol"], [("agent.py", b"print()\n")], "./missing {name}", build)
    assert status == 201, version
    card = wait_for(lambda: version_status(server.base, tokens["carol"], version["id"]), 120, "carol's card")
    log = (folder / "cards" / "carol" / f"{version['fingerprint']}.build.log").read_bytes()
    assert b"compiling" in log and b"done" in log
    assert b"\x1b" not in log and b"\x07" not in log and b"\r" not in log and "\u202e".encode() not in log
    assert b"\\x1b]0;pwned\\x07\\x1b[2J\\x0d\\u202edone" in log
    assert "\x1b" not in card["card"]["build_log"] and "\\x1b]0;pwned" in card["card"]["build_log"]


# -- fair shares of event streams (item 7) ------------------------------------------------


def open_stream(base: str, token: str, source: str = "127.0.0.1", forwarded_for: Optional[str] = None,
                host: str = "127.0.0.1") -> tuple[socket.socket, bytes]:
    """An event stream held open: the socket and the answer's head (and body, for a refusal)."""
    address = urllib.parse.urlsplit(base)
    connection = socket.create_connection((address.hostname, address.port), timeout=60, source_address=(source, 0))
    extra = f"X-Forwarded-For: {forwarded_for}\r\n" if forwarded_for else ""
    connection.sendall(f"GET /api/events HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\n{extra}\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = connection.recv(65536)
        if not chunk:
            break
        head += chunk
    length = next((int(line.split(b":")[1]) for line in head.lower().split(b"\r\n") if line.startswith(b"content-length:")), 0)
    while len(head.split(b"\r\n\r\n", 1)[-1]) < length:  # a refusal: its reason whole (a stream has no length)
        chunk = connection.recv(65536)
        if not chunk:
            break
        head += chunk
    return connection, head


def test_a_student_holds_four_streams_and_never_the_instructors(served: tuple[Server, dict[str, str], Path]) -> None:
    server, tokens, _ = served
    held = [open_stream(server.base, tokens["alice"]) for _ in range(4)]
    try:
        assert all(head.startswith(b"HTTP/1.1 200") for _, head in held)
        refused, head = open_stream(server.base, tokens["alice"])
        refused.close()
        assert head.startswith(b"HTTP/1.1 429") and b"retry-after: 30" in head.lower() and b"close a page" in head
        for who in ("instructor", "bob"):  # the instructor and the other students are not held back by alice
            connection, head = open_stream(server.base, tokens[who])
            connection.close()
            assert head.startswith(b"HTTP/1.1 200"), who
    finally:
        for connection, _ in held:
            connection.close()
    # a stream closed is a stream free again
    wait_for(lambda: (lambda c: (c[0].close(), c[1].startswith(b"HTTP/1.1 200"))[1])(open_stream(server.base, tokens["alice"])),
             30, "alice's streams free again", interval=0.5)


# -- behind a reverse proxy (item 8) ---------------------------------------------------------


def test_forwarded_headers_are_ignored_without_a_trusted_proxy(served: tuple[Server, dict[str, str], Path]) -> None:
    server, tokens, _ = served
    status, _, headers = call(server.base, f"/?token={tokens['alice']}", headers={"X-Forwarded-Proto": "https"})
    assert status == 303 and "secure" not in headers.get("set-cookie", "").lower()  # uvicorn's default believed it
    status, _, _ = call(server.base, "/api/me", tokens["alice"], headers={"Host": "class.example.edu"})
    assert status == 400  # on loopback, without a proxy, the Host must name this machine


def test_behind_a_trusted_proxy_each_forwarded_client_is_capped_alone(tmp_path: Path) -> None:
    """Through one proxy address: each forwarded client held to 64, the class to 320 streams, the instructor served."""
    folder = tmp_path / "class"
    students = [f"p{i:02d}" for i in range(81)]  # 81 x 4 streams: past the class's 320
    tokens = make_class(folder, students, ["greedy"])
    stopped = stopped_game(folder)
    with_proxy = Server(folder, "-j", "1", "--trusted-proxy", "127.0.0.1")
    held: list[socket.socket] = []

    def stream(student: int, client: str, host: str = "class.example.edu", who: str = "") -> bytes:
        connection, head = open_stream(with_proxy.base, tokens[who or students[student]], forwarded_for=client, host=host)
        held.append(connection)
        return head

    try:
        assert any("believed from 127.0.0.1 only" in line for line in with_proxy.lines), with_proxy.lines
        # (a game the last stop left running is voided at start, its folder kept: its stderr log made visible)
        assert stopped.read_text(encoding="utf-8") == "p00's \\x1b]0;pwned\\x07 stderr\n"
        # One forwarded client (all its streams through the proxy's one address): 64 at once, then 503.
        heads = [stream(index // 4, "203.0.113.7") for index in range(65)]
        assert [h.split(b"\r\n", 1)[0] for h in heads[:64]] == [b"HTTP/1.1 200 OK"] * 64
        assert heads[64].startswith(b"HTTP/1.1 503") and b"retry-after: 5" in heads[64].lower(), heads[64]
        # A client that forges a first hop is still known by the hop the proxy added.
        assert stream(16, "198.51.100.1, 203.0.113.7").startswith(b"HTTP/1.1 503")
        # Other clients behind the same proxy are not held back: the class fills its 320 streams...
        for index in range(64, 320):
            head = stream(index // 4, f"203.0.113.{10 + index // 64}")
            assert head.startswith(b"HTTP/1.1 200"), (index, head)
        # ...then a student is refused, the instructor is not
        refused = stream(80, "203.0.113.99")
        assert refused.startswith(b"HTTP/1.1 503") and b"retry-after: 30" in refused.lower(), refused
        assert stream(0, "203.0.113.99", who="instructor").startswith(b"HTTP/1.1 200")
        # the proxy's X-Forwarded-Proto decides whether the cookie is Secure
        status, _, headers = call(with_proxy.base, f"/?token={tokens['p00']}", headers={"X-Forwarded-Proto": "https"})
        assert status == 303 and "secure" in headers.get("set-cookie", "").lower()
    finally:
        for connection in held:
            connection.close()
        with_proxy.stop()


def test_a_trusted_proxy_that_is_no_address_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "class"
    make_class(folder, ["alice"], ["greedy"])
    from click.testing import CliRunner

    from othello_arena.cli import cli

    result = CliRunner().invoke(cli, ["class", "serve", str(folder), "--port", "0", "--trusted-proxy", "proxy.example"])
    assert result.exit_code == 1 and "--trusted-proxy: 'proxy.example' is not an IP address" in result.output
