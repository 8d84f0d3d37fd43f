"""An agent's home is its own submission folder, never more: what a tournament file may give an agent.

A tournament's folder holds the file, the instructor's notes, every
student's folder and other tournaments' results.  An agent sees only its
``cwd``, a folder inside it: ``{home}`` or a build without a ``cwd``, a
``cwd`` of ``.``, ``../bob``, an absolute path or a link leading out, and two
folders one inside the other are refused when the file is read (``check``
and ``run``), naming the agent and the fix.  The slow test at the end plays a
real sandboxed tournament whose agent tries to read everything beside it,
during its build and its games, and to learn its opponent's name.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from othello_arena.cli import cli
from othello_arena.referee.clock import TimeRule
from othello_arena.tournaments.schedule import config
from othello_arena.tournaments.schedule.config import TournamentFileError
from tournament_helpers import AGENT, write_tournament


def class_folder(tmp_path: Path) -> Path:
    """A class: the students' folders, the instructor's notes and another tournament's results beside the file."""
    for name in ("carol", "bob"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "agent.py").write_text(AGENT.read_text())
    (tmp_path / "bob" / "secret.txt").write_text("bob's own secret\n")
    (tmp_path / "notes.txt").write_text("instructor's notes\n")
    (tmp_path / "results" / "other").mkdir(parents=True)
    (tmp_path / "results" / "other" / "tournament.sqlite").write_text("another tournament\n")
    return tmp_path


def table(name: str, command: str = "python3 agent.py {name}", **keys: str) -> str:
    lines = ["[[agents]]", f"name = {json.dumps(name)}", f"command = {json.dumps(command)}"]
    return "\n".join(lines + [f"{key} = {json.dumps(value)}" for key, value in keys.items()]) + "\n"


def write_strings(folder: Path, agents: list[str]) -> Path:
    """``folder/t.toml`` with ``agents`` as strings in the referee's syntax (written above any table)."""
    path = folder / "t.toml"
    path.write_text(f"agents = {json.dumps(agents)}\n[tournament]\nresults = \"results\"\n", encoding="utf-8")
    return path


def refused(path: Path) -> str:
    with pytest.raises(TournamentFileError) as caught:
        config.load(path)
    return str(caught.value)


def test_home_without_cwd_is_refused_naming_the_agent_and_the_fix(tmp_path: Path) -> None:
    folder = class_folder(tmp_path)
    path = write_tournament(folder, [table("carol", "java -cp {home} Carol {name}"), table("bob", cwd="bob")])
    message = refused(path)
    assert "agent #1 (carol)" in message and "{home} without a cwd" in message
    assert 'cwd = "carol"' in message and str(folder) in message
    # The same as a string, and in `tournament check` (which reads the file as run does).
    path = write_strings(folder, ["carol=java -cp {home} Carol {name}", "random"])
    assert "{home} without a cwd" in refused(path)
    result = CliRunner().invoke(cli, ["tournament", "check", str(path)])
    assert result.exit_code != 0 and "{home} without a cwd" in result.output


def test_with_its_own_cwd_home_is_that_folder(tmp_path: Path) -> None:
    folder = class_folder(tmp_path)
    path = write_tournament(folder, [table("carol", "java -cp {home} Carol {name}", cwd="carol", build="true"),
                                     table("bob", cwd="bob")])
    tournament = config.load(path)
    assert tournament.agent("carol").cwd == str(folder / "carol")


def test_a_build_without_cwd_is_refused(tmp_path: Path) -> None:
    folder = class_folder(tmp_path)
    path = write_tournament(folder, [table("carol", f"{sys.executable} {AGENT} --name {{name}}", build="make"),
                                     table("bob", cwd="bob")])
    message = refused(path)
    assert "agent #1 (carol)" in message and "its build runs in its submission folder" in message
    assert 'cwd = "carol"' in message


@pytest.mark.parametrize("cwd, why", [
    ("../bob", "outside"),
    ("carol/../../elsewhere", "outside"),
    (".", "is the folder of this file"),
    ("carol/..", "is the folder of this file"),
    ("link-out", "outside"),
    ("ABSOLUTE", "outside"),
])
def test_a_cwd_is_confined_to_the_files_folder(tmp_path: Path, cwd: str, why: str) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "class").mkdir()
    (tmp_path / "bob").mkdir()
    folder = class_folder(tmp_path / "class")
    (folder / "link-out").symlink_to(tmp_path / "elsewhere")
    cwd = str(tmp_path / "elsewhere") if cwd == "ABSOLUTE" else cwd
    path = write_tournament(folder, [table("carol", cwd=cwd), table("bob", cwd="bob")])
    message = refused(path)
    assert "agent #1 (carol)" in message and f"cwd {cwd!r}" in message and why in message


