"""Whole tournaments through the real referee: real agent processes, real files, real SQLite.

The agents are tests/tournament_agent.py: tiny deterministic programs, so a
pairing always gives the same game and the tests can compare runs.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from othello_arena.cli import cli
from othello_arena.protocol import GameRecord
from tournament_helpers import agent, agent_with_build, build_output, kill_agents_under, query, write_tournament

THREE = [agent("first", "first"), agent("last", "last"), agent("flips", "flips")]


def invoke(*args: str) -> "CliRunner.invoke":
    result = CliRunner().invoke(cli, ["tournament", *args], catch_exceptions=False)
    return result


def status_json(path: Path) -> dict:
    result = invoke("status", str(path), "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_round_robin_through_the_cli(tmp_path: Path) -> None:
    path = write_tournament(tmp_path, THREE, concurrency=2, seed=3)
    result = invoke("run", str(path), "-q")
    assert result.exit_code == 0, result.output
    assert "Started game 1 of 6" in result.output and "Done: 6 games" in result.output
    # Its last line names the report it wrote (README's demo paragraph quotes it): no `report` to run after.
    last = result.output[result.output.rindex("Done: "):].replace("\n", "")  # (rich wraps it at 80 columns here)
    assert last.startswith("Done: 6 games. Report: ") and last.endswith("/report/index.html")
    report = Path(last.split("Report: ", 1)[1])
    assert report.is_file() and "Othello Arena tournament" in report.read_text(encoding="utf-8")

    state = status_json(path)
    assert state["scheduled"] == 6 and state["finished"] == 6 and state["complete"]
    lines = {line["agent"]: line for line in state["standings"]}
    assert set(lines) == {"first", "last", "flips"}
    assert sum(line["points"] for line in lines.values()) == 6
    for line in lines.values():
        assert line["games"] == 4
        assert line["white_wins"] + line["white_draws"] + line["white_losses"] == 2  # both colours
        assert sum(line["forfeits"].values()) == 0

    # Every game: its record in the database and on disk, each agent's stderr kept.
    rows = query(tmp_path / "results" / "tournament.sqlite", "SELECT * FROM games")
    assert len(rows) == 6
    for row in rows:
        record = GameRecord.from_dict(json.loads(row["record"]))
        assert record.result is not None and record.result.termination == "normal"
        assert (record.white, record.black) == (row["white"], row["black"])
        assert row["plies"] == len(record.moves) > 50
        assert f"{row['white']}: playing W" in row["white_stderr"]
        assert f"{row['black']}: playing B" in row["black_stderr"]
        assert (Path(row["game_dir"]) / "game.json").is_file()

    text = invoke("status", str(path))
    assert text.exit_code == 0 and "6 of 6 games finished" in text.output and "flips" in text.output

    # Running it again plays nothing more; --fresh starts over.
    again = invoke("run", str(path), "-q")
    assert again.exit_code == 0 and "all 6 games are played" in again.output
    assert status_json(path)["finished"] == 6
    fresh = invoke("run", str(path), "-q", "--fresh", "--max-games", "1")
    assert fresh.exit_code == 0 and "1 of 6 games played" in fresh.output
    assert status_json(path)["finished"] == 1


def test_forfeits_are_counted_by_kind(tmp_path: Path) -> None:
    agents = [agent("steady", "first"), agent("crasher", "first", "--crash-at 3"),
              agent("sleeper", "last", "--sleep-at 2")]
    path = write_tournament(tmp_path, agents, time_per_move=1.0, concurrency=2)
    assert invoke("run", str(path), "-q").exit_code == 0
    lines = {line["agent"]: line for line in status_json(path)["standings"]}
    # The sleeper stops at its 2nd move, before the crasher reaches its 3rd: it loses all 4 on time.
    assert lines["sleeper"]["forfeits"] == {"timeout": 4, "illegal": 0, "malformed": 0, "crash": 0, "build": 0}
    assert lines["crasher"]["forfeits"] == {"timeout": 0, "illegal": 0, "malformed": 0, "crash": 2, "build": 0}
    assert lines["crasher"]["points"] == 2 and lines["sleeper"]["points"] == 0
    assert lines["steady"]["points"] == 4
    assert lines["steady"]["forfeits"] == {"timeout": 0, "illegal": 0, "malformed": 0, "crash": 0, "build": 0}
    stderr = query(tmp_path / "results" / "tournament.sqlite",
                   "SELECT white_stderr FROM games WHERE white = 'crasher' AND black = 'steady'")
    assert "crashing on purpose" in stderr[0]["white_stderr"]


def test_swiss_runs_round_by_round_with_a_bye(tmp_path: Path) -> None:
    agents = [agent("a", "first"), agent("b", "last"), agent("c", "flips"), agent("d", "last", "--crash-at 5"),
              agent("e", "flips", "--crash-at 8")]
    path = write_tournament(tmp_path, agents, format="swiss", rounds=3, concurrency=2, seed=11)
    assert invoke("run", str(path), "-q").exit_code == 0
    state = status_json(path)
    assert state["scheduled"] == state["finished"] == 3 * 2 * 2
    rounds = query(tmp_path / "results" / "tournament.sqlite", "SELECT * FROM rounds ORDER BY round")
    assert [r["round"] for r in rounds] == [1, 2, 3]
    assert len({r["bye"] for r in rounds}) == 3 and all(r["repeats"] == 0 for r in rounds)
    games = query(tmp_path / "results" / "tournament.sqlite", "SELECT * FROM games")
    pairs = [frozenset((g["white"], g["black"])) for g in games if g["game_index"] == 1]
    assert len(pairs) == len(set(pairs)) == 6  # never the same pairing twice
    lines = {line["agent"]: line for line in state["standings"]}
    assert sum(line["byes"] for line in lines.values()) == 3
    assert sum(line["points"] for line in lines.values()) == 12 + 3


def test_errors_are_clear_and_exit_1(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('agents = ["random", "nosuch"]\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["tournament", "run", str(path)])
    assert result.exit_code == 1 and "'nosuch' is not a built-in agent" in result.output
    result = CliRunner().invoke(cli, ["tournament", "resume", str(write_tournament(tmp_path, THREE))])
    assert result.exit_code == 1 and "nothing to resume" in result.output
    result = CliRunner().invoke(cli, ["tournament", "run"])
    assert result.exit_code == 2 and "missing tournament FILE" in result.output
    path = write_tournament(tmp_path, THREE)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write('\n[referee]\nspeed = 2\n')
    result = CliRunner().invoke(cli, ["tournament", "check", str(path)])
    assert result.exit_code == 1 and "unknown key(s) in [referee]: speed" in result.output
    # Changing the schedule of a started tournament is refused.
    path = write_tournament(tmp_path, THREE, seed=1)
    assert invoke("run", str(path), "-q", "--max-games", "1").exit_code == 0
    path = write_tournament(tmp_path, THREE, seed=2)
    result = CliRunner().invoke(cli, ["tournament", "resume", str(path)])
    assert result.exit_code == 1 and "different schedule" in result.output


def test_check_prints_the_schedule(tmp_path: Path) -> None:
    result = invoke("check", str(write_tournament(tmp_path, THREE, colours="random", games_per_pairing=1, seed=4)))
    assert result.exit_code == 0, result.output
    assert "round-robin, 3 games" in result.output and result.output.count("(W) vs") == 3


def _as_at_a_terminal() -> None:
    # A shell starts background jobs with SIGINT ignored, and a child keeps
    # that: give the runner the default a person's Ctrl-C meets at a terminal.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_in_background(path: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "othello_arena", "tournament", "run", str(path), "-q", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, preexec_fn=_as_at_a_terminal,
    )


def wait_finished(database: Path, count: int, process: subprocess.Popen, limit: float = 60.0) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if database.exists():
            try:
                done = query(database, "SELECT COUNT(*) AS n FROM games WHERE status = 'finished'")[0]["n"]
            except Exception:  # the schema may not exist yet
                done = 0
            if done >= count:
                return
        assert process.poll() is None, process.stdout.read() if process.stdout else ""
        time.sleep(0.05)
    raise AssertionError(f"fewer than {count} games finished in {limit} s")


@pytest.mark.slow
def test_sigkill_mid_tournament_then_resume(tmp_path: Path) -> None:
    """The runner dies (SIGKILL) with games in flight: resume keeps every finished game, replays the rest."""
    agents = [agent(n, style, "--delay 0.01") for n, style in (("p", "first"), ("q", "last"), ("r", "flips"), ("s", "first"))]
    path = write_tournament(tmp_path, agents, concurrency=2, seed=9)
    database = tmp_path / "results" / "tournament.sqlite"
    runner = run_in_background(path)
    try:
        wait_finished(database, 3, runner)
        # Kill while games are in flight (the runner marks them running).
        deadline = time.monotonic() + 30
        while not query(database, "SELECT 1 FROM games WHERE status = 'running'") and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(runner.pid, signal.SIGKILL)
        runner.wait(10)
    finally:
        if runner.poll() is None:
            runner.kill()
        runner.stdout.close()  # type: ignore[union-attr]
    kill_agents_under(tmp_path)  # the orphans of the killed runner

    before = {row["key"]: dict(row) for row in query(database, "SELECT * FROM games WHERE status = 'finished'")}
    in_flight = [row["key"] for row in query(database, "SELECT key FROM games WHERE status = 'running'")]
    assert 3 <= len(before) < 12 and in_flight

    result = invoke("resume", str(path), "-q")
    assert result.exit_code == 0, result.output
    rows = {row["key"]: dict(row) for row in query(database, "SELECT * FROM games")}
    assert len(rows) == 12 and all(row["status"] == "finished" for row in rows.values())
    for key, row in before.items():  # finished games kept as they were, not played again
        assert rows[key]["finished"] == row["finished"] and rows[key]["record"] == row["record"]
        assert rows[key]["attempts"] == 1
    for key in in_flight:  # the interrupted games were replayed from scratch
        assert rows[key]["attempts"] == 2
        record = GameRecord.load(str(Path(rows[key]["game_dir"]) / "game.json"))
        assert record.result is not None and record.result.termination == "normal"
    state = status_json(path)
    assert state["finished"] == 12 and sum(line["games"] for line in state["standings"]) == 24
    assert sum(line["points"] for line in state["standings"]) == 12


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_or_sigterm_stops_cleanly_and_resume_finishes(tmp_path: Path, signum: int) -> None:
    agents = [agent(n, style, "--delay 0.01") for n, style in (("p", "first"), ("q", "last"), ("r", "flips"))]
    path = write_tournament(tmp_path, agents, concurrency=2)
    database = tmp_path / "results" / "tournament.sqlite"
    runner = run_in_background(path)
    wait_finished(database, 1, runner)
    runner.send_signal(signum)
    output, _ = runner.communicate(timeout=30)
    assert runner.returncode == 130, output
    assert "Stopped:" in output and "othello tournament resume" in output
    assert kill_agents_under(tmp_path) == 0  # no agent left behind
    assert not query(database, "SELECT 1 FROM games WHERE status = 'running'")
    # The games in flight were voided by the runner itself, with why; they stay in the record.
    voided = query(database, "SELECT * FROM attempts WHERE outcome = 'voided'")
    assert all("was stopped" in row["why"] for row in voided)
    result = invoke("resume", str(path), "-q")
    assert result.exit_code == 0 and status_json(path)["finished"] == 6
    assert len(query(database, "SELECT * FROM attempts WHERE outcome = 'voided'")) == len(voided)
    assert len(query(database, "SELECT * FROM attempts WHERE outcome = 'finished'")) == 6


def test_build_commands_run_once_in_the_agent_directory(tmp_path: Path) -> None:
    import sys as _sys

    from tournament_helpers import AGENT

    home = tmp_path / "students" / "alice"
    home.mkdir(parents=True)
    (home / "alice.py").write_text(AGENT.read_text())
    tables = [
        '[[agents]]\nname = "alice"\ncwd = "students/alice"\n'
        f'command = "{_sys.executable} alice.py --name {{name}} --style first"\n'
        'build = "echo built >> build-count.txt"\n',
        agent_with_build(tmp_path, "bob", "last", "echo oops; exit 3"),
    ]
    path = write_tournament(tmp_path, tables)
    result = invoke("run", str(path), "-q")
    assert result.exit_code == 0, result.output
    assert (home / "build-count.txt").read_text() == "built\n"
    assert "Build of bob failed (exit 3)" in result.output
    assert build_output(tmp_path / "results" / "build" / "bob.log") == "oops\n"
    state = status_json(path)
    assert state["finished"] == 2
    lines = {line["agent"]: line for line in state["standings"]}
    assert lines["bob"]["forfeits"]["build"] == 2 and lines["alice"]["points"] == 2  # bob never started


def test_each_game_leaves_little_of_an_agents_files_and_the_start_says_how_limits_hold(tmp_path: Path) -> None:
    secret = tmp_path / "grades.csv"
    secret.write_bytes(b"x" * (2 << 20))
    agents = [agent("messy", "first", f"--evil scratch={secret}"), agent("tidy", "last")]
    path = write_tournament(tmp_path, agents, games_per_pairing=2, concurrency=1)
    result = invoke("run", str(path), "-q", "--max-games", "1")
    assert result.exit_code == 0, result.output
    for limit in ("memory", "processes", "file size", "disk", "/tmp and /dev/shm"):  # doctor's lines, at the start
        assert any(line.startswith(f"{limit}: ") for line in result.output.splitlines()), (limit, result.output)
    assert "WARNING" not in result.output
    row = query(tmp_path / "results" / "tournament.sqlite", "SELECT record, game_dir FROM games")[0]
    messy = json.loads(row["record"])["agents"]["messy"]
    # Its 3 MB file went (the largest first); its small one stays within the tournament's 1 MB.
    assert messy["trimmed"] == {"files": 1, "bytes": messy["trimmed"]["bytes"], "why": "beyond the 1 MB kept after each game"}
    assert messy["trimmed"]["bytes"] >= 3 << 20
    folder = Path(row["game_dir"]) / messy["directory"]
    assert not (folder / "big.bin").exists() and (folder / "cache" / "small.bin").exists()
    assert secret.stat().st_size == 2 << 20  # its link was not followed
    assert "trimmed" not in json.loads(row["record"])["agents"]["tidy"]


def test_a_tournament_whose_limits_cannot_hold_says_so_loudly(tmp_path: Path) -> None:
    path = write_tournament(tmp_path, THREE, referee={"sandbox": "none"}, concurrency=1)
    result = invoke("run", str(path), "-q", "--max-games", "1")
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.output.splitlines() if line.startswith("WARNING: ")]
    assert any(line.startswith("WARNING: /tmp and /dev/shm: NOT limited") for line in warnings), result.output
    assert any(line.startswith("WARNING: memory: only in part") for line in warnings), result.output
