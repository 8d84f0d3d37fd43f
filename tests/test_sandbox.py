"""The sandbox as users meet it: othello doctor, and a machine without bubblewrap."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from othello_arena.referee import sandbox

needs_sandbox = pytest.mark.skipif(not sandbox.probe().works, reason=f"no sandbox here: {sandbox.probe().problem}")


def othello(*args: str, cwd: Path, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if path is not None:
        env["PATH"] = path
    return subprocess.run([sys.executable, "-m", "othello_arena", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


@needs_sandbox
def test_doctor_reports_the_isolation_and_passes_its_self_test(tmp_path: Path) -> None:
    done = othello("doctor", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "sandbox: works" in done.stdout
    assert "limits: " in done.stdout
    checks = [line.strip() for line in done.stdout.splitlines() if line.startswith("  ")]
    assert len(checks) >= 6 and all(line.startswith("ok") for line in checks)


def test_without_bubblewrap_play_stops_and_says_how_to_fix_it(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    done = othello("play", "random", "greedy", "--out", str(tmp_path / "g"), path=str(empty), cwd=tmp_path)
    assert done.returncode == 4
    assert "bwrap is not installed" in done.stderr and "apt-get install bubblewrap" in done.stderr
    assert "--sandbox none" in done.stderr
    assert not (tmp_path / "g" / "game.json").exists()  # nothing was played
    doctor = othello("doctor", path=str(empty), cwd=tmp_path)
    assert doctor.returncode == 1 and "bubblewrap: not installed" in doctor.stdout


def test_sandbox_none_is_played_only_when_asked_and_recorded(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    done = othello("play", "random", "greedy", "--out", str(tmp_path / "g"), "--sandbox", "none", "--json",
                   path=str(empty), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["referee"]["sandbox"] == "none"
    assert record["result"]["reason"] == "normal"


def test_a_tournament_without_bubblewrap_stops_before_its_first_game(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    (tmp_path / "t.toml").write_text(
        '[tournament]\nname = "t"\ntime_per_move = 2\nresults = "results"\n\n'
        '[[agents]]\nname = "random"\n\n[[agents]]\nname = "greedy"\n'
    )
    done = othello("tournament", "run", "t.toml", path=str(empty), cwd=tmp_path)
    assert done.returncode != 0
    assert "bwrap is not installed" in done.stderr + done.stdout
    assert not list((tmp_path / "results").glob("games/*/game.json"))


def test_a_tournament_played_without_the_sandbox_says_so(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    (tmp_path / "t.toml").write_text(
        '[tournament]\nname = "t"\ntime_per_move = 2\nresults = "results"\n\n[referee]\nsandbox = "none"\n\n'
        '[[agents]]\nname = "random"\n\n[[agents]]\nname = "greedy"\n'
    )
    done = othello("tournament", "run", "t.toml", "-q", path=str(empty), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    status = othello("tournament", "status", "t.toml", cwd=tmp_path)
    assert "2 game(s) were played without the sandbox" in status.stdout
    state = json.loads(othello("tournament", "status", "t.toml", "--json", cwd=tmp_path).stdout)
    assert len(state["unsandboxed"]) == 2
    from othello_arena.tournaments import config, report

    data = report.report_data(config.load(tmp_path / "t.toml"), tmp_path / "results" / "report")
    assert data["unsandboxed"] == 2