def test_a_link_inside_the_folder_is_followed_and_allowed(tmp_path: Path) -> None:
    folder = class_folder(tmp_path)
    (folder / "carol-link").symlink_to(folder / "carol")
    tournament = config.load(write_tournament(folder, [table("carol", cwd="carol-link"), table("bob", cwd="bob")]))
    assert tournament.agent("carol").cwd == str(folder / "carol")


def test_nested_folders_are_refused_and_a_shared_one_is_not(tmp_path: Path) -> None:
    folder = class_folder(tmp_path)
    (folder / "bob" / "v2").mkdir()
    message = refused(write_tournament(folder, [table("bob", cwd="bob"), table("bob2", cwd="bob/v2")]))
    assert "agent 'bob2'" in message and "lies inside agent 'bob'" in message and "side by side" in message
    shared = config.load(write_tournament(folder, [table("bob", cwd="bob"), table("bob-old", cwd="bob")]))
    assert shared.agent("bob").cwd == shared.agent("bob-old").cwd


def test_a_command_may_not_bring_the_files_folder_into_sight(tmp_path: Path) -> None:
    folder = class_folder(tmp_path)
    (folder / "bob-prog").write_text("#!/bin/sh\n")
    # ./bob-prog beside the file: its folder, the whole class, would be bound in the sandbox.
    message = refused(write_tournament(folder, [table("bob", "./bob-prog {name}"), table("carol", cwd="carol")]))
    assert "agent #1 (bob)" in message and "names a file of" in message and 'cwd = "bob"' in message
    # A data file beside the file, named from the agent's own folder.
    message = refused(write_tournament(folder, [table("carol", "python3 agent.py ../notes.txt", cwd="carol"),
                                                table("bob", cwd="bob")]))
    assert "agent #1 (carol)" in message and "names a file of" in message
    # A program elsewhere (the test's own agent) is no part of the class's folder: allowed.
    config.load(write_tournament(folder, [table("x", f"{sys.executable} {AGENT} --name {{name}}"),
                                          table("carol", cwd="carol")]))


def test_an_included_rosters_agents_are_confined_to_the_rosters_folder(tmp_path: Path) -> None:
    folder = class_folder(tmp_path)
    (folder / "group").mkdir()
    (folder / "group" / "dave").mkdir()
    (folder / "group" / "roster.toml").write_text(table("dave", cwd="dave"))
    (folder / "t.toml").write_text('agents = [{ include = "group/roster.toml" }, "random"]\n')
    tournament = config.load(folder / "t.toml")
    assert tournament.agent("dave").cwd == str(folder / "group" / "dave")
    (folder / "group" / "roster.toml").write_text(table("dave", cwd="../carol"))
    message = refused(folder / "t.toml")
    assert "roster.toml: agent #1 (dave)" in message and "outside" in message


def test_a_match_keeps_the_folder_it_was_started_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # othello match writes the folder it ran in as each program's cwd: a student's own matches, as today.
    from othello_arena.referee import AgentSpec
    from othello_arena.tournaments.match.match import load_match, write_match_file

    (tmp_path / "me").mkdir()
    (tmp_path / "me" / "agent.py").write_text(AGENT.read_text())
    monkeypatch.chdir(tmp_path / "me")
    spec = AgentSpec.parse("me=python3 agent.py --name {name}")
    write_match_file(tmp_path / "me" / "matches" / "m1", spec, AgentSpec.parse("you=java -cp {home} You {name}"),
                     games=2, sprt=None, time=TimeRule(1.0), seed=1, openings=None, concurrency=1, sandbox="bwrap")
    match = load_match(tmp_path / "me" / "matches" / "m1")
    assert match.agent("me").cwd == str(tmp_path / "me")


# -- the sandbox: nothing beside its own folder, in its build and in its games -----------------------------------

SNOOP = r'''
import os, sys
targets = sys.argv[1:]
found = []
for target in targets:
    try:
        if os.path.isdir(target):
            found.append(f"{target}: {sorted(os.listdir(target))}")
        else:
            with open(target) as handle:
                found.append(f"{target}: {handle.read(100)!r}")
    except OSError as exc:
        pass
where = f"cwd={os.getcwd()} HOME={os.environ.get('HOME')} DIR={os.environ.get('OTHELLO_DIR')}"
print("FOUND " + repr(found), file=sys.stderr)
print("WHERE " + where, file=sys.stderr)
print("ENV " + repr(sorted(os.environ.items())), file=sys.stderr)
'''


