"""The class server as its people use it: a real `othello class serve` process, real HTTP, real sandboxed checks.

The fast test drives the API's rules (who reads what, what uploads get) on a
class whose games are written into its database; the slow one is the
issue's whole story: four students and an instructor, the ladder, a SIGKILL.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
import zipfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Optional

import pytest

from othello_arena.classroom.submit import multipart
from othello_arena.protocol import WHITE, GameRecord, Result, Termination
from othello_arena.referee.fingerprint import fingerprint

EXAMPLES = Path(__file__).resolve().parent.parent / "agents" / "examples"
ADDRESS = re.compile(r" at (http://\S+/)$")


# -- helpers -------------------------------------------------------------------------


def make_class(folder: Path, students: list[str], references: list[str], **settings: Any) -> dict[str, str]:
    """``othello class init`` for ``students``; class.toml edited; return every token by id (and 'instructor')."""
    roster = folder.parent / f"{folder.name}-roster.csv"
    roster.write_text("id,name\n" + "".join(f"{s},{s.title()}\n" for s in students), encoding="utf-8")
    subprocess.run([sys.executable, "-m", "othello_arena", "class", "init", str(folder), "--roster", str(roster),
                    "--time", str(settings.pop("time", 0.3))], check=True, capture_output=True)
    text = (folder / "class.toml").read_text(encoding="utf-8")
    text = re.sub(r"^references = .*$", "references = " + json.dumps(references), text, flags=re.M)
    for key, value in settings.items():
        text = re.sub(rf"^{key} = [^#\n]*", f"{key} = {json.dumps(value)}  ", text, flags=re.M)
    (folder / "class.toml").write_text(text, encoding="utf-8")
    with open(folder / "tokens.csv", encoding="utf-8") as handle:
        tokens = {row["id"]: row["token"] for row in csv.DictReader(handle)}
    tokens["instructor"] = (folder / "instructor.token").read_text().strip()
    return tokens


class Server:
    def __init__(self, folder: Path, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "othello_arena", "class", "serve", str(folder), "--port", "0", *args],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
        self.lines: list[str] = []
        self.base = ""
        assert self.process.stdout is not None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                break
            self.lines.append(line.rstrip("\n"))
            found = ADDRESS.search(line.rstrip("\n"))
            if found and not self.base:
                self.base = found.group(1).rstrip("/")
            if "Ctrl-C stops it" in line:
                break
        assert self.base, "the server printed no address:\n" + "\n".join(self.lines)

    def kill(self) -> None:
        """SIGKILL the server alone (its agents die with it: bwrap's --die-with-parent)."""
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


@contextmanager
def serving(folder: Path, *args: str) -> Iterator[Server]:
    server = Server(folder, *args)
    try:
        yield server
    finally:
        server.stop()


def call(base: str, path: str, token: Optional[str] = None, body: Optional[bytes] = None,
         content_type: str = "", headers: Optional[dict[str, str]] = None) -> tuple[int, bytes, Any]:
    """One HTTP request; return (status, body, headers), never raising for a 4xx."""
    sent = dict(headers or {})
    if token:
        sent["Authorization"] = f"Bearer {token}"
    if content_type:
        sent["Content-Type"] = content_type
    request = urllib.request.Request(base + path, data=body, headers=sent, method="POST" if body is not None else "GET")

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any) -> None:
            return None

    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(request, timeout=60) as response:
            return response.status, response.read(), response.headers
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), exc.headers


def get_json(base: str, path: str, token: Optional[str]) -> Any:
    status, body, _ = call(base, path, token)
    assert status == 200, (path, status, body)
    return json.loads(body)


def send_files(base: str, token: str, files: list[tuple[str, bytes]], command: str, build: str = "") -> tuple[int, Any]:
    body, kind = multipart({"command": command, "build": build}, files)
    status, data, _ = call(base, "/api/submissions", token, body, kind)
    return status, json.loads(data)


def wait_for(condition: Any, seconds: float, what: str, interval: float = 1.0) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(interval)
    raise AssertionError(f"not within {seconds:g} s: {what}")


