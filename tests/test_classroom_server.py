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

from classroom_helpers import make_class

from othello_arena.classroom.submit import multipart
from othello_arena.protocol import WHITE, GameRecord, Result, Termination
from othello_arena.referee.fingerprint import fingerprint

EXAMPLES = Path(__file__).resolve().parent.parent / "agents" / "examples"
ADDRESS = re.compile(r" at (https?://\S+/)$")


# -- helpers -------------------------------------------------------------------------


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
        if self.process.stdout is not None:
            self.process.stdout.close()

    def close(self) -> None:
        self.stop()

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        if self.process.stdout is not None and not self.process.stdout.closed:
            self.lines += self.process.stdout.read().splitlines()  # all it said after its start, for the tests to read
            self.process.stdout.close()


@contextmanager
def serving(folder: Path, *args: str) -> Iterator[Server]:
    server = Server(folder, *args)
    try:
        yield server
    finally:
        server.stop()


def call(base: str, path: str, token: Optional[str] = None, body: Optional[bytes] = None,
         content_type: str = "", headers: Optional[dict[str, str]] = None,
         first_line: bool = False) -> tuple[int, bytes, Any]:
    """One HTTP request; return (status, body, headers), never raising for a 4xx; ``first_line``: read no more."""
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
            return response.status, response.readline() if first_line else response.read(), response.headers
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
    # bob's version was being checked when the server died: it is checked again at start
    (folder / "submissions" / "bob" / "f1").mkdir(parents=True)
    (folder / "submissions" / "bob" / "f1" / "bob.py").write_text("print()\n")
    db = sqlite3.connect(folder / "class.sqlite")
    db.execute("INSERT INTO versions (student, fingerprint, command, files, bytes, submitted_at, status) "
               "VALUES ('bob', 'f1', './gone', '[]', 0, '2026-01-01T00:00:00+00:00', 'checking')")
    db.commit()
    db.close()
    with serving(folder, "-j", "1") as server:
        base = server.base
        assert any(f"?token={tokens['instructor']}" in line for line in server.lines)  # the instructor's address
        assert any("1 versions are checked again" in line for line in server.lines), server.lines
        second = subprocess.run([sys.executable, "-m", "othello_arena", "class", "serve", str(folder), "--port", "0"],
                                capture_output=True, text=True, timeout=120)
        assert second.returncode == 1 and "another othello class serve runs" in second.stderr
        rechecked = wait_for(lambda: version_status(base, tokens["bob"], 1), 120, "bob's card after the restart")
        assert rechecked["status"] == "rejected" and "no program" in rechecked["reason"]
        # server-sent events: the marks of the parts of the student's page, as they change (test_classroom_live.py)
        status, first, _ = call(base, "/api/events", tokens["bob"], headers={"Accept": "text/event-stream"}, first_line=True)
        assert status == 200 and first.startswith(b"retry: ")
        # no token, or an unknown one: 401 everywhere
        for path in ("/api/me", "/api/standings", f"/api/games/{game}", f"/api/games/{game}/log/alice",
                     "/api/export.csv", "/api/class"):
            assert call(base, path)[0] == 401, path
            assert call(base, path, "not-a-token")[0] == 401, path
        me = get_json(base, "/api/me", tokens["alice"])
        assert me["id"] == "alice" and me["versions"] == []
        assert call(base, "/api/me", tokens["alice"], headers={"Host": "evil.example"})[0] == 400  # no DNS rebinding

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
        # a command naming a program the upload lacks, with no build line to make it: refused at once, naming it
        files = [("agent.py", b"print('hello')\n"), ("lib/util.py", b"X = 1\n")]
        status, data = send_files(base, tokens["alice"], files, "./missing {name}")
        assert status == 400 and "the command runs missing, which is not among the files sent" in data["error"]
        # ... and with a build line that might have made it: stored, fingerprinted, checked and rejected
        status, version = send_files(base, tokens["alice"], files, "./missing {name}", "true")
        # alice's first version, though the class's second row (bob's came first): its number is hers
        assert status == 201 and version["status"] == "checking" and version["new"]
        assert (version["version"], version["id"]) == (1, 2)
        stored = folder / "submissions" / "alice" / version["fingerprint"]
        assert version["fingerprint"] == fingerprint(stored, "./missing {name}", "true")
        assert (stored / "lib" / "util.py").read_bytes() == b"X = 1\n"
        status, again = send_files(base, tokens["alice"], files, "./missing {name}", "true")
        assert status == 200 and not again["new"] and again["id"] == version["id"] and again["version"] == 1
        card = wait_for(lambda: version_status(base, tokens["alice"], version["id"]), 120, "the card")
        assert card["status"] == "rejected" and "no program" in card["reason"]
        assert card["card"]["version"] == 1 and card["card"]["id"] == version["id"]
        # the version and its code: its owner and the instructor; another student 404, as for no version at all
        assert call(base, f"/api/versions/{version['id']}", tokens["bob"])[0] == 404
        assert call(base, f"/api/versions/{version['id']}", tokens["instructor"])[0] == 200
        code = f"/api/versions/{version['id']}/files/lib/util.py"
        assert call(base, code, tokens["alice"])[1] == b"X = 1\n"
        assert call(base, code, tokens["instructor"])[0] == 200
        assert call(base, code, tokens["bob"])[0] == 404
        assert call(base, f"/api/versions/{version['id']}/files/../../../class.toml", tokens["alice"])[0] == 404

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
        assert status == 200 and sheet.decode("utf-8-sig").splitlines()[0].startswith(
            "id,name,version,fingerprint,submitted_at,status,games")
        view = get_json(base, "/api/class", tokens["instructor"])
        assert {s["id"] for s in view["students"]} == {"alice", "bob"}
        assert view["students"][0]["versions"][0]["card"]["status"] == "rejected"
        standings = get_json(base, "/api/standings", tokens["bob"])
        assert "duplicate_of" not in json.dumps(standings) and "secret" not in json.dumps(standings)
        # the rate limit: three versions an hour here (the first was the one above)
        statuses = [send_files(base, tokens["alice"], [("agent.py", f"print({i})".encode())], "./missing", "true")[0]
                    for i in range(3)]
        assert statuses == [201, 201, 429]
        # the address with ?token= sets an HttpOnly, SameSite=Strict cookie and leaves the address bar
        status, _, headers = call(base, f"/?token={tokens['bob']}")
        cookie = headers.get("set-cookie", "")
        assert status == 303 and "httponly" in cookie.lower() and "samesite=strict" in cookie.lower()
        status, body, _ = call(base, "/api/me", headers={"Cookie": cookie.split(";")[0]})
        assert status == 200 and json.loads(body)["id"] == "bob"
        # the starters as templates; the final's button is the instructor's
        starters = get_json(base, "/api/starters", tokens["bob"])["starters"]
        assert len(starters) == 8 and starters[0]["command"] == "clock:openings:python3 starter.py {name}"
        assert "starter.py" in starters[0]["files"]
        assert call(base, "/api/final", tokens["bob"], body=b"")[0] == 403
        assert call(base, "/api/final", tokens["instructor"], body=b"")[0] == 202
        final = wait_for(lambda: (lambda s: s if not s["running"] else None)(get_json(base, "/api/final", tokens["instructor"])),
                         120, "the final's end")
        assert final["exit"] == 1 and "two players" in final["log"]  # nobody has an admitted version
    # nothing of the class folder was ever served as a file, and no token is in the database
    database = (folder / "class.sqlite").read_bytes()
    assert all(token.encode() not in database for token in tokens.values())


