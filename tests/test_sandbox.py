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
    from othello_arena.tournaments.schedule import config
    from othello_arena.tournaments.results import report

    data = report.report_data(config.load(tmp_path / "t.toml"), tmp_path / "results" / "report")
    assert data["unsandboxed"] == 2


def test_the_cgroups_of_a_referee_that_died_with_its_keeper_are_ended_by_the_next(tmp_path: Path) -> None:
    # Referee and keeper both killed (kill -9 of everything, a reboot of the
    # container): the next referee ends what is left, frozen or not.
    root = sandbox.probe().cgroup
    if root is None:
        pytest.skip("no cgroup this user may make")
    gone = subprocess.Popen(["true"])
    gone.wait()  # its pid names the dead referee
    name = f"othello-{gone.pid}-deadbeef0000"
    left = subprocess.Popen(["sleep", "600"])
    folders = [Path(parent) / name for _, parent in root.folders]
    try:
        for folder in dict.fromkeys(folders):
            folder.mkdir()
            (folder / "cgroup.procs").write_text(str(left.pid))
        freezer = [f for f in folders if (f / "freezer.state").exists() or (f / "cgroup.freeze").exists()]
        for folder in freezer:  # frozen: a v1 freezer holds off SIGKILL until thawed
            state = folder / ("freezer.state" if root.version == 1 else "cgroup.freeze")
            state.write_text("FROZEN" if root.version == 1 else "1")
        sandbox._cleared.discard(root)
        made = root.make(64, 8)  # the next referee's first agent
        made.remove()
        assert left.wait(timeout=5) == -9
        assert [f for f in folders if f.exists()] == []
    finally:
        if left.poll() is None:
            for folder in folders:
                for state, value in (("freezer.state", "THAWED"), ("cgroup.freeze", "0")):
                    if (folder / state).exists():
                        (folder / state).write_text(value)
            left.kill()
            left.wait()
        for folder in folders:
            if folder.exists():
                folder.rmdir()
