"""The live pages of a class: a stream says which parts of its page changed, and only when they did.

A real ``othello class serve`` on loopback, its real SQLite written by a
second connection as the ladder's games would be, real event streams read
off a socket, and the student's page in a real Chromium: a game of alice's
moves her games (and her page fetches that part alone, not the page), and
nothing of carol's; no stream carries another student's data.
"""

from __future__ import annotations

import json
import socket
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from test_classroom_pages import add_version
from test_classroom_server import call, make_class, serving
from web_helpers import browser  # noqa: F401 - a fixture

from othello_arena.classroom.grades import StudentLine
from othello_arena.classroom.live import STUDENT_PAGE, Kept, mark_of, own_line, parts_of, shown_line
from othello_arena.protocol import WHITE, GameRecord, Result, Termination

CARD = {"status": "admitted", "reason": "", "check": [], "items": [], "stderr": ""}
WAIT = 120.0  # seconds a stream may take to say something on a shared machine (a limit, never a pace)
SECRET = "alice-secret-stderr"


def add_game(folder: Path, white: str, white_version: int, black: str, black_version: int) -> int:
    """A finished game between two students' versions, as the ladder keeps one (written by another connection)."""
    db = sqlite3.connect(folder / "class.sqlite")
    try:
        pair = db.execute("INSERT INTO pairs (a, b, kind, created_at) VALUES (?, ?, 'ladder', "
                          "'2026-01-01T00:00:00+00:00')", (white, black)).lastrowid
        record = GameRecord(white=white, black=black, result=Result(WHITE, Termination.NORMAL, 40, 24))
        game = db.execute(
            "INSERT INTO games (pair, game_index, white, white_version, white_fp, black, black_version, black_fp, "
            "seed, status, result, winner, termination, white_points, plies, record, white_stderr, black_stderr, "
            "created_at, finished_at) VALUES (?, 1, ?, ?, 'x', ?, ?, 'y', 1, 'finished', '1-0', 'W', 'normal', 1.0, "
            "60, ?, ?, '', '2026-01-01T00:00:00+00:00', '2026-01-01T00:00:01+00:00')",
            (pair, white, white_version, black, black_version, record.to_json(), SECRET)).lastrowid
        db.commit()
        return int(game or 0)
    finally:
        db.close()


class Events:
    """One ``/api/events`` stream held open on a socket: its messages in order."""

    def __init__(self, base: str, token: str, parts: str = "") -> None:
        host, port = base.removeprefix("http://").rsplit(":", 1)
        self.socket = socket.create_connection((host, int(port)), timeout=WAIT)
        path = "/api/events" + (f"?parts={parts}" if parts else "")
        self.socket.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer {token}\r\n\r\n".encode())
        self.reader = self.socket.makefile("rb")
        self.status = int(self.reader.readline().split()[1])
        while self.reader.readline() not in (b"\r\n", b""):
            pass
        self.texts: list[str] = []

    def next(self) -> dict[str, Any]:
        """The next message (comments and the chunked encoding's lengths passed over)."""
        while True:
            line = self.reader.readline()
            assert line, "the stream ended"
            if line.startswith(b"data: "):
                self.texts.append(line[6:].decode())
                return dict(json.loads(line[6:]))

    def close(self) -> None:
        self.reader.close()
        self.socket.close()