# -- the story, slow ------------------------------------------------------------


def games_by_status(folder: Path) -> dict[str, list[tuple[int, Optional[str]]]]:
    db = sqlite3.connect(folder / "class.sqlite")
    try:
        found: dict[str, list[tuple[int, Optional[str]]]] = {}
        for game_id, status, result in db.execute("SELECT id, status, result FROM games ORDER BY id"):
            found.setdefault(status, []).append((game_id, result))
        return found
    finally:
        db.close()


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "othello_arena", "class", *args], capture_output=True, text=True,
                          timeout=900)


@pytest.mark.slow
def test_four_students_and_an_instructor(tmp_path: Path) -> None:
    folder = tmp_path / "class"
    tokens = make_class(folder, ["alice", "bob", "carol", "dave"], ["random", "greedy"], time=0.25,
                        pairs_per_opponent=1)
    work = tmp_path / "students"
    for student in ("alice", "bob", "carol"):
        (work / student).mkdir(parents=True)
    starter = (EXAMPLES / "starter.py").read_bytes()
    (work / "alice" / "starter.py").write_bytes(starter)
    (work / "carol" / "starter.py").write_bytes(starter)  # carol sends alice's program as her own
    (work / "bob" / "agent.c").write_text("int main(void) { return missing_function(; }\n", encoding="utf-8")
    server = Server(folder, "-j", "2")
    try:
        base = server.base
        # alice from her terminal: the fingerprint printed at once
        sent = run_cli("submit", base, "--token", tokens["alice"], "--command", "openings:python3 starter.py {name}",
                       str(work / "alice"))
        assert sent.returncode == 0, sent.stdout + sent.stderr
        alice_print = sent.stdout.split()[0]
        assert alice_print == fingerprint(folder / "submissions" / "alice" / alice_print, "python3 starter.py {name}")
        # bob's C does not compile: --wait prints the card with the compiler's error, exit 1
        bob = subprocess.Popen([sys.executable, "-m", "othello_arena", "class", "submit", base, "--token", tokens["bob"],
                                "--command", "./agent {name}", "--build", "gcc -O2 -o agent agent.c", "--wait",
                                str(work / "bob" / "agent.c")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        status, carol = send_files(base, tokens["carol"], [("starter.py", starter)], "openings:python3 starter.py {name}")
        assert status == 201 and carol["fingerprint"] == alice_print
        # dave's first zip climbs out of its folder: refused, nothing written outside
        before = every_path(tmp_path)
        status, refused = send_files(base, tokens["dave"], [("dave.zip", zipped(("greedy.c", b"x"), ("../x/../../pwned", b"x")))],
                                     "./greedy {name}")
        assert status == 400 and ".." in refused["error"]
        assert not any("pwned" in path for path in every_path(tmp_path) - before)
        status, dave = send_files(base, tokens["dave"], [("dave.zip", zipped(("greedy/greedy.c", (EXAMPLES / "greedy.c").read_bytes())))],
                                  "openings:./greedy {name}", "gcc -O2 -o greedy greedy.c")
        assert status == 201, dave
        out, err = bob.communicate(timeout=900)
        assert bob.returncode == 1, out + err
        assert "REJECTED" in out and "the build failed" in out and "missing_function" in out and "error" in out
        for who, version in (("carol", carol), ("dave", dave)):
            card = wait_for(lambda: version_status(base, tokens[who], version["id"]), 900, f"{who}'s card")
            assert card["status"] == "admitted", card
        me = get_json(base, "/api/me", tokens["alice"])
        assert me["versions"][0]["status"] == "admitted" and me["versions"][0]["card"]["status"] == "admitted"

        # the ladder: games within minutes, each naming both sides' versions
        wait_for(lambda: len(games_by_status(folder).get("finished", [])) >= 4, 900, "four ladder games")
        games = get_json(base, "/api/me", tokens["alice"])["games"]
        played = next(g for g in games if g["status"] == "finished")
        assert alice_print in (played["white_fingerprint"], played["black_fingerprint"])
        beside = json.loads((folder / "games" / f"{played['id']:06d}" / "versions.json").read_text())
        assert alice_print in (beside["white"]["fingerprint"], beside["black"]["fingerprint"])
        # alice's stderr: hers and the instructor's; 403 for bob, 401 without a token
        log = f"/api/games/{played['id']}/log/alice"
        assert call(base, log, tokens["alice"])[0] == 200
        assert call(base, log, tokens["instructor"])[0] == 200
        assert call(base, log, tokens["bob"])[0] == 403
        assert call(base, log)[0] == 401
        record = get_json(base, f"/api/games/{played['id']}", tokens["bob"])
        assert record["record"]["moves"] and "stderr" not in json.dumps({k: v for k, v in record.items() if k != "record"})
        # the grade sheet: refused to a student; carol named as alice's duplicate (and alice as carol's)
        assert call(base, "/api/export.csv", tokens["carol"])[0] == 403
        status, sheet, _ = call(base, "/api/export.csv", tokens["instructor"])
        rows = {row["id"]: row for row in csv.DictReader(io.StringIO(sheet.decode("utf-8-sig")))}
        assert rows["carol"]["duplicate_of"] == "alice" and rows["alice"]["duplicate_of"] == "carol"
        assert rows["bob"]["status"] == "rejected" and rows["dave"]["duplicate_of"] == ""
        assert list(rows["alice"])[:1] == ["id"] and "vs_random_points" in rows["alice"] and "vs_greedy_games" in rows["alice"]

        # SIGKILL while games run: nothing finished is lost, the running ones are played again, the ladder goes on
        wait_for(lambda: games_by_status(folder).get("running"), 600, "a game in flight", interval=0.2)
        server.kill()
        killed = games_by_status(folder)
        assert killed.get("running")
        server = Server(folder, "-j", "2")
        base = server.base
        assert any("Recovered:" in line for line in server.lines), server.lines
        after = games_by_status(folder)
        assert set(killed["finished"]) <= set(after.get("finished", [])) | set()
        assert {game for game, _ in killed["running"]} <= {game for game, _ in after["void"]}
        wait_for(lambda: len(games_by_status(folder).get("finished", [])) > len(killed["finished"]), 900,
                 "a game finished after the restart")
        assert get_json(base, "/api/me", tokens["alice"])["versions"][0]["status"] == "admitted"
    finally:
        server.stop()
    exported = run_cli("export", str(folder), "-o", str(tmp_path / "grades.csv"))
    assert exported.returncode == 0, exported.stderr
    assert (tmp_path / "grades.csv").read_text(encoding="utf-8-sig").startswith(
        "id,name,version,fingerprint,submitted_at,status,games,score,rating")
