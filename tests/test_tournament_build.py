"""Agents' build commands: a time limit, output kept capped in build/NAME.log, failures as ``build`` forfeits.

Real shell commands and real processes: a build that fails, one that hangs
(with a daemon of its own), one that prints megabytes, a log path planted
as a link.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import psutil
from click.testing import CliRunner

from othello_arena.cli import cli
from othello_arena.referee import GameConfig
from othello_arena.tournaments.run.build import BUILD_LOG_LIMIT, run_build
from tournament_helpers import AGENT, agent, build_output, query, write_tournament


def processes_in(directory: Path) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cwd"]):
        try:
            if process.info.get("cwd") and Path(process.info["cwd"]).is_relative_to(directory):
                found.append(process)
        except (psutil.Error, ValueError):
            continue
    return found


def test_a_build_that_hangs_is_killed_with_everything_it_started(tmp_path: Path) -> None:
    log = tmp_path / "build" / "slow.log"
    result = run_build("slow", "echo compiling; sleep 300 & sleep 300", str(tmp_path), log, timeout=1.0)
    assert result.status == "timeout" and not result.ok and "timed out after 1 s" in result.detail
    assert build_output(log) == "compiling\n"
    time.sleep(0.2)
    assert processes_in(tmp_path) == []  # the background sleep of the build is gone too


def test_a_build_that_fills_its_folder_is_stopped_at_the_disk_limit(tmp_path: Path) -> None:
    """Many files, each under the per-file limit: the folder as a whole is watched, as an agent's in a game."""
    folder = tmp_path / "submission"
    folder.mkdir()
    # 40 files of 4 MB at --disk 32: each is allowed (RLIMIT_FSIZE is 32 MB), all together are not.
    command = "for i in $(seq 40); do head -c 4000000 /dev/zero > part$i; sleep 0.05; done; echo finished"
    result = run_build("filler", command, str(folder), tmp_path / "build" / "filler.log", timeout=60.0,
                       config=GameConfig(disk_mb=32))
    assert result.status == "failed" and not result.ok, result
    assert "more than 32 MB in its folder (the disk limit)" in result.detail
    assert "finished" not in build_output(tmp_path / "build" / "filler.log")
    kept = sum(path.stat().st_size for path in folder.iterdir())
    assert kept < 64 << 20, f"{kept >> 20} MB written before the stop"
    time.sleep(0.2)
    assert processes_in(folder) == []


def test_build_output_is_capped_and_the_log_is_never_written_through_a_link(tmp_path: Path) -> None:
    victim = tmp_path / "instructor.txt"
    victim.write_text("keep me\n")
    log = tmp_path / "build" / "loud.log"
    log.parent.mkdir()
    log.symlink_to(victim)
    command = f"{sys.executable} -c \"import sys; sys.stdout.write('x' * (5 << 20)); sys.stdout.write('END')\"; exit 2"
    result = run_build("loud", command, str(tmp_path), log, timeout=60.0)
    assert result.status == "failed" and result.exit_code == 2
    assert victim.read_text() == "keep me\n" and not log.is_symlink()
    text = log.read_text()
    assert len(text) < BUILD_LOG_LIMIT + 200 and "more bytes of output dropped" in text and text.endswith("END")