def test_a_stream_speaks_only_of_what_its_page_shows_and_its_page_fetches_those_parts_alone(tmp_path: Path) -> None:
    folder = tmp_path / "class"
    tokens = make_class(folder, ["alice", "bob", "carol"], [])  # no reference, one admitted version: no ladder game
    alice = add_version(folder, "alice", "admitted", CARD)
    bob = add_version(folder, "bob", "rejected", {**CARD, "status": "rejected", "reason": "no"})
    carol = add_version(folder, "carol", "rejected", {**CARD, "status": "rejected", "reason": "no"})
    with serving(folder, "-j", "1") as server:
        base = server.base
        # wrong parts: refused, naming them; a student never follows the dashboard
        status, body, _ = call(base, "/api/events?parts=games,dashboard", tokens["alice"])
        assert status == 400 and "'dashboard'" in body.decode() and "standing" in body.decode()
        assert call(base, "/parts?names=dashboard", tokens["alice"])[0] == 400
        assert call(base, "/parts?names=standing", tokens["instructor"])[0] == 400
        assert call(base, "/parts?names=games", None)[0] == 401

        alices = Events(base, tokens["alice"])  # her page's parts
        carols = Events(base, tokens["carol"], "versions,games")
        assert alices.status == carols.status == 200
        first = alices.next()
        assert first["id"] == "alice" and list(first["parts"]) == list(STUDENT_PAGE)
        carol_first = carols.next()["parts"]
        assert list(carol_first) == ["versions", "games"]

        # a game of alice's against bob: alice's stream says her games moved, and not her versions
        game = add_game(folder, "alice", alice, "bob", bob)
        moved = alices.next()["parts"]
        assert moved["games"] != first["parts"]["games"] and moved["versions"] == first["parts"]["versions"]
        # her page's part, fetched alone, is the game's row at that mark (her stderr linked, never inlined)
        status, body, _ = call(base, "/parts?names=games", tokens["alice"])
        games = json.loads(body)["parts"]["games"]
        assert status == 200 and list(json.loads(body)["parts"]) == ["games"]
        assert f'data-game="{game}"' in games and f'data-mark="{moved["games"]}"' in games
        assert f"/api/games/{game}/log/alice" in games and SECRET not in games
        # /api/me, made once per change and kept, is of the class as it is now: it lists the game
        status, body, _ = call(base, "/api/me", tokens["alice"])
        assert status == 200 and game in [row["id"] for row in json.loads(body)["games"]]

        # then a game of carol's: her next message is that one, so the game of alice's sent her none
        add_game(folder, "bob", bob, "carol", carol)
        told = carols.next()["parts"]
        assert told["games"] != carol_first["games"] and told["versions"] == carol_first["versions"]
        # carol's stream and parts carry nothing of alice's: marks of her own parts only
        assert all("alice" not in text and SECRET not in text for text in carols.texts)
        status, body, _ = call(base, "/parts?names=games,class-games,standing", tokens["carol"])
        parts = json.loads(body)["parts"]
        assert f'data-game="{game}"' in parts["class-games"]  # the class's games are everybody's to see
        assert SECRET not in body.decode() and "/log/alice" not in body.decode()

        # carol's version decided again (a re-check's verdict): her versions move, and her page shows it
        assert [version["reason"] for version in json.loads(call(base, "/api/me", tokens["carol"])[1])["versions"]] == ["no"]
        db = sqlite3.connect(folder / "class.sqlite")
        db.execute("UPDATE versions SET reason = 'carol-newer', decided_at = '2026-01-02T00:00:00+00:00' WHERE id = ?",
                   (carol,))
        db.commit()
        db.close()
        told_again = carols.next()["parts"]
        assert told_again["versions"] != told["versions"] and told_again["games"] == told["games"]
        status, body, _ = call(base, "/parts?names=versions", tokens["carol"])
        assert f'id="version-{carol}"' in json.loads(body)["parts"]["versions"] and "carol-newer" in body.decode()
        assert "carol-newer" not in call(base, "/parts?names=versions", tokens["alice"])[1].decode()
        status, body, _ = call(base, "/api/me", tokens["carol"])
        assert [version["reason"] for version in json.loads(body)["versions"]] == ["carol-newer"]

        # the whole page holds the same parts with their marks (what the page's script compares)
        status, body, _ = call(base, "/", tokens["carol"])
        for name in STUDENT_PAGE:
            assert f'data-part="{name}"' in body.decode()
        assert f'data-mark="{told_again["versions"]}"' in body.decode()
        alices.close()
        carols.close()