@pytest.mark.slow
def test_a_sandboxed_agent_sees_nothing_beside_its_folder_nor_whom_it_plays(tmp_path: Path) -> None:
    folder = class_folder(tmp_path)
    (folder / "carol" / "snoop.py").write_text(SNOOP)
    targets = [folder / "bob", folder / "bob" / "secret.txt", folder / "t.toml", folder / "notes.txt",
               folder / "results" / "other" / "tournament.sqlite", folder / "results" / "other", folder,
               folder / "results", folder / "results" / "games"]
    listed = " ".join(str(target) for target in targets)
    # The build and every game run the snoop first (a game's into carol's stderr), then carol plays.
    build = f"python3 snoop.py {listed} 2> build-snoop.txt; echo built > built.txt"
    command = (f"sh -c 'python3 {{home}}/snoop.py {listed}; exec {sys.executable} {{home}}/agent.py --name \"$1\"' "
               "carol {name}")
    path = write_tournament(folder, [table("carol", command, cwd="carol", build=build),
                                     table("bob", f"{sys.executable} agent.py --name {{name}} --style last", cwd="bob")],
                            referee={"polling": True}, games_per_pairing=2)
    # Unsandboxed, the snoop reads every one of them: what the sandbox must take away.
    free = subprocess.run([sys.executable, str(folder / "carol" / "snoop.py"), *map(str, targets)],
                          capture_output=True, text=True, check=True).stderr
    assert "own secret" in free and "notes" in free and "another tournament" in free and "t.toml" in free
    result = CliRunner().invoke(cli, ["tournament", "run", str(path), "-q"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    # Both games were played to their end, by polling (whose check of a file still open compares inodes).
    games = list((folder / "results" / "games").glob("*/game.json"))
    assert len(games) == 2
    for game in games:
        record = json.loads(game.read_text())
        assert record["result"]["reason"] == "normal", record["result"]
        assert record["referee"]["watch"] == "polling"
    assert (folder / "carol" / "built.txt").read_text() == "built\n"
    build_snoop = (folder / "carol" / "build-snoop.txt").read_text()
    game_snoops = [log.read_text() for log in (folder / "results" / "games").glob("*/carol.stderr.log")]
    assert len(game_snoops) == 2
    skeleton = f"{folder}: ['carol']"  # the class folder as the sandbox builds it: the mount point of carol's alone
    for text in [build_snoop, *game_snoops]:
        found = ast.literal_eval(next(line for line in text.splitlines() if line.startswith("FOUND "))[6:])
        assert found in ([], [skeleton]), text  # nothing of the targets could be read or listed
    for text in game_snoops:
        where = next(line for line in text.splitlines() if line.startswith("WHERE "))
        assert where == "WHERE cwd=/game/carol HOME=/game/carol DIR=/game/carol", where
        environment = next(line for line in text.splitlines() if line.startswith("ENV "))
        assert "bob" not in environment and "_vs_" not in environment and str(folder) not in environment


def test_an_unsandboxed_game_says_where_it_is(tmp_path: Path) -> None:
    # Without the sandbox the path cannot be hidden: the agent's directory is the real one (PROTOCOL.md section 2).
    from othello_arena.referee import AgentSpec, GameConfig, play_game

    (tmp_path / "where.py").write_text(
        "import os, sys\nprint(os.getcwd(), os.environ['HOME'], os.environ['OTHELLO_DIR'], file=sys.stderr)\n"
        f"os.execv({sys.executable!r}, [{sys.executable!r}, {str(AGENT)!r}, '--name', sys.argv[1]])\n")
    spec = AgentSpec.program("w", [sys.executable, str(tmp_path / "where.py"), "{name}"])
    record = play_game(spec, AgentSpec.program("v", [sys.executable, str(AGENT), "--name", "{name}"]),
                       GameConfig(time_per_move=3, sandbox="none"), tmp_path / "g")
    assert record.result is not None and record.result.termination == "normal"
    real = str((tmp_path / "g" / "w").resolve())
    assert (tmp_path / "g" / "w.stderr.log").read_text().split()[:3] == [real, real, real]
    assert os.path.isdir(real)


def test_one_agent_in_two_games_at_once_has_two_markers_and_one_cleanup_spares_the_other(tmp_path: Path) -> None:
    # Both see /game/carol; the keeper's cleanup of one game's carol (a runner killed) must not end the other's.
    from othello_arena.referee import AgentSpec, GameConfig
    from othello_arena.referee.keeper import end_agent
    from othello_arena.referee.launch import games_mark, isolation_for, start_agent

    config = GameConfig(time_per_move=3)
    spec = AgentSpec.program("carol", [sys.executable, "-c", "import time; time.sleep(60)"])
    started = []
    for game in ("r01-p001-g1_carol_vs_bob", "r01-p002-g1_carol_vs_dave"):
        directory = tmp_path / "games" / game / "carol"
        directory.mkdir(parents=True)
        started.append(start_agent(spec, directory, config, tmp_path / "games" / game / "carol.stderr.log",
                                   isolation_for(config)))
    try:
        first, second = started
        assert first.marker != second.marker
        assert all(p.marker.startswith(f"OTHELLO_SEAT={games_mark(tmp_path / 'games')}.".encode()) for p in started)
        assert end_agent(first.marker, [], timeout=2.0) > 0
        assert first.wait_exit(10)
        assert not second.wait_exit(0.5), "the other game's carol was killed with the first"
    finally:
        for process in started:
            process.kill_all(term_grace=0.1)
