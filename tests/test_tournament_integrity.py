"""A tournament no agent and no accident can corrupt: real runners, real agents, real files, real SQLite.

Each case ends with the standings the games really produced: one runner per
tournament (a second one refuses), SIGKILL of the runner at random moments
then resume (every game stored once, the voided attempts kept), files an
agent turned against the runner, and ``verify`` catching hand edits.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from othello_arena.cli import cli
from othello_arena.protocol import Colour, Result, Termination
from tournament_helpers import agents_gone_under, agent, kill_agents_under, query, write_tournament


def invoke(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, ["tournament", *args], catch_exceptions=False)


def status_json(path: Path) -> dict:
    result = invoke("status", str(path), "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def background(command: str, path: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "othello_arena", "tournament", command, str(path), "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def wait_for(condition, process: subprocess.Popen | None = None, limit: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if condition():
            return
        if process is not None and process.poll() is not None:
            raise AssertionError(f"the runner exited {process.returncode}: {process.stdout.read() if process.stdout else ''}")
        time.sleep(0.02)
    raise AssertionError(f"condition not met in {limit} s")


def running_attempts(database: Path) -> set[tuple[str, int]]:
    try:
        rows = query(database, "SELECT key, attempts FROM games WHERE status = 'running'")
    except Exception:  # noqa: BLE001 - the schema may not exist yet
        return set()
    return {(row["key"], row["attempts"]) for row in rows}


def points(state: dict) -> dict[str, float]:
    return {line["agent"]: line["points"] for line in state["standings"]}


# ---------------------------------------------------------------------------
# One runner per tournament
# ---------------------------------------------------------------------------


def test_a_second_runner_refuses_at_once_and_the_first_finishes_every_game(tmp_path: Path) -> None:
    agents = [agent(n, style, "--delay 0.02") for n, style in (("p", "first"), ("q", "last"), ("r", "flips"))]
    path = write_tournament(tmp_path, agents, concurrency=2, seed=5)
    database = tmp_path / "results" / "tournament.sqlite"
    first = background("run", path)
    try:
        wait_for(lambda: bool(running_attempts(database)), first)
        for command in ("run", "resume"):
            second = CliRunner().invoke(cli, ["tournament", command, str(path), "-q"])
            assert second.exit_code == 1, second.output
            assert f"pid {first.pid} on host {socket.gethostname()}" in second.output
            assert "another runner is playing this tournament" in second.output
        state = status_json(path)  # status reads without the lock
        assert state["runner"]["pid"] == first.pid and state["running"] >= 1 and state["interrupted"] == 0
        output, _ = first.communicate(timeout=120)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 0, output
    rows = query(database, "SELECT * FROM games")
    assert len(rows) == 6 and all(row["status"] == "finished" and row["attempts"] == 1 for row in rows)
    state = status_json(path)
    assert state["runner"] is None and state["voided_attempts"] == 0
    assert all(sum(line["forfeits"].values()) == 0 for line in state["standings"])  # no false crash forfeits
    assert sum(points(state).values()) == 6


@pytest.mark.slow
def test_sigkill_three_times_then_resume_plays_every_game_once(tmp_path: Path) -> None:
    seed = int.from_bytes(os.urandom(4), "big")
    rng = random.Random(seed)
    agents = [agent(n, style, "--delay 0.01") for n, style in
              (("p", "first"), ("q", "last"), ("r", "flips"), ("s", "first"))]
    path = write_tournament(tmp_path, agents, concurrency=2, seed=9)
    database = tmp_path / "results" / "tournament.sqlite"
    in_flight: set[tuple[str, int]] = set()
    for kill in range(3):
        runner = background("run" if kill == 0 else "resume", path)
        try:
            wait_for(lambda: bool(running_attempts(database)), runner)
            time.sleep(rng.uniform(0.0, 1.0))
            os.kill(runner.pid, signal.SIGKILL)
            runner.wait(10)
            # The sandbox's die-with-parent: every agent of the killed runner dies with it.
            assert agents_gone_under(tmp_path) == [], f"agents outlived the SIGKILLed runner (seed {seed})"
        finally:
            if runner.poll() is None:
                runner.kill()
            runner.stdout.close()  # type: ignore[union-attr]
        caught = running_attempts(database)
        in_flight |= caught
        if caught:
            # No runner holds the lock: nothing is reported as running.
            state = status_json(path)
            assert state["runner"] is None and state["running"] == 0 and state["interrupted"] == len(caught)
    assert in_flight, f"no game was in flight at any kill (seed {seed})"

    # No manual clean-up: resume ends what the killed runners left and finishes.
    result = invoke("resume", str(path), "-q")
    assert result.exit_code == 0, result.output
    assert kill_agents_under(tmp_path) == 0, "an agent of a killed runner survived the resume"

    games = query(database, "SELECT * FROM games")
    assert len(games) == len({g["key"] for g in games}) == 12
    assert all(g["status"] == "finished" for g in games)
    attempts = query(database, "SELECT * FROM attempts")
    voided = {(a["key"], a["attempt"]) for a in attempts if a["outcome"] == "voided"}
    assert voided == in_flight, f"seed {seed}"
    assert all(a["why"] and "runner stopped" in a["why"] for a in attempts if a["outcome"] == "voided")
    for game in games:
        mine = sorted(a["attempt"] for a in attempts if a["key"] == game["key"])
        assert mine == list(range(1, game["attempts"] + 1))  # every attempt kept
        assert [a["outcome"] for a in attempts if a["key"] == game["key"]].count("finished") == 1
    state = status_json(path)
    assert state["finished"] == 12 and state["voided_attempts"] == len(in_flight)
    again = {item["game"] for item in state["repeatedly_voided"]}
    assert again == {key for key, _ in in_flight if sum(k == key for k, _ in in_flight) >= 2}
    assert sum(points(state).values()) == 12 and sum(line["games"] for line in state["standings"]) == 24
    # The files of voided attempts are kept aside, and every stored game checks out.
    for key, attempt in in_flight:
        [row] = [a for a in attempts if a["key"] == key and a["attempt"] == attempt]
        # (a runner killed between marking the game running and its referee making the
        # game's folder leaves no files to keep: the attempt is still recorded)
        assert not row["files"] or (Path(row["files"]).is_dir() and "voided" in row["files"])
    text = invoke("status", str(path))
    assert "Voided attempts" in text.output
    assert invoke("verify", str(path)).exit_code == 0


# ---------------------------------------------------------------------------
# Records that cannot be forged
# ---------------------------------------------------------------------------


def test_verify_catches_a_result_forged_in_the_database_and_a_record_edited_by_hand(tmp_path: Path, tournament_file) -> None:
    path = tournament_file()
    assert invoke("run", str(path), "-q").exit_code == 0
    database = tmp_path / "results" / "tournament.sqlite"
    result = invoke("verify", str(path))
    assert result.exit_code == 0 and "OK: all 2 finished games" in result.output
    honest = points(status_json(path))

    games = query(database, "SELECT * FROM games ORDER BY key")
    for row in games:  # the stored hash is that of game.json, byte for byte
        data = (Path(row["game_dir"]) / "game.json").read_bytes()
        assert hashlib.sha256(data).hexdigest() == row["record_sha256"] == hashlib.sha256(row["record"].encode()).hexdigest()

    # A hostile student rewrites the database: a lost game stored as a 64-0 win.
    lost = next(g for g in games if g["winner"] is not None)
    loser = "B" if lost["winner"] == "W" else "W"
    db = __import__("sqlite3").connect(str(database))
    discs = (0, 64) if loser == "B" else (64, 0)
    db.execute("UPDATE games SET winner = ?, white_discs = ?, black_discs = ? WHERE key = ?",
               (loser, *discs, lost["key"]))
    db.commit()
    result = invoke("verify", str(path))
    assert result.exit_code == 1
    assert f"{lost['key']} ({lost['white']} vs {lost['black']}): the database says" in result.output
    tampered = Result(Colour(loser), Termination.NORMAL, *discs)
    assert f"the database says {tampered.summary()}, the record says" in result.output
    db.execute("UPDATE games SET winner = ?, white_discs = ?, black_discs = ? WHERE key = ?",
               (lost["winner"], lost["white_discs"], lost["black_discs"], lost["key"]))
    db.commit()
    assert invoke("verify", str(path)).exit_code == 0

    # Someone edits a game.json by hand (the result's discs).
    other = games[1]
    record_path = Path(other["game_dir"]) / "game.json"
    record = json.loads(record_path.read_text())
    record["result"]["discs"]["W"] += 1
    record_path.write_text(json.dumps(record, indent=2) + "\n")
    result = invoke("verify", str(path), "--json")
    assert result.exit_code == 1
    problems = json.loads(result.output)["problems"]
    assert {p["game"] for p in problems} == {other["key"]}
    assert any("is not the record stored for this game" in p["text"] for p in problems)
    assert any("the replayed board has" in p["text"] for p in problems)

    # A consistent forgery in the database (record and its hash rewritten): the replay still refuses it.
    forged = json.loads(lost["record"])
    forged["moves"][0]["move"] = "(W A 1)"
    text = json.dumps(forged, indent=2) + "\n"
    db.execute("UPDATE games SET record = ?, record_sha256 = ? WHERE key = ?",
               (text, hashlib.sha256(text.encode()).hexdigest(), lost["key"]))
    db.commit()
    db.close()
    result = invoke("verify", str(path))
    assert result.exit_code == 1
    assert f"{lost['key']} ({lost['white']} vs {lost['black']}): " in result.output
    assert "move 1 ((W A 1)) does not replay under the rules" in result.output
    assert "FAILED: 2 of 2 finished games" in result.output
    assert points(status_json(path)) == honest  # the standings were never touched by the checks


# ---------------------------------------------------------------------------
# Files an agent turned against the runner
# ---------------------------------------------------------------------------


# Sandboxed, no agent can reach these files at all (tests/test_sandbox_attacks.py and the
# sandboxed variants below); the runner must survive them all the same when told to run
# agents unsandboxed (sandbox = "none").
UNSANDBOXED = {"sandbox": "none"}


def test_stderr_log_made_a_link_or_a_huge_sparse_file_costs_nothing(tmp_path: Path) -> None:
    secret = tmp_path / "instructor" / "grades.txt"
    secret.parent.mkdir()
    secret.write_text("SECRET GRADES of the whole class\n")
    agents = [agent("steady", "first"), agent("linker", "last", f"--evil stderr-link={secret}"),
              agent("sparse", "flips", "--evil stderr-sparse")]
    # (no file-size limit either, or the kernel would refuse the 100 GB file)
    path = write_tournament(tmp_path, agents, referee={**UNSANDBOXED, "disk_mb": 0}, concurrency=2)
    result = invoke("run", str(path), "-q")
    assert result.exit_code == 0, result.output
    database = tmp_path / "results" / "tournament.sqlite"
    for row in query(database, "SELECT * FROM games"):
        for side in ("white", "black"):
            text = row[f"{side}_stderr"]
            assert "SECRET" not in text
            if row[side] == "linker":
                assert "symbolic link" in text
            if row[side] == "sparse":
                assert "start of a huge log" in text and "bytes cut" in text and len(text) < 70_000
                assert (Path(row["game_dir"]) / f"{row[side]}.stderr.log").stat().st_size == 100 * 1024**3
    state = status_json(path)
    assert state["finished"] == 6 and state["voided_attempts"] == 0
    assert all(sum(line["forfeits"].values()) == 0 for line in state["standings"])
    assert sum(points(state).values()) == 6
    assert invoke("verify", str(path)).exit_code == 0
    assert invoke("report", str(path)).exit_code == 0
    # The instructor's copy links the logs and shows the stderr the database kept: it never reads the logs.
    assert invoke("report", str(path), "--with-logs").exit_code == 0


@pytest.mark.parametrize("evil", ["stderr-link=/etc/passwd", "stderr-sparse", "game-json-dir"])
def test_sandboxed_the_runner_files_are_out_of_an_agents_reach(tmp_path: Path, evil: str) -> None:
    agents = [agent("steady", "first"), agent("other", "last"), agent("vandal", "flips", f"--evil {evil}")]
    path = write_tournament(tmp_path, agents, concurrency=2)
    result = invoke("run", str(path), "-q")
    assert result.exit_code == 0, result.output
    state = status_json(path)
    # The attack cost the vandal its games (it crashed on a file it cannot see); nothing else moved.
    assert state["finished"] == 6 and state["voided_attempts"] == 0
    for row in query(tmp_path / "results" / "tournament.sqlite", "SELECT * FROM games"):
        assert (Path(row["game_dir"]) / "game.json").is_file()
        for side in ("white", "black"):
            log = Path(row["game_dir"]) / f"{row[side]}.stderr.log"
            assert log.is_file() and not log.is_symlink() and log.stat().st_size < 1 << 21
            if row[side] != "vandal" and row["reason"] != "normal":
                assert row["winner"] == ("W" if side == "white" else "B")  # only the vandal loses by a fault
    assert invoke("verify", str(path)).exit_code == 0


def test_game_json_made_a_directory_is_a_clear_failure_of_that_game(tmp_path: Path) -> None:
    agents = [agent("steady", "first"), agent("other", "last"), agent("vandal", "flips", "--evil game-json-dir")]
    path = write_tournament(tmp_path, agents, referee=UNSANDBOXED, concurrency=2)
    result = CliRunner().invoke(cli, ["tournament", "run", str(path), "-q"])
    assert result.exit_code == 1, result.output
    assert "have no result" in result.output and "not a regular file" in result.output
    state = status_json(path)
    assert state["finished"] == 2  # steady vs other, played and scored
    assert {item["game"] for item in state["voided"]} == {
        row["key"] for row in query(tmp_path / "results" / "tournament.sqlite",
                                    "SELECT key FROM games WHERE white = 'vandal' OR black = 'vandal'")}
    assert all("not a regular file" in item["attempts"][0]["why"] for item in state["voided"])
    assert state["repeatedly_voided"] == []
    # The vandal does it again on resume: its games are now pointed out to the instructor.
    assert CliRunner().invoke(cli, ["tournament", "resume", str(path), "-q"]).exit_code == 1
    state = status_json(path)
    assert len(state["repeatedly_voided"]) == 4 and all(item["voided"] == 2 for item in state["voided"])
    text = invoke("status", str(path)).output
    assert "FLAGGED" in text and "voided again and again" in text
    lines = {line["agent"]: line for line in state["standings"]}
    assert lines["vandal"]["games"] == 0 and lines["steady"]["games"] == lines["other"]["games"] == 2
    assert sum(points(state).values()) == 2
    assert invoke("verify", str(path)).exit_code == 0
    # The report shows them too (its data block; the page draws the list).
    assert invoke("report", str(path)).exit_code == 0
    page = (tmp_path / "results" / "report" / "index.html").read_text()
    assert '"voided_attempts":8' in page and page.count('"flagged":true') == 4


def test_the_lock_names_its_holder_and_no_child_process_keeps_it(tmp_path: Path) -> None:
    from othello_arena.tournaments.results.lock import LockHeldError, RunnerLock, holder, lock_path

    database = tmp_path / "results" / "tournament.sqlite"
    assert holder(database) is None
    lock = RunnerLock(lock_path(database))
    lock.acquire()
    # A process started while the lock is held (as every agent is) must not inherit it, even asked to.
    child = subprocess.Popen(["sleep", "30"], close_fds=False)
    try:
        assert holder(database)["pid"] == os.getpid()
        with pytest.raises(LockHeldError, match=f"pid {os.getpid()} on host {socket.gethostname()}"):
            RunnerLock(lock_path(database)).acquire()
        lock.release()
        assert holder(database) is None  # the child still runs, but holds nothing
        with RunnerLock(lock_path(database)):
            assert holder(database)["pid"] == os.getpid()
    finally:
        child.kill()
        child.wait()