def test_the_marks_move_with_what_a_page_prints() -> None:
    line = StudentLine("alice", "Alice", status="admitted", number=1, fingerprint="f" * 64, games=10, score=6.0,
                       rating=1512.2, rating_error=40.3, rank=3)
    same = StudentLine("alice", "Alice", status="admitted", number=1, fingerprint="f" * 64, games=10, score=6.0,
                       rating=1511.9, rating_error=39.8, rank=3)  # printed 1512 ± 40 too
    assert mark_of(shown_line(line)) == mark_of(shown_line(same))
    for changed in ({"rating": 1512.6}, {"rank": 2}, {"games": 11}, {"rating_error": 41.0}):
        other = StudentLine(**{**line.__dict__, **changed})
        assert mark_of(shown_line(other)) != mark_of(shown_line(line)), changed
    # a rank or a rating moved by others' games is held back; the line's own games are passed on at once
    assert mark_of(own_line(StudentLine(**{**line.__dict__, "rank": 2, "rating": 1530.0}))) == mark_of(own_line(line))
    assert mark_of(own_line(StudentLine(**{**line.__dict__, "games": 11}))) != mark_of(own_line(line))
    assert parts_of("alice", "") == STUDENT_PAGE and parts_of("alice", "games, games,standings") == ("games", "standings")
    with pytest.raises(ValueError, match="'dashboard'"):
        parts_of("alice", "dashboard")
    assert parts_of("instructor", "") == ("dashboard",)


def test_a_part_is_drawn_once_per_mark() -> None:
    drawn: list[str] = []
    kept: Kept[str] = Kept(2)

    def draw(text: str) -> Any:
        return lambda: (drawn.append(text), text)[1]

    assert kept.get(("alice", "games"), "m1", draw("one")) == "one"
    assert kept.get(("alice", "games"), "m1", draw("two")) == "one"  # the same mark: kept
    assert kept.get(("alice", "games"), "m2", draw("three")) == "three"  # moved: drawn again
    kept.get(("bob", "games"), "m1", draw("b"))
    kept.get(("carol", "games"), "m1", draw("c"))  # past its size: alice's, the least recently used, dropped
    assert kept.get(("alice", "games"), "m2", draw("four")) == "four"
    assert drawn == ["one", "three", "b", "c", "four"]


@pytest.mark.slow
def test_the_page_fetches_the_part_that_moved_and_not_itself(tmp_path: Path, browser: Any) -> None:  # noqa: F811
    folder = tmp_path / "class"
    tokens = make_class(folder, ["alice", "bob"], [])
    alice = add_version(folder, "alice", "admitted", CARD)
    bob = add_version(folder, "bob", "rejected", {**CARD, "status": "rejected", "reason": "no"})
    with serving(folder, "-j", "1") as server:
        base = server.base
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        context.set_default_timeout(WAIT * 1000)
        tab = context.new_page()
        asked: list[str] = []
        tab.on("request", lambda request: asked.append(request.url.removeprefix(base)))
        with tab.expect_request(lambda request: "/api/events" in request.url) as opened:
            tab.goto(f"{base}/?token={tokens['alice']}")
        assert opened.value.url == base + "/api/events?parts=" + ",".join(STUDENT_PAGE)
        tab.wait_for_selector("#games[data-mark]")
        tab.evaluate("() => { window.stillThisPage = true; }")
        tab.fill("#paste", "half-typed program")  # a form being filled is no part: never wiped
        versions_before = tab.inner_html("#versions")
        asked.clear()

        game = add_game(folder, "alice", alice, "bob", bob)
        tab.wait_for_selector(f"#my-games tr[data-game='{game}']")
        assert tab.evaluate("() => window.stillThisPage") is True
        assert "/" not in asked and "/standings" not in asked  # no page fetched again: only its parts
        fetched = [url for url in asked if url.startswith("/parts?names=")]
        assert fetched and all("versions" not in url for url in fetched), asked
        assert any("games" in url for url in fetched)
        assert tab.input_value("#paste") == "half-typed program" and tab.inner_html("#versions") == versions_before
        mark = tab.get_attribute("#games", "data-mark")
        status, body, _ = call(base, "/parts?names=games", tokens["alice"])
        assert f'data-mark="{mark}"' in json.loads(body)["parts"]["games"]  # the page holds the part's latest mark
        context.close()