def zipped(*entries: tuple[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in entries:
            archive.writestr(name, data)
    return buffer.getvalue()


def version_status(base: str, token: str, version: int) -> Optional[dict[str, Any]]:
    data = get_json(base, f"/api/versions/{version}", token)
    return data if data["status"] != "checking" else None


def every_path(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}


# -- the API's rules, fast ------------------------------------------------------------


def add_finished_game(folder: Path, white: str, black: str, white_stderr: str, black_stderr: str) -> int:
    """A finished game as the ladder would have kept it (the server reads the database as it finds it)."""
    db = sqlite3.connect(folder / "class.sqlite")
    try:
        pair = db.execute("INSERT INTO pairs (a, b, kind, created_at) VALUES (?, ?, 'ladder', '2026-01-01T00:00:00+00:00')",
                          (white, black)).lastrowid
        record = GameRecord(white=white, black=black, result=Result(WHITE, Termination.CRASH, 2, 2, f"{black} crashed"))
        game = db.execute(
            "INSERT INTO games (pair, game_index, white, white_fp, black, black_fp, seed, status, result, winner, "
            "termination, white_points, plies, record, white_stderr, black_stderr, created_at) "
            "VALUES (?, 1, ?, 'x', ?, 'y', 1, 'finished', '1-0', 'W', 'crash', 1.0, 0, ?, ?, ?, '2026-01-01T00:00:00+00:00')",
            (pair, white, black, record.to_json(), white_stderr, black_stderr)).lastrowid
        db.commit()
        return int(game or 0)
    finally:
        db.close()


def test_who_reads_what_and_what_uploads_get(tmp_path: Path) -> None:
    folder = tmp_path / "class"
    tokens = make_class(folder, ["alice", "bob"], ["greedy"], submissions_per_hour=3, max_upload_bytes=200_000)
    game = add_finished_game(folder, "alice", "bob", "alice's secret traceback", "bob's secret traceback")
    with serving(folder, "-j", "1") as server:
        base = server.base
        assert any(f"?token={tokens['instructor']}" in line for line in server.lines)  # the instructor's address
        # no token, or an unknown one: 401 everywhere
        for path in ("/api/me", "/api/standings", f"/api/games/{game}", f"/api/games/{game}/log/alice",
                     "/api/export.csv", "/api/class"):
            assert call(base, path)[0] == 401, path
            assert call(base, path, "not-a-token")[0] == 401, path
        me = get_json(base, "/api/me", tokens["alice"])
        assert me["id"] == "alice" and me["versions"] == []

        # a zip with ../ is refused, and nothing is written anywhere
        before = every_path(tmp_path)
        status, data = send_files(base, tokens["alice"],
                                  [("agent.zip", zipped(("agent.py", b"print()"), ("../../evil.py", b"x")))],
                                  "python3 agent.py {name}")
        assert status == 400 and "'..'" in data["error"]
        assert every_path(tmp_path) - before <= {"class/submissions/.incoming"}
        # a body over the cap is refused before it is read whole
        status, body, _ = call(base, "/api/submissions", tokens["alice"], b"x" * 400_000, "multipart/form-data; boundary=x")
        assert status == 413
        # a version whose program does not exist: stored, fingerprinted, checked and rejected with the reason
        files = [("agent.py", b"print('hello')\n"), ("lib/util.py", b"X = 1\n")]
        status, version = send_files(base, tokens["alice"], files, "./missing {name}")
        assert status == 201 and version["status"] == "checking" and version["new"]
        stored = folder / "submissions" / "alice" / version["fingerprint"]
        assert version["fingerprint"] == fingerprint(stored, "./missing {name}", "")
        assert (stored / "lib" / "util.py").read_bytes() == b"X = 1\n"
        status, again = send_files(base, tokens["alice"], files, "./missing {name}")
        assert status == 200 and not again["new"] and again["version"] == version["version"]
        card = wait_for(lambda: version_status(base, tokens["alice"], version["version"]), 120, "the card")
        assert card["status"] == "rejected" and "no program" in card["reason"]
        # the version and its code: its owner and the instructor; another student 403
        assert call(base, f"/api/versions/{version['version']}", tokens["bob"])[0] == 403
        assert call(base, f"/api/versions/{version['version']}", tokens["instructor"])[0] == 200
        code = f"/api/versions/{version['version']}/files/lib/util.py"
        assert call(base, code, tokens["alice"])[1] == b"X = 1\n"
        assert call(base, code, tokens["instructor"])[0] == 200
        assert call(base, code, tokens["bob"])[0] == 403
        assert call(base, f"/api/versions/{version['version']}/files/../../../class.toml", tokens["alice"])[0] == 404

        # a game's record for everybody in the class, never anybody's stderr
        for who in ("alice", "bob", "instructor"):
            status, body, _ = call(base, f"/api/games/{game}", tokens[who])
            assert status == 200 and b"secret" not in body
            assert json.loads(body)["record"]["result"]["reason"] == "crash"
        # a player's stderr: 200 for its owner and the instructor, 403 for another student
        assert call(base, f"/api/games/{game}/log/alice", tokens["alice"])[1] == b"alice's secret traceback"
        assert call(base, f"/api/games/{game}/log/alice", tokens["instructor"])[1] == b"alice's secret traceback"
        assert call(base, f"/api/games/{game}/log/alice", tokens["bob"])[0] == 403
        assert call(base, f"/api/games/{game}/log/bob", tokens["alice"])[0] == 403
        assert call(base, f"/api/games/{game}/log/nobody", tokens["instructor"])[0] == 404
        # the grade sheet and the class view: the instructor's alone
        assert call(base, "/api/export.csv", tokens["alice"])[0] == 403
        assert call(base, "/api/class", tokens["bob"])[0] == 403
        status, sheet, _ = call(base, "/api/export.csv", tokens["instructor"])
        assert status == 200 and sheet.decode().splitlines()[0].startswith("id,name,fingerprint,submitted_at,status,games")
        view = get_json(base, "/api/class", tokens["instructor"])
        assert {s["id"] for s in view["students"]} == {"alice", "bob"}
        assert view["students"][0]["versions"][0]["card"]["status"] == "rejected"
        standings = get_json(base, "/api/standings", tokens["bob"])
        assert "duplicate_of" not in json.dumps(standings) and "secret" not in json.dumps(standings)
        # the rate limit: three versions an hour here (the first was the one above)
        statuses = [send_files(base, tokens["alice"], [("agent.py", f"print({i})".encode())], "./missing")[0]
                    for i in range(3)]
        assert statuses == [201, 201, 429]
        # the address with ?token= sets an HttpOnly, SameSite=Strict cookie and leaves the address bar
        status, _, headers = call(base, f"/?token={tokens['bob']}")
        cookie = headers.get("set-cookie", "")
        assert status == 303 and "httponly" in cookie.lower() and "samesite=strict" in cookie.lower()
        status, body, _ = call(base, "/api/me", headers={"Cookie": cookie.split(";")[0]})
        assert status == 200 and json.loads(body)["id"] == "bob"
    # nothing of the class folder was ever served as a file, and no token is in the database
    database = (folder / "class.sqlite").read_bytes()
    assert all(token.encode() not in database for token in tokens.values())