def test_failed_and_hung_builds_forfeit_their_games_and_the_others_play_on(tmp_path: Path) -> None:
    homes = {}
    for name in ("alice", "bob", "carl"):
        homes[name] = tmp_path / "students" / name
        homes[name].mkdir(parents=True)
        (homes[name] / "agent.py").write_text(AGENT.read_text())
    builds = {"alice": "echo built >> build-count.txt", "bob": "echo oops; exit 3", "carl": "echo started; sleep 300"}
    tables = [
        f'[[agents]]\nname = "{name}"\ncwd = "students/{name}"\n'
        f'command = "{sys.executable} agent.py --name {{name}} --style {style}"\nbuild = "{builds[name]}"\n'
        for name, style in (("alice", "first"), ("bob", "last"), ("carl", "flips"))
    ] + [agent("dave", "last")]
    path = write_tournament(tmp_path, tables, build_timeout=1.5, concurrency=2)
    result = CliRunner().invoke(cli, ["tournament", "run", str(path), "-q"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "Build of bob failed (exit 3)" in result.output and "Build of carl failed (timed out after 1.5 s)" in result.output
    assert build_output(tmp_path / "results" / "build" / "bob.log") == "oops\n"
    assert build_output(tmp_path / "results" / "build" / "carl.log") == "started\n"
    assert (homes["alice"] / "build-count.txt").read_text() == "built\n"

    database = tmp_path / "results" / "tournament.sqlite"
    games = query(database, "SELECT * FROM games")
    assert len(games) == 12 and all(g["status"] == "finished" for g in games)
    for game in games:
        pair = {game["white"], game["black"]}
        if pair & {"bob", "carl"}:
            assert game["reason"] == "build" and game["plies"] == 0
            assert "see build/" in game["detail"]
        else:
            assert game["reason"] == "normal" and game["plies"] > 50  # alice and dave really played
    state = json.loads(CliRunner().invoke(cli, ["tournament", "status", str(path), "--json"]).output)
    lines = {line["agent"]: line for line in state["standings"]}
    assert lines["bob"]["forfeits"]["build"] == 6 and lines["carl"]["forfeits"]["build"] == 6
    assert lines["bob"]["points"] == lines["carl"]["points"] == 1.0  # their two games: draws, both at fault
    assert lines["alice"]["forfeits"]["build"] == lines["dave"]["forfeits"]["build"] == 0
    assert lines["alice"]["points"] + lines["dave"]["points"] == 8 + 2
    assert state["builds"]["carl"]["status"] == "timeout" and state["builds"]["bob"]["exit_code"] == 3
    text = CliRunner().invoke(cli, ["tournament", "status", str(path)]).output
    assert "build of carl: timeout" in text and "B6" in text
    assert CliRunner().invoke(cli, ["tournament", "verify", str(path)]).exit_code == 0
    # The build outcomes are kept: resuming neither rebuilds nor forgets the forfeits.
    assert CliRunner().invoke(cli, ["tournament", "resume", str(path), "-q"]).exit_code == 0
    assert (homes["alice"] / "build-count.txt").read_text() == "built\n"


def test_a_build_runs_in_the_sandbox(tmp_path: Path) -> None:
    # A build is student code: it writes its own folder, and nothing else.
    home = tmp_path / "students" / "mallory"
    home.mkdir(parents=True)
    results = tmp_path / "results"
    results.mkdir()
    (results / "tournament.sqlite").write_text("the standings")
    command = (f"echo built > program; echo x > ../escape.txt; echo forged > {results}/tournament.sqlite; "
               f"ls {results} > seen.txt; echo $OTHELLO_TEST_SECRET > env.txt; true")
    import os

    os.environ["OTHELLO_TEST_SECRET"] = "token"
    try:
        result = run_build("mallory", command, str(home), results / "build" / "mallory.log", timeout=60.0,
                           hidden=[results])
    finally:
        del os.environ["OTHELLO_TEST_SECRET"]
    assert result.ok, (results / "build" / "mallory.log").read_text()
    assert (home / "program").read_text() == "built\n"
    assert not (tmp_path / "students" / "escape.txt").exists()
    assert (results / "tournament.sqlite").read_text() == "the standings"
    assert (home / "seen.txt").read_text() == ""  # the results folder is out of sight
    assert (home / "env.txt").read_text() == "\n"  # none of the runner's environment


def test_an_unprivileged_instructor_with_a_stale_pyenv_root_plays_and_the_build_gets_only_what_it_needs() -> None:
    # As an instructor's own account whose environment still names root's pyenv: the toolchain folder
    # cannot even be looked at (its parent is root's, mode 0700).  It is left out, said, never a crash.
    import os
    import pwd
    import shutil
    import subprocess
    import tempfile

    import pytest

    from sandbox_helpers import unprivileged_user

    user = unprivileged_user()
    if user is None:
        pytest.skip("no unprivileged user can run this Python here (as root: useradd, and the interpreter readable)")
    root = Path(tempfile.mkdtemp(prefix="othello-stale-toolchain-"))
    try:
        locked = root / "root-only"
        (locked / ".pyenv" / "bin").mkdir(parents=True)
        os.chmod(locked, 0o700)  # root's, like /root
        stale = locked / ".pyenv"
        course = root / "course"
        home = course / "students" / "alice"
        home.mkdir(parents=True)
        (home / "agent.py").write_text(AGENT.read_text())
        table = (f'[[agents]]\nname = "alice"\ncwd = "students/alice"\n'
                 f'command = "{sys.executable} agent.py --name {{name}} --style first"\n'
                 'build = "echo built > built.txt; echo PATH=$PATH"\n')
        path = write_tournament(course, [table, '[[agents]]\nname = "greedy"\n'], games_per_pairing=2)
        record = pwd.getpwnam(user)
        os.chmod(root, 0o755)
        for item in [course, *course.rglob("*")]:
            os.chown(item, record.pw_uid, record.pw_gid)
        env = dict(os.environ, PYENV_ROOT=str(stale), PATH=f"{stale / 'bin'}:{os.environ['PATH']}",
                   OTHELLO_TEST_SECRET="instructor-token")
        done = subprocess.run(["runuser", "-u", user, "--", sys.executable, "-m", "othello_arena", "tournament",
                               "run", str(path), "-q"], cwd=course, env=env, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "Traceback" not in done.stderr and "PermissionError" not in done.stdout + done.stderr
        assert (home / "built.txt").read_text() == "built\n"
        games = query(course / "results" / "tournament.sqlite", "SELECT reason FROM games")
        assert len(games) == 2 and {game["reason"] for game in games} != {"build"}
        log = (course / "results" / "build" / "alice.log").read_text()
        header = [line for line in log.splitlines() if line.startswith("[referee: ")]
        # The log's first lines name what the build got: the system's PATH, its own HOME, LANG; no secrets.
        assert log.startswith("[referee: the build's environment: ")
        assert f"[referee: the build's environment: HOME={home}]" in header
        assert any(line.startswith("[referee: the build's environment: LANG=") for line in header)
        assert f"[referee: left out: PYENV_ROOT={stale} (not a folder this user can read)]" in header
        assert not any("OTHELLO_TEST_SECRET" in line or line.startswith("[referee: the build's environment: PYENV")
                       for line in header)
        build_path = next(line for line in log.splitlines() if line.startswith("PATH=")).removeprefix("PATH=")
        assert str(stale) not in build_path and "/usr/bin" in build_path.split(":")
        # doctor says it once.
        doctor = subprocess.run(["runuser", "-u", user, "--", sys.executable, "-m", "othello_arena", "doctor"],
                                cwd=course, env=env, capture_output=True, text=True, timeout=120)
        assert doctor.stdout.count(f"PYENV_ROOT={stale}") == 1, doctor.stdout + doctor.stderr
        assert "Traceback" not in doctor.stderr
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_a_build_gets_the_system_path_and_readable_toolchains_not_the_instructors_own_folders(
        tmp_path: Path, monkeypatch) -> None:
    from othello_arena.referee.sandbox import toolchains

    home = tmp_path / "instructor"
    scripts, cargo = home / "scripts", home / ".cargo"
    for folder in (scripts, cargo / "bin"):
        folder.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{scripts}:{cargo / 'bin'}:relative/bin:{tmp_path / 'gone'}:/usr/bin:/bin")
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "no-pyenv"))
    for name in ("RUSTUP_HOME", "CARGO_HOME", "GOPATH", "GOROOT", "JAVA_HOME"):
        monkeypatch.delenv(name, raising=False)
    found = toolchains()
    path = found.variables["PATH"].split(":")
    assert str(scripts) not in path and "relative/bin" not in path  # the instructor's own, and no relative folder
    assert str(cargo / "bin") in path and found.variables["CARGO_HOME"] == str(cargo)  # ~/.cargo: a toolchain
    assert {"/usr/local/bin", "/usr/bin", "/bin"} <= set(path)
    assert "PYENV_ROOT" not in found.variables
    assert f"PYENV_ROOT={tmp_path / 'no-pyenv'} (not a folder this user can read)" in found.skipped
    assert f"PATH folder {tmp_path / 'gone'} (not a folder this user can read)" in found.skipped


def test_every_build_runs_at_once_before_the_first_game(tmp_path: Path) -> None:
    # Two builds that each wait for the other to have started: only builds run at once both finish.
    # (Unsandboxed, so that they can see each other's folders; the default build_timeout is 2 minutes.)
    from othello_arena.tournaments.schedule import config

    homes = {name: tmp_path / "students" / name for name in ("alice", "bob")}
    tables = []
    for name, other in (("alice", "bob"), ("bob", "alice")):
        homes[name].mkdir(parents=True)
        (homes[name] / "agent.py").write_text(AGENT.read_text())
        build = f"touch started; while [ ! -e ../{other}/started ]; do sleep 0.05; done; echo ok"
        tables.append(f'[[agents]]\nname = "{name}"\ncwd = "students/{name}"\n'
                      f'command = "{sys.executable} agent.py --name {{name}} --style first"\nbuild = "{build}"\n')
    path = write_tournament(tmp_path, tables, referee={"sandbox": "none"})
    assert config.load(path).build_timeout == 120.0
    path = write_tournament(tmp_path, tables, referee={"sandbox": "none"}, build_timeout=30)
    result = CliRunner().invoke(cli, ["tournament", "run", str(path), "-q"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "failed" not in result.output
    builds = query(tmp_path / "results" / "tournament.sqlite", "SELECT agent, status FROM builds")
    assert {row["agent"]: row["status"] for row in builds} == {"alice": "ok", "bob": "ok"}
    # Both built before the first game started.
    assert result.output.index("Started game") > max(result.output.index("Building alice"),
                                                      result.output.index("Building bob"))
